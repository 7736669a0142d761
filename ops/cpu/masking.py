"""CPU kernels of the masking ops (``minddata/audio/masking.py``): the band comes from
``minddata.ops.plans.masking``, fixed or drawn from the row's RNG."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.plans.masking import Band, fixed_band, random_band
from minddata.ops.registry import register_kernel


def _apply(op: Any, x: Any, axis: int, band_of: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = as_waveform(op, arr, 2, "<..., freq, time>").astype(out_dtype(arr))
    band: Band = band_of(spec.shape[axis])
    index = [slice(None)] * spec.ndim
    index[axis] = slice(band.start, band.start + band.width)
    spec[tuple(index)] = op.mask_value
    return spec


def _spec_augment(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    axis = -2 if op.axis_name == "freq" else -1
    param_name = f"{op.axis_name}_mask_param"
    if op.iid_masks:
        return _apply(op, x, axis, lambda size: random_band(op.name, op.axis_name, param_name, op.mask_param, size, ctx.rng))
    return _apply(op, x, axis, lambda size: fixed_band(op.name, op.axis_name, param_name, op.mask_start, op.mask_param, size))


register_kernel("FrequencyMasking", "CPU")(_spec_augment)
register_kernel("TimeMasking", "CPU")(_spec_augment)


def _axis(op: Any) -> tuple[int, str]:
    return (-2, "freq") if op.axis == 1 else (-1, "time")


@register_kernel("MaskAlongAxis", "CPU")
def mask_along_axis(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    axis, name = _axis(op)
    return _apply(op, x, axis, lambda size: fixed_band(op.name, name, "mask_width", op.mask_start, op.mask_width, size))


@register_kernel("MaskAlongAxisIID", "CPU")
def mask_along_axis_iid(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    axis, name = _axis(op)
    return _apply(op, x, axis, lambda size: random_band(op.name, name, "mask_param", op.mask_param, size, ctx.rng))
