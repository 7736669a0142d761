"""NormalizePad, RandomErasing, CutOut, MixUpBatch, CutMixBatch: each kernel against a reference written
here in NumPy from MindSpore's algorithm, drawing from the same row RNG."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minddata as md
from minddata import transforms, vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, TensorSpec, get_kernel, row_rng
from minddata.vision import ImageBatchFormat

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def photo(h: int = 20, w: int = 26, c: int = 3, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


IMG = photo()


def run(op: Any, *inputs: Any, seed: int = 5, pass_index: int = 0, row: int = 0, position: int = 0) -> Any:
    ctx = KernelContext(seed=seed, pass_index=pass_index, row_index=row, op_position=position)
    return get_kernel(op.name, "CPU")(op, ctx, *inputs)


# ---------------------------------------------------------------------------------------------- NormalizePad


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_normalize_pad_hwc_appends_a_zero_channel(dtype: str) -> None:
    want = (IMG.astype(np.float64) - np.array(MEAN)) / np.array(STD)
    out = vision.NormalizePad(MEAN, STD, dtype=dtype)(IMG)
    assert out.shape == (20, 26, 4) and out.dtype == np.dtype(dtype)
    tol = 1e-5 if dtype == "float32" else 2e-3
    np.testing.assert_allclose(out[..., :3], want, rtol=tol, atol=tol)
    assert not out[..., 3].any()


def test_normalize_pad_chw() -> None:
    chw = np.ascontiguousarray(IMG.transpose(2, 0, 1))
    out = vision.NormalizePad(MEAN, STD, is_hwc=False)(chw)
    want = (chw.astype(np.float64) - np.array(MEAN)[:, None, None]) / np.array(STD)[:, None, None]
    assert out.shape == (4, 20, 26)
    np.testing.assert_allclose(out[:3], want, rtol=1e-5, atol=1e-5)
    assert not out[3].any()


def test_normalize_pad_rejects_a_2d_image_and_a_channel_mismatch() -> None:
    with pytest.raises(ValueError, match=r"NormalizePad: expected a 3-D HWC image .* Found shape \(20, 26\)"):
        vision.NormalizePad(MEAN, STD)(IMG[..., 0])
    with pytest.raises(
        ValueError, match=r"NormalizePad: expected an HWC image with 3 channels.*\(20, 26, 4\)"
    ):
        vision.NormalizePad(MEAN, STD)(photo(c=4))


# ---------------------------------------------------------------------------------------------- RandomErasing


def reference_erasing(img_chw: np.ndarray, op: Any, rng: np.random.Generator) -> np.ndarray:
    """MindSpore's RandomErasing on a CHW image, drawing in its order from ``rng``."""
    out = img_chw.copy()
    if rng.random() >= op.prob:
        return out
    c, h, w = out.shape
    for _ in range(op.max_attempts):
        area = rng.uniform(*op.scale) * h * w
        aspect = rng.uniform(*op.ratio)
        ew = int(round(math.sqrt(area * aspect)))
        eh = int(round(ew / aspect))
        if eh < h and ew < w:
            i = int(rng.integers(0, h - eh + 1))
            j = int(rng.integers(0, w - ew + 1))
            if op.value == "random":
                value = rng.standard_normal((c, eh, ew))
            else:
                value = np.broadcast_to(np.reshape(op.value, (-1, 1, 1)), (c, eh, ew))
            out[:, i : i + eh, j : j + ew] = value
            return out
    return out


@pytest.mark.parametrize("value", [0, 0.25, (0.1, 0.2, 0.3), "random"])
@pytest.mark.parametrize("row", range(4))
def test_random_erasing_matches_reference_chw(value: Any, row: int) -> None:
    img = photo(seed=row).transpose(2, 0, 1).astype(np.float32) / 255
    op = vision.RandomErasing(prob=0.8, scale=(0.05, 0.4), value=value)
    want = reference_erasing(img, op, row_rng(5, 0, row, 0))
    np.testing.assert_array_equal(run(op, img, row=row), want)


def test_random_erasing_hwc_erases_the_same_pixels_as_chw() -> None:
    img = IMG.astype(np.float32)
    chw = np.ascontiguousarray(img.transpose(2, 0, 1))
    for row in range(6):
        hwc_op = vision.RandomErasing(prob=1.0, value="random", is_hwc=True)
        chw_op = vision.RandomErasing(prob=1.0, value="random")
        np.testing.assert_array_equal(run(hwc_op, img, row=row).transpose(2, 0, 1), run(chw_op, chw, row=row))


