"""Geometric and colour vision ops: each CPU kernel against a reference computed here with NumPy, cv2 or
Pillow; random ops against their row context; every spec's shape rule, pickling and argument checks."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageEnhance

from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, TensorSpec, get_kernel, has_kernel, row_rng
from minddata.vision import Border, ConvertMode, Inter

# ---------------------------------------------------------------------------------------------- images


def _photo(h: int = 48, w: int = 64, c: int = 3, seed: int = 0) -> np.ndarray:
    """A smooth, photo-like image: gradients plus blurred noise (resampling differences are real)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    base = np.stack([(x * (k + 1) + y * (c - k)) / (w + h) * 180 for k in range(c)], axis=-1)
    noise = cv2.GaussianBlur(rng.normal(0, 40, (h, w, c)), (5, 5), 1.5).reshape(h, w, c)
    return np.clip(base + noise + 30, 0, 255).astype(np.uint8)


def _drawing(h: int = 37, w: int = 53) -> np.ndarray:
    """A Pillow drawing with hard edges and distinct colours, so any misplaced pixel shows."""
    im = Image.new("RGB", (w, h), (40, 90, 160))
    d = ImageDraw.Draw(im)
    d.rectangle((3, 4, 20, 15), fill=(250, 200, 10))
    d.ellipse((25, 10, 50, 33), fill=(10, 180, 70), outline=(255, 255, 255))
    d.line((0, h - 1, w - 1, 0), fill=(200, 30, 30), width=2)
    arr = np.array(im)
    arr[..., 2] = (arr[..., 2].astype(int) + np.arange(w)[None, :] * 2) % 256  # a gradient in blue
    return arr


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    return _photo()


@pytest.fixture(scope="module")
def drawing() -> np.ndarray:
    return _drawing()


def run(op: Any, *inputs: Any, seed: int = 1, pass_index: int = 0, row: int = 0, position: int = 0) -> Any:
    """Run an op's CPU kernel with an explicit row context, as the engine does."""
    ctx = KernelContext(seed=seed, pass_index=pass_index, row_index=row, op_position=position)
    return get_kernel(op.name, "CPU")(op, ctx, *inputs)


def _within_one(a: np.ndarray, b: np.ndarray, frac: float = 0.99, mask: np.ndarray | None = None) -> bool:
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    if mask is not None:
        diff = diff[mask]
    return float((diff <= 1).mean()) >= frac


# ---------------------------------------------------------------------------------------------- references


def _fills(fill: Any, channels: int) -> list[float]:
    """Pad/Rotate's documented fill rule: an int for every channel; (R, G, B) in channel order, a
    one-channel image takes R, a fourth channel 0."""
    if isinstance(fill, int):
        return [fill] * channels
    return (list(fill) + [0] * channels)[:channels] if channels > 1 else [fill[0]]


def _ref_pad(
    img: np.ndarray, left: int, top: int, right: int, bottom: int, mode: Border, fill: Any
) -> np.ndarray:
    widths = ((top, bottom), (left, right))
    if mode is not Border.CONSTANT:
        return np.pad(img, widths + ((0, 0),) * (img.ndim - 2), mode=mode.value)
    if img.ndim == 2:
        return np.pad(img, widths, constant_values=_fills(fill, 1)[0])
    fills = _fills(fill, img.shape[2])
    return np.stack(
        [np.pad(img[..., k], widths, constant_values=fills[k]) for k in range(img.shape[2])], axis=-1
    )


def _sample(img: np.ndarray, fwd: np.ndarray, out_h: int, out_w: int, fill: Any, nearest: bool) -> np.ndarray:
    """An independent warp: invert the forward matrix, sample every output pixel (bilinear or nearest,
    pixels outside the image taking the fill), round."""
    inv = np.linalg.inv(np.vstack([fwd, [0.0, 0.0, 1.0]]))
    ys, xs = np.mgrid[0:out_h, 0:out_w].astype(np.float64)
    u = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    v = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    h, w = img.shape[:2]
    src = img.reshape(h, w, -1).astype(np.float64)
    fillv = np.asarray(_fills(fill, src.shape[2]), np.float64)

    def at(yi: np.ndarray, xi: np.ndarray) -> np.ndarray:
        inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
        return np.where(inside[..., None], src[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)], fillv)

    if nearest:
        out = at(np.floor(v + 0.5).astype(int), np.floor(u + 0.5).astype(int))
    else:
        x0, y0 = np.floor(u).astype(int), np.floor(v).astype(int)
        fx, fy = (u - x0)[..., None], (v - y0)[..., None]
        out = (
            at(y0, x0) * (1 - fx) * (1 - fy)
            + at(y0, x0 + 1) * fx * (1 - fy)
            + at(y0 + 1, x0) * (1 - fx) * fy
            + at(y0 + 1, x0 + 1) * fx * fy
        )
    if img.dtype.kind in "iu":
        out = np.clip(np.rint(out), 0, 255)
    return out.astype(img.dtype).reshape(out_h, out_w, *img.shape[2:])


def _T(tx: float, ty: float) -> np.ndarray:
    return np.array([[1.0, 0, tx], [0, 1, ty], [0, 0, 1]])


def _R(deg: float) -> np.ndarray:
    """Rotation by ``deg`` in image coordinates (y down): positive turns clockwise on screen."""
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def _ref_affine(img, degrees, translate_px, scale, shear, fill, nearest):
    """MindSpore's documented composition T * C * R * S * SHy * SHx * C^-1, built from its factors."""
    h, w = img.shape[:2]
    cx, cy = (w - 1) / 2, (h - 1) / 2
    shx = np.array([[1, -math.tan(math.radians(shear[0])), 0], [0, 1, 0], [0, 0, 1]])
    shy = np.array([[1, 0, 0], [-math.tan(math.radians(shear[1])), 1, 0], [0, 0, 1]])
    m = _T(*translate_px) @ _T(cx, cy) @ _R(degrees) @ np.diag([scale, scale, 1.0]) @ shy @ shx @ _T(-cx, -cy)
    return _sample(img, m[:2], h, w, fill, nearest)


def _ref_rotate(img, degrees, out_h, out_w, center, fill, nearest):
    """Counter-clockwise about ``center`` (pixel coordinates), centred in an (out_h, out_w) canvas."""
    h, w = img.shape[:2]
    cx, cy = ((w - 1) / 2, (h - 1) / 2) if center is None else center
    ox, oy = cx + (out_w - w) / 2, cy + (out_h - h) / 2
    return _sample(img, (_T(ox, oy) @ _R(-degrees) @ _T(-cx, -cy))[:2], out_h, out_w, fill, nearest)


