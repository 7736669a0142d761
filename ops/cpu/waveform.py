"""CPU kernels of the waveform ops (``minddata/audio/waveform.py``), vectorised NumPy in float64."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.registry import register_kernel


@register_kernel("MuLawEncoding", "CPU")
def mu_law_encoding(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    x = as_waveform(op, x)
    mu = op.quantization_channels - 1.0
    if mu == 0:
        return np.zeros(x.shape, np.int32)
    x_mu = np.sign(x) * np.log1p(mu * np.abs(x)) / np.log1p(mu)
    return ((x_mu + 1) / 2 * mu + 0.5).astype(np.int32)


@register_kernel("MuLawDecoding", "CPU")
def mu_law_decoding(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    x_mu = as_waveform(op, arr)
    mu = op.quantization_channels - 1.0
    if mu == 0:
        return np.full(x_mu.shape, np.nan).astype(out_dtype(arr))
    y = x_mu / mu * 2 - 1.0
    return (np.sign(y) * (np.exp(np.abs(y) * np.log1p(mu)) - 1.0) / mu).astype(out_dtype(arr))


@register_kernel("Vol", "CPU")
def vol(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    if op.gain_type == "amplitude":
        w = w * op.gain
    elif op.gain_type == "db":
        w = w * 10.0 ** (op.gain / 20.0)
    else:
        w = w * 10.0 ** (10.0 * math.log10(op.gain) / 20.0)
    return np.clip(w, -1.0, 1.0).astype(out_dtype(arr))


@register_kernel("Gain", "CPU")
def gain(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return (as_waveform(op, arr) * 10.0 ** (op.gain_db / 20.0)).astype(out_dtype(arr))


@register_kernel("DCShift", "CPU")
def dc_shift(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    shift = op.shift
    if op.limiter_gain is None:
        return np.clip(w + shift, -1.0, 1.0).astype(out_dtype(arr))
    limiter_threshold = 1.0 - (abs(shift) - op.limiter_gain)
    if shift > 0:
        over = w > limiter_threshold
        limited = (w - limiter_threshold) * op.limiter_gain / (1 - limiter_threshold) + limiter_threshold + shift
        limited = np.minimum(limited, limiter_threshold)
    else:
        # MindSpore 2.10 adds the threshold here as for a positive shift, sending limited negative
        # samples above zero; this is the mirror image of the positive case (torchaudio's rule).
        over = w < -limiter_threshold
        limited = (w + limiter_threshold) * op.limiter_gain / (1 - limiter_threshold) - limiter_threshold + shift
        limited = np.maximum(limited, -limiter_threshold)
    out = np.where(over, limited, w + shift)
    return np.clip(out, -1.0, 1.0).astype(out_dtype(arr))


def _fade_in(shape: str, n: int) -> np.ndarray:
    f = np.linspace(0.0, 1.0, n)
    if shape == "linear":
        return f
    if shape == "exponential":  # MindSpore's curve (torchaudio's is 2 ** ((f - 1) * 5), not 0 at the start)
        return f * 2.0 ** (f - 1)
    if shape == "logarithmic":
        return np.log10(0.1 + f) + 1
    if shape == "quarter_sine":
        return np.sin(f * np.pi / 2)
    return np.sin(f * np.pi - np.pi / 2) / 2 + 0.5


def _fade_out(shape: str, n: int) -> np.ndarray:
    f = np.linspace(0.0, 1.0, n)
    if shape == "linear":
        return 1 - f
    if shape == "exponential":
        return (1 - f) * 2.0 ** (-f)
    if shape == "logarithmic":
        return np.log10(1.1 - f) + 1
    if shape == "quarter_sine":
        return np.sin(f * np.pi / 2 + np.pi / 2)
    return np.sin(f * np.pi + np.pi / 2) / 2 + 0.5


@register_kernel("Fade", "CPU")
def fade(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    n = w.shape[-1]
    for arg in ("fade_in_len", "fade_out_len"):
        if getattr(op, arg) > n:
            raise ValueError(f"{op.name}: `{arg}` ({getattr(op, arg)}) must be at most the waveform's length ({n})")
    shape = str(getattr(op.fade_shape, "value", op.fade_shape))
    ramp = np.ones(n)
    if op.fade_in_len:
        ramp[: op.fade_in_len] = _fade_in(shape, op.fade_in_len)
    if op.fade_out_len:
        ramp[n - op.fade_out_len :] *= _fade_out(shape, op.fade_out_len)
    return (w * ramp).astype(out_dtype(arr))


@functools.lru_cache(maxsize=32)
def _sinc_kernel(
    orig: int, new: int, method: str, lowpass_filter_width: int, rolloff: float, beta: float,
) -> tuple[np.ndarray, int]:
    """torchaudio's windowed-sinc resampling kernel: ``(new, 2·width + orig)`` taps and ``width``; cached
    (read-only), as it depends only on the op's arguments."""
    base = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64)[None, :] / orig
    t = (np.arange(0, -new, -1, dtype=np.float64)[:, None] / new + idx) * base
    t = np.clip(t, -lowpass_filter_width, lowpass_filter_width)
    if method == "sinc_interpolation":
        window = np.cos(t * np.pi / lowpass_filter_width / 2) ** 2
    else:
        window = np.i0(beta * np.sqrt(1 - (t / lowpass_filter_width) ** 2)) / np.i0(beta)
    t = t * np.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        kernels = np.where(t == 0, 1.0, np.sin(t) / np.where(t == 0, 1.0, t))
    kernels = kernels * window * (base / orig)
    kernels.setflags(write=False)
    return kernels, width


@register_kernel("Resample", "CPU")
def resample(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    if op.orig_freq == op.new_freq:
        return w.astype(out_dtype(arr))
    gcd = math.gcd(int(op.orig_freq), int(op.new_freq)) or 1
    orig, new = int(op.orig_freq) // gcd, int(op.new_freq) // gcd
    kernels, width = _sinc_kernel(
        orig, new, op.resample_method, op.lowpass_filter_width, op.rolloff, op.beta
    )
    lead, length = w.shape[:-1], w.shape[-1]
    target = math.ceil(new * length / orig)
    if w.size == 0:
        return np.zeros((*lead, target), out_dtype(arr))
    padded = np.pad(w.reshape(-1, length), [(0, 0), (width, width + orig)])
    frames = sliding_window_view(padded, kernels.shape[1], axis=-1)[:, ::orig, :]
    out = np.einsum("bfk,nk->bfn", frames, kernels).reshape(padded.shape[0], -1)
    return out[:, :target].reshape(*lead, target).astype(out_dtype(arr))
