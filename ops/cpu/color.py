"""CPU kernels of the colour vision ops: ConvertColor, Grayscale, RandomColorAdjust, GaussianBlur.

OpenCV does the pixel work (it releases the GIL); the formulas are MindSpore's CPU ones. Kernels read only
the op's attributes and never import ``minddata.vision``: ``convert_mode`` arrives as an ``IntEnum`` whose
value is OpenCV's ``cv2.COLOR_*`` code.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _cast_back, _image
from minddata.ops.plans.color import color_adjustments
from minddata.ops.registry import declare_op, register_kernel

__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_hue",
    "adjust_saturation",
    "convert_color",
    "gaussian_kernel",
]

_CV_COLOR_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.float32))
_CV_BLUR_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))

# cv2.COLOR_* code → (input channels, output channels, NumPy recipe for float64).
# A recipe is ("order", channel indices, add alpha) or ("gray", weights of channels 0, 1, 2).
_RGB_W = (0.299, 0.587, 0.114)
_BGR_W = (0.114, 0.587, 0.299)
# code -> (input channels, output channels, recipe: ("order", channel order, add alpha) or ("gray", weights))
_CONVERT: dict[int, tuple[int, int, tuple[Any, ...]]] = {
    0: (3, 4, ("order", (0, 1, 2), True)),  # BGR2BGRA / RGB2RGBA
    1: (4, 3, ("order", (0, 1, 2), False)),  # BGRA2BGR / RGBA2RGB
    2: (3, 4, ("order", (2, 1, 0), True)),  # BGR2RGBA / RGB2BGRA
    3: (4, 3, ("order", (2, 1, 0), False)),  # RGBA2BGR / BGRA2RGB
    4: (3, 3, ("order", (2, 1, 0), False)),  # BGR2RGB / RGB2BGR
    5: (4, 4, ("order", (2, 1, 0, 3), False)),  # BGRA2RGBA / RGBA2BGRA
    6: (3, 1, ("gray", _BGR_W)),  # BGR2GRAY
    7: (3, 1, ("gray", _RGB_W)),  # RGB2GRAY
    8: (1, 3, ("order", (0, 0, 0), False)),  # GRAY2BGR / GRAY2RGB
    9: (1, 4, ("order", (0, 0, 0), True)),  # GRAY2BGRA / GRAY2RGBA
    10: (4, 1, ("gray", _BGR_W)),  # BGRA2GRAY
    11: (4, 1, ("gray", _RGB_W)),  # RGBA2GRAY
}


def _channels(img: np.ndarray) -> int:
    return 1 if img.ndim == 2 else img.shape[2]


def _mode_name(mode: Any) -> str:
    """``COLOR_BGRA2BGR/COLOR_RGBA2RGB``: every name of the mode (MindSpore's names share members)."""
    members = getattr(type(mode), "__members__", None)
    if members is None:
        return str(mode)
    return "/".join(name for name, member in members.items() if member is mode)


def convert_color(img: np.ndarray, code: int, op_name: str = "ConvertColor", mode: Any = None) -> np.ndarray:
    """``cv2.cvtColor`` for ``uint8``/``uint16``/``float32``; float16 through float32, float64 in NumPy."""
    c_in, c_out, recipe = _CONVERT[code]
    if _channels(img) != c_in:
        raise ValueError(
            f"{op_name}: {_mode_name(mode if mode is not None else code)} expects an image with {c_in} "
            f"channel(s). Found shape {img.shape} ({img.dtype})"
        )
    if img.dtype in _CV_COLOR_DTYPES:
        out = cv2.cvtColor(img, code)
        return out if c_out > 1 else out.reshape(img.shape[:2])
    if img.dtype == np.float16:
        return convert_color(img.astype(np.float32), code, op_name, mode).astype(np.float16)
    if img.dtype != np.float64:
        raise TypeError(
            f"{op_name}: expected a uint8, uint16 or float image. Found dtype {img.dtype} (shape {img.shape})"
        )
    planes = img.reshape(*img.shape[:2], -1)
    if recipe[0] == "gray":
        w0, w1, w2 = recipe[1]
        return planes[..., 0] * w0 + planes[..., 1] * w1 + planes[..., 2] * w2
    out = planes[..., list(recipe[1])]
    if recipe[2]:
        out = np.concatenate([out, np.ones((*img.shape[:2], 1), img.dtype)], axis=2)
    return out


@register_kernel("ConvertColor", "CPU")
def convert_color_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("ConvertColor", image)
    return convert_color(img, int(op.convert_mode), "ConvertColor", op.convert_mode)


# ---------------------------------------------------------------------------------------------- Grayscale


@register_kernel("Grayscale", "CPU")
def grayscale(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Grayscale", image, numeric=True)
    c = _channels(img)
    if c == 1:
        gray = img.reshape(img.shape[:2])
    elif c in (3, 4):
        if img.dtype in _CV_COLOR_DTYPES:
            gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY if c == 3 else cv2.COLOR_RGBA2GRAY)
        else:
            planes = img.astype(np.float64)
            gray = _cast_back(
                planes[..., 0] * 0.299 + planes[..., 1] * 0.587 + planes[..., 2] * 0.114, img.dtype
            )
    else:
        raise ValueError(
            f"Grayscale: expected an image with 1, 3 (RGB) or 4 (RGBA) channels. Found shape {img.shape} ({img.dtype})"
        )
    if op.num_output_channels == 3:
        return np.repeat(gray[..., None], 3, axis=2)
    return gray


# ---------------------------------------------------------------------------------------------- RandomColorAdjust

_LEVELS = np.arange(256, dtype=np.float64)


def _lut(table: np.ndarray) -> np.ndarray:
    # Round half to even and saturate, as OpenCV's saturate_cast<uchar> does.
    return np.clip(np.rint(table), 0, 255).astype(np.uint8)


def adjust_brightness(img: np.ndarray, factor: float) -> np.ndarray:
    """``image * factor``, rounded and clipped (MindSpore's ``convertTo(.., alpha)``)."""
    return cv2.LUT(img, _lut(_LEVELS * factor))


def adjust_contrast(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend with the mean grey level (rounded to an integer, as MindSpore's uint8 grey image holds it)."""
    mean = float(np.rint(cv2.mean(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY))[0]))
    return cv2.LUT(img, _lut(_LEVELS * factor + mean * (1.0 - factor)))


def adjust_saturation(img: np.ndarray, factor: float) -> np.ndarray:
    """Blend with the grayscale image."""
    gray = cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    return cv2.addWeighted(img, factor, gray, 1.0 - factor, 0.0)


def adjust_hue(img: np.ndarray, hue: float) -> np.ndarray:
    """Rotate the hue of ``cv2.COLOR_RGB2HSV_FULL`` (0-255 for the full circle) by ``int(hue * 255)``."""
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
    shift = int(hue * 255) % 256  # C++'s truncating cast, wrapped as a uint8 add wraps
    if shift:
        hsv[..., 0] = cv2.LUT(hsv[..., 0], ((np.arange(256) + shift) % 256).astype(np.uint8))
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL)


# In the plan's order (minddata.ops.plans.color.ADJUSTMENTS).
_ADJUST = (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue)


declare_op("RandomColorAdjust", cost_ms_per_mp=4.0)
@register_kernel("RandomColorAdjust", "CPU")
def random_color_adjust(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomColorAdjust", image)
    if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
        raise ValueError(
            f"RandomColorAdjust: expected an RGB uint8 image of shape <H, W, 3>. "
            f"Found shape {img.shape}, dtype {img.dtype}"
        )
    # The plan: MindSpore's per-row shuffle of the four adjustments and each one's factor.
    for k, factor in color_adjustments(ctx.rng, op):
        img = _ADJUST[k](img, factor)
    return img


# ---------------------------------------------------------------------------------------------- GaussianBlur


# OpenCV's fixed kernels for an unset sigma and sizes up to 7 (its small_gaussian_tab), as MindSpore gets.
_SMALL_GAUSSIAN = {
    1: (1.0,),
    3: (0.25, 0.5, 0.25),
    5: (0.0625, 0.25, 0.375, 0.25, 0.0625),
    7: (0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125),
}


def gaussian_kernel(size: int, sigma: float | None) -> np.ndarray:
    """The 1-D kernel ``cv2.GaussianBlur`` uses: for ``sigma=None`` OpenCV's fixed kernels up to size 7,
    else sigma ``0.3 * ((size - 1) / 2 - 1) + 0.8``. Built here rather than left to OpenCV: OpenCV 5
    quantises its derived kernels to 1/256, OpenCV 4 (MindSpore's) does not."""
    if sigma is None:
        if size in _SMALL_GAUSSIAN:
            return np.asarray(_SMALL_GAUSSIAN[size], dtype=np.float64)
        sigma = 0.3 * ((size - 1) * 0.5 - 1) + 0.8
    x = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    k = np.exp(-(x * x) / (2.0 * sigma * sigma))
    return k / k.sum()


def _blur(img: np.ndarray, kx: np.ndarray, ky: np.ndarray) -> np.ndarray:
    if img.dtype not in _CV_BLUR_DTYPES:
        return _cast_back(_blur(img.astype(np.float64), kx, ky), img.dtype)
    out = cv2.sepFilter2D(img, -1, kx, ky, borderType=cv2.BORDER_REFLECT_101)
    return out.reshape(img.shape)


@register_kernel("GaussianBlur", "CPU")
def gaussian_blur(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("GaussianBlur", image, numeric=True)
    (kw, kh), sigma = op.kernel_size, op.sigma
    kx = gaussian_kernel(kw, None if sigma is None else sigma[0])
    ky = gaussian_kernel(kh, None if sigma is None else sigma[1])
    return _blur(img, kx, ky)
