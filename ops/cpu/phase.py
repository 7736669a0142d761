"""CPU kernels of the complex-spectrogram ops (``minddata/audio/phase.py``), vectorised NumPy in float64."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.cpu.spectrogram import inverse_spectrogram, stft
from minddata.ops.cpu.waveform import resample
from minddata.ops.registry import register_kernel

__all__ = ["as_complex", "phase_vocoder"]


def as_complex(op: Any, x: Any, min_rank: int = 1, what: str = "<..., complex=2>") -> np.ndarray:
    """A ``<..., 2>`` real array as a complex128 array ``<...>``."""
    arr = as_waveform(op, x, min_rank, what)
    if arr.shape[-1] != 2:
        raise ValueError(f"{op.name}: the input must have shape {what}. Found shape {arr.shape}")
    return arr[..., 0] + 1j * arr[..., 1]


@register_kernel("Angle", "CPU")
def angle(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return np.angle(as_complex(op, arr)).astype(out_dtype(arr))


def _norm(z: np.ndarray, power: float) -> np.ndarray:
    mag = np.abs(z)
    return mag if power == 1 else mag**power


@register_kernel("ComplexNorm", "CPU")
def complex_norm(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return _norm(as_complex(op, arr), op.power).astype(out_dtype(arr))


@register_kernel("Magphase", "CPU")
def magphase(op: Any, ctx: KernelContext, x: Any) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(x)
    z = as_complex(op, arr)
    return _norm(z, op.power).astype(out_dtype(arr)), np.angle(z).astype(out_dtype(arr))


def phase_vocoder(spec: np.ndarray, rate: float, phase_advance: np.ndarray) -> np.ndarray:
    """torchaudio's ``phase_vocoder`` on a complex ``<..., freq, time>`` array."""
    if rate == 1.0:
        return spec
    n = spec.shape[-1]
    steps = np.arange(0, n, rate, dtype=np.float64)
    alphas = steps % 1.0
    padded = np.pad(spec, [(0, 0)] * (spec.ndim - 1) + [(0, 2)])
    first, second = padded[..., steps.astype(np.int64)], padded[..., steps.astype(np.int64) + 1]
    phase = np.angle(second) - np.angle(first) - phase_advance
    phase = phase - 2 * np.pi * np.round(phase / (2 * np.pi)) + phase_advance
    phase = np.concatenate([np.angle(spec[..., :1]), phase[..., :-1]], axis=-1)
    mag = alphas * np.abs(second) + (1 - alphas) * np.abs(first)
    return mag * np.exp(1j * np.cumsum(phase, axis=-1))


def _stretch(op: Any, x: Any, rate: float, advance: np.ndarray) -> np.ndarray:
    arr = np.asarray(x)
    z = as_complex(op, arr, 3, "<..., freq, time, complex=2>")
    advance = np.asarray(advance, np.float64)
    if advance.size not in (1, z.shape[-2]):
        raise ValueError(f"{op.name}: `phase_advance` must have one value per frequency bin ({z.shape[-2]}). "
                         f"Found shape {advance.shape}")
    out = phase_vocoder(z, rate, advance.reshape(-1, 1))
    return np.stack([out.real, out.imag], axis=-1).astype(out_dtype(arr))


@register_kernel("PhaseVocoder", "CPU")
def phase_vocoder_kernel(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    return _stretch(op, x, op.rate, op.phase_advance)


@register_kernel("TimeStretch", "CPU")
def time_stretch(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    return _stretch(op, x, op.fixed_rate, op.phase_advance)


@register_kernel("PitchShift", "CPU")
def pitch_shift(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    length = w.shape[-1]
    rate = 2.0 ** (-float(op.n_steps) / op.bins_per_octave)
    frames = SimpleNamespace(
        name=op.name, n_fft=op.n_fft, win_length=op.win_length, hop_length=op.hop_length, window=op.window, pad=0,
        center=True, pad_mode="reflect", onesided=True, normalized=False, length=int(round(length / rate)),
    )
    spec = stft(frames, w)
    advance = np.linspace(0, np.pi * op.hop_length, spec.shape[-2])[:, None]
    stretched = phase_vocoder(spec, rate, advance)
    stretched = np.stack([stretched.real, stretched.imag], axis=-1)
    waveform = inverse_spectrogram(frames, ctx, stretched)
    back = SimpleNamespace(
        name=op.name, orig_freq=int(op.sample_rate / rate), new_freq=op.sample_rate,
        resample_method="sinc_interpolation", lowpass_filter_width=6, rolloff=0.99, beta=14.769656459379492,
    )
    shifted = resample(back, ctx, waveform.astype(np.float64))
    if shifted.shape[-1] >= length:
        shifted = shifted[..., :length]
    else:
        shifted = np.pad(shifted, [(0, 0)] * (shifted.ndim - 1) + [(0, length - shifted.shape[-1])])
    return shifted.astype(out_dtype(arr))