# ---------------------------------------------------------------------------------------------- Pad


def _pad_images() -> list[np.ndarray]:
    rgb = _drawing(9, 11)
    five = np.concatenate([rgb, rgb[..., :2]], axis=2).astype(np.int64)  # NumPy path: >4 channels, int64
    return [rgb, rgb[..., 0], rgb.astype(np.float32), five, rgb[..., 1] > 100, rgb[..., :1].copy(), rgb[:1]]


@pytest.mark.parametrize("mode", list(Border), ids=lambda m: m.name)
@pytest.mark.parametrize("padding", [3, (2, 5), (1, 2, 3, 4), (0, 0, 7, 0), (12, 0)])
@pytest.mark.parametrize(
    "img", _pad_images(), ids=["rgb", "gray", "float32", "int64x5", "bool", "hw1", "one_row"]
)
def test_pad_exact(img: np.ndarray, padding: Any, mode: Border) -> None:
    op = vision.Pad(padding, fill_value=(200, 17, 99), padding_mode=mode)
    left, top, right, bottom = op.padding
    out = run(op, img)
    np.testing.assert_array_equal(out, _ref_pad(img, left, top, right, bottom, mode, (200, 17, 99)))
    assert out.dtype == img.dtype


def test_pad_padding_forms_and_fill() -> None:
    assert vision.Pad(2).padding == (2, 2, 2, 2)
    assert vision.Pad([1, 3]).padding == (1, 3, 1, 3)  # (left/right, top/bottom), MindSpore 2.x
    assert vision.Pad((1, 2, 3, 4)).padding == (1, 2, 3, 4)
    img = np.zeros((2, 3, 4), np.uint8)  # RGBA: a 3-tuple fill leaves alpha 0
    assert run(vision.Pad(1, fill_value=(1, 2, 3)), img)[0, 0].tolist() == [1, 2, 3, 0]
    assert run(vision.Pad(1, fill_value=9), img)[0, 0].tolist() == [9, 9, 9, 9]
    gray = np.zeros((2, 2), np.uint8)
    assert run(vision.Pad(1, fill_value=(7, 8, 9)), gray)[0, 0] == 7
    assert run(vision.Pad(0), gray) is gray


# ---------------------------------------------------------------------------------------------- RandomCrop


def _ref_random_crop(img, size, padding, pad_if_needed, fill, mode, rng):
    ch, cw = (size, size) if isinstance(size, int) else size
    left, top, right, bottom = padding
    padded = _ref_pad(img, left, top, right, bottom, mode, fill)
    if pad_if_needed:
        dh, dw = max(ch - padded.shape[0], 0), max(cw - padded.shape[1], 0)
        padded = _ref_pad(padded, dw, dh, dw, dh, mode, fill)
    x = int(rng.integers(0, padded.shape[1] - cw + 1))  # left first, as MindSpore draws
    y = int(rng.integers(0, padded.shape[0] - ch + 1))
    return padded[y : y + ch, x : x + cw]


@pytest.mark.parametrize(
    ("size", "padding", "pad_if_needed", "mode"),
    [
        ((20, 30), None, False, Border.CONSTANT),
        (37, (3, 5), False, Border.REFLECT),
        ((45, 70), (1, 2, 3, 4), True, Border.EDGE),
        ((60, 20), None, True, Border.SYMMETRIC),
        ((37, 53), None, False, Border.CONSTANT),
    ],
)
@pytest.mark.parametrize("row", range(3))
def test_random_crop_matches_reference(drawing, size, padding, pad_if_needed, mode, row) -> None:
    op = vision.RandomCrop(size, padding, pad_if_needed, fill_value=(5, 6, 7), padding_mode=mode)
    want = _ref_random_crop(
        drawing, size, op.padding or (0, 0, 0, 0), pad_if_needed, (5, 6, 7), mode, row_rng(3, 1, row, 4)
    )
    out = run(op, drawing, seed=3, pass_index=1, row=row, position=4)
    np.testing.assert_array_equal(out, want)
    out[...] = 0  # a copy, never a view of the input
    assert drawing.any()


def test_random_crop_too_small_without_pad_if_needed_names_the_shape(drawing) -> None:
    with pytest.raises(ValueError, match=r"RandomCrop: the crop size \(40, 10\) is larger.*\(37, 53, 3\)"):
        run(vision.RandomCrop((40, 10)), drawing)


# ---------------------------------------------------------------------------------------------- flips


@pytest.mark.parametrize(
    "img",
    [_drawing(), _drawing()[..., 0], _drawing().astype(np.float64), _drawing()[:1], _drawing() > 100],
    ids=["rgb", "gray", "float64", "one_row", "bool"],
)
def test_vertical_flip_exact_and_a_view(img: np.ndarray) -> None:
    out = vision.VerticalFlip()(img)
    np.testing.assert_array_equal(out, img[::-1])
    assert out.dtype == img.dtype and np.shares_memory(out, img)


def test_random_vertical_flip_prob_bounds(drawing) -> None:
    for row in range(20):
        np.testing.assert_array_equal(run(vision.RandomVerticalFlip(1.0), drawing, row=row), drawing[::-1])
        assert run(vision.RandomVerticalFlip(0.0), drawing, row=row) is drawing
    flips = [
        np.array_equal(run(vision.RandomVerticalFlip(), drawing, row=r), drawing[::-1]) for r in range(64)
    ]
    assert 16 <= sum(flips) <= 48


# ---------------------------------------------------------------------------------------------- ResizedCrop

CV_FLAGS = {Inter.NEAREST: cv2.INTER_NEAREST, Inter.BILINEAR: cv2.INTER_LINEAR, Inter.BICUBIC: cv2.INTER_CUBIC,
            Inter.AREA: cv2.INTER_AREA}  # fmt: skip


@pytest.mark.parametrize("interp", list(CV_FLAGS))
@pytest.mark.parametrize(
    ("box", "size"), [((2, 5, 20, 30), (24, 24)), ((0, 0, 37, 53), 16), ((10, 40, 5, 13), (40, 9))]
)
def test_resized_crop_matches_cv2(drawing, interp, box, size) -> None:
    top, left, h, w = box
    oh, ow = (size, size) if isinstance(size, int) else size
    want = cv2.resize(drawing[top : top + h, left : left + w], (ow, oh), interpolation=CV_FLAGS[interp])
    np.testing.assert_array_equal(vision.ResizedCrop(top, left, h, w, size, interp)(drawing), want)


def test_resized_crop_pilcubic_matches_pillow(photo) -> None:
    want = np.array(Image.fromarray(photo[4:36, 8:56]).resize((20, 14), Image.BICUBIC))
    assert _within_one(vision.ResizedCrop(4, 8, 32, 48, (14, 20), Inter.PILCUBIC)(photo), want)


