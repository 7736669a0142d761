"""CPU kernels of the pixel-adjusting vision ops (``minddata.vision.adjust``): the Adjust* family,
AutoContrast, Equalize, Invert, Posterize, Solarize, their Random* forms, RandomColor, RandomLighting,
RandomGrayscale and the HSV conversions.

The formulas are MindSpore's CPU ones (OpenCV arithmetic: rounding where it rounds, float32 where it
computes in float32), so outputs match MindSpore's bit for bit on ``uint8`` images; Pillow's ImageEnhance
and ImageOps truncate where these round and differ by about one grey level. The ``*_image`` functions are
public: the augmentation policies (``minddata.ops.cpu.augment_policies``) apply them directly. Random
kernels execute the plans of ``minddata.ops.plans.adjust``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.color import adjust_hue, adjust_saturation
from minddata.ops.cpu.image import _cast_back, _image
from minddata.ops.plans import adjust as adjust_plan
from minddata.ops.registry import register_kernel

__all__ = [
    "auto_contrast_image",
    "brightness_image",
    "color_image",
    "contrast_image",
    "equalize_image",
    "gamma_image",
    "hsv_to_rgb_array",
    "hue_image",
    "invert_image",
    "lighting_image",
    "posterize_image",
    "rgb_to_hsv_array",
    "saturation_image",
    "sharpness_image",
    "solarize_image",
]

_CV_FILTER_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))


def _channels(img: np.ndarray) -> int:
    return 1 if img.ndim == 2 else img.shape[2]


def rgb_uint8(op_name: str, image: Any) -> np.ndarray:
    """The input as an RGB ``uint8`` ``<H, W, 3>`` array, or an error naming ``op_name``."""
    img = _image(op_name, image)
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise ValueError(
            f"{op_name}: expected an RGB uint8 image of shape <H, W, 3>. Found shape {img.shape}, dtype {img.dtype}"
        )
    return img


def uint8_image(op_name: str, image: Any) -> np.ndarray:
    """The input as a ``uint8`` ``<H, W>``/``<H, W, C>`` array, or an error naming ``op_name``."""
    img = _image(op_name, image)
    if img.dtype != np.uint8:
        raise TypeError(f"{op_name}: expected a uint8 image. Found dtype {img.dtype} (shape {img.shape})")
    return img


def _per_channel(img: np.ndarray, fn: Any) -> np.ndarray:
    """Apply ``fn`` (2-D ``uint8`` plane → plane) to every channel."""
    if img.ndim == 2:
        return fn(img)
    planes = [fn(np.ascontiguousarray(img[..., c])) for c in range(img.shape[2])]
    return np.stack(planes, axis=2)


# ---------------------------------------------------------------------------------------------- pixel functions


def as_float32(factor: float) -> float:
    """``factor`` as the C++ ``float`` MindSpore holds it in: 1.3 becomes 1.2999999523, so ``95 * 1.3``
    rounds down to 123 as MindSpore's does, not to 124."""
    return float(np.float32(factor))


def brightness_image(img: np.ndarray, factor: float) -> np.ndarray:
    """``image * factor``: rounded and saturated for integer images (OpenCV's ``convertTo``)."""
    factor = as_float32(factor)
    if img.dtype == np.uint8:
        # float32 products, as OpenCV's convertTo computes them (RandomColorAdjust's helper multiplies
        # in float64 and can round a tie the other way).
        table = np.arange(256, dtype=np.float32) * np.float32(factor)
        return np.clip(np.rint(table), 0, 255).astype(np.uint8)[img]
    return _cast_back(img.astype(np.float64) * factor, img.dtype)


