"""CPU kernels of the reconstruction ops (``minddata/audio/reconstruct.py``), NumPy in float64: each
iteration is an STFT or a matrix product over the whole spectrogram."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.cpu.spectrogram import inverse_spectrogram, stft
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
