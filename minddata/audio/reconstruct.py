"""Reconstruction ops, named as in ``mindspore.dataset.audio``: :class:`GriffinLim` (a waveform from a
magnitude spectrogram) and :class:`InverseMelScale` (a linear spectrogram from a mel one).

Outputs are float32, or float64 for float64 input. Specs only; the CPU kernels live in
``minddata.ops.cpu.reconstruct``.
"""

from __future__ import annotations

from typing import Any

from minddata.audio._checks import (
    check_bool,
    check_enum,
    check_float,
    check_int,
    check_stft_args,
    float_dtype,
    one_input,
)
from minddata.audio.spectrogram import _check_freqs
from minddata.audio.utils import MelType, NormType, WindowType
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = ["GriffinLim", "InverseMelScale"]


class GriffinLim(Op):
    """A waveform ``<..., time>`` whose STFT magnitude is the spectrogram ``<..., n_fft // 2 + 1,
    frames>`` (``|STFT| ** power``), by ``n_iter`` rounds of Griffin-Lim's phase estimation with
    momentum (torchaudio's ``griffinlim``). The phases start at 1 (``rand_init`` False) or uniform
    random complex numbers drawn from the row's RNG.

    Args:
        n_fft: FFT size, > 0.
        n_iter: rounds of phase estimation, > 0.
        win_length: window size, at most ``n_fft`` (None or 0: ``n_fft``).
        hop_length: hop between frames (None or 0: ``win_length // 2``).
        window_type: the window function.
        power: the spectrogram's exponent, > 0.
        momentum: the fast Griffin-Lim momentum, in [0, 1).
        length: the output's length (None or 0: ``n_fft + hop_length · (frames - 1) - 2 · (n_fft // 2)``).
        rand_init: start from random phases.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.GriffinLim(n_fft=64, n_iter=4, rand_init=False)(np.ones((33, 10), np.float32)).shape
        (288,)
    """

    def __init__(
        self, n_fft: int = 400, n_iter: int = 32, win_length: int | None = None, hop_length: int | None = None,
        window_type: WindowType = WindowType.HANN, power: float = 2.0, momentum: float = 0.99,
        length: int | None = None, rand_init: bool = True,
    ) -> None:
        self.n_fft, self.win_length, self.hop_length = check_stft_args(
            self.name, n_fft, win_length, hop_length, zero_is_default=True
        )
        self.n_iter = check_int(self.name, "n_iter", n_iter, low=1)
        self.window_type = check_enum(self.name, "window_type", window_type, WindowType)
        self.power = check_float(self.name, "power", power, low=0, low_open=True)
        self.momentum = check_float(self.name, "momentum", momentum, low=0)
        if self.momentum >= 1:
            raise ArgumentError(f"{self.name}: `momentum` must be less than 1 (1 or more is unstable). Found: {momentum}")
        self.length = check_int(self.name, "length", length, low=0) if length else 0
        self.rand_init = check_bool(self.name, "rand_init", rand_init)

    @property
    def random(self) -> bool:  # type: ignore[override]  # per instance, where Op has a class attribute
        return self.rand_init

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., freq, time>")
        frames = spec.shape[-1]
        length: Any = self.length or (
            None if frames is None else max(self.n_fft + self.hop_length * (frames - 1) - 2 * (self.n_fft // 2), 0)
        )
        return TensorSpec((*spec.shape[:-2], length), float_dtype(spec.dtype))


class InverseMelScale(Op):
    """A linear spectrogram ``<..., n_stft, time>`` whose mel spectrogram (:class:`MelScale`'s filter
    bank) is the input ``<..., n_mels, time>``, by gradient descent from a random start (MindSpore's
    solver): each step moves the estimate by ``sgd_lr`` times the gradient of the mean squared error,
    until the error is below ``tolerance_loss``, changes by less than ``tolerance_change``, or
    ``max_iter`` steps; the result is clamped at 0. The start is uniform in [0, 1), from the row's RNG.

    Args:
        n_stft: frequency bins of the output, > 0.
        n_mels: mel filters of the input, > 0.
        sample_rate: the sample rate, > 0.
        f_min, f_max: the filter bank's range (``f_max`` None: ``sample_rate // 2``).
        max_iter: the most steps, > 0.
        tolerance_loss, tolerance_change: the stopping thresholds, > 0.
        sgdargs: ``{"sgd_lr": 0.1, "sgd_momentum": 0.9}`` by default (MindSpore 2.10 keeps no momentum
            between steps, so ``sgd_momentum`` has no effect there or here).
        norm, mel_type: the filter bank's normalisation and mel scale.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.InverseMelScale(20, 8, max_iter=10)(np.random.random([8, 5])).shape
        (20, 5)
    """

    random = True

    def __init__(
        self, n_stft: int, n_mels: int = 128, sample_rate: int = 16000, f_min: float = 0.0,
        f_max: float | None = None, max_iter: int = 100000, tolerance_loss: float = 1e-5,
        tolerance_change: float = 1e-8, sgdargs: dict | None = None, norm: NormType = NormType.NONE,
        mel_type: MelType = MelType.HTK,
    ) -> None:
        self.n_mels = check_int(self.name, "n_mels", n_mels, low=1)
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=1)
        self.f_min, self.f_max = _check_freqs(self.name, f_min, f_max, self.sample_rate, strict=True)
        self.n_stft = check_int(self.name, "n_stft", n_stft, low=1)
        self.norm = check_enum(self.name, "norm", norm, NormType)
        self.mel_type = check_enum(self.name, "mel_type", mel_type, MelType)
        self.max_iter = check_int(self.name, "max_iter", max_iter, low=1)
        self.tolerance_loss = check_float(self.name, "tolerance_loss", tolerance_loss, low=0, low_open=True)
        self.tolerance_change = check_float(self.name, "tolerance_change", tolerance_change, low=0, low_open=True)
        sgdargs = {"sgd_lr": 0.1, "sgd_momentum": 0.9} if sgdargs is None else sgdargs
        if not isinstance(sgdargs, dict) or set(sgdargs) < {"sgd_lr", "sgd_momentum"}:
            raise TypeError(f"{self.name}: `sgdargs` must be a dict with 'sgd_lr' and 'sgd_momentum'. Found: {sgdargs!r}")
        self.sgd_lr = check_float(self.name, "sgd_lr", sgdargs["sgd_lr"], low=0)
        self.sgd_momentum = check_float(self.name, "sgd_momentum", sgdargs["sgd_momentum"], low=0)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., n_mels, time>")
        return TensorSpec((*spec.shape[:-2], self.n_stft, spec.shape[-1]), float_dtype(spec.dtype))
