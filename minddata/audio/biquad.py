"""The IIR filter family, named as in ``mindspore.dataset.audio``: :class:`Biquad`, :class:`LFilter`,
:class:`Filtfilt`, the cookbook biquads (:class:`LowpassBiquad`, :class:`HighpassBiquad`,
:class:`BandpassBiquad`, :class:`BandrejectBiquad`, :class:`BandBiquad`, :class:`AllpassBiquad`,
:class:`BassBiquad`, :class:`TrebleBiquad`, :class:`EqualizerBiquad`, :class:`DeemphBiquad`,
:class:`RiaaBiquad`), and the waveshapers :class:`Contrast` and :class:`Overdrive`.

A waveform ``<..., time>`` is filtered along time from rest (zero initial state) with the difference
equation ``a0·y[n] = Σ b[k]·x[n-k] − Σ_{k>0} a[k]·y[n-k]``; the biquads then clamp to [-1, 1], as
MindSpore does. Coefficients are computed in ``minddata.ops.plans.biquad``, the CPU kernels (SciPy's
``lfilter`` over all channels at once) live in ``minddata.ops.cpu.biquad``.

Examples:
    >>> import numpy as np
    >>> from minddata import audio
    >>> x = np.random.default_rng(0).uniform(-0.5, 0.5, (2, 1000)).astype(np.float32)
    >>> y = audio.LowpassBiquad(16000, 500.0)(x)
    >>> y.shape, y.dtype, bool(np.abs(y).mean() < np.abs(x).mean())
    ((2, 1000), dtype('float32'), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minddata.audio._checks import check_bool, check_float, check_int, float_dtype, one_input
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = [
    "AllpassBiquad",
    "BandBiquad",
    "BandpassBiquad",
    "BandrejectBiquad",
    "BassBiquad",
    "Biquad",
    "Contrast",
    "DeemphBiquad",
    "EqualizerBiquad",
    "Filtfilt",
    "HighpassBiquad",
    "LFilter",
    "LowpassBiquad",
    "Overdrive",
    "RiaaBiquad",
    "TrebleBiquad",
]


class _Filter(Op):
    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


def _sample_rate(op: str, value: Any) -> int:
    value = check_int(op, "sample_rate", value)
    if value == 0:
        raise ArgumentError(f"{op}: `sample_rate` must not be 0. Found: 0")
    return value


def _q(op: str, value: Any) -> float:
    return check_float(op, "Q", value, low=0.0, high=1.0, low_open=True)


class _Cookbook(_Filter):
    def __init__(self, sample_rate: int, freq_arg: str, freq: float, Q: float) -> None:  # noqa: N803
        self.sample_rate = _sample_rate(self.name, sample_rate)
        setattr(self, freq_arg, check_float(self.name, freq_arg, freq))
        self.Q = _q(self.name, Q)


class AllpassBiquad(_Cookbook):
    """Two-pole all-pass filter (flat magnitude, phase turning around ``central_freq``).

    Args:
        sample_rate: the audio's sample rate (not 0).
        central_freq: the centre frequency in Hz.
        Q: the quality factor, in (0, 1].
    """

    def __init__(self, sample_rate: int, central_freq: float, Q: float = 0.707) -> None:  # noqa: N803
        super().__init__(sample_rate, "central_freq", central_freq, Q)


class BandpassBiquad(_Cookbook):
    """Two-pole band-pass filter around ``central_freq``; ``const_skirt_gain`` gives a constant skirt
    gain (peak gain Q) instead of a constant 0 dB peak."""

    def __init__(
        self, sample_rate: int, central_freq: float, Q: float = 0.707, const_skirt_gain: bool = False  # noqa: N803
    ) -> None:
        super().__init__(sample_rate, "central_freq", central_freq, Q)
        self.const_skirt_gain = check_bool(self.name, "const_skirt_gain", const_skirt_gain)


class BandrejectBiquad(_Cookbook):
    """Two-pole band-reject (notch) filter at ``central_freq``."""

    def __init__(self, sample_rate: int, central_freq: float, Q: float = 0.707) -> None:  # noqa: N803
        super().__init__(sample_rate, "central_freq", central_freq, Q)


class BandBiquad(_Cookbook):
    """SoX's two-pole band filter at ``central_freq`` (bandwidth ``central_freq / Q``); ``noise`` tunes
    it for unpitched audio such as percussion."""

    def __init__(self, sample_rate: int, central_freq: float, Q: float = 0.707, noise: bool = False) -> None:  # noqa: N803
        super().__init__(sample_rate, "central_freq", central_freq, Q)
        self.noise = check_bool(self.name, "noise", noise)


class HighpassBiquad(_Cookbook):
    """Two-pole high-pass filter with cutoff ``cutoff_freq`` (Hz)."""

    def __init__(self, sample_rate: int, cutoff_freq: float, Q: float = 0.707) -> None:  # noqa: N803
        super().__init__(sample_rate, "cutoff_freq", cutoff_freq, Q)


class LowpassBiquad(_Cookbook):
    """Two-pole low-pass filter with cutoff ``cutoff_freq`` (Hz)."""

    def __init__(self, sample_rate: int, cutoff_freq: float, Q: float = 0.707) -> None:  # noqa: N803
        super().__init__(sample_rate, "cutoff_freq", cutoff_freq, Q)


class EqualizerBiquad(_Filter):
    """Peaking equalizer: ``gain`` dB around ``center_freq``."""

    def __init__(self, sample_rate: int, center_freq: float, gain: float, Q: float = 0.707) -> None:  # noqa: N803
        self.sample_rate = _sample_rate(self.name, sample_rate)
        self.center_freq = check_float(self.name, "center_freq", center_freq)
        self.gain = check_float(self.name, "gain", gain)
        self.Q = _q(self.name, Q)


class BassBiquad(_Filter):
    """Low shelf: boost or cut (``gain`` dB) below ``central_freq``."""

    def __init__(self, sample_rate: int, gain: float, central_freq: float = 100.0, Q: float = 0.707) -> None:  # noqa: N803
        self.sample_rate = _sample_rate(self.name, sample_rate)
        self.gain = check_float(self.name, "gain", gain)
        self.central_freq = check_float(self.name, "central_freq", central_freq)
        self.Q = _q(self.name, Q)


class TrebleBiquad(_Filter):
    """High shelf: boost or cut (``gain`` dB) above ``central_freq``."""

    def __init__(self, sample_rate: int, gain: float, central_freq: float = 3000, Q: float = 0.707) -> None:  # noqa: N803
        self.sample_rate = _sample_rate(self.name, sample_rate)
        self.gain = check_float(self.name, "gain", gain)
        self.central_freq = check_float(self.name, "central_freq", central_freq)
        self.Q = _q(self.name, Q)


class DeemphBiquad(_Filter):
    """The CD de-emphasis shelf (ISO 908) for audio sampled at 44100 or 48000 Hz."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate)
        if self.sample_rate not in (44100, 48000):
            raise ArgumentError(f"{self.name}: `sample_rate` must be 44100 or 48000. Found: {sample_rate}")