def test_resized_crop_outside_the_image_raises(drawing) -> None:
    with pytest.raises(
        ValueError, match=r"ResizedCrop: the crop box \(top=30, left=0, height=10, width=4\).*\(37, 53, 3\)"
    ):
        vision.ResizedCrop(30, 0, 10, 4, 8)(drawing)


# ---------------------------------------------------------------------------------------------- Rotate


@pytest.mark.parametrize("degrees", [30, -17.5, 90, 123, 180, 400])
def test_rotate_nearest_matches_pillow(photo, degrees) -> None:
    out = vision.Rotate(degrees, fill_value=(10, 200, 30))(photo)
    want = np.array(Image.fromarray(photo).rotate(degrees, resample=Image.NEAREST, fillcolor=(10, 200, 30)))
    assert float((out == want).mean()) >= 0.999


@pytest.mark.parametrize("degrees", [30, -17.5, 123])
def test_rotate_bilinear_matches_pillow_inside_and_reference_everywhere(photo, degrees) -> None:
    out = vision.Rotate(degrees, Inter.BILINEAR)(photo)
    h, w = photo.shape[:2]
    # Pillow does not blend the border pixels with the fill: compare where all 4 neighbours are inside.
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    a = math.radians(degrees)
    u = math.cos(a) * (xs - (w - 1) / 2) - math.sin(a) * (ys - (h - 1) / 2) + (w - 1) / 2
    v = math.sin(a) * (xs - (w - 1) / 2) + math.cos(a) * (ys - (h - 1) / 2) + (h - 1) / 2
    inside = (u >= 0) & (u <= w - 2) & (v >= 0) & (v <= h - 2)
    pil = np.array(Image.fromarray(photo).rotate(degrees, resample=Image.BILINEAR))
    assert inside.mean() > 0.5 and _within_one(out, pil, mask=np.broadcast_to(inside[..., None], out.shape))
    assert _within_one(out, _ref_rotate(photo, degrees, h, w, None, 0, nearest=False))


def test_rotate_center_is_in_pixel_coordinates(photo) -> None:
    out = vision.Rotate(25, center=(10, 20))(photo)
    # Pillow's centre is in corner coordinates: pixel (10, 20)'s centre is its (10.5, 20.5).
    want = np.array(Image.fromarray(photo).rotate(25, resample=Image.NEAREST, center=(10.5, 20.5)))
    assert float((out == want).mean()) >= 0.999


@pytest.mark.parametrize("degrees", [30, 45, 123, -70, 0])
def test_rotate_expand_size_and_pixels(photo, degrees) -> None:
    h, w = photo.shape[:2]
    out = vision.Rotate(degrees, Inter.BILINEAR, expand=True, fill_value=50)(photo)
    a = math.radians(degrees)
    want_shape = (
        round(abs(w * math.sin(a)) + abs(h * math.cos(a))),
        round(abs(w * math.cos(a)) + abs(h * math.sin(a))),
    )
    assert out.shape == (*want_shape, 3)
    assert _within_one(out, _ref_rotate(photo, degrees, *want_shape, None, 50, nearest=False))


@pytest.mark.parametrize(("degrees", "k"), [(90, 1), (180, 2), (270, 3), (-90, 3)])
def test_rotate_quarter_turns_with_expand_are_exact(drawing, degrees, k) -> None:
    for img in (drawing, drawing[..., 0], drawing.astype(np.float32)):
        np.testing.assert_array_equal(vision.Rotate(degrees, expand=True)(img), np.rot90(img, k))


def test_rotate_fills_in_channel_order_and_handles_other_layouts(photo) -> None:
    out = vision.Rotate(45, fill_value=(1, 2, 3))(photo)
    assert out[0, 0].tolist() == [1, 2, 3]
    # 6 channels (warped in groups of 4) and int32 (warped in float64) match the per-channel result.
    six = np.concatenate([photo, photo[..., ::-1]], axis=2)
    out6 = vision.Rotate(33, Inter.BICUBIC, fill_value=9)(six)
    np.testing.assert_array_equal(out6[..., :3], vision.Rotate(33, Inter.BICUBIC, fill_value=9)(photo))
    np.testing.assert_array_equal(
        out6[..., 3:], vision.Rotate(33, Inter.BICUBIC, fill_value=9)(photo[..., ::-1])
    )
    gray = photo[..., 0]
    as_f64 = vision.Rotate(33, Inter.BILINEAR)(gray.astype(np.float64))
    out32 = vision.Rotate(33, Inter.BILINEAR)(gray.astype(np.int32))
    assert out32.dtype == np.int32
    np.testing.assert_array_equal(out32, np.rint(as_f64).astype(np.int32))


def test_random_rotation_draws_its_angle_from_the_row(photo) -> None:
    op = vision.RandomRotation((-40, 25), Inter.BILINEAR, fill_value=(3, 4, 5))
    for row in range(4):
        angle = row_rng(5, 2, row, 1).uniform(-40, 25)
        want = vision.Rotate(angle, Inter.BILINEAR, fill_value=(3, 4, 5))(photo)
        np.testing.assert_array_equal(run(op, photo, seed=5, pass_index=2, row=row, position=1), want)
    assert vision.RandomRotation(30).degrees == (-30.0, 30.0)


# ---------------------------------------------------------------------------------------------- Affine


AFFINE_CASES = [
    (15, (0.1, -0.05), 1.1, (5, 0)),
    (-40, (0, 0), 0.8, (10, -7)),
    (0, (0.2, 0.2), 1.0, (0, 20)),
    (170, (-0.3, 0.1), 1.3, (-12, 3)),
]


@pytest.mark.parametrize("case", AFFINE_CASES)
@pytest.mark.parametrize("interp", [Inter.NEAREST, Inter.BILINEAR])
def test_affine_matches_reference(photo, case, interp) -> None:
    degrees, translate, scale, shear = case
    h, w = photo.shape[:2]
    out = vision.Affine(degrees, translate, scale, shear, interp, fill_value=(20, 120, 220))(photo)
    want = _ref_affine(
        photo,
        degrees,
        (translate[0] * w, translate[1] * h),
        scale,
        shear,
        (20, 120, 220),
        interp is Inter.NEAREST,
    )
    assert _within_one(out, want)


def test_affine_turns_clockwise_where_rotate_turns_counter_clockwise(photo) -> None:
    for d in (30, -75):
        np.testing.assert_array_equal(
            vision.Affine(d, (0, 0), 1.0, 0, Inter.BILINEAR)(photo), vision.Rotate(-d, Inter.BILINEAR)(photo)
        )
    assert vision.Affine(0, (0, 0), 1.0, 7.5).shear == (7.5, 0.0)


