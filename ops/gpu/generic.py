"""GPU kernels of TypeCast and ToType (the CPU's :mod:`minddata.ops.cpu.generic`), as DALI's ``cast``.
Exact for in-range values; out-of-range values saturate on the GPU where NumPy wraps around. The torch
driver's ``Tensor.to`` truncates floats toward zero as NumPy does: exact for in-range values.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    _DALI_TYPES,
    NUMERIC,
    Args,
    Sample,
    _register,
    dali_type,
    torch_kernel,
)


def _cast_supported(op: KernelOp) -> str | None:
    dtype = np.dtype(op.data_type)
    return None if dtype.name in _DALI_TYPES else f"{op.name}: DALI has no {dtype} type"


def _build_cast(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    target = np.dtype(op.data_type)
    source = env.kind_in.dtype
    if source.kind == "f" and target.kind in "iub" and target != np.bool_:
        # DALI's cast rounds to nearest; NumPy's astype (and MindSpore's C++ cast) truncates toward
        # zero: truncate first, so the cast only sees whole numbers.
        dmath = env.math
        positive = env.fn.cast(node >= 0, dtype=dali_type(source, env.types), device=env.device)
        node = dmath.floor(node) * positive + dmath.ceil(node) * (1 - positive)
    return env.fn.cast(node, dtype=dali_type(target, env.types), device=env.device)


@_register("TypeCast", "ToType", args={}, supports=_cast_supported, build=_build_cast,
           static=lambda op, kind: replace(kind, dtype=np.dtype(op.data_type)))
def _plan_cast(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.dtype not in NUMERIC:
        raise ValueError(f"{op.name}: cannot cast an array of dtype {s.kind.dtype} (shape {s.shape}) to {op.data_type}")
    return {}, Sample(s.shape, replace(s.kind, dtype=np.dtype(op.data_type)))


# ---------------------------------------------------------------------------------------------- torch


@torch_kernel("TypeCast", "ToType")
def _torch_cast(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    from minddata.ops.gpu.segment import torch_dtype

    # torch's float -> int conversion truncates toward zero, as NumPy's astype does.
    return x.to(torch_dtype(np.dtype(op.data_type)))
