"""Waveform ops, named as in ``mindspore.dataset.audio``: :class:`MuLawEncoding`, :class:`MuLawDecoding`,
:class:`Vol`, :class:`Gain`, :class:`DCShift`, :class:`Fade`, :class:`Resample`.

Waveforms have shape ``<..., time>``. Outputs are float32, or float64 for float64 input
(:class:`MuLawEncoding` gives int32). Specs only; the CPU kernels live in ``minddata.ops.cpu.waveform``.
"""

from __future__ import annotations

import math

from minddata.audio._checks import check_enum, check_float, check_int, float_dtype, one_input
from minddata.audio.utils import FadeShape, GainType, ResampleMethod
from minddata.ops.base import Op, TensorSpec

__all__ = ["DCShift", "Fade", "Gain", "MuLawDecoding", "MuLawEncoding", "Resample", "Vol"]

import numpy as np


class _SameShape(Op):
    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


class MuLawEncoding(Op):
    """μ-law companding of a waveform in [-1, 1] into integers ``0 … quantization_channels - 1`` (int32).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.MuLawEncoding()(np.array([-1.0, 0.0, 1.0])).tolist()
        [0, 128, 255]
    """

    def __init__(self, quantization_channels: int = 256) -> None:
        self.quantization_channels = check_int(self.name, "quantization_channels", quantization_channels, low=1)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape), np.dtype(np.int32))


class MuLawDecoding(_SameShape):
    """The waveform in [-1, 1] of μ-law codes ``0 … quantization_channels - 1`` (the inverse of
    :class:`MuLawEncoding`).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.MuLawDecoding()(np.array([0, 255])).tolist()
        [-1.0, 1.0]
    """

    def __init__(self, quantization_channels: int = 256) -> None:
        self.quantization_channels = check_int(self.name, "quantization_channels", quantization_channels, low=1)


class Vol(_SameShape):
    """Scale a waveform's volume, then clamp it to [-1, 1]: ``gain`` is an amplitude ratio (>= 0), a
    power ratio (> 0) or decibels, by ``gain_type``.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Vol(0.5)(np.array([0.5, 1.0, 4.0])).tolist()
        [0.25, 0.5, 1.0]
    """

    def __init__(self, gain: float, gain_type: GainType = GainType.AMPLITUDE) -> None:
        self.gain_type = check_enum(self.name, "gain_type", gain_type, GainType)
        if gain_type == GainType.AMPLITUDE:
            self.gain = check_float(self.name, "gain", gain, low=0)
        elif gain_type == GainType.POWER:
            self.gain = check_float(self.name, "gain", gain, low=0, low_open=True)
        else:
            self.gain = check_float(self.name, "gain", gain)


class Gain(_SameShape):
    """Amplify a waveform by ``gain_db`` decibels (no clamping).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Gain(20.0)(np.array([0.5], np.float32)).tolist()
        [5.0]
    """

    def __init__(self, gain_db: float = 1.0) -> None:
        self.gain_db = check_float(self.name, "gain_db", gain_db)


class DCShift(_SameShape):
    """Add ``shift`` to a waveform, clamped to [-1, 1]. With ``limiter_gain``, samples beyond the
    threshold ``t = 1 - (|shift| - limiter_gain)`` (above ``t`` for a positive shift, below ``-t`` for a
    negative one) are compressed: ``(x ∓ t) · limiter_gain / (1 - t) ± t + shift``, limited to ``±t``
    (torchaudio's ``dcshift``). For a negative shift MindSpore 2.10 adds ``t`` instead of subtracting
    it, which sends the limited negative samples above zero; minddata mirrors the positive case.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.DCShift(0.5)(np.array([0.1, 0.7])).tolist()
        [0.6, 1.0]
    """

    def __init__(self, shift: float, limiter_gain: float | None = None) -> None:
        self.shift = check_float(self.name, "shift", shift, low=-2.0, high=2.0)
        self.limiter_gain = None if limiter_gain is None else check_float(self.name, "limiter_gain", limiter_gain)


class Fade(_SameShape):
    """Fade a waveform in over its first ``fade_in_len`` samples and out over its last ``fade_out_len``,
    with ramps of ``fade_shape`` (both lengths at most the waveform's).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Fade(fade_in_len=3)(np.ones(5)).tolist()
        [0.0, 0.5, 1.0, 1.0, 1.0]
    """

    def __init__(self, fade_in_len: int = 0, fade_out_len: int = 0, fade_shape: FadeShape = FadeShape.LINEAR) -> None:
        self.fade_in_len = check_int(self.name, "fade_in_len", fade_in_len, low=0)
        self.fade_out_len = check_int(self.name, "fade_out_len", fade_out_len, low=0)
        self.fade_shape = check_enum(self.name, "fade_shape", fade_shape, FadeShape)


class Resample(Op):
    """Resample a waveform from ``orig_freq`` to ``new_freq`` with a band-limited (windowed sinc)
    interpolation, as torchaudio's ``resample``: the output has ``ceil(new_freq · time / orig_freq)``
    samples.

    Args:
        orig_freq, new_freq: the sample rates, > 0.
        resample_method: the sinc's window: Hann (``SINC_INTERPOLATION``) or Kaiser (``KAISER_WINDOW``).
        lowpass_filter_width: the filter's half-width in zero crossings, > 0.
        rolloff: the cutoff as a fraction of the lower Nyquist frequency, in (0, 1].
        beta: the Kaiser window's shape (None: 14.769656459379492).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Resample(16000, 8000)(np.zeros(100, np.float32)).shape
        (50,)
    """

    def __init__(
        self, orig_freq: float = 16000, new_freq: float = 16000,
        resample_method: ResampleMethod = ResampleMethod.SINC_INTERPOLATION, lowpass_filter_width: int = 6,
        rolloff: float = 0.99, beta: float | None = None,
    ) -> None:
        self.orig_freq = check_float(self.name, "orig_freq", orig_freq, low=0, low_open=True)
        self.new_freq = check_float(self.name, "new_freq", new_freq, low=0, low_open=True)
        self.resample_method = check_enum(self.name, "resample_method", resample_method, ResampleMethod)
        self.lowpass_filter_width = check_int(self.name, "lowpass_filter_width", lowpass_filter_width, low=1)
        self.rolloff = check_float(self.name, "rolloff", rolloff, low=0.0, high=1.0, low_open=True)
        self.beta = 14.769656459379492 if beta is None else check_float(self.name, "beta", beta)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        n = spec.shape[-1]
        if n is not None and self.orig_freq != self.new_freq:
            n = math.ceil(self.new_freq * n / self.orig_freq)
        return TensorSpec((*spec.shape[:-1], n), float_dtype(spec.dtype))
