"""CPU kernels of the geometric vision ops: pads, crops, vertical flips, rotations and affine warps.

OpenCV does the pixel work (``copyMakeBorder``, ``warpAffine``: both release the GIL); NumPy covers the
dtypes and channel counts OpenCV rejects. Kernels read only the op's attributes and never import
``minddata.vision``: ``padding_mode`` arrives as a ``Border`` (a ``str`` enum, compared by value) and
``resample``/``interpolation`` as an ``Inter`` (keyed on its ``name``).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.cpu.image import _cast_back, _image, resize_image
from minddata.ops.plans.affine import affine_params, random_affine_params, rotation, rotation_degrees
from minddata.ops.plans.crop import CropBox, check_crop_box, random_crop_plan
from minddata.ops.plans.flip import flips
from minddata.ops.plans.image import fill_values, interpolation_name, square
from minddata.ops.registry import register_kernel

__all__ = ["pad_image", "rotate_image", "warp_affine"]

_CV_PAD_DTYPES = frozenset(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)
)
_CV_WARP_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))
_CV_BORDER = {
    "constant": cv2.BORDER_CONSTANT,
    "edge": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT_101,  # [3, 2 | 1, 2, 3, 4 | 3, 2]: the edge is not repeated
    "symmetric": cv2.BORDER_REFLECT,  # [2, 1 | 1, 2, 3, 4 | 4, 3]: the edge is repeated
}
# A warp has no area filter: OpenCV itself treats INTER_AREA as bilinear in warpAffine, as MindSpore does.
_CV_WARP_INTER = {
    "NEAREST": cv2.INTER_NEAREST,
    "BILINEAR": cv2.INTER_LINEAR,
    "LINEAR": cv2.INTER_LINEAR,
    "AREA": cv2.INTER_LINEAR,
    "BICUBIC": cv2.INTER_CUBIC,
    "CUBIC": cv2.INTER_CUBIC,
    "LANCZOS": cv2.INTER_LANCZOS4,
}


def _channels(img: np.ndarray) -> int:
    return 1 if img.ndim == 2 else img.shape[2]


def _typed_fill(values: tuple[float, ...], dtype: np.dtype) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if dtype == np.bool_:
        return arr > 0
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        arr = np.clip(arr, info.min, info.max)
    return arr.astype(dtype)


# ---------------------------------------------------------------------------------------------- Pad


def _border_name(mode: Any) -> str:
    return str(getattr(mode, "value", mode)).lower()


def pad_image(
    img: np.ndarray, left: int, top: int, right: int, bottom: int, mode: Any, fill: Any, op_name: str = "Pad"
) -> np.ndarray:
    """Pad an ``<H, W>``/``<H, W, C>`` array; ``mode`` is a Border (or its value), ``fill`` as Pad's."""
    if not (left or top or right or bottom):
        return img
    border = _border_name(mode)
    if border not in _CV_BORDER:
        raise ValueError(f"{op_name}: unknown padding mode {mode!r}")
    c = _channels(img)
    h, w = img.shape[0] + top + bottom, img.shape[1] + left + right
    if img.dtype in _CV_PAD_DTYPES and c <= 4:
        value = fill_values(fill, c) + (0.0,) * (4 - c)
        out = cv2.copyMakeBorder(img, top, bottom, left, right, _CV_BORDER[border], value=value)
        return out.reshape(h, w, *img.shape[2:])  # cv2 drops a trailing channel axis of length 1
    # Other dtypes (bool, float16, 64-bit ints, ...) and more than 4 channels: NumPy.
    if border == "constant":
        out = np.empty((h, w, *img.shape[2:]), dtype=img.dtype)
        out[...] = _typed_fill(fill_values(fill, c), img.dtype).reshape((-1,) if img.ndim == 3 else ())
        out[top : top + img.shape[0], left : left + img.shape[1]] = img
        return out
    widths = ((top, bottom), (left, right)) + ((0, 0),) * (img.ndim - 2)
    return np.pad(img, widths, mode=border)


