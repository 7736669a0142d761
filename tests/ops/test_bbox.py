"""The box-aware ops (minddata/vision/bbox.py, plans in minddata/ops/plans/bbox.py).

Boxes are checked two ways: edge cases against boxes computed here by hand, and random cases against
an independent reference: each box is painted as a mask, the mask goes through the image-only twin of
the op (RandomCrop, RandomHorizontalFlip, ...) with the same row context, and the mask's bounding
rectangle afterwards is the expected box (exact for crops and flips; within two pixels for resizes, where
the mask is resampled with NEAREST). Pixels are compared with the image-only twin (exact) or OpenCV.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest

import minddata as md
from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel
from minddata.ops.plans.bbox import check_boxes, crop_boxes, pad_boxes, resize_boxes
from minddata.vision import Border, Inter


def photo(h: int = 30, w: int = 40, c: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


IMG = photo()
# [x, y, w, h, class]: whole image, a corner, a thin strip, one in the middle.
BOXES = np.array([[0, 0, 40, 30, 1], [0, 0, 10, 8, 2], [35, 2, 5, 20, 3], [12, 9, 15, 11, 4]], np.float32)


def run(op: Any, *inputs: Any, row: int = 0, seed: int = 3) -> Any:
    ctx = KernelContext(seed=seed, row_index=row, op_position=1)
    return get_kernel(op.name, "CPU")(op, ctx, *inputs)


def masks_of(boxes: np.ndarray, h: int, w: int) -> np.ndarray:
    """One uint8 channel per (integer) box, 255 inside it."""
    out = np.zeros((h, w, len(boxes)), np.uint8)
    for k, (x, y, bw, bh) in enumerate(boxes[:, :4].astype(int)):
        out[y : y + bh, x : x + bw, k] = 255
    return out


def boxes_of(masks: np.ndarray) -> list[list[float] | None]:
    """Each channel's bounding rectangle as [x, y, w, h], or None for an empty channel."""
    found: list[list[float] | None] = []
    for k in range(masks.shape[2]):
        ys, xs = np.nonzero(masks[..., k])
        if not len(xs):
            found.append(None)
        else:
            found.append(
                [
                    float(xs.min()),
                    float(ys.min()),
                    float(xs.max() - xs.min() + 1),
                    float(ys.max() - ys.min() + 1),
                ]
            )
    return found


def expected_boxes(twin: Any, boxes: np.ndarray, h: int, w: int, row: int) -> np.ndarray:
    """The reference: boxes through the image-only twin op, as masks; dropped boxes left out."""
    after = boxes_of(np.atleast_3d(run(twin, masks_of(boxes, h, w), row=row)))
    kept = [(rect, boxes[k, 4:]) for k, rect in enumerate(after) if rect is not None]
    return np.array([[*rect, *extra] for rect, extra in kept], np.float32).reshape(-1, boxes.shape[1])


# ---------------------------------------------------------------------------------------------- box rules


def test_crop_keeps_a_box_inside_and_moves_it() -> None:
    out = crop_boxes(np.array([[12, 9, 5, 4, 7]], np.float32), 10, 5, 20, 20)
    assert out.tolist() == [[2, 4, 5, 4, 7]]


def test_crop_clips_a_box_partly_outside() -> None:
    # The box spans x 5..25 and y 0..10; the crop is x 10..20, y 4..24.
    out = crop_boxes(np.array([[5, 0, 20, 10]], np.float32), 10, 4, 10, 20)
    assert out.tolist() == [[0, 0, 10, 6]]


def test_crop_drops_a_box_fully_outside_and_keeps_the_order_of_the_rest() -> None:
    boxes = np.array([[0, 0, 4, 4, 1], [50, 50, 5, 5, 2], [20, 20, 4, 4, 3]], np.float32)
    out = crop_boxes(boxes, 0, 0, 30, 30)
    assert out[:, 4].tolist() == [1, 3]


def test_crop_drops_a_box_that_only_touches_the_crop_edge() -> None:
    # MindSpore keeps this one as a zero-width box; here a box left with no area is dropped.
    out = crop_boxes(np.array([[0, 0, 10, 10]], np.float32), 10, 0, 5, 5)
    assert out.shape == (0, 4)


