"""Vision op specs and their CPU kernels, each against a reference computed here with NumPy/cv2/PIL."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from minddata import transforms, vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel, row_rng
from minddata.vision import Inter


def _photo(h: int = 37, w: int = 53, c: int = 3, seed: int = 0) -> np.ndarray:
    """A smooth, photo-like image: gradients plus blurred noise, so resampling differences are real."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    base = np.stack([(x * (k + 1) + y * (c - k)) / (w + h) * 180 for k in range(c)], axis=-1)
    noise = cv2.GaussianBlur(rng.normal(0, 40, (h, w, c)), (5, 5), 1.5).reshape(h, w, c)
    return np.clip(base + noise + 30, 0, 255).astype(np.uint8)


IMG = _photo()


def run(op: Any, *inputs: Any, seed: int = 1, pass_index: int = 0, row: int = 0, position: int = 0) -> Any:
    """Run an op's CPU kernel with an explicit row context, as the engine does."""
    ctx = KernelContext(seed=seed, pass_index=pass_index, row_index=row, op_position=position)
    return get_kernel(op.name, "CPU")(op, ctx, *inputs)


def _within_one(a: np.ndarray, b: np.ndarray, frac: float = 0.99) -> bool:
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return a.shape == b.shape and a.dtype == b.dtype and float((diff <= 1).mean()) >= frac


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
    assert _within_one(vision.Resize(size, interp)(IMG), want)


@pytest.mark.parametrize(
    ("interp", "pil_filter"), [(Inter.PILCUBIC, Image.BICUBIC), (Inter.ANTIALIAS, Image.LANCZOS)]
)
def test_resize_pil_filters_match_pillow(interp: Inter, pil_filter: int) -> None:
    want = np.array(Image.fromarray(IMG).resize((21, 14), pil_filter))
    assert _within_one(vision.Resize((14, 21), interp)(IMG), want)
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


# ---------------------------------------------------------------------------------------------- crops