class RiaaBiquad(_Filter):
    """The RIAA vinyl playback equalization, for 44100, 48000, 88200 or 96000 Hz."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate)
        if self.sample_rate not in (44100, 48000, 88200, 96000):
            raise ArgumentError(
                f"{self.name}: `sample_rate` must be one of 44100, 48000, 88200, 96000. Found: {sample_rate}"
            )


class Biquad(_Filter):
    """The biquad with coefficients ``b0, b1, b2`` (numerator) and ``a0, a1, a2`` (denominator, ``a0``
    not 0).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Biquad(0.5, 0.0, 0.0, 1.0, 0.0, 0.0)(np.array([0.2, 0.4])).tolist()
        [0.1, 0.2]
    """

    def __init__(self, b0: float, b1: float, b2: float, a0: float, a1: float, a2: float) -> None:
        self.b0, self.b1, self.b2 = (check_float(self.name, k, v) for k, v in (("b0", b0), ("b1", b1), ("b2", b2)))
        self.a0 = check_float(self.name, "a0", a0, nonzero=True)
        self.a1, self.a2 = check_float(self.name, "a1", a1), check_float(self.name, "a2", a2)


def _coeffs(op: str, arg: str, value: Any) -> list[float]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{op}: `{arg}` must be a list or tuple of floats. Found: {value!r} ({type(value).__name__})")
    return [check_float(op, f"{arg}[{i}]", v) for i, v in enumerate(value)]


class LFilter(_Filter):
    """The IIR filter with denominator ``a_coeffs`` and numerator ``b_coeffs`` (lists of the same length,
    ``a_coeffs[0]`` not 0); ``clamp`` clamps the output to [-1, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.LFilter([1.0, -0.5], [1.0, 0.0])(np.array([1.0, 0.0, 0.0])).tolist()
        [1.0, 0.5, 0.25]
    """

    def __init__(self, a_coeffs: Sequence[float], b_coeffs: Sequence[float], clamp: bool = True) -> None:
        self.a_coeffs = _coeffs(self.name, "a_coeffs", a_coeffs)
        self.b_coeffs = _coeffs(self.name, "b_coeffs", b_coeffs)
        if len(self.a_coeffs) != len(self.b_coeffs):
            raise ArgumentError(
                f"{self.name}: `a_coeffs` and `b_coeffs` must have the same length. Found: {len(self.a_coeffs)} "
                f"and {len(self.b_coeffs)}"
            )
        if not self.a_coeffs or self.a_coeffs[0] == 0:
            raise ArgumentError(f"{self.name}: `a_coeffs[0]` must not be 0. Found: {self.a_coeffs[:1]}")
        self.clamp = check_bool(self.name, "clamp", clamp)


class Filtfilt(LFilter):
    """:class:`LFilter` forwards, then backwards over the result: zero phase, squared magnitude
    response; ``clamp`` clamps the final output."""


class Contrast(_Filter):
    """SoX's contrast: ``sin(x·π/2 + enhancement_amount/750 · sin(x·2π))``, louder-sounding audio.

    Args:
        enhancement_amount: in [0, 100].
    """

    def __init__(self, enhancement_amount: float = 75.0) -> None:
        self.enhancement_amount = check_float(self.name, "enhancement_amount", enhancement_amount, low=0, high=100)


class Overdrive(_Filter):
    """SoX's overdrive: gain ``gain`` dB, a soft-clipping cubic with DC ``color / 200``, then a DC
    blocking filter mixed with the input, clamped to [-1, 1].

    Args:
        gain: in [0, 100] dB.
        color: the amount of even harmonics, in [0, 100].
    """

    def __init__(self, gain: float = 20.0, color: float = 20.0) -> None:
        self.gain = check_float(self.name, "gain", gain, low=0, high=100)
        self.color = check_float(self.name, "color", color, low=0, high=100)