def contrast_image(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend an RGB ``uint8`` image with its mean grey level (rounded to an integer, as MindSpore), with
    OpenCV's ``addWeighted`` as MindSpore's matrix expression evaluates it."""
    factor = as_float32(factor)
    mean = float(np.rint(cv2.mean(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY))[0]))
    flat = np.full(img.shape, min(mean, 255.0), np.uint8)
    return cv2.addWeighted(flat, 1.0 - factor, img, factor, 0.0)


def saturation_image(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend an RGB ``uint8`` image with its grayscale version: ``addWeighted(gray, 1 - f, image, f)``,
    the operand order of MindSpore's matrix expression (RandomColorAdjust's helper adds the other way
    round, which can round a tie differently)."""
    factor = as_float32(factor)
    gray = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    return cv2.addWeighted(gray, 1.0 - factor, img, factor, 0.0)


def hue_image(img: np.ndarray, hue: float) -> np.ndarray:
    """Rotate the hue of an RGB ``uint8`` image by ``int(hue * 255)`` steps of the 0-255 circle."""
    return adjust_hue(img, hue)


def gamma_image(img: np.ndarray, gamma: float, gain: float, op_name: str = "AdjustGamma") -> np.ndarray:
    """MindSpore's gamma curve. ``uint8``: the table ``floor(min((i / 255) ** gamma * 255.999 * gain,
    255))`` in float32; floats: ``clip((x * gain) ** gamma, 0, 1)``."""
    if img.dtype == np.uint8:
        levels = np.arange(256, dtype=np.float32) / np.float32(255.0)
        curve = np.power(levels, np.float32(gamma), dtype=np.float32)
        table = np.minimum(curve * np.float32(255.999) * np.float32(gain), np.float32(255.0))
        return np.clip(np.floor(table), 0, 255).astype(np.uint8)[img]
    if img.dtype.kind == "f":
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            out = np.power(img * img.dtype.type(gain), img.dtype.type(gamma))
        return np.clip(out, 0, 1).astype(img.dtype, copy=False)
    raise TypeError(
        f"{op_name}: expected a uint8 or float image. Found dtype {img.dtype} (shape {img.shape})"
    )


# PIL's ImageFilter.SMOOTH, the image Sharpness blends with.
_SMOOTH = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / np.float32(13.0)


def _smooth(img: np.ndarray) -> np.ndarray:
    if _channels(img) > 4:
        return np.concatenate([_smooth(img[..., k : k + 4]) for k in range(0, img.shape[2], 4)], axis=2)
    out = cv2.filter2D(img, -1, _SMOOTH).reshape(img.shape)
    # The border keeps the original pixels, as MindSpore and Pillow do.
    out[0], out[-1], out[:, 0], out[:, -1] = img[0], img[-1], img[:, 0], img[:, -1]
    return out


def sharpness_image(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend with the smoothed image: ``factor * image + (1 - factor) * smooth(image)`` (OpenCV's
    ``addWeighted``: rounded, saturated). 0 blurs, 1 keeps the image, 2 sharpens."""
    if img.dtype not in _CV_FILTER_DTYPES:
        return _cast_back(sharpness_image(img.astype(np.float64), factor), img.dtype)
    factor = as_float32(factor)
    smooth = _smooth(img)
    return cv2.addWeighted(img, factor, smooth, 1.0 - factor, 0.0).reshape(img.shape)


def _clip_percentiles(hist: np.ndarray, cutoff: float) -> tuple[int, int]:
    """Remove ``cutoff`` percent of the pixels from each end of ``hist``; the (lo, hi) of what is left."""
    # MindSpore passes the percentage as an int32: 20.5 percent cuts 20 percent.
    cut_total = int(np.float32(int(cutoff)) / np.float32(100.0) * np.float32(hist.sum()))
    for order in (range(256), range(255, -1, -1)):
        cut = cut_total
        for k in order:
            if cut <= 0:
                break
            taken = min(cut, int(hist[k]))
            hist[k] -= taken
            cut -= taken
    nonzero = np.flatnonzero(hist)
    if nonzero.size == 0:
        return 255, -1
    return int(nonzero[0]), int(nonzero[-1])


def _auto_contrast_table(plane: np.ndarray, cutoff: float, ignore: Sequence[int]) -> np.ndarray:
    hist = np.bincount(plane.reshape(-1), minlength=256).astype(np.int64)
    hist[list(ignore)] = 0
    lo, hi = _clip_percentiles(hist, cutoff)
    if hi <= lo:
        return np.arange(256, dtype=np.uint8)
    scale = np.float32(255.0) / np.float32(hi - lo)
    offset = np.float32(-lo) * scale
    values = np.arange(256, dtype=np.float32) * scale + offset
    return np.clip(np.trunc(values), 0, 255).astype(np.uint8)


def auto_contrast_image(img: np.ndarray, cutoff: float = 0.0, ignore: Sequence[int] = ()) -> np.ndarray:
    """Per channel, stretch the levels between the ``cutoff`` percentiles (levels in ``ignore`` not
    counted) onto 0-255, truncating as ``PIL.ImageOps.autocontrast`` and MindSpore do."""
    return _per_channel(img, lambda p: _auto_contrast_table(p, cutoff, ignore)[p])


def equalize_image(img: np.ndarray) -> np.ndarray:
    """Histogram equalisation per channel: OpenCV's ``equalizeHist``, which MindSpore calls."""
    return _per_channel(img, cv2.equalizeHist)


def posterize_image(img: np.ndarray, bits: int) -> np.ndarray:
    """Keep the ``bits`` highest bits of every ``uint8`` value (0 bits: black)."""
    mask = (0xFF << (8 - bits)) & 0xFF
    return img & np.uint8(mask)


def solarize_image(img: np.ndarray, low: float, high: float) -> np.ndarray:
    """``255 - x`` where ``low <= x <= high`` (where ``x >= low`` when ``low == high``)."""
    inside = img >= low if low == high else (img >= low) & (img <= high)
    return np.where(inside, invert_image(img), img)


def invert_image(img: np.ndarray) -> np.ndarray:
    """``255 - x``: integer images saturate, float images do not clip (as MindSpore)."""
    if img.dtype == np.uint8:
        return np.uint8(255) - img
    if img.dtype.kind == "f":
        return img.dtype.type(255) - img
    return _cast_back(255.0 - img.astype(np.float64), img.dtype)


def lighting_image(img: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Add the (R, G, B) ``shift`` to every pixel; integer images round and saturate."""
    if img.dtype.kind == "f":
        return (img + shift.astype(img.dtype)).astype(img.dtype, copy=False)
    return _cast_back(img.astype(np.float32) + shift, img.dtype)


# ---------------------------------------------------------------------------------------------- HSV


def _layout(op_name: str, arr: np.ndarray, is_hwc: bool) -> int:
    """The channel axis of an ``<H, W, 3>``/``<N, H, W, 3>`` (HWC) or ``<3, H, W>``/``<N, 3, H, W>`` array."""
    if arr.ndim not in (3, 4) or arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{op_name}: expected a numeric image of shape {'<H, W, 3>' if is_hwc else '<3, H, W>'} or a "
            f"batch of them. Found shape {arr.shape}, dtype {arr.dtype}"
        )
    axis = arr.ndim - 1 if is_hwc else arr.ndim - 3
    if arr.shape[axis] != 3:
        raise ValueError(
            f"{op_name}: expected 3 channels on axis {axis} (is_hwc={is_hwc}). Found shape {arr.shape}"
        )
    return axis


def rgb_to_hsv_array(arr: np.ndarray, is_hwc: bool, op_name: str = "RgbToHsv") -> np.ndarray:
    """``colorsys.rgb_to_hsv`` on every pixel, in float64 (hue and saturation in [0, 1], value on the
    input's scale), as MindSpore's RgbToHsv computes it."""
    axis = _layout(op_name, arr, is_hwc)
    r, g, b = (np.take(arr, k, axis=axis).astype(np.float64) for k in range(3))
    maxc = np.maximum(np.maximum(r, g), b)
    minc = np.minimum(np.minimum(r, g), b)
    span = maxc - minc
    grey = span == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(grey, 0.0, span / maxc)
        rc, gc, bc = ((maxc - c) / span for c in (r, g, b))
        h = np.where(r == maxc, bc - gc, np.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
        h = np.where(grey, 0.0, (h / 6.0) % 1.0)
    return np.stack([h, s, maxc], axis=axis)


def hsv_to_rgb_array(arr: np.ndarray, is_hwc: bool, op_name: str = "HsvToRgb") -> np.ndarray:
    """``colorsys.hsv_to_rgb`` on every pixel, in float64, as MindSpore's HsvToRgb computes it."""
    axis = _layout(op_name, arr, is_hwc)
    h, s, v = (np.take(arr, k, axis=axis).astype(np.float64) for k in range(3))
    sector = np.trunc(h * 6.0)
    f = h * 6.0 - sector
    p, q, t = v * (1.0 - s), v * (1.0 - s * f), v * (1.0 - s * (1.0 - f))
    sector = sector.astype(np.int64) % 6
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    rgb = [np.select([sector == k for k in range(6)], [c[i] for c in choices]) for i in range(3)]
    rgb = [np.where(s == 0.0, v, c) for c in rgb]
    return np.stack(rgb, axis=axis)


# ---------------------------------------------------------------------------------------------- kernels


@register_kernel("AdjustBrightness", "CPU")
def adjust_brightness_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return brightness_image(_image("AdjustBrightness", image, numeric=True), op.brightness_factor)


@register_kernel("AdjustContrast", "CPU")
def adjust_contrast_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return contrast_image(rgb_uint8("AdjustContrast", image), op.contrast_factor)


@register_kernel("AdjustSaturation", "CPU")
def adjust_saturation_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return saturation_image(rgb_uint8("AdjustSaturation", image), op.saturation_factor)


@register_kernel("AdjustHue", "CPU")
def adjust_hue_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return hue_image(rgb_uint8("AdjustHue", image), op.hue_factor)


@register_kernel("AdjustGamma", "CPU")
def adjust_gamma_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return gamma_image(_image("AdjustGamma", image), op.gamma, op.gain)


@register_kernel("AdjustSharpness", "CPU")
def adjust_sharpness_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return sharpness_image(_image("AdjustSharpness", image, numeric=True), op.sharpness_factor)


@register_kernel("AutoContrast", "CPU")
def auto_contrast_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return auto_contrast_image(uint8_image("AutoContrast", image), op.cutoff, op.ignore)


@register_kernel("Equalize", "CPU")
def equalize_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return equalize_image(uint8_image("Equalize", image))


@register_kernel("Invert", "CPU")
def invert_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return invert_image(_image("Invert", image, numeric=True))


@register_kernel("Posterize", "CPU")
def posterize_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return posterize_image(uint8_image("Posterize", image), op.bits)


@register_kernel("Solarize", "CPU")
def solarize_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    low, high = op.threshold
    return solarize_image(_image("Solarize", image, numeric=True), low, high)


@register_kernel("RandomAdjustSharpness", "CPU")
def random_adjust_sharpness(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomAdjustSharpness", image, numeric=True)
    return sharpness_image(img, op.degree) if adjust_plan.applies(ctx.rng, op.prob) else img


@register_kernel("RandomAutoContrast", "CPU")
def random_auto_contrast(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = uint8_image("RandomAutoContrast", image)
    return auto_contrast_image(img, op.cutoff, op.ignore) if adjust_plan.applies(ctx.rng, op.prob) else img


@register_kernel("RandomEqualize", "CPU")
def random_equalize(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = uint8_image("RandomEqualize", image)
    return equalize_image(img) if adjust_plan.applies(ctx.rng, op.prob) else img


@register_kernel("RandomInvert", "CPU")
def random_invert(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomInvert", image, numeric=True)
    return invert_image(img) if adjust_plan.applies(ctx.rng, op.prob) else img


@register_kernel("RandomPosterize", "CPU")
def random_posterize(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = uint8_image("RandomPosterize", image)
    return posterize_image(img, adjust_plan.posterize_bits(ctx.rng, *op.bits))


@register_kernel("RandomSolarize", "CPU")
def random_solarize(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomSolarize", image, numeric=True)
    return solarize_image(img, *adjust_plan.solarize_range(ctx.rng, *op.threshold))


@register_kernel("RandomSharpness", "CPU")
def random_sharpness(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomSharpness", image, numeric=True)
    return sharpness_image(img, adjust_plan.uniform_factor(ctx.rng, *op.degrees))


# Within half a grey level of 1 (or 0), MindSpore's RandomColor returns the image (or its grey version).
_COLOR_EPS = 0.00195


def color_image(img: np.ndarray, factor: float) -> np.ndarray:
    """RandomColor's blend: ``addWeighted(image, f, gray, 1 - f)`` (the operand order of MindSpore's
    RandomColor, the other way round from AdjustSaturation), the image itself for ``f`` within half a
    grey level of 1, the grayscale image within half a level of 0."""
    factor = as_float32(factor)
    if abs(factor - 1.0) < _COLOR_EPS:
        return img
    if abs(factor) < _COLOR_EPS:
        return cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    return adjust_saturation(img, factor)


@register_kernel("RandomColor", "CPU")
def random_color(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rgb_uint8("RandomColor", image)
    return color_image(img, adjust_plan.uniform_factor(ctx.rng, *op.degrees))


@register_kernel("RandomLighting", "CPU")
def random_lighting(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomLighting", image, numeric=True)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"RandomLighting: expected an RGB image of shape <H, W, 3>. Found shape {img.shape}")
    return lighting_image(img, adjust_plan.lighting_shift(ctx.rng, op.alpha))


@register_kernel("RandomGrayscale", "CPU")
def random_grayscale(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomGrayscale", image, numeric=True)
    c = _channels(img)
    if c not in (1, 3):
        raise ValueError(
            f"RandomGrayscale: expected a grayscale or RGB image (1 or 3 channels). Found shape {img.shape}"
        )
    if c == 1 or not adjust_plan.applies(ctx.rng, op.prob):
        return img
    if getattr(image, "mode", None) == "RGB" and hasattr(image, "convert"):
        # A PIL image: Pillow's convert("L") (integer weights, its rounding), which MindSpore's
        # PIL-only RandomGrayscale calls; arrays keep OpenCV's rounding (at most one grey level apart).
        gray = np.asarray(image.convert("L"))
    elif img.dtype in (np.uint8, np.uint16, np.float32):
        gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    else:
        planes = img.astype(np.float64)
        gray = _cast_back(planes[..., 0] * 0.299 + planes[..., 1] * 0.587 + planes[..., 2] * 0.114, img.dtype)
    return np.repeat(gray[..., None], 3, axis=2)


@register_kernel("RgbToHsv", "CPU")
def rgb_to_hsv(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return rgb_to_hsv_array(np.asarray(image), op.is_hwc)


@register_kernel("HsvToRgb", "CPU")
def hsv_to_rgb(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return hsv_to_rgb_array(np.asarray(image), op.is_hwc)
