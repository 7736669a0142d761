"""CPU kernels of the reconstruction ops (``minddata/audio/reconstruct.py``), NumPy in float64: each
iteration is an STFT or a matrix product over the whole spectrogram."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.cpu.spectrogram import inverse_spectrogram, stft
from minddata.ops.plans.spectrogram import melscale_fbanks
from minddata.ops.registry import register_kernel


@register_kernel("GriffinLim", "CPU")
def griffin_lim(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    spec = as_waveform(op, arr, 2, "<..., freq, time>")
    if spec.shape[-2] != op.n_fft // 2 + 1:
        raise ValueError(f"{op.name}: the input must have n_fft // 2 + 1 ({op.n_fft // 2 + 1}) frequency bins. "
                         f"Found {spec.shape[-2]}")
    frames = SimpleNamespace(
        name=op.name, n_fft=op.n_fft, win_length=op.win_length, hop_length=op.hop_length, window=op.window_type,
        pad=0, center=True, pad_mode="reflect", onesided=True, normalized=False, length=op.length or None,
    )

    def inverse(z: np.ndarray) -> np.ndarray:
        return inverse_spectrogram(frames, ctx, np.stack([z.real, z.imag], axis=-1))

    momentum = op.momentum / (1 + op.momentum)
    magnitude = spec ** (1 / op.power)
    if op.rand_init:
        rng = ctx.rng
        angles = rng.random(spec.shape) + 1j * rng.random(spec.shape)
    else:
        angles = np.ones(spec.shape, np.complex128)
    previous: Any = 0.0
    for _ in range(op.n_iter):
        rebuilt = stft(frames, inverse(magnitude * angles))
        angles = rebuilt - previous * momentum if momentum else rebuilt
        angles = angles / (np.abs(angles) + 1e-16)
        previous = rebuilt
    return inverse(magnitude * angles).astype(out_dtype(arr))


@register_kernel("InverseMelScale", "CPU")
def inverse_mel_scale(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    mel = as_waveform(op, arr, 2, "<..., n_mels, time>")
    if mel.shape[-2] != op.n_mels:
        raise ValueError(f"{op.name}: the input must have n_mels ({op.n_mels}) rows. Found shape {mel.shape}")
    lead, time = mel.shape[:-2], mel.shape[-1]
    fb = melscale_fbanks(op.n_stft, op.f_min, op.f_max, op.n_mels, op.sample_rate, op.norm, op.mel_type)
    fb = np.asarray(fb, np.float64)  # (n_stft, n_mels)
    target = np.swapaxes(mel.reshape(-1, op.n_mels, time), -1, -2)  # (channels, time, n_mels)
    channels = target.shape[0]
    estimate = ctx.rng.random((channels, time, op.n_stft))
    loss = np.full(channels, np.inf)
    active = np.ones(channels, bool)
    for _ in range(op.max_iter):
        if not active.any() or time == 0:
            break
        diff = target[active] - estimate[active] @ fb
        new_loss = (diff * diff).mean(axis=(-1, -2))
        # Each channel stops on its own, keeping the estimate it measured.
        done = (new_loss < op.tolerance_loss) | (np.abs(loss[active] - new_loss) < op.tolerance_change)
        step = estimate[active] + op.sgd_lr * (diff @ fb.T) / time
        keep = np.flatnonzero(active)
        estimate[keep[~done]] = step[~done]
        loss[keep] = new_loss
        active[keep[done]] = False
    out = np.swapaxes(np.maximum(estimate, 0.0), -1, -2)
    return out.reshape(*lead, op.n_stft, time).astype(out_dtype(arr))
