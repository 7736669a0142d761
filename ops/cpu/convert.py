"""CPU kernels of ToTensor, ToPIL, ToNumpy and LinearTransformation."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.registry import register_kernel


def _is_pil(x: Any) -> bool:
    return hasattr(x, "getbands") and hasattr(x, "mode")


def _array(op_name: str, x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if _is_pil(x):
        return np.array(x)
    raise TypeError(f"{op_name}: expected a numpy array or a PIL image. Found: {type(x).__name__}")


@register_kernel("ToTensor", "CPU")
def to_tensor(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _array("ToTensor", image)
    if img.ndim not in (2, 3):
        raise ValueError(f"ToTensor: expected an image of shape <H, W> or <H, W, C>. Found shape {img.shape}")
    if img.dtype.kind not in "biuf":
        raise TypeError(f"ToTensor: expected a numeric image. Found dtype {img.dtype} (shape {img.shape})")
    chw = img[None] if img.ndim == 2 else img.transpose(2, 0, 1)
    # Divide in the output's precision when it is a float (float64 for integer outputs).
    work = op.output_type if op.output_type.kind == "f" else np.dtype(np.float64)
    return (chw.astype(work) / work.type(255)).astype(op.output_type)


_PIL_MODES = {(np.dtype(np.uint8), 1): "L", (np.dtype(np.uint8), 3): "RGB", (np.dtype(np.uint8), 4): "RGBA"}


@register_kernel("ToPIL", "CPU")
def to_pil(op: KernelOp, ctx: KernelContext, image: Any) -> Any:
    from PIL import Image

    if _is_pil(image):
        return image
    img = _array("ToPIL", image)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[..., 0]
    if img.ndim == 2 and img.dtype in (np.dtype(np.float32), np.dtype(np.int32)) and img.size:
        return Image.fromarray(np.ascontiguousarray(img))
    channels = 1 if img.ndim == 2 else (img.shape[2] if img.ndim == 3 else -1)
    if (img.dtype, channels) not in _PIL_MODES or img.size == 0:
        raise TypeError(
            f"ToPIL: expected a non-empty uint8 image of 1, 3 or 4 channels, or a 2-D float32/int32 image. "
            f"Found shape {img.shape}, dtype {img.dtype}"
        )
    return Image.fromarray(np.ascontiguousarray(img), _PIL_MODES[(img.dtype, channels)])


@register_kernel("ToNumpy", "CPU")
def to_numpy(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    return _array("ToNumpy", image)


@register_kernel("LinearTransformation", "CPU")
def linear_transformation(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _array("LinearTransformation", image)
    matrix, mean = op.transformation_matrix, op.mean_vector
    if img.size != matrix.shape[0]:
        raise ValueError(
            f"LinearTransformation: an input of shape {img.shape} has {img.size} values; `transformation_matrix` "
            f"is for D = {matrix.shape[0]}"
        )
    if img.dtype.kind not in "biuf":
        raise TypeError(f"LinearTransformation: expected a numeric input. Found dtype {img.dtype}")
    return ((img.reshape(1, -1) - mean) @ matrix).reshape(img.shape)
