"""CPU kernels of the resize family: Resize, RandomResizedCrop, ResizedCrop (RandomCropDecodeResize,
which decodes only its crop, is in ``fused.py`` with the other decode-and-resize kernels).

OpenCV resizes (it releases the GIL, so thread workers scale); Pillow's antialiased filters serve
PILCUBIC and ANTIALIAS. Sizes and crop boxes come from the plan (:mod:`minddata.ops.plans.resize`).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _cast_back, _image
from minddata.ops.plans.bbox import random_interpolation
from minddata.ops.plans.image import interpolation_name
from minddata.ops.plans.resize import crop_resize, resize_output_size
from minddata.ops.registry import declare_op, register_kernel

__all__ = ["resize_image"]

# dtypes every cv2 interpolation accepts; others take a detour through float (see resize_image).
_CV_RESIZE_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))
_CV_INTER = {
    "NEAREST": cv2.INTER_NEAREST,
    "BILINEAR": cv2.INTER_LINEAR,
    "LINEAR": cv2.INTER_LINEAR,
    "BICUBIC": cv2.INTER_CUBIC,
    "CUBIC": cv2.INTER_CUBIC,
    "AREA": cv2.INTER_AREA,
    "LANCZOS": cv2.INTER_LANCZOS4,
}
# Pillow's filters are antialiased when shrinking (their support widens with the scale), which is
# what PILCUBIC/ANTIALIAS promise; OpenCV's are not.
_PIL_INTER = {"PILCUBIC": "BICUBIC", "ANTIALIAS": "LANCZOS"}


def _pil_resize(img: np.ndarray, h: int, w: int, filter_name: str) -> np.ndarray:
    from PIL import Image

    resample = getattr(Image.Resampling, filter_name)
    if img.dtype == np.uint8 and (img.ndim == 2 or img.shape[2] in (1, 3, 4)):
        src = img[..., 0] if img.ndim == 3 and img.shape[2] == 1 else img
        out = np.array(Image.fromarray(np.ascontiguousarray(src)).resize((w, h), resample))
        return out.reshape(h, w, *img.shape[2:])
    # Other dtypes/channel counts: Pillow's float mode "F", one channel at a time.
    planes = img[..., None] if img.ndim == 2 else img
    out = np.stack(
        [
            np.array(
                Image.fromarray(np.ascontiguousarray(planes[..., c], dtype=np.float32)).resize(
                    (w, h), resample
                )
            )
            for c in range(planes.shape[2])
        ],
        axis=-1,
    )
    return _cast_back(out, img.dtype).reshape(h, w, *img.shape[2:])


def resize_image(img: np.ndarray, h: int, w: int, interpolation: Any, op_name: str = "Resize") -> np.ndarray:
    """Resize an ``<H, W>``/``<H, W, C>`` array to ``(h, w)``; shared by Resize and RandomResizedCrop."""
    name = interpolation_name(interpolation)
    if name in _PIL_INTER:
        return _pil_resize(img, h, w, _PIL_INTER[name])
    flag = _CV_INTER.get(name)
    if flag is None:
        raise ValueError(f"{op_name}: unknown interpolation {interpolation!r}")
    if img.ndim == 3 and img.shape[2] > 4:
        # Some cv2 paths (INTER_AREA when shrinking) take at most 4 channels: resize in groups of 4.
        groups = [_cv_resize(img[..., c : c + 4], h, w, flag) for c in range(0, img.shape[2], 4)]
        return np.concatenate([g.reshape(h, w, -1) for g in groups], axis=2)
    # cv2 drops a trailing channel axis of length 1.
    return _cv_resize(img, h, w, flag).reshape(h, w, *img.shape[2:])


def _cv_resize(img: np.ndarray, h: int, w: int, flag: int) -> np.ndarray:
    if img.dtype in _CV_RESIZE_DTYPES:
        return cv2.resize(img, (w, h), interpolation=flag)
    # float16, bool, int8, 32/64-bit ints: resample in float64 (exact for every int32), cast back.
    return _cast_back(cv2.resize(img.astype(np.float64), (w, h), interpolation=flag), img.dtype)


declare_op("Resize", cost_ms_per_mp=2.0)
@register_kernel("Resize", "CPU")
def resize(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    # numeric: cv2/Pillow give cryptic errors (or silently drop imaginary parts) on other dtypes.
    img = _image("Resize", image, numeric=True)
    h, w = resize_output_size(img.shape[0], img.shape[1], op.size)
    return resize_image(img, h, w, op.interpolation, "Resize")


declare_op("RandomResizedCrop", cost_ms_per_mp=1.5)
@register_kernel("RandomResizedCrop", "CPU")
def random_resized_crop(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomResizedCrop", image, numeric=True)
    (top, left, ch, cw), oh, ow = crop_resize(op, img.shape[0], img.shape[1], ctx.rng)
    return resize_image(img[top : top + ch, left : left + cw], oh, ow, op.interpolation, "RandomResizedCrop")


declare_op("ResizedCrop", cost_ms_per_mp=1.5)
@register_kernel("ResizedCrop", "CPU")
def resized_crop(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("ResizedCrop", image, numeric=True)
    (top, left, ch, cw), oh, ow = crop_resize(op, img.shape[0], img.shape[1], shape=img.shape)
    return resize_image(img[top : top + ch, left : left + cw], oh, ow, op.interpolation, "ResizedCrop")


@register_kernel("RandomResize", "CPU")
def random_resize(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    # Resize's pixel work with the interpolation drawn by the plan (shared with RandomResizeWithBBox).
    img = _image("RandomResize", image, numeric=True)
    h, w = resize_output_size(img.shape[0], img.shape[1], op.size)
    return resize_image(img, h, w, random_interpolation(ctx.rng), "RandomResize")