def _reference_center_crop(img: np.ndarray, ch: int, cw: int) -> np.ndarray:
    """MindSpore's rule written independently: pad (extra pixel first) with zeros, then floor-centre."""
    ph, pw = max(ch - img.shape[0], 0), max(cw - img.shape[1], 0)
    pad = [(math.ceil(ph / 2), ph // 2), (math.ceil(pw / 2), pw // 2)] + [(0, 0)] * (img.ndim - 2)
    padded = np.pad(img, pad)
    top, left = (padded.shape[0] - ch) // 2, (padded.shape[1] - cw) // 2
    return padded[top : top + ch, left : left + cw]


@pytest.mark.parametrize("size", [1, 10, (20, 7), (36, 52), (37, 53), (40, 53), (37, 60), (44, 61), 64])
def test_center_crop_exact(size: Any) -> None:
    ch, cw = (size, size) if isinstance(size, int) else size
    for img in (IMG, IMG[..., 0], IMG.astype(np.float32)):
        out = vision.CenterCrop(size)(img)
        np.testing.assert_array_equal(out, _reference_center_crop(img, ch, cw))
        assert out.dtype == img.dtype and out.flags.c_contiguous


@pytest.mark.parametrize(
    ("coords", "size"), [((0, 0), 5), ((3, 4), (10, 20)), ((0, 0), (37, 53)), ((36, 52), 1)]
)
def test_crop_exact(coords: tuple[int, int], size: Any) -> None:
    ch, cw = (size, size) if isinstance(size, int) else size
    top, left = coords
    out = vision.Crop(coords, size)(IMG)
    np.testing.assert_array_equal(out, IMG[top : top + ch, left : left + cw])
    out[...] = 0  # a copy, never a view of the input
    assert IMG.any()


def test_crop_outside_the_image_raises_naming_the_shape() -> None:
    with pytest.raises(
        ValueError, match=r"Crop: the crop box \(top=30, left=0, height=10, width=10\).*\(37, 53, 3\)"
    ):
        vision.Crop((30, 0), 10)(IMG)


# ---------------------------------------------------------------------------------------------- flips


@pytest.mark.parametrize(
    "img",
    [
        IMG,
        IMG[..., 0],
        IMG.astype(np.float64),
        np.repeat(IMG, 2, axis=2).astype(np.int64),
        IMG[:, :1],
        IMG > 128,
    ],
    ids=["rgb", "gray", "float64", "int64x6", "one_column", "bool"],
)
def test_horizontal_flip_exact(img: np.ndarray) -> None:
    out = vision.HorizontalFlip()(img)
    np.testing.assert_array_equal(out, img[:, ::-1])
    assert out.shape == img.shape and out.dtype == img.dtype


def test_random_horizontal_flip_prob_bounds() -> None:
    for row in range(20):
        np.testing.assert_array_equal(run(vision.RandomHorizontalFlip(1.0), IMG, row=row), IMG[:, ::-1])
        np.testing.assert_array_equal(run(vision.RandomHorizontalFlip(0.0), IMG, row=row), IMG)


def test_random_horizontal_flip_is_a_function_of_the_row_context() -> None:
    op = vision.RandomHorizontalFlip()
    flips = []
    for row in range(64):
        a, b = run(op, IMG, row=row), run(op, IMG, row=row)
        np.testing.assert_array_equal(a, b)
        flips.append(bool(np.array_equal(a, IMG[:, ::-1])))
    # Different rows draw differently: both outcomes occur, in roughly equal numbers.
    assert 16 <= sum(flips) <= 48
    other_seed = [bool(np.array_equal(run(op, IMG, row=r, seed=2), IMG[:, ::-1])) for r in range(64)]
    assert other_seed != flips


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
    assert run(op, _photo(h, w), row=row).shape == (*want, 3)
    assert run(op, _photo(h, w)[..., 0], row=row).shape == want


# ---------------------------------------------------------------------------------------------- pixels

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def test_normalize_hwc_and_chw() -> None:
    want = (IMG.astype(np.float64) - np.array(MEAN)) / np.array(STD)
    out = vision.Normalize(MEAN, STD)(IMG)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    chw = np.ascontiguousarray(IMG.transpose(2, 0, 1))
    out_chw = vision.Normalize(MEAN, STD, is_hwc=False)(chw)
    np.testing.assert_allclose(out_chw, want.transpose(2, 0, 1), rtol=1e-5, atol=1e-5)


def test_normalize_single_value_broadcasts_and_input_is_untouched() -> None:
    gray = IMG[..., 0].copy()
    np.testing.assert_allclose(
        vision.Normalize([100.0], [20.0])(gray), (gray.astype(np.float64) - 100) / 20, rtol=1e-5, atol=1e-5
    )
    before = IMG.copy()
    vision.Normalize([1.0], [2.0])(IMG)
    np.testing.assert_array_equal(IMG, before)


def test_normalize_channel_mismatch_raises_naming_the_shape() -> None:
    with pytest.raises(
        ValueError, match=r"Normalize: expected an HWC image with 3 channels.*Found shape \(4, 4, 2\)"
    ):
        vision.Normalize(MEAN, STD)(np.zeros((4, 4, 2), np.uint8))
    with pytest.raises(
        ValueError, match=r"Normalize: expected an image of shape <H, W> or <H, W, C>.*\(2, 4, 4, 3\)"
    ):
        vision.Normalize(MEAN, STD)(np.zeros((2, 4, 4, 3), np.uint8))


def test_hwc2chw_exact() -> None:
    out = vision.HWC2CHW()(IMG)
    np.testing.assert_array_equal(out, IMG.transpose(2, 0, 1))
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(vision.HWC2CHW()(IMG[..., 0]), IMG[..., 0])


def test_rescale() -> None:
    out = vision.Rescale(1 / 255, -0.5)(IMG)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, IMG / 255.0 - 0.5, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, "float16", np.dtype("int32"), "uint8", bool])
def test_to_type_exact(dtype: Any) -> None:
    src = np.linspace(-3.7, 300.2, 40).reshape(5, 8)
    out = vision.ToType(dtype)(src)
    np.testing.assert_array_equal(out, src.astype(dtype))
    assert out.dtype == np.dtype(dtype)
    assert vision.ToType(dtype) != transforms.TypeCast(dtype)  # different ops, same kernel


# ---------------------------------------------------------------------------------------------- the contract

