"""GPU kernels of PadToSize and Erase (the CPU's :mod:`minddata.ops.cpu.pad_erase`), as DALI's ``slice``
(constant fill) and ``erase``, and on the torch driver as tensor slicing and assignment. Exact on both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.crop import SLICE_ARGS, _build_pad, _pad_supported, _slice_args, torch_slice
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _hwc,
    _image,
    _register,
    _shown_shape,
    torch_kernel,
)
from minddata.ops.plans.image import square

# ---------------------------------------------------------------------------------------------- PadToSize, Erase


@_register("PadToSize", args=SLICE_ARGS, supports=_pad_supported, build=_build_pad)
def _plan_pad_to_size(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.pad_erase import pad_to_size_padding

    h, w = _image("PadToSize", s)
    # The CPU kernel's plan: where the image sits in the target size (or the error saying it can't fit).
    left, top, right, bottom = pad_to_size_padding("PadToSize", h, w, square(op.size), op.offset)
    return _slice_args(-top, -left, h + top + bottom, w + left + right), _hwc(s, h + top + bottom, w + left + right)


def erase_fill(value: Any, dtype: np.dtype) -> list[float]:
    """Erase's (R, G, B) fill as the image's dtype holds it: clipped to an integer dtype's range, then
    converted as NumPy's ``astype`` converts (truncating toward zero).

    Examples:
        >>> import numpy as np
        >>> erase_fill((10.7, 300, 3), np.dtype(np.uint8)), erase_fill(3.5, np.dtype(np.float32))
        ([10.0, 255.0, 3.0], [3.5, 3.5, 3.5])
    """
    dtype = np.dtype(dtype)
    fill = np.asarray(value if isinstance(value, tuple) else (value,) * 3, np.float64)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        fill = np.clip(fill, info.min, info.max)
    return [float(v) for v in fill.astype(dtype)]


ERASE_ARGS = {"anchor": np.float32, "shape": np.float32}


def _build_erase(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    return env.fn.erase(node, anchor=args["anchor"], shape=args["shape"], axis_names="HW",
                        fill_value=erase_fill(op.value, env.kind_in.dtype), device=env.device)


@_register("Erase", args=ERASE_ARGS, build=_build_erase)
def _plan_erase(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Erase", s, numeric=True)
    if s.kind.gray2d or s.shape[2] != 3:
        raise ValueError(f"Erase: expected an image of shape <H, W, 3>. Found shape {_shown_shape(s)}")
    # The rectangle clipped to the image, as the CPU kernel's slicing clips it.
    top, left = min(op.top, h), min(op.left, w)
    height, width = min(op.height, h - top), min(op.width, w - left)
    return {"anchor": np.array([top, left], np.float32), "shape": np.array([height, width], np.float32)}, Sample(
        s.shape, s.kind)


@torch_kernel("Erase")
def _torch_erase(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    top, left = (int(v) for v in args["anchor"])
    height, width = (int(v) for v in args["shape"])
    out = x.clone()
    fill = np.asarray(erase_fill(op.value, np.dtype(str(x.dtype).removeprefix("torch."))))
    out[top : top + height, left : left + width] = torch.from_numpy(fill).to(x.dtype).to(x.device)
    return out


@torch_kernel("PadToSize")
def _torch_pad_to_size(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_slice(x, args, torch, fill=op.fill_value)
