"""GPU kernel of ToTensor (the CPU's :mod:`minddata.ops.cpu.convert`): HWC to CHW and the division by
255 in the CPU kernel's precision. Exact on uint8, on both drivers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    _DALI_TYPES,
    Args,
    Kind,
    Sample,
    _const64,
    _f32,
    _f64,
    _image,
    _register,
    _shown_shape,
    dali_type,
    torch_kernel,
)

# ---------------------------------------------------------------------------------------------- ToTensor


def _to_tensor_static(op: KernelOp, kind: Kind) -> Kind:
    return replace(kind, layout="CHW", dtype=np.dtype(op.output_type), gray2d=False)


def _build_to_tensor(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    out = np.dtype(op.output_type)
    chw = env.fn.transpose(node, perm=[2, 0, 1], output_layout="CHW", device=env.device)
    if out == np.float64 or out.kind != "f":
        scaled = _f64(chw, env) / _const64(255.0, env)  # float64 for integer outputs, as the CPU kernel
    else:
        # float32 in float32; float16 as NumPy divides it: the input cast to float16 first, the quotient
        # computed in float32 and rounded to float16.
        values = chw if out == np.float32 else env.fn.cast(chw, dtype=env.types.FLOAT16, device=env.device)
        scaled = _f32(values, env) / env.types.Constant(np.float32(255.0), device=env.const_device)
    if out.kind in "iu":
        # NumPy's astype truncates toward zero (the quotient is never negative for unsigned inputs).
        dmath = env.math
        positive = _f64(scaled >= _const64(0.0, env), env)
        scaled = dmath.floor(scaled) * positive + dmath.ceil(scaled) * (_const64(1.0, env) - positive)
    return env.fn.cast(scaled, dtype=dali_type(out, env.types), device=env.device)


def _to_tensor_supported(op: KernelOp) -> str | None:
    dtype = np.dtype(op.output_type)
    return None if dtype.name in _DALI_TYPES else f"ToTensor: DALI has no {dtype} type"


@_register("ToTensor", args={}, static=_to_tensor_static, supports=_to_tensor_supported, build=_build_to_tensor)
def _plan_to_tensor(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.layout == "encoded":
        _image("ToTensor", s)
    if s.kind.layout != "HWC":
        raise ValueError(f"ToTensor: on the GPU, expected an HWC image. Found a {s.kind.layout} tensor of shape {s.shape}")
    if s.kind.dtype.kind not in "biuf":
        raise TypeError(f"ToTensor: expected a numeric image. Found dtype {s.kind.dtype} (shape {_shown_shape(s)})")
    h, w, c = s.shape
    return {}, Sample((c, h, w), _to_tensor_static(op, s.kind))


# ---------------------------------------------------------------------------------------------- torch


@torch_kernel("ToTensor")
def _torch_to_tensor(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    from minddata.ops.gpu.segment import torch_dtype

    out = np.dtype(op.output_type)
    chw = x.permute(2, 0, 1)
    if out == np.float64 or out.kind != "f":
        scaled = chw.to(torch.float64) / 255.0
    else:
        scaled = chw.to(torch_dtype(out)).to(torch.float32) / np.float32(255.0)
    if out.kind in "iu":
        scaled = scaled.trunc()
    return scaled.to(torch_dtype(out)).contiguous()