SPECS = [
    vision.Decode(),
    vision.Resize(8),
    vision.Resize([4, 5], Inter.PILCUBIC),
    vision.CenterCrop((3, 4)),
    vision.Crop((1, 2), 3),
    vision.HorizontalFlip(),
    vision.RandomHorizontalFlip(0.3),
    vision.RandomResizedCrop(7, scale=(0.5, 1.0), ratio=(1, 2), interpolation=Inter.AREA, max_attempts=3),
    vision.Normalize(MEAN, STD, is_hwc=False),
    vision.HWC2CHW(),
    vision.Rescale(0.5, 1),
    vision.ToType("float16"),
    vision.Resize(8).device("GPU"),
]


@pytest.mark.parametrize("op", SPECS, ids=lambda op: op.name)
def test_spec_pickles_and_compares_equal(op: Any) -> None:
    back = pickle.loads(pickle.dumps(op))
    assert back == op and type(back) is type(op) and repr(back) == repr(op)
    assert back.device_target == op.device_target


def test_random_flags() -> None:
    assert vision.RandomHorizontalFlip.random and vision.RandomResizedCrop.random
    assert not any(type(op).random for op in SPECS if not op.name.startswith("Random"))


def test_specs_store_plain_parameters() -> None:
    assert vision.Resize([4, 5]).size == (4, 5)
    assert vision.Normalize([1, 2, 3], [4, 5, 6]).mean == (1.0, 2.0, 3.0)
    assert vision.Resize(4) != vision.Resize(5) and vision.Resize(4) == vision.Resize(4)
    assert repr(vision.Resize(4)) == "Resize(size=4, interpolation=Inter.BILINEAR)"


BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: vision.Resize(-1), ArgumentError, r"Resize: `size` must be greater than 0. Found: -1"),
    (lambda: vision.Resize(0), ArgumentError, r"Resize: `size` must be greater than 0"),
    (
        lambda: vision.Resize((4, 0)),
        ArgumentError,
        r"Resize: `size\[1\] \(width\)` must be greater than 0. Found: 0",
    ),
    (lambda: vision.Resize((1, 2, 3)), TypeError, r"Resize: `size` must be an int or a sequence of 2 ints"),
    (lambda: vision.Resize("8"), TypeError, r"Resize: `size` must be an int.*'8' \(str\)"),
    (lambda: vision.Resize(2.5), TypeError, r"Resize: `size` must be an int"),
    (lambda: vision.Resize(True), TypeError, r"Resize: `size` must be an int"),
    (lambda: vision.Resize(2**25), ArgumentError, r"Resize: `size` must be at most 16777216"),
    (
        lambda: vision.Resize(4, "bilinear"),
        TypeError,
        r"Resize: `interpolation` must be a vision.Inter member",
    ),
    (lambda: vision.Resize(4, 2), TypeError, r"Resize: `interpolation` must be a vision.Inter member"),
    (lambda: vision.CenterCrop(0), ArgumentError, r"CenterCrop: `size` must be greater than 0. Found: 0"),
    (lambda: vision.CenterCrop(None), TypeError, r"CenterCrop: `size` must be an int"),
    (
        lambda: vision.Crop((-1, 0), 3),
        ArgumentError,
        r"Crop: `coordinates\[0\] \(top\)` must be at least 0. Found: -1",
    ),
    (lambda: vision.Crop((0,), 3), TypeError, r"Crop: `coordinates` must be a sequence of 2 ints"),
    (lambda: vision.Crop((0, 1.5), 3), TypeError, r"Crop: `coordinates\[1\] \(left\)` must be an int"),
    (lambda: vision.Crop((0, 0), -3), ArgumentError, r"Crop: `size` must be greater than 0. Found: -3"),
    (
        lambda: vision.RandomHorizontalFlip(1.5),
        ArgumentError,
        r"RandomHorizontalFlip: `prob` must be in \[0, 1\]. Found: 1.5",
    ),
    (lambda: vision.RandomHorizontalFlip("x"), TypeError, r"RandomHorizontalFlip: `prob` must be a number"),
    (lambda: vision.RandomResizedCrop(0), ArgumentError, r"RandomResizedCrop: `size` must be greater than 0"),
    (
        lambda: vision.RandomResizedCrop(8, scale=(0.9, 0.1)),
        ArgumentError,
        r"RandomResizedCrop: `scale` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomResizedCrop(8, scale=(-0.1, 1)),
        ArgumentError,
        r"RandomResizedCrop: `scale\[0\]` must be at least 0",
    ),
    (
        lambda: vision.RandomResizedCrop(8, scale=(0, 0)),
        ArgumentError,
        r"RandomResizedCrop: `scale\[1\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomResizedCrop(8, ratio=(0, 1)),
        ArgumentError,
        r"RandomResizedCrop: `ratio\[0\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomResizedCrop(8, ratio=1.0),
        TypeError,
        r"RandomResizedCrop: `ratio` must be a sequence of 2",
    ),
    (
        lambda: vision.RandomResizedCrop(8, ratio=(1, float("inf"))),
        ArgumentError,
        r"`ratio\[1\]` must be finite",
    ),
    (
        lambda: vision.RandomResizedCrop(8, max_attempts=0),
        ArgumentError,
        r"RandomResizedCrop: `max_attempts` must be greater than 0",
    ),
    (
        lambda: vision.Normalize([1, 2], [1, 2, 3]),
        ArgumentError,
        r"Normalize: `mean` and `std` must have the same length",
    ),
    (
        lambda: vision.Normalize([1, 2, 300], [1, 2, 3]),
        ArgumentError,
        r"Normalize: `mean\[2\]` must be in \[0, 255\]. Found: 300",
    ),
    (
        lambda: vision.Normalize([1], [0]),
        ArgumentError,
        r"Normalize: `std\[0\]` must be in \(0, 255\]. Found: 0",
    ),
    (lambda: vision.Normalize([], []), ArgumentError, r"Normalize: `mean` must not be empty"),
    (lambda: vision.Normalize(0.5, 0.5), TypeError, r"Normalize: `mean` must be a sequence of numbers"),
    (lambda: vision.Normalize([1], [1], is_hwc="yes"), TypeError, r"Normalize: `is_hwc` must be a bool"),
    (lambda: vision.Rescale("a", 0), TypeError, r"Rescale: `rescale` must be a number. Found: 'a' \(str\)"),
    (lambda: vision.Rescale(1, float("nan")), ArgumentError, r"Rescale: `shift` must be finite"),
    (lambda: vision.ToType("flot32"), TypeError, r"ToType: `data_type` must be a numpy dtype.*'flot32'"),
    (
        lambda: vision.ToType(object),
        ArgumentError,
        r"ToType: `data_type` must be a numeric, bool or string dtype",
    ),
]


@pytest.mark.parametrize(("make", "exc", "message"), BAD, ids=[m for _, _, m in BAD])
def test_argument_errors(make: Callable[[], Any], exc: type[Exception], message: str) -> None:
    with pytest.raises(exc, match=message):
        make()


@pytest.mark.parametrize(
    "op",
    [
        vision.Resize(4),
        vision.CenterCrop(2),
        vision.Crop((0, 0), 1),
        vision.HorizontalFlip(),
        vision.RandomHorizontalFlip(),
        vision.RandomResizedCrop(4),
        vision.Normalize([1], [1]),
        vision.HWC2CHW(),
    ],
    ids=lambda op: op.name,
)
def test_kernels_reject_bad_images_naming_op_and_shape(op: Any) -> None:
    with pytest.raises(
        ValueError, match=rf"{op.name}: expected an image of shape <H, W> or <H, W, C>. Found shape \(5,\)"
    ):
        run(op, np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match=rf"{op.name}: expected a non-empty image. Found shape \(0, 4, 3\)"):
        run(op, np.zeros((0, 4, 3), np.uint8))
    with pytest.raises(TypeError, match=rf"{op.name}: expected an image as a numpy array. Found: list"):
        run(op, [[1, 2], [3, 4]])


def test_kernels_do_not_import_the_public_api(tmp_path) -> None:
    code = "import sys, minddata.ops.cpu; assert 'minddata.vision' not in sys.modules, sorted(sys.modules)"
    # Outside the repo root: there the bare minddata/ folder would shadow the installed package.
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
