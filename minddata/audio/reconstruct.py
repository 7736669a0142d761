"""Reconstruction ops, named as in ``mindspore.dataset.audio``: :class:`GriffinLim` (a waveform from a
magnitude spectrogram) and :class:`InverseMelScale` (a linear spectrogram from a mel one).

Outputs are float32, or float64 for float64 input. Specs only; the CPU kernels live in
``minddata.ops.cpu.reconstruct``.
"""

from __future__ import annotations

from typing import Any

from minddata.audio._checks import check_bool, check_enum, check_float, check_int, float_dtype, one_input
from minddata.audio.utils import WindowType
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
        self.n_fft = check_int(self.name, "n_fft", n_fft, low=1)
        self.n_iter = check_int(self.name, "n_iter", n_iter, low=1)
        if win_length is not None:
            check_int(self.name, "win_length", win_length, low=0)
            if win_length > n_fft:
                raise ArgumentError(f"{self.name}: `win_length` must be at most `n_fft` ({n_fft}). Found: {win_length}")
        if hop_length is not None:
            check_int(self.name, "hop_length", hop_length, low=0)
        self.win_length = win_length if win_length else n_fft
        self.hop_length = hop_length if hop_length else max(self.win_length // 2, 1)
        self.window_type = check_enum(self.name, "window_type", window_type, WindowType)
        self.power = check_float(self.name, "power", power, low=0, low_open=True)
        self.momentum = check_float(self.name, "momentum", momentum, low=0)
        if self.momentum >= 1:
            raise ArgumentError(f"{self.name}: `momentum` must be less than 1 (1 or more is unstable). Found: {momentum}")
        self.length = check_int(self.name, "length", length, low=0) if length else 0
        self.rand_init = check_bool(self.name, "rand_init", rand_init)

    @property
    def random(self) -> bool:  # type: ignore[override]
        return self.rand_init

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., freq, time>")
        frames = spec.shape[-1]
        length: Any = self.length or (
            None if frames is None else max(self.n_fft + self.hop_length * (frames - 1) - 2 * (self.n_fft // 2), 0)
        )
        return TensorSpec((*spec.shape[:-2], length), float_dtype(spec.dtype))