def test_random_affine_draws_in_mindspore_order(photo) -> None:
    op = vision.RandomAffine(
        (-20, 30), (-0.1, 0.2, -0.15, 0.05), (0.8, 1.2), (-10, 10, -5, 5), Inter.BILINEAR, 77
    )
    h, w = photo.shape[:2]
    for row in range(4):
        rng = row_rng(9, 0, row, 3)
        deg, tx, ty = rng.uniform(-20, 30), rng.uniform(-0.1, 0.2) * w, rng.uniform(-0.15, 0.05) * h
        scale, shx, shy = rng.uniform(0.8, 1.2), rng.uniform(-10, 10), rng.uniform(-5, 5)
        want = _ref_affine(photo, deg, (tx, ty), scale, (shx, shy), 77, nearest=False)
        assert _within_one(run(op, photo, seed=9, row=row, position=3), want)


def test_random_affine_parameter_forms() -> None:
    op = vision.RandomAffine(10, translate=(-0.2, 0.2), scale=(0.5, 2), shear=5)
    assert (op.degrees, op.translate, op.scale, op.shear) == (
        (-10.0, 10.0),
        (-0.2, 0.2, 0.0, 0.0),
        (0.5, 2.0),
        (-5.0, 5.0, 0.0, 0.0),
    )
    assert vision.RandomAffine(0).shear == (0.0, 0.0, 0.0, 0.0) and vision.RandomAffine(0).scale == (1.0, 1.0)
    assert vision.RandomAffine(0, shear=(1, 2)).shear == (1.0, 2.0, 0.0, 0.0)


# ---------------------------------------------------------------------------------------------- ConvertColor


def _alpha(dtype: np.dtype) -> float:
    return {np.dtype(np.uint8): 255, np.dtype(np.uint16): 65535}.get(np.dtype(dtype), 1.0)


def _with_alpha(img: np.ndarray) -> np.ndarray:
    return np.concatenate([img, np.full((*img.shape[:2], 1), _alpha(img.dtype), img.dtype)], axis=2)


def _gray_ref(img: np.ndarray, weights: tuple[float, float, float]) -> np.ndarray:
    g = img[..., 0] * weights[0] + img[..., 1] * weights[1] + img[..., 2] * weights[2]
    return (
        np.clip(np.rint(g), 0, np.iinfo(img.dtype).max).astype(img.dtype)
        if img.dtype.kind == "u"
        else g.astype(img.dtype)
    )


RGB_W, BGR_W = (0.299, 0.587, 0.114), (0.114, 0.587, 0.299)
CONVERT_REFS: list[tuple[ConvertMode, int, Callable[[np.ndarray], np.ndarray]]] = [
    (ConvertMode.COLOR_BGR2RGB, 3, lambda x: x[..., ::-1]),
    (ConvertMode.COLOR_RGB2BGR, 3, lambda x: x[..., ::-1]),
    (ConvertMode.COLOR_RGB2RGBA, 3, _with_alpha),
    (ConvertMode.COLOR_BGR2RGBA, 3, lambda x: _with_alpha(x[..., ::-1])),
    (ConvertMode.COLOR_RGBA2RGB, 4, lambda x: x[..., :3]),
    (ConvertMode.COLOR_RGBA2BGR, 4, lambda x: x[..., 2::-1]),
    (ConvertMode.COLOR_BGRA2RGBA, 4, lambda x: x[..., [2, 1, 0, 3]]),
    (ConvertMode.COLOR_RGB2GRAY, 3, lambda x: _gray_ref(x, RGB_W)),
    (ConvertMode.COLOR_BGR2GRAY, 3, lambda x: _gray_ref(x, BGR_W)),
    (ConvertMode.COLOR_RGBA2GRAY, 4, lambda x: _gray_ref(x, RGB_W)),
    (ConvertMode.COLOR_BGRA2GRAY, 4, lambda x: _gray_ref(x, BGR_W)),
    (ConvertMode.COLOR_GRAY2RGB, 1, lambda x: np.repeat(x[..., None], 3, axis=2)),
    (ConvertMode.COLOR_GRAY2RGBA, 1, lambda x: _with_alpha(np.repeat(x[..., None], 3, axis=2))),
]


@pytest.mark.parametrize(
    ("mode", "channels", "ref"), CONVERT_REFS, ids=[m.name + str(c) for m, c, _ in CONVERT_REFS]
)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64])
def test_convert_color(photo, mode, channels, ref, dtype) -> None:
    base = np.concatenate([photo, photo[..., :1]], axis=2) if channels == 4 else photo
    img = (base[..., 0] if channels == 1 else base).astype(dtype)
    if dtype != np.uint8:
        img = img * (257 if dtype == np.uint16 else 1 / 255)
        img = img.astype(dtype)
    out = vision.ConvertColor(mode)(img)
    want = ref(img)
    assert out.dtype == img.dtype and out.shape == want.shape
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    else:
        assert _within_one(out, want, frac=1.0)
    if mode is ConvertMode.COLOR_RGB2GRAY and dtype == np.uint8:  # and against Pillow's convert("L")
        assert _within_one(out, np.array(Image.fromarray(img).convert("L")), frac=1.0)


def test_convert_color_gray_accepts_hw1_and_rejects_wrong_channels(photo) -> None:
    gray = photo[..., :1]
    assert vision.ConvertColor(ConvertMode.COLOR_GRAY2RGB)(gray).shape == (48, 64, 3)
    with pytest.raises(
        ValueError,
        match=r"ConvertColor: COLOR_BGRA2BGR/COLOR_RGBA2RGB expects an image with 4 channel\(s\)\. Found shape \(48, 64, 3\) \(uint8\)",
    ):
        vision.ConvertColor(ConvertMode.COLOR_RGBA2RGB)(photo)
    with pytest.raises(
        TypeError, match=r"ConvertColor: expected a uint8, uint16 or float image. Found dtype int32"
    ):
        vision.ConvertColor(ConvertMode.COLOR_BGR2RGB)(photo.astype(np.int32))


# ---------------------------------------------------------------------------------------------- Grayscale


