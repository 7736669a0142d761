"""CPU kernels of the IIR filter family (``minddata/audio/biquad.py``): SciPy's ``lfilter`` along time
over every channel at once, in float64. SciPy is optional (``pip install 'minddata[audio]'``) and
imported on the first filter, so the kernels register (and everything else runs) without it."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.plans.biquad import coefficients
from minddata.ops.registry import register_kernel

BIQUADS = (
    "AllpassBiquad", "BandBiquad", "BandpassBiquad", "BandrejectBiquad", "BassBiquad", "Biquad", "DeemphBiquad",
    "EqualizerBiquad", "HighpassBiquad", "LowpassBiquad", "RiaaBiquad", "TrebleBiquad",
)


def _lfilter(op_name: str) -> Any:
    try:
        from scipy.signal import lfilter
    except ImportError:
        raise ImportError(f"{op_name} filters with SciPy, which is not installed: pip install 'minddata[audio]' "
                          "(or pip install scipy)") from None
    return lfilter


def _filter(op_name: str, x: np.ndarray, b: Any, a: Any) -> np.ndarray:
    if x.shape[-1] == 0:
        return x
    return _lfilter(op_name)(np.asarray(b, np.float64), np.asarray(a, np.float64), x, axis=-1)


def _biquad(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    b, a = coefficients(op)
    return np.clip(_filter(op.name, as_waveform(op, arr), b, a), -1.0, 1.0).astype(out_dtype(arr))


for _name in BIQUADS:
    register_kernel(_name, "CPU")(_biquad)


@register_kernel("LFilter", "CPU")
def lfilter_kernel(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    y = _filter(op.name, as_waveform(op, arr), op.b_coeffs, op.a_coeffs)
    return (np.clip(y, -1.0, 1.0) if op.clamp else y).astype(out_dtype(arr))


@register_kernel("Filtfilt", "CPU")
def filtfilt(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    forward = _filter(op.name, as_waveform(op, arr), op.b_coeffs, op.a_coeffs)
    y = _filter(op.name, forward[..., ::-1], op.b_coeffs, op.a_coeffs)[..., ::-1]
    return (np.clip(y, -1.0, 1.0) if op.clamp else y).astype(out_dtype(arr))


@register_kernel("Contrast", "CPU")
def contrast(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    t = as_waveform(op, arr) * (np.pi / 2)
    return np.sin(t + op.enhancement_amount / 750.0 * np.sin(t * 4)).astype(out_dtype(arr))


@register_kernel("Overdrive", "CPU")
def overdrive(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    temp = w * 10.0 ** (op.gain / 20.0) + op.color / 200.0
    temp = np.where(temp < -1, -2.0 / 3.0, np.where(temp > 1, 2.0 / 3.0, temp - temp**3 / 3.0))
    # last_out[i] = temp[i] - temp[i-1] + 0.995 * last_out[i-1], from rest: a DC blocker.
    last_out = _filter(op.name, temp, [1.0, -1.0], [1.0, -0.995])
    return np.clip(w * 0.5 + last_out * 0.75, -1.0, 1.0).astype(out_dtype(arr))