def test_random_erasing_leaves_the_input_alone_unless_inplace() -> None:
    img = IMG.transpose(2, 0, 1).astype(np.float32)
    before = img.copy()
    out = run(vision.RandomErasing(prob=1.0, value=7), img)
    assert (out == 7).any()
    np.testing.assert_array_equal(img, before)
    out = run(vision.RandomErasing(prob=1.0, value=7, inplace=True), img)
    assert out is img and (img == 7).any()


def test_random_erasing_integer_image_clips_the_fill() -> None:
    out = run(vision.RandomErasing(prob=1.0, value=300.0, is_hwc=True), IMG)
    assert out.dtype == np.uint8 and (out != IMG).any()
    assert set(np.unique(out[out != IMG]).tolist()) == {255}


def test_random_erasing_gives_up_when_no_box_fits() -> None:
    op = vision.RandomErasing(prob=1.0, scale=(1.0, 1.0), ratio=(1.0, 1.0), value=9)
    img = IMG.transpose(2, 0, 1).astype(np.float32)
    np.testing.assert_array_equal(run(op, img), img)


def test_random_erasing_rgb_value_needs_3_channels() -> None:
    with pytest.raises(ValueError, match=r"RandomErasing: `value` has 3 entries .* 4 channel"):
        run(vision.RandomErasing(value=(1, 2, 3), is_hwc=True), photo(c=4))


# ---------------------------------------------------------------------------------------------- CutOut


def reference_cutout(
    img: np.ndarray, length: int, patches: int, rng: np.random.Generator, hwc: bool
) -> np.ndarray:
    out = img.copy()
    h, w = (img.shape[0], img.shape[1]) if hwc else (img.shape[1], img.shape[2])
    mask = np.ones((h, w), bool)
    for _ in range(patches):
        y = int(rng.integers(0, h + length + 1)) - length
        x = int(rng.integers(0, w + length + 1)) - length
        mask[max(y, 0) : max(y + length, 0), max(x, 0) : max(x + length, 0)] = False
    return out * (mask[..., None] if hwc else mask[None])


@pytest.mark.parametrize("hwc", [True, False])
@pytest.mark.parametrize("row", range(5))
def test_cut_out_matches_reference(hwc: bool, row: int) -> None:
    img = IMG if hwc else np.ascontiguousarray(IMG.transpose(2, 0, 1))
    op = vision.CutOut(7, num_patches=3, is_hwc=hwc)
    np.testing.assert_array_equal(
        run(op, img, row=row), reference_cutout(img, 7, 3, row_rng(5, 0, row, 0), hwc)
    )


