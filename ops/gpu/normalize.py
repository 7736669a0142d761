"""GPU kernels of the normalize family (the CPU's :mod:`minddata.ops.cpu.normalize`): Normalize, Rescale
and HWC2CHW. Exact on both drivers: the same float32 operations as the CPU kernels.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    Args,
    Kind,
    Sample,
    _image,
    _register,
    _shown_shape,
    torch_kernel,
)

# ---------------------------------------------------------------------------------------------- pixels


def _float_static(op: KernelOp, kind: Kind) -> Kind:
    return replace(kind, dtype=np.dtype(np.float32))


def _build_normalize(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    n = len(op.mean)
    shape = (-1,) if op.is_hwc else (-1, 1, 1)
    mean = np.asarray(op.mean, np.float32).reshape(shape if n > 1 else ())
    std = np.asarray(op.std, np.float32).reshape(shape if n > 1 else ())
    # (x - mean) / std in float32, as the CPU kernel computes it: the results are bit-identical.
    x = env.fn.cast(node, dtype=env.types.FLOAT, device=env.device)
    return (x - env.types.Constant(mean, device=env.const_device)) / env.types.Constant(std, device=env.const_device)


@_register("Normalize", args={}, static=_float_static, build=_build_normalize)
def _plan_normalize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.layout == "encoded":
        _image("Normalize", s)
    if any(d == 0 for d in s.shape):
        raise ValueError(f"Normalize: expected a non-empty image. Found shape {s.shape}")
    if s.kind.dtype.kind not in "biuf":
        raise TypeError(f"Normalize: expected a numeric image. Found dtype {s.kind.dtype} (shape {s.shape})")
    n = len(op.mean)
    layout = "HWC" if op.is_hwc else "CHW"
    if s.kind.gray2d:
        channels = 1
    else:
        channels = s.shape[2] if op.is_hwc else s.shape[0]
    if n != 1 and channels != n:
        shape = _shown_shape(s)
        raise ValueError(
            f"Normalize: expected an {layout} image with {n} channels matching mean/std of length {n}. "
            f"Found shape {shape}"
        )
    return {}, Sample(s.shape, _float_static(op, s.kind))


def _build_rescale(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    x = env.fn.cast(node, dtype=env.types.FLOAT, device=env.device)
    scale = env.types.Constant(np.float32(op.rescale), device=env.const_device)
    shift = env.types.Constant(np.float32(op.shift), device=env.const_device)
    return x * scale + shift


@_register("Rescale", args={}, static=_float_static, build=_build_rescale)
def _plan_rescale(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.layout == "encoded" or s.kind.dtype.kind not in "biuf":
        raise TypeError(f"Rescale: expected a numeric array. Found dtype {s.kind.dtype} (shape {s.shape})")
    return {}, Sample(s.shape, _float_static(op, s.kind))


def _chw_static(op: KernelOp, kind: Kind) -> Kind:
    return kind if kind.gray2d else replace(kind, layout="CHW")


def _build_hwc2chw(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    if env.kind_in.gray2d:
        return node  # HWC2CHW leaves a 2-D image as it is
    return env.fn.transpose(node, perm=[2, 0, 1], output_layout="CHW", device=env.device)


@_register("HWC2CHW", args={}, static=_chw_static, build=_build_hwc2chw)
def _plan_hwc2chw(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("HWC2CHW", s)
    if s.kind.gray2d:
        return {}, Sample(s.shape, s.kind)
    return {}, Sample((s.shape[2], h, w), _chw_static(op, s.kind))


# ---------------------------------------------------------------------------------------------- torch


@torch_kernel("Normalize")
def _torch_normalize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    n = len(op.mean)
    shape = (-1,) if op.is_hwc else (-1, 1, 1)
    mean = torch.tensor(np.asarray(op.mean, np.float32).reshape(shape if n > 1 else ()), device=x.device)
    std = torch.tensor(np.asarray(op.std, np.float32).reshape(shape if n > 1 else ()), device=x.device)
    return (x.to(torch.float32) - mean) / std


@torch_kernel("Rescale")
def _torch_rescale(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return x.to(torch.float32) * np.float32(op.rescale) + np.float32(op.shift)


@torch_kernel("HWC2CHW")
def _torch_hwc2chw(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return x.permute(2, 0, 1).contiguous()
