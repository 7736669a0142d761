"""CPU kernels of the spectral audio ops (``minddata/audio/spectrogram.py``): NumPy FFTs over strided
frame views, computed in float64 and rounded once to the output dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import BORDER_MODES, as_waveform, out_dtype
from minddata.ops.plans import spectrogram as plans
from minddata.ops.registry import register_kernel

__all__ = ["amplitude_to_db", "power_spectrogram", "stft"]


def _pad_last(x: np.ndarray, left: int, right: int, mode: str) -> np.ndarray:
    if left == 0 and right == 0:
        return x
    return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(left, right)], mode=BORDER_MODES[str(getattr(mode, "value", mode))])


def stft(op: Any, x: np.ndarray, name: str | None = None) -> np.ndarray:
    """The complex STFT ``<..., freq, frames>`` of float64 ``x`` with ``op``'s parameters (n_fft,
    win_length, hop_length, pad, window, center, pad_mode, onesided); errors name ``name`` (default
    the op's)."""
    name = name or op.name
    x = _pad_last(x, op.pad, op.pad, "constant")
    if op.center:
        half = op.n_fft // 2
        if op.pad_mode in ("reflect", "symmetric") and x.shape[-1] <= half and half:
            raise ValueError(
                f"{name}: the waveform ({x.shape[-1]} samples with padding) must be longer than n_fft // 2 "
                f"({half}) to be padded with {op.pad_mode.value if hasattr(op.pad_mode, 'value') else op.pad_mode}"
            )
        x = _pad_last(x, half, half, op.pad_mode)
    if x.shape[-1] < op.n_fft:
        raise ValueError(
            f"{name}: the waveform ({x.shape[-1]} samples with padding) is shorter than n_fft ({op.n_fft})"
        )
    frames = sliding_window_view(x, op.n_fft, axis=-1)[..., :: op.hop_length, :]
    windowed = frames * plans.padded_window(op.window, op.win_length, op.n_fft)
    spec = np.fft.rfft(windowed, axis=-1) if op.onesided else np.fft.fft(windowed, axis=-1)
    return np.swapaxes(spec, -1, -2)


def power_spectrogram(op: Any, x: np.ndarray, name: str | None = None) -> np.ndarray:
    """|STFT| ** power (normalized by the window's L2 norm if asked); complex when power is 0."""
    spec = stft(op, x, name)
    if op.normalized:
        spec = spec / np.sqrt(np.sum(plans.window(op.window, op.win_length) ** 2))
    if op.power == 0:
        return spec
    mag = np.abs(spec)
    return mag if op.power == 1 else mag**op.power


def _complex_to_real(spec: np.ndarray) -> np.ndarray:
    return np.stack([spec.real, spec.imag], axis=-1)


@register_kernel("Spectrogram", "CPU")
def spectrogram(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = power_spectrogram(op, as_waveform(op, arr))
    if op.power == 0:
        spec = _complex_to_real(spec)
    return spec.astype(out_dtype(arr))


@register_kernel("InverseSpectrogram", "CPU")
def inverse_spectrogram(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = as_waveform(op, arr, 3, "<..., freq, time, 2>")
    if spec.shape[-1] != 2:
        raise ValueError(f"{op.name}: the input must have shape <..., freq, time, 2>. Found shape {spec.shape}")
    spec = spec[..., 0] + 1j * spec[..., 1]
    freqs = op.n_fft // 2 + 1 if op.onesided else op.n_fft
    if spec.shape[-2] != freqs:
        raise ValueError(f"{op.name}: the input must have {freqs} frequency bins for n_fft {op.n_fft}. "
                         f"Found {spec.shape[-2]}")
    window = plans.padded_window(op.window, op.win_length, op.n_fft)
    if op.normalized:
        spec = spec * np.sqrt(np.sum(plans.window(op.window, op.win_length) ** 2))
    spec = np.swapaxes(spec, -1, -2)  # (..., frames, freq)
    frames = np.fft.irfft(spec, n=op.n_fft, axis=-1) if op.onesided else np.fft.ifft(spec, axis=-1).real
    frames = frames * window
    n_frames = frames.shape[-2]
    total = op.n_fft + op.hop_length * (n_frames - 1) if n_frames else 0
    lead = frames.shape[:-2]
    out = np.zeros((*lead, total))
    envelope = np.zeros(total)
    starts = np.arange(n_frames) * op.hop_length
    index = (starts[:, None] + np.arange(op.n_fft)[None, :]).reshape(-1)
    flat = out.reshape(-1, total)
    np.add.at(flat, (slice(None), index), frames.reshape(-1, n_frames * op.n_fft))  # type: ignore[arg-type]  # NumPy's stubs leave out tuple indices, which ufunc.at takes
    np.add.at(envelope, index, np.tile(window**2, n_frames))
    start = op.n_fft // 2 if op.center else 0
    end = total - (op.n_fft // 2 if op.center else 0)
    if op.length:
        end = start + op.length + 2 * op.pad
    out = flat.reshape(*lead, total)
    if end > total:
        out = np.concatenate([out, np.zeros((*lead, end - total))], axis=-1)
        envelope = np.concatenate([envelope, np.zeros(end - total)])
    out, envelope = out[..., start:end], envelope[start:end]
    if np.any(np.abs(envelope[: max(0, min(end, total) - start)]) < 1e-11):
        raise ValueError(f"{op.name}: the window envelope is zero somewhere: the window and hop cannot be inverted")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(envelope > 1e-11, out / np.where(envelope > 1e-11, envelope, 1), 0.0)
    if op.pad:
        out = out[..., op.pad : out.shape[-1] - op.pad]
    return out.astype(out_dtype(arr))


def _mel_matrix(op: Any, n_freqs: int, mel_type: Any) -> np.ndarray:
    return plans.melscale_fbanks(n_freqs, op.f_min, op.f_max, op.n_mels, op.sample_rate, op.norm, mel_type)


@register_kernel("MelScale", "CPU")
def mel_scale(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = as_waveform(op, arr, 2, "<..., freq, time>")
    if spec.shape[-2] != op.n_stft:
        raise ValueError(f"{op.name}: the input must have n_stft ({op.n_stft}) frequency rows. Found shape {spec.shape}")
    fb = _mel_matrix(op, op.n_stft, op.mel_type).astype(np.float64)
    return np.einsum("...ft,fm->...mt", spec, fb).astype(out_dtype(arr))


def _mel_spectrogram(op: Any, x: np.ndarray, name: str | None = None) -> np.ndarray:
    spec = power_spectrogram(op, x, name)
    fb = _mel_matrix(op, spec.shape[-2], op.mel_scale).astype(np.float64)
    return np.einsum("...ft,fm->...mt", spec, fb)


@register_kernel("MelSpectrogram", "CPU")
def mel_spectrogram(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return _mel_spectrogram(op, as_waveform(op, arr)).astype(out_dtype(arr))


def amplitude_to_db(x: np.ndarray, multiplier: float, amin: float, ref: float, top_db: float | None) -> np.ndarray:
    """``multiplier · log10(max(x, amin) / max(ref, amin))``, floored at the maximum minus ``top_db``."""
    db = multiplier * np.log10(np.maximum(x, amin)) - multiplier * np.log10(max(amin, ref))
    if top_db is not None and db.size:
        db = np.maximum(db, db.max() - top_db)
    return db


def _cepstrum(x: np.ndarray, log: bool, n: int, n_in: int, norm: Any) -> np.ndarray:
    x = np.log(x + 1e-6) if log else amplitude_to_db(x, 10.0, 1e-10, 1.0, 80.0)
    dct = plans.create_dct(n, n_in, norm).astype(np.float64)
    return np.einsum("...ft,fk->...kt", x, dct)


@register_kernel("MFCC", "CPU")
def mfcc(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    mel = _mel_spectrogram(op._mel, as_waveform(op, arr), op.name)
    return _cepstrum(mel, op.log_mels, op.n_mfcc, op._mel.n_mels, op.norm).astype(out_dtype(arr))


@register_kernel("LFCC", "CPU")
def lfcc(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = power_spectrogram(op._spec, as_waveform(op, arr), op.name)
    if op._spec.power == 0:
        spec = np.abs(spec)
    fb = plans.linear_fbanks(spec.shape[-2], op.f_min, op.f_max, op.n_filter, op.sample_rate).astype(np.float64)
    lin = np.einsum("...ft,fn->...nt", spec, fb)
    return _cepstrum(lin, op.log_lf, op.n_lfcc, op.n_filter, op.norm).astype(out_dtype(arr))


@register_kernel("AmplitudeToDB", "CPU")
def amplitude_to_db_kernel(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    multiplier = 10.0 if op.stype == "power" else 20.0
    return amplitude_to_db(as_waveform(op, arr), multiplier, op.amin, op.ref_value, op.top_db).astype(out_dtype(arr))


@register_kernel("DBToAmplitude", "CPU")
def db_to_amplitude(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return (op.ref * np.power(np.power(10.0, 0.1 * as_waveform(op, arr)), op.power)).astype(out_dtype(arr))


@register_kernel("ComputeDeltas", "CPU")
def compute_deltas(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = as_waveform(op, arr, 2, "<..., freq, time>")
    n = (op.win_length - 1) // 2
    denom = n * (n + 1) * (2 * n + 1) / 3
    if spec.shape[-1] == 0:
        return spec.astype(out_dtype(arr))
    padded = _pad_last(spec, n, n, op.pad_mode)
    t = spec.shape[-1]
    out = np.zeros_like(spec)
    for k in range(1, n + 1):  # over the window's taps, not the samples
        out += k * (padded[..., n + k : n + k + t] - padded[..., n - k : n - k + t])
    return (out / denom).astype(out_dtype(arr))
