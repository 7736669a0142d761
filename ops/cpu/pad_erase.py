"""CPU kernels of Erase and PadToSize."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.crop import pad_image
from minddata.ops.cpu.image import _image
from minddata.ops.plans.image import square as _square
from minddata.ops.plans.pad_erase import pad_to_size_padding
from minddata.ops.registry import register_kernel


@register_kernel("Erase", "CPU")
def erase(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Erase", image, numeric=True)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"Erase: expected an image of shape <H, W, 3>. Found shape {img.shape}")
    out = img if op.inplace and img.flags.writeable else img.copy()
    fill = np.asarray(op.value if isinstance(op.value, tuple) else (op.value,) * 3, np.float64)
    if out.dtype.kind in "iu":
        info = np.iinfo(out.dtype)
        fill = np.clip(fill, info.min, info.max)
    # Slicing clips the rectangle to the image.
    out[op.top : op.top + op.height, op.left : op.left + op.width] = fill.astype(out.dtype)
    return out


@register_kernel("PadToSize", "CPU")
def pad_to_size(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("PadToSize", image)
    left, top, right, bottom = pad_to_size_padding(
        "PadToSize", img.shape[0], img.shape[1], _square(op.size), op.offset
    )
    return pad_image(img, left, top, right, bottom, op.padding_mode, op.fill_value, "PadToSize")