def test_grayscale_matches_pillow(photo, drawing) -> None:
    for img in (photo, drawing):
        want = np.array(Image.fromarray(img).convert("L"))
        out = vision.Grayscale()(img)
        assert _within_one(out, want, frac=1.0)
        np.testing.assert_array_equal(vision.Grayscale(3)(img), np.repeat(out[..., None], 3, axis=2))
    rgba = np.concatenate([photo, np.full((48, 64, 1), 7, np.uint8)], axis=2)
    np.testing.assert_array_equal(vision.Grayscale()(rgba), vision.Grayscale()(photo))
    np.testing.assert_array_equal(vision.Grayscale()(photo[..., :1]), photo[..., 0])
    f = photo.astype(np.float64)
    np.testing.assert_allclose(vision.Grayscale()(f), f @ np.array(RGB_W), rtol=1e-12)


# ---------------------------------------------------------------------------------------------- RandomColorAdjust


def _gray8(img: np.ndarray) -> np.ndarray:
    return np.rint(img.astype(np.float64) @ np.array(RGB_W))


def _ref_brightness(img, f):
    return np.clip(np.rint(img * f), 0, 255).astype(np.uint8)


def _ref_contrast(img, f):
    m = np.rint(_gray8(img).mean())
    return np.clip(np.rint(img * f + m * (1 - f)), 0, 255).astype(np.uint8)


def _ref_saturation(img, f):
    return np.clip(np.rint(img * f + _gray8(img)[..., None] * (1 - f)), 0, 255).astype(np.uint8)


def _ref_hue(img, h):
    """MindSpore's formula: rotate the hue of OpenCV's full-range HSV by int(h * 255), mod 256."""
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
    hsv[..., 0] = (hsv[..., 0].astype(int) + int(h * 255)) % 256
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL)


def _tv_hue(img, h):
    """torchvision's PIL formula: the same rotation, on Pillow's HSV."""
    hh, s, v = Image.fromarray(img).convert("HSV").split()
    nh = ((np.array(hh).astype(int) + int(h * 255)) % 256).astype(np.uint8)
    return np.array(Image.merge("HSV", (Image.fromarray(nh, "L"), s, v)).convert("RGB"))


@pytest.mark.parametrize("factor", [0.0, 0.4, 1.0, 1.7])
@pytest.mark.parametrize(
    ("arg", "enhance"),
    [
        ("brightness", ImageEnhance.Brightness),
        ("contrast", ImageEnhance.Contrast),
        ("saturation", ImageEnhance.Color),
    ],
)
def test_color_adjust_single_factor_matches_pillow(photo, drawing, arg, enhance, factor) -> None:
    op = vision.RandomColorAdjust(**{arg: (factor, factor)})
    for img in (photo, drawing):
        want = np.array(enhance(Image.fromarray(img)).enhance(factor))
        assert _within_one(run(op, img), want)


@pytest.mark.parametrize("hue", [-0.5, -0.2, -0.05, 0.1, 0.33, 0.5])
def test_color_adjust_hue(photo, hue) -> None:
    out = run(vision.RandomColorAdjust(hue=(hue, hue)), photo)
    np.testing.assert_array_equal(out, _ref_hue(photo, hue))
    # torchvision's PIL version turns the hue the same way; Pillow's HSV is quantised differently.
    diff = np.abs(out.astype(int) - _tv_hue(photo, hue))
    assert diff.mean() < 0.6 and (diff <= 2).mean() > 0.95


def test_color_adjust_random_order_and_draws_match_reference(photo) -> None:
    op = vision.RandomColorAdjust(brightness=0.4, contrast=(0.5, 1.5), saturation=0.6, hue=0.2)
    refs = {0: _ref_brightness, 1: _ref_contrast, 2: _ref_saturation, 3: _ref_hue}
    ranges = {0: op.brightness, 1: op.contrast, 2: op.saturation, 3: op.hue}
    orders = set()
    for row in range(12):
        rng = row_rng(4, 0, row, 2)
        order = rng.permutation(4)
        orders.add(tuple(order))
        want = photo
        for k in order:
            want = refs[k](want, rng.uniform(*ranges[k]))
        assert _within_one(run(op, photo, seed=4, row=row, position=2), want)
    assert len(orders) > 3  # the order really changes per row
    assert run(vision.RandomColorAdjust(), photo) is photo  # every range the identity: nothing to do


def test_color_adjust_ranges_and_input_check(photo) -> None:
    op = vision.RandomColorAdjust(brightness=1.5, contrast=0.2, saturation=[0.1, 3], hue=0.5)
    assert (op.brightness, op.contrast, op.saturation, op.hue) == (
        (0.0, 2.5),
        (0.8, 1.2),
        (0.1, 3.0),
        (-0.5, 0.5),
    )
    with pytest.raises(
        ValueError,
        match=r"RandomColorAdjust: expected an RGB uint8 image of shape <H, W, 3>. Found shape \(48, 64\), dtype uint8",
    ):
        run(op, photo[..., 0])
    with pytest.raises(ValueError, match=r"Found shape \(48, 64, 3\), dtype float32"):
        run(op, photo.astype(np.float32))


# ---------------------------------------------------------------------------------------------- GaussianBlur


def _gauss(k: int, sigma: float) -> np.ndarray:
    x = np.arange(k) - (k - 1) / 2
    g = np.exp(-(x**2) / (2 * sigma**2))
    return g / g.sum()


def _ref_blur(img: np.ndarray, kx: np.ndarray, ky: np.ndarray) -> np.ndarray:
    """Separable convolution over mirrored borders that do not repeat the edge (NumPy's 'reflect')."""
    h, w = img.shape[:2]
    f = img.reshape(h, w, -1).astype(np.float64)
    rx, ry = len(kx) // 2, len(ky) // 2
    p = np.pad(f, ((ry, ry), (rx, rx), (0, 0)), mode="reflect")
    tmp = sum(kx[i] * p[:, i : i + w] for i in range(len(kx)))
    out = sum(ky[j] * tmp[j : j + h] for j in range(len(ky)))
    if img.dtype.kind in "iu":
        out = np.clip(np.rint(out), 0, np.iinfo(img.dtype).max)
    return out.astype(img.dtype).reshape(img.shape)


@pytest.mark.parametrize(
    ("ksize", "sigma", "kx", "ky"),
    [
        (5, 1.5, _gauss(5, 1.5), _gauss(5, 1.5)),
        ((7, 3), (2.0, 0.7), _gauss(7, 2.0), _gauss(3, 0.7)),  # (width, height)
        (9, None, _gauss(9, 0.3 * (4 - 1) + 0.8), _gauss(9, 0.3 * (4 - 1) + 0.8)),  # OpenCV's sigma rule
        (3, None, np.array([0.25, 0.5, 0.25]), np.array([0.25, 0.5, 0.25])),  # OpenCV's fixed kernel
        ((5, 1), 3.0, _gauss(5, 3.0), np.array([1.0])),
    ],
)
def test_gaussian_blur_matches_reference(photo, ksize, sigma, kx, ky) -> None:
    op = vision.GaussianBlur(ksize, sigma)
    for img in (photo, photo[..., 0], photo[:5, :4]):
        assert _within_one(op(img), _ref_blur(img, kx, ky))
    f = photo.astype(np.float32)
    np.testing.assert_allclose(op(f), _ref_blur(f, kx, ky), rtol=1e-4, atol=1e-3)
    assert op(photo.astype(np.int32)).dtype == np.int32


