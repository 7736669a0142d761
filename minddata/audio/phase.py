"""Complex-spectrogram ops, named as in ``mindspore.dataset.audio``: :class:`Angle`,
:class:`ComplexNorm`, :class:`Magphase`, :class:`PhaseVocoder`, :class:`TimeStretch`.

A complex spectrogram is a real array ``<..., 2>`` (real, imaginary), as in MindSpore. Outputs are
float32, or float64 for float64 input. :class:`PitchShift` shifts a waveform's pitch with
the phase vocoder. Specs only; the CPU kernels live in ``minddata.ops.cpu.phase``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minddata.audio._checks import check_enum, check_float, check_int, check_stft_args, float_dtype, one_input
from minddata.audio.utils import WindowType
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = ["Angle", "ComplexNorm", "Magphase", "PhaseVocoder", "PitchShift", "TimeStretch"]


def _complex_input(op: str, inputs: tuple[TensorSpec, ...], min_rank: int = 1, what: str = "<..., complex=2>") -> TensorSpec:
    spec = one_input(op, inputs, min_rank, what)
    if spec.shape[-1] not in (None, 2):
        raise ValueError(f"{op}: the input must have shape {what}. Found shape {tuple(spec.shape)}")
    return spec


class Angle(Op):
    """The angle (``atan2(imaginary, real)``) of each complex number of a ``<..., 2>`` array: ``<...>``.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Angle()(np.array([[0.0, 1.0], [-1.0, 0.0]])).round(4).tolist()
        [1.5708, 3.1416]
    """

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _complex_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape[:-1]), float_dtype(spec.dtype))


class ComplexNorm(Op):
    """The norm of each complex number of a ``<..., 2>`` array raised to ``power`` (>= 0): ``<...>``.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.ComplexNorm(2.0)(np.array([[3.0, 4.0]])).tolist()
        [25.0]
    """

    def __init__(self, power: float = 1.0) -> None:
        self.power = check_float(self.name, "power", power, low=0)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _complex_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape[:-1]), float_dtype(spec.dtype))


class Magphase(Op):
    """Split a complex ``<..., 2>`` array into its magnitude raised to ``power`` (>= 0) and its phase:
    two outputs ``<...>``.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> mag, phase = audio.Magphase()(np.array([[0.0, 2.0]]))
        >>> mag.tolist(), phase.round(4).tolist()
        ([2.0], [1.5708])
    """

    num_outputs = 2

    def __init__(self, power: float = 1.0) -> None:
        self.power = check_float(self.name, "power", power, low=0)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        spec = _complex_input(self.name, inputs)
        out = TensorSpec(tuple(spec.shape[:-1]), float_dtype(spec.dtype))
        return out, out


def _stretched(frames: int | None, rate: float) -> int | None:
    return None if frames is None else math.ceil(frames / rate)


class PhaseVocoder(Op):
    """Speed a complex spectrogram ``<..., freq, time, 2>`` up by ``rate`` (> 0) without changing its
    pitch: ``<..., freq, ceil(time / rate), 2>`` (torchaudio's ``phase_vocoder``). ``phase_advance``
    is the expected phase advance per hop of each bin, shape ``(freq, 1)``.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> advance = np.linspace(0, np.pi * 8, 9)[:, None]
        >>> audio.PhaseVocoder(2.0, advance)(np.ones((9, 10, 2), np.float32)).shape
        (9, 5, 2)
    """

    def __init__(self, rate: float, phase_advance: np.ndarray) -> None:
        self.rate = check_float(self.name, "rate", rate, low=0, low_open=True)
        if not isinstance(phase_advance, np.ndarray):
            raise TypeError(f"{self.name}: `phase_advance` must be a numpy.ndarray. Found: "
                            f"{type(phase_advance).__name__}")
        self.phase_advance = phase_advance

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _complex_input(self.name, inputs, 3, "<..., freq, time, complex=2>")
        shape = (*spec.shape[:-2], _stretched(spec.shape[-2], self.rate), 2)
        return TensorSpec(shape, float_dtype(spec.dtype))


class TimeStretch(Op):
    """Stretch a complex spectrogram ``<..., freq, time, 2>`` in time by ``fixed_rate`` without changing
    its pitch, with a phase vocoder: ``<..., freq, ceil(time / fixed_rate), 2>``.

    Args:
        hop_length: the STFT's hop (None: ``n_fft // 2`` with ``n_fft = (n_freq - 1) * 2``).
        n_freq: the number of frequency bins, > 0.
        fixed_rate: the speed-up, > 0 (None: 1, no change).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.TimeStretch(n_freq=9, fixed_rate=0.5)(np.ones((9, 10, 2), np.float32)).shape
        (9, 20, 2)
    """

    def __init__(self, hop_length: int | None = None, n_freq: int = 201, fixed_rate: float | None = None) -> None:
        self.n_freq = check_int(self.name, "n_freq", n_freq, low=1)
        if hop_length is not None:
            check_int(self.name, "hop_length", hop_length, low=1)
        self.hop_length = hop_length if hop_length is not None else (n_freq - 1) * 2 // 2
        self.fixed_rate = 1.0 if fixed_rate is None else check_float(self.name, "fixed_rate", fixed_rate, low=0,
                                                                       low_open=True)

    @property
    def phase_advance(self) -> Any:
        return np.linspace(0, math.pi * self.hop_length, self.n_freq)[:, None]

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _complex_input(self.name, inputs, 3, "<..., freq, time, complex=2>")
        shape = (*spec.shape[:-2], _stretched(spec.shape[-2], self.fixed_rate), 2)
        return TensorSpec(shape, float_dtype(spec.dtype))


class PitchShift(Op):
    """Shift a waveform ``<..., time>``'s pitch by ``n_steps`` steps of ``1 / bins_per_octave`` octave,
    keeping its length (torchaudio's ``pitch_shift``): a phase-vocoder time stretch by
    ``2 ** (-n_steps / bins_per_octave)`` (STFT, :class:`PhaseVocoder`, inverse STFT), then a resampling
    back to the original speed.

    Args:
        sample_rate: the sample rate, >= 0.
        n_steps: the shift in steps (negative: down).
        bins_per_octave: steps per octave, not 0.
        n_fft: FFT size, > 0.
        win_length: window size, at most ``n_fft`` (None: ``n_fft``).
        hop_length: hop between frames (None: ``win_length // 4``).
        window: the window function.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.PitchShift(16000, 2, n_fft=128)(np.zeros(1000, np.float32)).shape
        (1000,)
    """

    def __init__(
        self, sample_rate: int, n_steps: int, bins_per_octave: int = 12, n_fft: int = 512,
        win_length: int | None = None, hop_length: int | None = None, window: WindowType = WindowType.HANN,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=0)
        self.n_steps = check_int(self.name, "n_steps", n_steps)
        self.bins_per_octave = check_int(self.name, "bins_per_octave", bins_per_octave)
        if self.bins_per_octave == 0:
            raise ArgumentError(f"{self.name}: `bins_per_octave` must not be 0. Found: 0")
        self.n_fft, self.win_length, self.hop_length = check_stft_args(
            self.name, n_fft, win_length, hop_length, hop_divisor=4
        )
        self.window = check_enum(self.name, "window", window, WindowType)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))
