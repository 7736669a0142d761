"""ConvertColor, Grayscale, RandomColorAdjust and GaussianBlur: each CPU kernel against Pillow, cv2 or
a reference written here."""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import pytest
from PIL import Image, ImageEnhance
from vision_testing import run, within_one

from minddata import vision
from minddata.ops import row_rng
from minddata.vision import ConvertMode

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
        assert within_one(out, want, frac=1.0)
    if mode is ConvertMode.COLOR_RGB2GRAY and dtype == np.uint8:  # and against Pillow's convert("L")
        assert within_one(out, np.array(Image.fromarray(img).convert("L")), frac=1.0)


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
        assert within_one(out, want, frac=1.0)
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
        assert within_one(run(op, img), want)


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
        assert within_one(run(op, photo, seed=4, row=row, position=2), want)
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
        assert within_one(op(img), _ref_blur(img, kx, ky))
    f = photo.astype(np.float32)
    np.testing.assert_allclose(op(f), _ref_blur(f, kx, ky), rtol=1e-4, atol=1e-3)
    assert op(photo.astype(np.int32)).dtype == np.int32