@register_kernel("Pad", "CPU")
def pad(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Pad", image)
    left, top, right, bottom = op.padding
    return pad_image(img, left, top, right, bottom, op.padding_mode, op.fill_value, "Pad")


# ---------------------------------------------------------------------------------------------- crops


@register_kernel("RandomCrop", "CPU")
def random_crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomCrop", image)
    (left, top, right, bottom), box = random_crop_plan(ctx.rng, img.shape, square(op.size), op.padding, op.pad_if_needed)
    if top or bottom or left or right:
        img = pad_image(img, left, top, right, bottom, op.padding_mode, op.fill_value, "RandomCrop")
    # A copy, not a view: a view would pin the whole source image and let in-place ops alias it.
    return img[box.top : box.bottom, box.left : box.right].copy()


@register_kernel("ResizedCrop", "CPU")
def resized_crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("ResizedCrop", image, numeric=True)
    box = CropBox(op.top, op.left, op.height, op.width)
    check_crop_box("ResizedCrop", img.shape, box)
    oh, ow = square(op.size)
    return resize_image(img[box.top : box.bottom, box.left : box.right], oh, ow, op.interpolation, "ResizedCrop")


# ---------------------------------------------------------------------------------------------- flips


@register_kernel("VerticalFlip", "CPU")
def vertical_flip(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    return _image("VerticalFlip", image)[::-1]  # a view: free, and later ops read views fine


@register_kernel("RandomVerticalFlip", "CPU")
def random_vertical_flip(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomVerticalFlip", image)  # validate before drawing: a bad input fails on every row
    return img[::-1] if flips(ctx.rng, op.prob) else img


# ---------------------------------------------------------------------------------------------- warps


def warp_affine(
    img: np.ndarray, matrix: np.ndarray, out_h: int, out_w: int, resample: Any, fill: Any, op_name: str
) -> np.ndarray:
    """``cv2.warpAffine`` with a forward (source → output) 2x3 ``matrix`` and a constant border."""
    flag = _CV_WARP_INTER.get(interpolation_name(resample))
    if flag is None:
        raise ValueError(f"{op_name}: unsupported resample {resample!r}")
    if img.dtype not in _CV_WARP_DTYPES:
        # bool, int8, 32/64-bit ints, float16: warp in float64 (exact for every int32), cast back.
        out = warp_affine(img.astype(np.float64), matrix, out_h, out_w, resample, fill, op_name)
        return _cast_back(out, img.dtype)
    c = _channels(img)
    values = fill_values(fill, c)
    if c > 4:  # OpenCV's cubic and Lanczos warps take at most 4 channels: warp in groups of 4
        groups = [
            warp_affine(img[..., k : k + 4], matrix, out_h, out_w, resample, values[k : k + 4], op_name)
            for k in range(0, c, 4)
        ]
        return np.concatenate([g.reshape(out_h, out_w, -1) for g in groups], axis=2)
    out = cv2.warpAffine(
        img,
        np.asarray(matrix, dtype=np.float64),
        (out_w, out_h),
        flags=flag,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=values + (0.0,) * (4 - c),
    )
    return out.reshape(out_h, out_w, *img.shape[2:])


def rotate_image(
    img: np.ndarray,
    degrees: float,
    resample: Any,
    expand: bool,
    center: tuple[float, float] | None,
    fill: Any,
    op_name: str = "Rotate",
) -> np.ndarray:
    """Rotate counter-clockwise about ``center`` (pixel coordinates; ``None``: the exact image centre)."""
    matrix, out_h, out_w = rotation(img.shape[0], img.shape[1], degrees, center, expand)
    return warp_affine(img, matrix, out_h, out_w, resample, fill, op_name)


@register_kernel("Rotate", "CPU")
def rotate(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Rotate", image, numeric=True)
    return rotate_image(img, op.degrees, op.resample, op.expand, op.center, op.fill_value, "Rotate")


@register_kernel("RandomRotation", "CPU")
def random_rotation(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomRotation", image, numeric=True)
    degrees = rotation_degrees(ctx.rng, op.degrees)
    return rotate_image(img, degrees, op.resample, op.expand, op.center, op.fill_value, "RandomRotation")


@register_kernel("Affine", "CPU")
def affine(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Affine", image, numeric=True)
    h, w = img.shape[:2]
    return warp_affine(img, affine_params(op, h, w).matrix(h, w), h, w, op.resample, op.fill_value, "Affine")


@register_kernel("RandomAffine", "CPU")
def random_affine(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomAffine", image, numeric=True)
    h, w = img.shape[:2]
    return warp_affine(img, random_affine_params(ctx.rng, op, h, w).matrix(h, w), h, w, op.resample, op.fill_value, "RandomAffine")
