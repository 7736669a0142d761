"""CPU kernels of the flips: HorizontalFlip, RandomHorizontalFlip, VerticalFlip, RandomVerticalFlip.

A random flip validates its input before drawing (:func:`minddata.ops.plans.flip.flips`), so a bad
input fails on every row, not on half of them.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _image
from minddata.ops.plans.flip import flips
from minddata.ops.registry import declare_op, register_kernel

__all__: list[str] = []

_CV_FLIP_DTYPES = frozenset(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)
)


def _hflip(img: np.ndarray) -> np.ndarray:
    if img.dtype in _CV_FLIP_DTYPES and (img.ndim == 2 or img.shape[2] <= 4):
        return cv2.flip(img, 1).reshape(img.shape)
    return np.ascontiguousarray(img[:, ::-1])


declare_op("HorizontalFlip", cost_ms_per_mp=0.3)
@register_kernel("HorizontalFlip", "CPU")
def horizontal_flip(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return _hflip(_image("HorizontalFlip", image))


declare_op("RandomHorizontalFlip", cost_ms_per_mp=0.2)
@register_kernel("RandomHorizontalFlip", "CPU")
def random_horizontal_flip(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    # Validate before drawing so that a bad input fails on every row, not on half of them.
    img = _image("RandomHorizontalFlip", image)
    return _hflip(img) if flips(ctx.rng, op.prob) else img


declare_op("VerticalFlip", cost_ms_per_mp=0.1)
@register_kernel("VerticalFlip", "CPU")
def vertical_flip(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return _image("VerticalFlip", image)[::-1]  # a view: free, and later ops read views fine


declare_op("RandomVerticalFlip", cost_ms_per_mp=0.1)
@register_kernel("RandomVerticalFlip", "CPU")
def random_vertical_flip(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomVerticalFlip", image)  # validate before drawing: a bad input fails on every row
    return img[::-1] if flips(ctx.rng, op.prob) else img