def test_crop_keeps_fractional_coordinates() -> None:
    out = crop_boxes(np.array([[1.5, 2.25, 3.5, 1.0]], np.float32), 2, 0, 10, 10)
    assert out.tolist() == [[0.0, 2.25, 3.0, 1.0]]


def test_pad_and_resize_move_and_scale_boxes() -> None:
    boxes = np.array([[2, 4, 6, 8, 9]], np.float32)
    assert pad_boxes(boxes, top=3, left=1).tolist() == [[3, 7, 6, 8, 9]]
    assert resize_boxes(boxes, 20, 5, 10, 10).tolist() == [[4, 2, 12, 4, 9]]


@pytest.mark.parametrize(
    ("boxes", "message"),
    [
        (np.array([[0, 0, 41, 10]], np.float32), r"RandomCropWithBBox: bounding box 0 .* outside the image"),
        (np.array([[0, 0, 5, 5], [0, 25, 5, 6]], np.float32), r"bounding box 1 .* outside the image"),
        (np.array([[-1, 0, 5, 5]], np.float32), r"bounding box 0 has a negative corner"),
        (np.array([[0, 0, 5]], np.float32), r"at least 4 columns"),
        (np.array([0, 0, 5, 5], np.float32), r"2-D <N, 4\+> array"),
    ],
)
def test_invalid_boxes_are_rejected_naming_the_op_and_box(boxes: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run(vision.RandomCropWithBBox(10), IMG, boxes)


def test_boxes_come_out_float32_whatever_their_input_dtype() -> None:
    out = check_boxes("Op", (30, 40), np.array([[1, 2, 3, 4]], np.int64))
    assert out.dtype == np.float32 and out.tolist() == [[1, 2, 3, 4]]


def test_no_boxes_is_fine() -> None:
    image, boxes = run(vision.RandomCropWithBBox(10), IMG, np.zeros((0, 5), np.float32))
    assert image.shape == (10, 10, 3) and boxes.shape == (0, 5)


# ---------------------------------------------------------------------------------------------- ops vs their twins


# (box-aware op, its image-only twin, the twin for masks: padding must add no mask pixels)
CROPS_AND_FLIPS = [
    (vision.RandomCropWithBBox((16, 20)), vision.RandomCrop((16, 20)), vision.RandomCrop((16, 20))),
    (
        vision.RandomCropWithBBox(24, padding=(3, 2, 1, 4), fill_value=7),
        vision.RandomCrop(24, padding=(3, 2, 1, 4), fill_value=7),
        vision.RandomCrop(24, padding=(3, 2, 1, 4)),
    ),
    (
        vision.RandomCropWithBBox((36, 44), pad_if_needed=True, padding_mode=Border.EDGE),
        vision.RandomCrop((36, 44), pad_if_needed=True, padding_mode=Border.EDGE),
        vision.RandomCrop((36, 44), pad_if_needed=True),
    ),
    (
        vision.RandomHorizontalFlipWithBBox(0.5),
        vision.RandomHorizontalFlip(0.5),
        vision.RandomHorizontalFlip(0.5),
    ),
    (vision.RandomVerticalFlipWithBBox(0.5), vision.RandomVerticalFlip(0.5), vision.RandomVerticalFlip(0.5)),
]


@pytest.mark.parametrize("row", range(6))
@pytest.mark.parametrize(
    ("op", "twin", "mask_twin"),
    CROPS_AND_FLIPS,
    ids=["crop", "crop-padded", "crop-pad-if-needed", "hflip", "vflip"],
)
def test_crop_and_flip_match_the_image_only_op_exactly(op: Any, twin: Any, mask_twin: Any, row: int) -> None:
    image, boxes = run(op, IMG, BOXES, row=row)
    np.testing.assert_array_equal(image, run(twin, IMG, row=row))
    assert boxes.dtype == np.float32
    np.testing.assert_array_equal(boxes, expected_boxes(mask_twin, BOXES, 30, 40, row))


@pytest.mark.parametrize("row", range(6))
def test_random_resized_crop_matches_its_twin_and_boxes_within_a_pixel(row: int) -> None:
    args = dict(size=(24, 32), scale=(0.2, 0.9), ratio=(0.5, 2.0))
    image, boxes = run(vision.RandomResizedCropWithBBox(**args), IMG, BOXES, row=row)
    np.testing.assert_array_equal(image, run(vision.RandomResizedCrop(**args), IMG, row=row))
    want = expected_boxes(vision.RandomResizedCrop(**args, interpolation=Inter.NEAREST), BOXES, 30, 40, row)
    # A box scaled to under a pixel may vanish from the NEAREST-resampled mask: compare those kept by both.
    kept = {int(c) for c in want[:, 4]}
    got = boxes[np.isin(boxes[:, 4], list(kept))]
    assert set(boxes[:, 4].astype(int)) >= kept
    np.testing.assert_allclose(got, want, atol=2.0)


def test_resize_with_bbox_matches_opencv_and_scales_boxes() -> None:
    image, boxes = run(vision.ResizeWithBBox((15, 80), Inter.BILINEAR), IMG, BOXES)
    np.testing.assert_array_equal(image, cv2.resize(IMG, (80, 15), interpolation=cv2.INTER_LINEAR))
    want = BOXES.copy()
    want[:, [0, 2]] *= 2.0
    want[:, [1, 3]] *= 0.5
    np.testing.assert_allclose(boxes, want, rtol=1e-6)


def test_resize_with_bbox_int_size_keeps_the_aspect_ratio() -> None:
    image, boxes = run(vision.ResizeWithBBox(15), IMG, BOXES)
    assert image.shape == (15, 20, 3)
    np.testing.assert_allclose(boxes[:, :4], BOXES[:, :4] / 2)


def test_random_resize_with_bbox_draws_among_the_four_interpolations() -> None:
    outputs = {}
    for row in range(40):
        image, boxes = run(vision.RandomResizeWithBBox((12, 17)), IMG, BOXES, row=row)
        np.testing.assert_allclose(boxes[:, 0], BOXES[:, 0] * 17 / 40, rtol=1e-6)
        outputs[image.tobytes()] = image
    refs = [
        cv2.resize(IMG, (17, 12), interpolation=f)
        for f in (cv2.INTER_LINEAR, cv2.INTER_NEAREST, cv2.INTER_CUBIC, cv2.INTER_AREA)
    ]
    assert len(outputs) == 4
    assert all(any(np.array_equal(o, r) for r in refs) for o in outputs.values())


# ---------------------------------------------------------------------------------------------- BoundingBoxAugment


def test_bounding_box_augment_transforms_every_box_region_with_ratio_1() -> None:
    boxes = np.array([[2, 3, 10, 6], [20, 10, 8.9, 5.5]], np.float32)
    image, out_boxes = run(vision.BoundingBoxAugment(vision.HorizontalFlip(), ratio=1.0), IMG, boxes)
    want = IMG.copy()
    want[3:9, 2:12] = IMG[3:9, 2:12][:, ::-1]
    want[10:15, 20:28] = IMG[10:15, 20:28][:, ::-1]  # the region is the box truncated to whole pixels
    np.testing.assert_array_equal(image, want)
    np.testing.assert_array_equal(out_boxes, boxes)


def test_bounding_box_augment_with_ratio_0_changes_nothing() -> None:
    image, _ = run(vision.BoundingBoxAugment(vision.HorizontalFlip(), ratio=0.0), IMG, BOXES)
    np.testing.assert_array_equal(image, IMG)


def test_bounding_box_augment_resizes_a_changed_region_back_bilinearly() -> None:
    boxes = np.array([[4, 4, 12, 10]], np.float32)
    image, _ = run(vision.BoundingBoxAugment(vision.Resize((5, 6), Inter.NEAREST), ratio=1.0), IMG, boxes)
    small = cv2.resize(IMG[4:14, 4:16], (6, 5), interpolation=cv2.INTER_NEAREST)
    want = IMG.copy()
    want[4:14, 4:16] = cv2.resize(small, (12, 10), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_array_equal(image, want)


def test_bounding_box_augment_picks_boxes_at_about_the_ratio() -> None:
    boxes = np.array([[x, 0, 1, 1] for x in range(40)], np.float32)
    white = np.zeros((1, 40), np.uint8)
    changed = [
        int((run(vision.BoundingBoxAugment(vision.Rescale(1, 1), 0.3), white, boxes, row=r)[0] > 0).sum())
        for r in range(25)
    ]
    assert 0.2 < sum(changed) / (40 * 25) < 0.4


# ---------------------------------------------------------------------------------------------- specs


def test_output_specs_state_both_columns() -> None:
    from minddata.ops import TensorSpec

    image, boxes = TensorSpec((30, 40, 3), np.dtype(np.uint8)), TensorSpec((4, 5), np.dtype(np.float32))
    assert vision.ResizeWithBBox((10, 12)).output_spec(image, boxes) == (
        TensorSpec((10, 12, 3), np.dtype(np.uint8)),
        TensorSpec((4, 5), np.dtype(np.float32)),
    )
    assert vision.RandomCropWithBBox(8).output_spec(image, boxes)[1] == TensorSpec(
        (None, 5), np.dtype(np.float32)
    )
    with pytest.raises(ValueError, match="RandomHorizontalFlipWithBBox: expected 2 inputs"):
        vision.RandomHorizontalFlipWithBBox().output_spec(image)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: vision.RandomCropWithBBox(0),
            ArgumentError,
            r"RandomCropWithBBox: `size` must be greater than 0",
        ),
        (lambda: vision.RandomCropWithBBox(4, padding=-1), ArgumentError, r"`padding` must be at least 0"),
        (
            lambda: vision.RandomHorizontalFlipWithBBox(1.5),
            ArgumentError,
            r"`prob` must be in \[0, 1\]. Found: 1.5",
        ),
        (lambda: vision.RandomVerticalFlipWithBBox("a"), TypeError, r"`prob` must be a number"),
        (
            lambda: vision.ResizeWithBBox(4, interpolation=2),
            TypeError,
            r"`interpolation` must be a vision.Inter",
        ),
        (lambda: vision.RandomResizedCropWithBBox(4, scale=(0.5, 0.1)), ArgumentError, r"min <= max"),
        (
            lambda: vision.BoundingBoxAugment(vision.HorizontalFlip(), ratio=2),
            ArgumentError,
            r"`ratio` must be in \[0, 1\]",
        ),
        (
            lambda: vision.BoundingBoxAugment(lambda x: x),
            TypeError,
            r"BoundingBoxAugment: `transform` must be an image op",
        ),
        (
            lambda: vision.BoundingBoxAugment(vision.MixUpBatch()),
            TypeError,
            r"`transform` must be an image op",
        ),
    ],
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()


def test_bounding_box_augment_pickles_with_its_transform() -> None:
    op = vision.BoundingBoxAugment(vision.RandomRotation(30), 0.5)
    back = pickle.loads(pickle.dumps(op))
    assert back == op and back.transform == vision.RandomRotation(30)


def test_box_ops_map_over_image_and_bbox_columns_in_a_pipeline() -> None:
    def rows():
        for k in range(4):
            yield photo(30, 40, seed=k), BOXES[: k + 1].copy()

    ds = md.GeneratorDataset(rows, column_names=["image", "bbox"], shuffle=False)
    ds = ds.map(
        [vision.RandomHorizontalFlipWithBBox(1.0), vision.RandomCropWithBBox((20, 20))],
        input_columns=["image", "bbox"],
        num_parallel_workers=2,
    )
    got = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [r["image"].shape for r in got] == [(20, 20, 3)] * 4
    for r in got:
        assert r["bbox"].dtype == np.float32 and r["bbox"].shape[1] == 5
        assert (r["bbox"][:, 0] + r["bbox"][:, 2] <= 20).all() and (r["bbox"][:, 2] > 0).all()
