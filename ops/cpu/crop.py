"""CPU kernels of the crop family: CenterCrop, Crop, RandomCrop and Pad (the padding RandomCrop applies
first). Boxes, padding and random positions come from the plan (:mod:`minddata.ops.plans.crop`).

A crop returns a copy, not a view: a view would pin the whole source image and let in-place ops alias it.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _image, channels
from minddata.ops.plans.crop import CropBox, center_crop_box, random_crop_plan
from minddata.ops.plans.image import fill_values, square
from minddata.ops.plans.resize import crop_resize
from minddata.ops.registry import declare_op, register_kernel

__all__ = ["crop_padded", "pad_image"]

_CV_PAD_DTYPES = frozenset(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)
)
_CV_BORDER = {
    "constant": cv2.BORDER_CONSTANT,
    "edge": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT_101,  # [3, 2 | 1, 2, 3, 4 | 3, 2]: the edge is not repeated
    "symmetric": cv2.BORDER_REFLECT,  # [2, 1 | 1, 2, 3, 4 | 4, 3]: the edge is repeated
}


def _typed_fill(values: tuple[float, ...], dtype: np.dtype) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if dtype == np.bool_:
        return arr > 0
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        arr = np.clip(arr, info.min, info.max)
    return arr.astype(dtype)


declare_op("CenterCrop", cost_ms_per_mp=0.2)
@register_kernel("CenterCrop", "CPU")
def center_crop(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("CenterCrop", image)
    return crop_padded(img, center_crop_box(img.shape[0], img.shape[1], *square(op.size)))


def _inside(n: int, start: int, length: int) -> tuple[slice, slice]:
    """(source slice, destination slice) along one axis of a box that may start before the image."""
    first, last = max(start, 0), min(start + length, n)
    return slice(first, last), slice(first - start, last - start)


def crop_padded(img: np.ndarray, box: CropBox) -> np.ndarray:
    """``box`` of ``img``, zero where the box leaves the image (CenterCrop's padding)."""
    if box.top >= 0 and box.left >= 0 and box.bottom <= img.shape[0] and box.right <= img.shape[1]:
        return img[box.top : box.bottom, box.left : box.right].copy()  # a copy: see crop()
    src_y, dst_y = _inside(img.shape[0], box.top, box.height)
    src_x, dst_x = _inside(img.shape[1], box.left, box.width)
    out = np.zeros((box.height, box.width, *img.shape[2:]), dtype=img.dtype)
    out[dst_y, dst_x] = img[src_y, src_x]
    return out


declare_op("Crop", cost_ms_per_mp=0.2)
@register_kernel("Crop", "CPU")
def crop(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Crop", image)
    box = crop_resize(op, img.shape[0], img.shape[1], shape=img.shape).box
    # A copy, not a view: a view would pin the whole source image and let in-place ops alias it.
    return img[box.top : box.bottom, box.left : box.right].copy()


@register_kernel("RandomCrop", "CPU")
def random_crop(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomCrop", image)
    (left, top, right, bottom), box = random_crop_plan(
        ctx.rng, img.shape, square(op.size), op.padding, op.pad_if_needed
    )
    if top or bottom or left or right:
        img = pad_image(img, left, top, right, bottom, op.padding_mode, op.fill_value, "RandomCrop")
    # A copy, not a view: a view would pin the whole source image and let in-place ops alias it.
    return img[box.top : box.bottom, box.left : box.right].copy()


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
    c = channels(img)
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
    # `border` is one of _CV_BORDER's keys (checked above), which are np.pad modes too
    return np.pad(img, widths, mode=cast(Literal["constant", "edge", "reflect", "symmetric"], border))


declare_op("Pad", cost_ms_per_mp=0.4)
@register_kernel("Pad", "CPU")
def pad(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Pad", image)
    left, top, right, bottom = op.padding
    return pad_image(img, left, top, right, bottom, op.padding_mode, op.fill_value, "Pad")