def test_cut_out_clips_squares_larger_than_the_image() -> None:
    out = run(vision.CutOut(50), np.ones((3, 4), np.float32), row=2)
    assert out.shape == (3, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(
        out, reference_cutout(np.ones((3, 4, 1), np.float32), 50, 1, row_rng(5, 0, 2, 0), True)[..., 0]
    )


# ---------------------------------------------------------------------------------------------- MixUpBatch / CutMixBatch

BATCH = np.stack([photo(10, 12, seed=s) for s in range(5)])
LABELS = np.eye(4, dtype=np.int32)[[0, 1, 2, 3, 1]]


def test_mix_up_batch_matches_reference() -> None:
    op = vision.MixUpBatch(alpha=0.7)
    images, labels = run(op, BATCH.astype(np.float32), LABELS, row=3)
    rng = row_rng(5, 0, 3, 0)
    lam = rng.beta(0.7, 0.7)
    perm = rng.permutation(5)
    np.testing.assert_allclose(images, lam * BATCH + (1 - lam) * BATCH[perm], rtol=1e-5, atol=1e-4)
    assert labels.dtype == np.float32
    np.testing.assert_allclose(labels, lam * LABELS + (1 - lam) * LABELS[perm], rtol=1e-6)


def test_mix_up_batch_rounds_integer_images_and_works_for_nchw() -> None:
    nchw = np.ascontiguousarray(BATCH.transpose(0, 3, 1, 2))
    images, _ = run(vision.MixUpBatch(), nchw, LABELS, row=1)
    rng = row_rng(5, 0, 1, 0)
    lam = rng.beta(1.0, 1.0)
    want = lam * nchw.astype(np.float64) + (1 - lam) * nchw[rng.permutation(5)]
    assert images.dtype == np.uint8 and images.shape == nchw.shape
    assert np.abs(images.astype(np.float64) - want).max() <= 0.5 + 1e-4


def reference_cutmix(images: np.ndarray, labels: np.ndarray, op: Any, rng: np.random.Generator, nhwc: bool):
    """MindSpore's CutMixBatch, written out: box sides scale by (1 - lam), corners clamped."""
    out, out_labels = images.copy(), labels.astype(np.float64)
    h, w = images.shape[1:3] if nhwc else images.shape[2:4]
    perm = rng.permutation(len(images))
    for i in range(len(images)):
        lam = rng.beta(op.alpha, op.alpha)
        if rng.random() >= op.prob:
            continue
        cut_w, cut_h = int(w * (1 - lam)), int(h * (1 - lam))
        cx, cy = int(rng.integers(0, w + 1)), int(rng.integers(0, h + 1))
        x1, y1 = np.clip(cx - cut_w // 2, 0, w - 1), np.clip(cy - cut_h // 2, 0, h - 1)
        x2, y2 = np.clip(cx + cut_w // 2, 0, w - 1), np.clip(cy + cut_h // 2, 0, h - 1)
        bw, bh = np.clip(x2 - x1, 1, w - 1), np.clip(y2 - y1, 1, h - 1)
        if nhwc:
            out[i, y1 : y1 + bh, x1 : x1 + bw] = images[perm[i], y1 : y1 + bh, x1 : x1 + bw]
        else:
            out[i, :, y1 : y1 + bh, x1 : x1 + bw] = images[perm[i], :, y1 : y1 + bh, x1 : x1 + bw]
        keep = 1 - bw * bh / (h * w)
        out_labels[i] = keep * labels[i] + (1 - keep) * labels[perm[i]]
    return out, out_labels.astype(np.float32)


@pytest.mark.parametrize("fmt", list(ImageBatchFormat))
@pytest.mark.parametrize("row", range(4))
def test_cut_mix_batch_matches_reference(fmt: ImageBatchFormat, row: int) -> None:
    nhwc = fmt is ImageBatchFormat.NHWC
    images = BATCH if nhwc else np.ascontiguousarray(BATCH.transpose(0, 3, 1, 2))
    op = vision.CutMixBatch(fmt, alpha=0.5, prob=0.7)
    got_images, got_labels = run(op, images, LABELS, row=row)
    want_images, want_labels = reference_cutmix(images, LABELS, op, row_rng(5, 0, row, 0), nhwc)
    np.testing.assert_array_equal(got_images, want_images)
    np.testing.assert_allclose(got_labels, want_labels, rtol=1e-6)
    assert got_labels.dtype == np.float32 and got_images.dtype == np.uint8


def test_cut_mix_batch_prob_zero_only_casts_the_labels() -> None:
    images, labels = run(vision.CutMixBatch(prob=0.0), BATCH, LABELS)
    np.testing.assert_array_equal(images, BATCH)
    np.testing.assert_array_equal(labels, LABELS.astype(np.float32))


@pytest.mark.parametrize("op", [vision.MixUpBatch(), vision.CutMixBatch()], ids=lambda op: op.name)
def test_batch_ops_reject_unbatched_input_and_bad_labels(op: Any) -> None:
    with pytest.raises(
        ValueError, match=rf"{op.name}: expected a batch of images .* Found shape \(10, 12, 3\)"
    ):
        run(op, BATCH[0], LABELS)
    with pytest.raises(ValueError, match=rf"{op.name}: expected one-hot labels .* Found shape \(5,\)"):
        run(op, BATCH, np.arange(5))
    with pytest.raises(ValueError, match=rf"{op.name}: images and labels must have the same batch size"):
        run(op, BATCH, LABELS[:3])


# ---------------------------------------------------------------------------------------------- specs


def test_output_specs() -> None:
    u8 = np.dtype(np.uint8)
    assert vision.NormalizePad(MEAN, STD).output_spec(TensorSpec((None, 9, 3), u8)) == TensorSpec(
        (None, 9, 4), np.dtype(np.float32)
    )
    assert vision.NormalizePad([1], [2], "float16", is_hwc=False).output_spec(
        TensorSpec((2, 5, 6), u8)
    ) == TensorSpec((3, 5, 6), np.dtype(np.float16))
    assert vision.CutOut(3).output_spec(TensorSpec((4, 5), u8)) == TensorSpec((4, 5), u8)
    images, labels = vision.MixUpBatch().output_spec(
        TensorSpec((8, 4, 4, 3), u8), TensorSpec((8, 10), np.dtype("int64"))
    )
    assert images == TensorSpec((8, 4, 4, 3), u8) and labels == TensorSpec((8, 10), np.dtype(np.float32))
    with pytest.raises(ValueError, match=r"CutMixBatch: expected a batch of images"):
        vision.CutMixBatch().output_spec(TensorSpec((4, 4, 3), u8), TensorSpec((4, 10), u8))


def test_specs_pickle_and_flag_randomness() -> None:
    ops = [
        vision.NormalizePad(MEAN, STD, "float16", False),
        vision.RandomErasing(0.3, (0.1, 0.2), (0.5, 2.0), (1, 2, 3), True, 4, is_hwc=True),
        vision.CutOut(4, 2, False),
        vision.MixUpBatch(0.2),
        vision.CutMixBatch(ImageBatchFormat.NCHW, 0.5, 0.5),
    ]
    for op in ops:
        back = pickle.loads(pickle.dumps(op))
        assert back == op and repr(back) == repr(op)
    assert [op.random for op in ops] == [False, True, True, True, True]
    assert (vision.MixUpBatch.num_inputs, vision.MixUpBatch.num_outputs) == (2, 2)
    assert (
        repr(vision.CutMixBatch())
        == "CutMixBatch(image_batch_format=ImageBatchFormat.NHWC, alpha=1.0, prob=1.0)"
    )


BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (
        lambda: vision.NormalizePad(MEAN, STD, dtype="float64"),
        ArgumentError,
        r"NormalizePad: `dtype` must be 'float32' or 'float16'",
    ),
    (
        lambda: vision.NormalizePad(MEAN, STD[:2]),
        ArgumentError,
        r"NormalizePad: `mean` and `std` must have the same length",
    ),
    (
        lambda: vision.NormalizePad([300], [1]),
        ArgumentError,
        r"NormalizePad: `mean\[0\]` must be in \[0, 255\]. Found: 300",
    ),
    (
        lambda: vision.RandomErasing(prob=1.5),
        ArgumentError,
        r"RandomErasing: `prob` must be in \[0, 1\]. Found: 1.5",
    ),
    (
        lambda: vision.RandomErasing(scale=(0.5, 0.1)),
        ArgumentError,
        r"RandomErasing: `scale` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomErasing(ratio=(0, 1)),
        ArgumentError,
        r"RandomErasing: `ratio\[0\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomErasing(value="noise"),
        ArgumentError,
        r"RandomErasing: `value` as a str must be 'random'",
    ),
    (
        lambda: vision.RandomErasing(value=(1, 2)),
        TypeError,
        r"RandomErasing: `value` must be a number, a sequence of 3",
    ),
    (
        lambda: vision.RandomErasing(max_attempts=0),
        ArgumentError,
        r"RandomErasing: `max_attempts` must be greater than 0. Found: 0",
    ),
    (lambda: vision.RandomErasing(inplace=1), TypeError, r"RandomErasing: `inplace` must be a bool"),
    (lambda: vision.CutOut(0), ArgumentError, r"CutOut: `length` must be greater than 0. Found: 0"),
    (
        lambda: vision.CutOut(4, num_patches=-1),
        ArgumentError,
        r"CutOut: `num_patches` must be greater than 0. Found: -1",
    ),
    (lambda: vision.CutOut(2.5), TypeError, r"CutOut: `length` must be an int"),
    (lambda: vision.MixUpBatch(0), ArgumentError, r"MixUpBatch: `alpha` must be greater than 0. Found: 0.0"),
    (
        lambda: vision.CutMixBatch("NHWC"),
        TypeError,
        r"CutMixBatch: `image_batch_format` must be a vision.ImageBatchFormat",
    ),
    (
        lambda: vision.CutMixBatch(prob=-0.1),
        ArgumentError,
        r"CutMixBatch: `prob` must be in \[0, 1\]. Found: -0.1",
    ),
]


@pytest.mark.parametrize(
    ("make", "error", "message"), BAD, ids=[m.split(":")[0] + str(i) for i, (_, _, m) in enumerate(BAD)]
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()


def test_mix_ops_run_on_batches_in_a_pipeline() -> None:
    labels = np.arange(8) % 4
    ds = md.NumpySlicesDataset(
        {"image": np.stack([photo(6, 7, seed=s) for s in range(8)]), "label": labels}, shuffle=False
    )
    ds = ds.map(transforms.OneHot(4), input_columns="label").batch(4)
    ds = ds.map(vision.CutMixBatch(), input_columns=["image", "label"])
    ds = ds.map(vision.MixUpBatch(), input_columns=["image", "label"])
    batches = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [b["image"].shape for b in batches] == [(4, 6, 7, 3)] * 2
    for b in batches:
        assert b["label"].dtype == np.float32
        np.testing.assert_allclose(b["label"].sum(axis=1), 1.0, rtol=1e-5)