# ---------------------------------------------------------------------------------------------- random ops


RANDOM_OPS = [
    vision.RandomCrop((20, 25), padding=2),
    vision.RandomVerticalFlip(),
    vision.RandomRotation(45, Inter.BILINEAR),
    vision.RandomAffine(20, (-0.1, 0.1, -0.1, 0.1), (0.8, 1.2), 10),
    vision.RandomColorAdjust(0.4, 0.4, 0.4, 0.1),
]


@pytest.mark.parametrize("op", RANDOM_OPS, ids=lambda op: op.name)
def test_random_ops_are_a_function_of_the_row_context(photo, op) -> None:
    assert type(op).random
    outs = [run(op, photo, row=r) for r in range(16)]
    for r in (0, 7):
        np.testing.assert_array_equal(run(op, photo, row=r), outs[r])
    distinct = len({o.tobytes() for o in outs})
    assert distinct >= (2 if op.name == "RandomVerticalFlip" else 15)
    if op.name != "RandomVerticalFlip":
        assert not np.array_equal(run(op, photo, row=0, pass_index=1), outs[0])
        assert not np.array_equal(run(op, photo, row=0, seed=2), outs[0])


# ---------------------------------------------------------------------------------------------- output_spec

HWC = np.zeros((37, 53, 3), np.uint8)
HW = np.zeros((37, 53), np.float32)
RGBA = np.zeros((10, 12, 4), np.uint16)

SPEC_CASES: list[tuple[Any, np.ndarray]] = [
    (vision.Pad((1, 2, 3, 4)), HWC),
    (vision.Pad(3, padding_mode=Border.REFLECT), HW),
    (vision.RandomCrop(20), HWC),
    (vision.RandomCrop((50, 60), padding=1, pad_if_needed=True), HW),
    (vision.VerticalFlip(), HWC),
    (vision.VerticalFlip(), HW),
    (vision.RandomVerticalFlip(), HWC),
    (vision.ResizedCrop(1, 2, 20, 30, (7, 9)), HWC),
    (vision.ResizedCrop(1, 2, 20, 30, 5), HW),
    (vision.Rotate(30), HWC),
    (vision.Rotate(30, expand=True), HWC),
    (vision.Rotate(-77, expand=True), HW),
    (vision.RandomRotation(30), HW),
    (vision.RandomRotation((33, 33), expand=True), HWC),
    (vision.Affine(10, (0.1, 0.1), 1.2, (3, 4)), HWC),
    (vision.Affine(10, (0.1, 0.1), 1.2, 3), HW),
    (vision.RandomAffine(10), HWC),
    (vision.ConvertColor(ConvertMode.COLOR_RGB2GRAY), HWC),
    (vision.ConvertColor(ConvertMode.COLOR_RGB2BGRA), HWC),
    (vision.ConvertColor(ConvertMode.COLOR_GRAY2RGB), HW),
    (vision.ConvertColor(ConvertMode.COLOR_RGBA2BGR), RGBA),
    (vision.Grayscale(), HWC),
    (vision.Grayscale(3), HWC),
    (vision.Grayscale(3), HW),
    (vision.RandomColorAdjust(0.5), HWC),
    (vision.GaussianBlur(5), HWC),
    (vision.GaussianBlur((3, 7), (1, 2)), HW),
]


@pytest.mark.parametrize(("op", "img"), SPEC_CASES, ids=[f"{op.name}-{img.shape}" for op, img in SPEC_CASES])
def test_output_spec_matches_the_kernel(op, img) -> None:
    out = run(op, img, row=3)
    spec = op.output_spec(TensorSpec(img.shape, img.dtype))
    assert spec == TensorSpec(out.shape, out.dtype)
    # With the size unknown, every size the rule still states must match; the dtype passes through.
    unknown = op.output_spec(TensorSpec((None, None, *img.shape[2:]), img.dtype))
    assert len(unknown.shape) == out.ndim and unknown.dtype == out.dtype
    assert all(d is None or d == o for d, o in zip(unknown.shape, out.shape, strict=True))
    assert op.output_spec(TensorSpec(img.shape, None)).dtype is None


def test_output_spec_unknown_sizes_stay_unknown_only_where_they_must() -> None:
    u8 = np.dtype(np.uint8)
    assert vision.Pad(2).output_spec(TensorSpec((None, 5, 3), u8)).shape == (None, 9, 3)
    assert vision.RandomRotation(10, expand=True).output_spec(TensorSpec((4, 5, 3), u8)).shape == (
        None,
        None,
        3,
    )
    assert vision.RandomCrop(3).output_spec(TensorSpec((None, None), u8)).shape == (3, 3)


def test_output_spec_rejects_bad_inputs() -> None:
    u8 = np.dtype(np.uint8)
    with pytest.raises(
        ValueError, match=r"Pad: expected an image of shape <H, W> or <H, W, C>. Found shape \(5,\)"
    ):
        vision.Pad(1).output_spec(TensorSpec((5,), u8))
    with pytest.raises(
        ValueError, match=r"ConvertColor: COLOR_BGR2RGB/COLOR_RGB2BGR expects an image with 3 channel"
    ):
        vision.ConvertColor(ConvertMode.COLOR_BGR2RGB).output_spec(TensorSpec((4, 4), u8))
    with pytest.raises(ValueError, match=r"RandomCrop: the crop size \(9, 9\) is larger"):
        vision.RandomCrop(9).output_spec(TensorSpec((4, 40, 3), u8))
    with pytest.raises(ValueError, match=r"RandomColorAdjust: expected an RGB uint8 image"):
        vision.RandomColorAdjust().output_spec(TensorSpec((4, 4), u8))
    with pytest.raises(ValueError, match=r"ResizedCrop: the crop box"):
        vision.ResizedCrop(0, 0, 9, 9, 3).output_spec(TensorSpec((4, 4), u8))
    with pytest.raises(ValueError, match=r"Rotate: expected 1 input. Found: 2"):
        vision.Rotate(3).output_spec(TensorSpec((4, 4), u8), TensorSpec((4, 4), u8))


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


# ---------------------------------------------------------------------------------------------- the contract

