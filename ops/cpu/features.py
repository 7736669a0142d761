"""CPU kernels of the feature ops (``minddata/audio/features.py``), vectorised NumPy in float64."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.cpu.spectrogram import stft
from minddata.ops.registry import register_kernel


@register_kernel("SpectralCentroid", "CPU")
def spectral_centroid(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    mag = np.abs(stft(op, as_waveform(op, arr)))
    freqs = np.linspace(0, op.sample_rate // 2, op.n_fft // 2 + 1)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (freqs * mag).sum(-2, keepdims=True) / mag.sum(-2, keepdims=True)
    return out.astype(out_dtype(arr))


def _windows(op: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each frame's window ``[start, end)`` (Kaldi's rule, as torchaudio's loop computes it)."""
    t = np.arange(n)
    if op.center:
        start = t - op.cmn_window // 2
        end = start + op.cmn_window
    else:
        start = t - op.cmn_window
        end = t + 1
    end = np.where(start < 0, end - start, end)
    start = np.maximum(start, 0)
    if not op.center:
        end = np.where(end > t, np.maximum(t + 1, op.min_cmn_window), end)
    over = end > n
    start = np.where(over, np.maximum(start - (end - n), 0), start)
    return start, np.minimum(end, n)


@register_kernel("SlidingWindowCmn", "CPU")
def sliding_window_cmn(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = as_waveform(op, arr, 2, "<..., time, feature>")
    n = spec.shape[-2]
    if n == 0:
        return spec.astype(out_dtype(arr))
    start, end = _windows(op, n)
    zero = np.zeros_like(spec[..., :1, :])
    sums = np.concatenate([zero, np.cumsum(spec, -2)], -2)
    total = sums[..., end, :] - sums[..., start, :]
    count = (end - start)[:, None].astype(np.float64)
    out = spec - total / count
    if op.norm_vars:
        squares = np.concatenate([zero, np.cumsum(spec * spec, -2)], -2)
        variance = (squares[..., end, :] - squares[..., start, :]) / count - total**2 / count**2
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(count == 1, 0.0, out * variance**-0.5)
    return out.astype(out_dtype(arr))


def _nccf(w: np.ndarray, op: Any) -> np.ndarray:
    """torchaudio's normalised cross-correlation ``<batch, frames, lags>`` (one pass per lag, each
    vectorised over the whole waveform)."""
    eps = 1e-9
    lags = math.ceil(op.sample_rate / op.freq_low)
    size = math.ceil(op.sample_rate * op.frame_time)
    length = w.shape[-1]
    frames = math.ceil(length / size)
    w = np.pad(w, [(0, 0), (0, lags + frames * size - length)])
    span = frames * size
    s1 = w[:, :span].reshape(len(w), frames, size)
    norm1 = (eps + np.sqrt((s1 * s1).sum(-1))) ** 2
    out = np.empty((len(w), frames, lags))
    for lag in range(1, lags + 1):
        s2 = w[:, lag:lag + span].reshape(len(w), frames, size)
        out[..., lag - 1] = (s1 * s2).sum(-1) / norm1 / (eps + np.sqrt((s2 * s2).sum(-1))) ** 2
    return out


@register_kernel("DetectPitchFrequency", "CPU")
def detect_pitch_frequency(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    lead, length = w.shape[:-1], w.shape[-1]
    if length == 0:
        return np.zeros((*lead, 0), np.float32)
    nccf = _nccf(w.reshape(-1, length), op)
    lag_min = math.ceil(op.sample_rate / op.freq_high)
    half = nccf.shape[-1] // 2
    best_value = nccf[..., lag_min:].max(-1)
    best_index = nccf[..., lag_min:].argmax(-1)
    if half > lag_min:
        half_value = nccf[..., lag_min:half].max(-1)
        use_half = half_value > 0.99 * best_value
        best_index = np.where(use_half, nccf[..., lag_min:half].argmax(-1), best_index)
    indices = best_index + lag_min + 1
    # Median smoothing: the first frame repeated (win_length - 1) // 2 times in front, the lower median.
    pad = (op.win_length - 1) // 2
    indices = np.concatenate([np.repeat(indices[:, :1], pad, -1), indices], -1)
    if indices.shape[-1] >= op.win_length:
        windows = np.lib.stride_tricks.sliding_window_view(indices, op.win_length, axis=-1)
        indices = np.sort(windows, -1)[..., (op.win_length - 1) // 2]
    else:
        indices = indices[:, :0]
    freq = op.sample_rate / (1e-9 + indices.astype(np.float64))
    return freq.reshape(*lead, freq.shape[-1]).astype(np.float32)
