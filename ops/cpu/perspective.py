"""CPU kernels of Perspective and RandomPerspective: OpenCV's ``warpPerspective`` (it releases the GIL)
over the homography planned in ``minddata.ops.plans.perspective``."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _cast_back, _image
from minddata.ops.plans.image import interpolation_name as _interp_name
from minddata.ops.plans.perspective import perspective_matrix, random_perspective_points
from minddata.ops.registry import register_kernel

__all__ = ["warp_perspective"]

_CV_WARP_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))
# A warp has no area filter (OpenCV treats INTER_AREA as bilinear in a warp); PILCUBIC is bicubic.
_CV_INTER = {
    "NEAREST": cv2.INTER_NEAREST,
    "BILINEAR": cv2.INTER_LINEAR,
    "AREA": cv2.INTER_LINEAR,
    "BICUBIC": cv2.INTER_CUBIC,
    "PILCUBIC": cv2.INTER_CUBIC,
}


def warp_perspective(img: np.ndarray, matrix: np.ndarray, interpolation: Any) -> np.ndarray:
    """``img`` warped by the forward (input → output) homography ``matrix``, same size, zeros outside."""
    if img.dtype not in _CV_WARP_DTYPES:
        return _cast_back(warp_perspective(img.astype(np.float64), matrix, interpolation), img.dtype)
    h, w = img.shape[:2]
    if img.ndim == 3 and img.shape[2] > 4:  # OpenCV's cubic warp takes at most 4 channels
        groups = [
            warp_perspective(img[..., k : k + 4], matrix, interpolation) for k in range(0, img.shape[2], 4)
        ]
        return np.concatenate([g.reshape(h, w, -1) for g in groups], axis=2)
    out = cv2.warpPerspective(
        img, matrix, (w, h), flags=_CV_INTER[_interp_name(interpolation)], borderMode=cv2.BORDER_CONSTANT
    )
    return out.reshape(img.shape)


@register_kernel("Perspective", "CPU")
def perspective(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Perspective", image, numeric=True)
    return warp_perspective(img, perspective_matrix(op.start_points, op.end_points), op.interpolation)


@register_kernel("RandomPerspective", "CPU")
def random_perspective(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomPerspective", image, numeric=True)
    rng = ctx.rng
    if rng.random() >= op.prob:
        return img
    start, end = random_perspective_points(rng, img.shape[0], img.shape[1], op.distortion_scale)
    try:
        matrix = perspective_matrix(start, end)
    except ValueError:
        return img  # a degenerate draw (images of a pixel or two): nothing to warp
    return warp_perspective(img, matrix, op.interpolation)