SPECS = [
    vision.Pad((1, 2), fill_value=(1, 2, 3), padding_mode=Border.SYMMETRIC),
    vision.RandomCrop(
        (3, 4), padding=[1, 2, 3, 4], pad_if_needed=True, fill_value=5, padding_mode=Border.EDGE
    ),
    vision.VerticalFlip(),
    vision.RandomVerticalFlip(0.25),
    vision.ResizedCrop(1, 2, 3, 4, (5, 6), Inter.BICUBIC),
    vision.RandomCropDecodeResize(7, scale=(0.5, 1.0), interpolation=Inter.AREA, max_attempts=3),
    vision.Rotate(12.5, Inter.BILINEAR, True, (3, 4), (9, 8, 7)),
    vision.RandomRotation((-5, 10), Inter.BICUBIC, center=(1.5, 2)),
    vision.Affine(10, (0.1, -0.2), 1.5, (3, 4), Inter.BILINEAR, 3),
    vision.RandomAffine(5, (-0.1, 0.1), (0.9, 1.1), (1, 2, 3, 4)),
    vision.ConvertColor(ConvertMode.COLOR_RGB2GRAY),
    vision.Grayscale(3),
    vision.RandomColorAdjust(0.1, (0.5, 1.5), 0.2, (-0.1, 0.2)),
    vision.GaussianBlur((3, 5), (1.0, 2.0)),
    vision.GaussianBlur(7),
    vision.Rotate(5).device("GPU"),
]


@pytest.mark.parametrize("op", SPECS, ids=lambda op: op.name)
def test_spec_pickles_and_compares_equal(op: Any) -> None:
    back = pickle.loads(pickle.dumps(op))
    assert back == op and type(back) is type(op) and repr(back) == repr(op)
    assert back.device_target == op.device_target


def test_reprs_read_back_as_code() -> None:
    assert repr(vision.Pad(1)) == "Pad(padding=(1, 1, 1, 1), fill_value=0, padding_mode=Border.CONSTANT)"
    assert (
        repr(vision.ConvertColor(ConvertMode.COLOR_RGB2BGR))
        == "ConvertColor(convert_mode=ConvertMode.COLOR_BGR2RGB)"
    )
    assert vision.Rotate(3) != vision.Rotate(4) and vision.Rotate(3) == vision.Rotate(3.0)


BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: vision.Pad(-1), ArgumentError, r"Pad: `padding` must be at least 0. Found: -1"),
    (lambda: vision.Pad((1, 2, 3)), TypeError, r"Pad: `padding` must be an int, a sequence of 2 ints"),
    (lambda: vision.Pad((1, 2.5)), TypeError, r"Pad: `padding\[1\]` must be an int. Found: 2.5 \(float\)"),
    (lambda: vision.Pad("3"), TypeError, r"Pad: `padding` must be an int.*'3' \(str\)"),
    (
        lambda: vision.Pad(1, fill_value=256),
        ArgumentError,
        r"Pad: `fill_value` must be in \[0, 255\]. Found: 256",
    ),
    (
        lambda: vision.Pad(1, fill_value=(1, 2)),
        TypeError,
        r"Pad: `fill_value` must be an int or a sequence of 3 ints",
    ),
    (
        lambda: vision.Pad(1, fill_value=(1, 2, -3)),
        ArgumentError,
        r"Pad: `fill_value\[2\]` must be at least 0",
    ),
    (
        lambda: vision.Pad(1, padding_mode="edge"),
        TypeError,
        r"Pad: `padding_mode` must be a vision.Border member",
    ),
    (lambda: vision.RandomCrop(0), ArgumentError, r"RandomCrop: `size` must be greater than 0. Found: 0"),
    (lambda: vision.RandomCrop(4, padding=-2), ArgumentError, r"RandomCrop: `padding` must be at least 0"),
    (lambda: vision.RandomCrop(4, pad_if_needed=1), TypeError, r"RandomCrop: `pad_if_needed` must be a bool"),
    (
        lambda: vision.RandomVerticalFlip(1.5),
        ArgumentError,
        r"RandomVerticalFlip: `prob` must be in \[0, 1\]. Found: 1.5",
    ),
    (
        lambda: vision.RandomVerticalFlip("x"),
        TypeError,
        r"RandomVerticalFlip: `prob` must be a number. Found: 'x'",
    ),
    (
        lambda: vision.ResizedCrop(-1, 0, 2, 2, 4),
        ArgumentError,
        r"ResizedCrop: `top` must be at least 0. Found: -1",
    ),
    (
        lambda: vision.ResizedCrop(0, 0, 0, 2, 4),
        ArgumentError,
        r"ResizedCrop: `height` must be greater than 0",
    ),
    (
        lambda: vision.ResizedCrop(0, 0, 2, 2, (4, 0)),
        ArgumentError,
        r"ResizedCrop: `size\[1\] \(width\)` must be greater",
    ),
    (
        lambda: vision.ResizedCrop(0, 0, 2, 2, 4, "linear"),
        TypeError,
        r"ResizedCrop: `interpolation` must be a vision.Inter",
    ),
    (
        lambda: vision.RandomCropDecodeResize(8, scale=(0.9, 0.1)),
        ArgumentError,
        r"RandomCropDecodeResize: `scale` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomCropDecodeResize(8, ratio=(0, 1)),
        ArgumentError,
        r"RandomCropDecodeResize: `ratio\[0\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomCropDecodeResize(8, max_attempts=0),
        ArgumentError,
        r"RandomCropDecodeResize: `max_attempts` must be greater",
    ),
    (lambda: vision.Rotate("x"), TypeError, r"Rotate: `degrees` must be a number. Found: 'x' \(str\)"),
    (lambda: vision.Rotate(float("nan")), ArgumentError, r"Rotate: `degrees` must be finite"),
    (
        lambda: vision.Rotate(10, Inter.PILCUBIC),
        ArgumentError,
        r"Rotate: `resample` must be Inter.NEAREST, BILINEAR",
    ),
    (lambda: vision.Rotate(10, 2), TypeError, r"Rotate: `resample` must be a vision.Inter member"),
    (lambda: vision.Rotate(10, expand=1), TypeError, r"Rotate: `expand` must be a bool"),
    (
        lambda: vision.Rotate(10, center=(1,)),
        TypeError,
        r"Rotate: `center` must be None or a sequence of 2 numbers",
    ),
    (lambda: vision.Rotate(10, center=(1, "a")), TypeError, r"Rotate: `center\[1\] \(y\)` must be a number"),
    (lambda: vision.Rotate(10, fill_value=300), ArgumentError, r"Rotate: `fill_value` must be in \[0, 255\]"),
    (
        lambda: vision.RandomRotation(-5),
        ArgumentError,
        r"RandomRotation: `degrees` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomRotation((10, 5)),
        ArgumentError,
        r"RandomRotation: `degrees` must be \(min, max\) with min <= max",
    ),
    (
        lambda: vision.RandomRotation((1, 2, 3)),
        TypeError,
        r"RandomRotation: `degrees` must be a number or a sequence of 2",
    ),
    (
        lambda: vision.Affine(200, (0, 0), 1, 0),
        ArgumentError,
        r"Affine: `degrees` must be in \[-180, 180\]. Found: 200",
    ),
    (
        lambda: vision.Affine(0, (0, 2), 1, 0),
        ArgumentError,
        r"Affine: `translate\[1\]` must be in \[-1, 1\]. Found: 2",
    ),
    (lambda: vision.Affine(0, 0.5, 1, 0), TypeError, r"Affine: `translate` must be a sequence of 2 numbers"),
    (
        lambda: vision.Affine(0, (0, 0), 0, 0),
        ArgumentError,
        r"Affine: `scale` must be greater than 0. Found: 0",
    ),
    (
        lambda: vision.Affine(0, (0, 0), 1, (0, 190)),
        ArgumentError,
        r"Affine: `shear\[1\]` must be in \[-180, 180\]",
    ),
    (
        lambda: vision.Affine(0, (0, 0), 1, (90, 0)),
        ArgumentError,
        r"Affine: `shear\[0\]` must not be \+-90 degrees",
    ),
    (
        lambda: vision.Affine(0, (0, 0), 1, "a"),
        TypeError,
        r"Affine: `shear` must be a number or a sequence of 2",
    ),
    (
        lambda: vision.RandomAffine(-1),
        ArgumentError,
        r"RandomAffine: `degrees` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomAffine(0, translate=(0.1, 0.2, 0.3)),
        TypeError,
        r"RandomAffine: `translate` must be a sequence of 2 or 4",
    ),
    (
        lambda: vision.RandomAffine(0, translate=(0.2, 0.1)),
        ArgumentError,
        r"RandomAffine: `translate` must be \(min, max\) pairs",
    ),
    (
        lambda: vision.RandomAffine(0, translate=(-2, 0.1)),
        ArgumentError,
        r"RandomAffine: `translate\[0\]` must be in \[-1, 1\]",
    ),
    (
        lambda: vision.RandomAffine(0, scale=(-1, 2)),
        ArgumentError,
        r"RandomAffine: `scale\[0\]` must be at least 0",
    ),
    (
        lambda: vision.RandomAffine(0, scale=(0, 0)),
        ArgumentError,
        r"RandomAffine: `scale\[1\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomAffine(0, shear=-3),
        ArgumentError,
        r"RandomAffine: `shear` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomAffine(0, shear=(0, 200)),
        ArgumentError,
        r"RandomAffine: `shear\[1\]` must be in \[-180, 180\]",
    ),
    (
        lambda: vision.ConvertColor(7),
        TypeError,
        r"ConvertColor: `convert_mode` must be a vision.ConvertMode member, e.g. ConvertMode.COLOR_BGR2RGB. Found: 7 \(int\)",
    ),
    (
        lambda: vision.Grayscale(2),
        ArgumentError,
        r"Grayscale: `num_output_channels` must be 1 or 3. Found: 2",
    ),
    (lambda: vision.Grayscale(1.0), TypeError, r"Grayscale: `num_output_channels` must be an int"),
    (
        lambda: vision.RandomColorAdjust(brightness=-0.1),
        ArgumentError,
        r"RandomColorAdjust: `brightness` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomColorAdjust(contrast=(1.5, 0.5)),
        ArgumentError,
        r"RandomColorAdjust: `contrast` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomColorAdjust(saturation=(-1, 1)),
        ArgumentError,
        r"RandomColorAdjust: `saturation` must lie in at least 0",
    ),
    (
        lambda: vision.RandomColorAdjust(hue=0.6),
        ArgumentError,
        r"RandomColorAdjust: `hue` must lie in \[-0.5, 0.5\]",
    ),
    (
        lambda: vision.RandomColorAdjust(hue="0.1"),
        TypeError,
        r"RandomColorAdjust: `hue` must be a number or a sequence of 2",
    ),
    (lambda: vision.GaussianBlur(4), ArgumentError, r"GaussianBlur: `kernel_size` must be odd. Found: 4"),
    (
        lambda: vision.GaussianBlur((3, 0)),
        ArgumentError,
        r"GaussianBlur: `kernel_size\[1\]` must be greater than 0",
    ),
    (
        lambda: vision.GaussianBlur(3.0),
        TypeError,
        r"GaussianBlur: `kernel_size` must be an int or a sequence of 2 ints",
    ),
    (
        lambda: vision.GaussianBlur(3, 0),
        ArgumentError,
        r"GaussianBlur: `sigma` must be greater than 0. Found: 0",
    ),
    (lambda: vision.GaussianBlur(3, (1, "a")), TypeError, r"GaussianBlur: `sigma\[1\]` must be a number"),
]


@pytest.mark.parametrize(("make", "exc", "message"), BAD, ids=[m for _, _, m in BAD])
def test_argument_errors(make: Callable[[], Any], exc: type[Exception], message: str) -> None:
    with pytest.raises(exc, match=message):
        make()


KERNEL_OPS = [
    vision.Pad(1),
    vision.RandomCrop(1),
    vision.VerticalFlip(),
    vision.RandomVerticalFlip(),
    vision.ResizedCrop(0, 0, 1, 1, 2),
    vision.Rotate(10),
    vision.RandomRotation(10),
    vision.Affine(0, (0, 0), 1, 0),
    vision.RandomAffine(10),
    vision.ConvertColor(ConvertMode.COLOR_BGR2RGB),
    vision.Grayscale(),
    vision.RandomColorAdjust(0.5),
    vision.GaussianBlur(3),
]


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda op: op.name)
def test_kernels_reject_bad_images_naming_op_shape_and_dtype(op: Any) -> None:
    with pytest.raises(
        ValueError,
        match=rf"{op.name}: expected an image of shape <H, W> or <H, W, C>. Found shape \(5,\) \(1-D, uint8\)",
    ):
        run(op, np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match=rf"{op.name}: expected a non-empty image. Found shape \(0, 4, 3\)"):
        run(op, np.zeros((0, 4, 3), np.uint8))
    with pytest.raises(TypeError, match=rf"{op.name}: expected an image as a numpy array. Found: list"):
        run(op, [[1, 2], [3, 4]])
