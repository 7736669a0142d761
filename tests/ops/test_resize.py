"""Resize, RandomResize, RandomResizedCrop, ResizedCrop and RandomCropDecodeResize: each CPU kernel against cv2,
Pillow or a reference written here; random crops against their row context."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from vision_testing import make_photo, run, within_one

from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, TensorSpec, get_kernel, has_kernel, row_rng
from minddata.vision import Inter

IMG = make_photo(37, 53)


# ---------------------------------------------------------------------------------------------- Resize

CV_FLAGS = {
    Inter.NEAREST: cv2.INTER_NEAREST,
    Inter.BILINEAR: cv2.INTER_LINEAR,
    Inter.BICUBIC: cv2.INTER_CUBIC,
    Inter.AREA: cv2.INTER_AREA,
    Inter.LANCZOS: cv2.INTER_LANCZOS4,
}


@pytest.mark.parametrize("interp", list(CV_FLAGS))
@pytest.mark.parametrize("size", [(20, 30), (61, 80), 16])
def test_resize_matches_cv2(interp: Inter, size: Any) -> None:
    h, w = (size, int(IMG.shape[1] * size / IMG.shape[0])) if isinstance(size, int) else size
    want = cv2.resize(IMG, (w, h), interpolation=CV_FLAGS[interp])
    assert within_one(vision.Resize(size, interp)(IMG), want)


@pytest.mark.parametrize(
    ("interp", "pil_filter"), [(Inter.PILCUBIC, Image.BICUBIC), (Inter.ANTIALIAS, Image.LANCZOS)]
)
def test_resize_pil_filters_match_pillow(interp: Inter, pil_filter: int) -> None:
    want = np.array(Image.fromarray(IMG).resize((21, 14), pil_filter))
    assert within_one(vision.Resize((14, 21), interp)(IMG), want)
    gray = IMG[..., 0].astype(np.float32)
    want_f = np.array(Image.fromarray(gray).resize((21, 14), pil_filter))
    np.testing.assert_allclose(vision.Resize((14, 21), interp)(gray), want_f, atol=1e-3)


@pytest.mark.parametrize(
    ("shape", "size", "want"),
    [
        ((480, 640), 224, (224, 298)),
        ((640, 480), 224, (298, 224)),
        ((100, 100), 7, (7, 7)),
        ((3, 1000), 2, (2, 666)),
    ],
)
def test_resize_int_size_keeps_aspect_with_mindspore_rounding(shape: tuple, size: int, want: tuple) -> None:
    assert vision.Resize(size)(np.zeros(shape, np.uint8)).shape == want


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64, np.int32, np.float16])
def test_resize_keeps_dtype_and_channel_axis(dtype: type) -> None:
    img = IMG[..., :1].astype(dtype)
    out = vision.Resize((10, 12), Inter.BILINEAR)(img)
    assert out.shape == (10, 12, 1) and out.dtype == np.dtype(dtype)
    ref = cv2.resize(IMG[..., 0].astype(np.float64), (12, 10), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_allclose(out[..., 0].astype(np.float64), ref, atol=1.0)
    assert vision.Resize((10, 12), Inter.PILCUBIC)(img).shape == (10, 12, 1)
    five = np.repeat(img, 5, axis=2)
    assert vision.Resize((9, 8), Inter.AREA)(five).shape == (9, 8, 5)


# ---------------------------------------------------------------------------------------------- RandomResizedCrop


def _reference_rrc_box(rng: np.random.Generator, h: int, w: int, scale, ratio, attempts: int):
    """MindSpore's RandomCropAndResize box drawing, written out independently of the kernel."""
    for _ in range(attempts):
        area = h * w * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(math.log(ratio[0]), math.log(ratio[1])))
        cw = max(1, int(math.floor(math.sqrt(area * aspect) + 0.5)))
        ch = max(1, int(math.floor(cw / aspect + 0.5)))
        if cw <= w and ch <= h:
            x = int(rng.integers(0, w - cw + 1))
            y = int(rng.integers(0, h - ch + 1))
            return y, x, ch, cw
    if w / h < ratio[0]:
        cw, ch = w, int(math.floor(w / ratio[0] + 0.5))
    elif w / h > ratio[1]:
        ch, cw = h, int(math.floor(h * ratio[1] + 0.5))
    else:
        ch, cw = h, w
    return int(math.floor((h - ch) / 2 + 0.5)), int(math.floor((w - cw) / 2 + 0.5)), ch, cw


