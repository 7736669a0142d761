"""CPU kernels of the affine warps: Rotate, RandomRotation, Affine, RandomAffine.

OpenCV's ``warpAffine`` does the pixel work (it releases the GIL); the matrices, output sizes and
random parameters come from the plan (:mod:`minddata.ops.plans.affine`). ``resample`` arrives as an
``Inter`` (keyed on its ``name``).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _cast_back, _image, channels
from minddata.ops.plans.affine import affine_params, random_affine_params, rotation, rotation_degrees
from minddata.ops.plans.image import fill_values, interpolation_name
from minddata.ops.registry import declare_op, register_kernel

__all__ = ["rotate_image", "warp_affine"]

_CV_WARP_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))
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
    c = channels(img)
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


declare_op("Rotate", cost_ms_per_mp=3.0)
@register_kernel("Rotate", "CPU")
def rotate(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Rotate", image, numeric=True)
    return rotate_image(img, op.degrees, op.resample, op.expand, op.center, op.fill_value, "Rotate")


declare_op("RandomRotation", cost_ms_per_mp=3.0)
@register_kernel("RandomRotation", "CPU")
def random_rotation(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomRotation", image, numeric=True)
    degrees = rotation_degrees(ctx.rng, op.degrees)
    return rotate_image(img, degrees, op.resample, op.expand, op.center, op.fill_value, "RandomRotation")


@register_kernel("Affine", "CPU")
def affine(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Affine", image, numeric=True)
    h, w = img.shape[:2]
    return warp_affine(img, affine_params(op, h, w).matrix(h, w), h, w, op.resample, op.fill_value, "Affine")


@register_kernel("RandomAffine", "CPU")
def random_affine(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomAffine", image, numeric=True)
    h, w = img.shape[:2]
    return warp_affine(img, random_affine_params(ctx.rng, op, h, w).matrix(h, w), h, w, op.resample, op.fill_value, "RandomAffine")