@pytest.mark.parametrize("row", range(6))
def test_random_resized_crop_matches_reference(row: int) -> None:
    op = vision.RandomResizedCrop((24, 20), scale=(0.2, 0.9), ratio=(0.5, 2.0))
    rng = row_rng(7, 3, row, 2)
    y, x, ch, cw = _reference_rrc_box(rng, 37, 53, op.scale, op.ratio, op.max_attempts)
    want = cv2.resize(IMG[y : y + ch, x : x + cw], (20, 24), interpolation=cv2.INTER_LINEAR)
    np.testing.assert_array_equal(run(op, IMG, seed=7, pass_index=3, row=row, position=2), want)


def test_random_resized_crop_falls_back_to_a_centre_crop() -> None:
    # Area 1.0 at aspect 3 never fits a landscape 37x53 image, so every attempt fails.
    op = vision.RandomResizedCrop(8, scale=(1.0, 1.0), ratio=(3.0, 3.0), interpolation=Inter.NEAREST)
    ch, cw = round(53 / 3), 53
    top = int(math.floor((37 - ch) / 2 + 0.5))
    want = cv2.resize(IMG[top : top + ch, :cw], (8, 8), interpolation=cv2.INTER_NEAREST)
    np.testing.assert_array_equal(run(op, IMG, row=5), want)


def test_random_resized_crop_same_context_same_output() -> None:
    op = vision.RandomResizedCrop(16)
    outs = [run(op, IMG, row=r) for r in range(8)]
    for r in range(8):
        np.testing.assert_array_equal(run(op, IMG, row=r), outs[r])
    assert not np.array_equal(run(op, IMG, row=0, pass_index=1), outs[0])
    assert not np.array_equal(run(op, IMG, row=0, position=1), outs[0])


def test_random_resized_crop_different_rows_draw_different_crops() -> None:
    op = vision.RandomResizedCrop(16)
    outs = [run(op, IMG, row=r).tobytes() for r in range(32)]
    assert len(set(outs)) == 32


@settings(max_examples=60, deadline=None)
@given(
    h=st.integers(1, 40),
    w=st.integers(1, 40),
    size=st.one_of(st.integers(1, 12), st.tuples(st.integers(1, 12), st.integers(1, 12))),
    lo=st.floats(0.0, 1.0),
    span=st.floats(0.0, 1.0),
    rlo=st.floats(0.1, 3.0),
    rspan=st.floats(0.0, 3.0),
    row=st.integers(0, 10_000),
)
def test_random_resized_crop_output_shape_is_always_size(h, w, size, lo, span, rlo, rspan, row) -> None:
    op = vision.RandomResizedCrop(size, scale=(lo, min(1.0, lo + span) or 0.01), ratio=(rlo, rlo + rspan))
    want = (size, size) if isinstance(size, int) else size
    assert run(op, make_photo(h, w), row=row).shape == (*want, 3)
    assert run(op, make_photo(h, w)[..., 0], row=row).shape == want


# ---------------------------------------------------------------------------------------------- ResizedCrop

RESIZED_CROP_FLAGS = {Inter.NEAREST: cv2.INTER_NEAREST, Inter.BILINEAR: cv2.INTER_LINEAR, Inter.BICUBIC: cv2.INTER_CUBIC,
            Inter.AREA: cv2.INTER_AREA}  # fmt: skip


@pytest.mark.parametrize("interp", list(RESIZED_CROP_FLAGS))
@pytest.mark.parametrize(
    ("box", "size"), [((2, 5, 20, 30), (24, 24)), ((0, 0, 37, 53), 16), ((10, 40, 5, 13), (40, 9))]
)
def test_resized_crop_matches_cv2(drawing, interp, box, size) -> None:
    top, left, h, w = box
    oh, ow = (size, size) if isinstance(size, int) else size
    want = cv2.resize(drawing[top : top + h, left : left + w], (ow, oh), interpolation=RESIZED_CROP_FLAGS[interp])
    np.testing.assert_array_equal(vision.ResizedCrop(top, left, h, w, size, interp)(drawing), want)


def test_resized_crop_pilcubic_matches_pillow(photo) -> None:
    want = np.array(Image.fromarray(photo[4:36, 8:56]).resize((20, 14), Image.BICUBIC))
    assert within_one(vision.ResizedCrop(4, 8, 32, 48, (14, 20), Inter.PILCUBIC)(photo), want)


def test_resized_crop_outside_the_image_raises(drawing) -> None:
    with pytest.raises(
        ValueError, match=r"ResizedCrop: the crop box \(top=30, left=0, height=10, width=4\).*\(37, 53, 3\)"
    ):
        vision.ResizedCrop(30, 0, 10, 4, 8)(drawing)


# ---------------------------------------------------------------------------------------------- RandomCropDecodeResize


def test_random_crop_decode_resize_spec_mirrors_random_resized_crop() -> None:
    args = dict(size=(30, 40), scale=(0.3, 0.9), ratio=(0.5, 2.0), interpolation=Inter.AREA, max_attempts=4)
    op = vision.RandomCropDecodeResize(**args)
    # The fused kernel draws its box with RandomResizedCrop's function, which reads these attributes.
    assert op.params() == vision.RandomResizedCrop(**args).params()
    assert type(op).random and not isinstance(op, vision.RandomResizedCrop)
    assert vision.RandomCropDecodeResize(8).size == 8
    assert op.output_spec(TensorSpec((1234,), np.dtype(np.uint8))) == TensorSpec(
        (30, 40, 3), np.dtype(np.uint8)
    )
    with pytest.raises(TypeError, match=r"RandomCropDecodeResize: expected encoded image bytes"):
        op.output_spec(TensorSpec((4, 4, 3), np.dtype(np.uint8)))


@pytest.mark.skipif(
    not has_kernel("RandomCropDecodeResize", "CPU"), reason="its fused kernel is not written yet"
)
def test_random_crop_decode_resize_kernel_output_matches_spec(drawing) -> None:
    import io

    buf = io.BytesIO()
    Image.fromarray(drawing).save(buf, "PNG")
    op = vision.RandomCropDecodeResize((12, 16))
    out = run(op, np.frombuffer(buf.getvalue(), np.uint8))
    assert op.output_spec(TensorSpec((None,), np.dtype(np.uint8))) == TensorSpec(out.shape, out.dtype)


# -- RandomResize: every row is one of the four interpolations MindSpore draws from --------

RESIZE_IMG = np.random.default_rng(4).integers(0, 256, (20, 28, 3), dtype=np.uint8)
RANDOM_RESIZE_FLAGS = (cv2.INTER_LINEAR, cv2.INTER_NEAREST, cv2.INTER_CUBIC, cv2.INTER_AREA)


def test_random_resize_gives_each_of_the_four_interpolations() -> None:
    op = vision.RandomResize((9, 13))
    refs = [cv2.resize(RESIZE_IMG, (13, 9), interpolation=f) for f in RANDOM_RESIZE_FLAGS]
    seen = set()
    for row in range(40):
        out = get_kernel("RandomResize", "CPU")(op, KernelContext(seed=1, row_index=row), RESIZE_IMG)
        matches = [k for k, ref in enumerate(refs) if np.array_equal(out, ref)]
        assert matches, f"row {row}: matches none of OpenCV's four interpolations"
        seen.add(matches[0])
    assert seen == {0, 1, 2, 3}


def test_random_resize_int_size_is_the_shorter_side() -> None:
    assert vision.RandomResize(10)(RESIZE_IMG).shape == (10, 14, 3)


def test_random_resize_rejects_a_bad_size() -> None:
    with pytest.raises(ArgumentError, match=r"RandomResize: `size` must be greater than 0. Found: 0"):
        vision.RandomResize(0)
