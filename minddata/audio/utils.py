"""The audio ops' enums and filter-bank functions, named as in ``mindspore.dataset.audio.utils``.

The enums are ``str`` enums with MindSpore's values, so they serialize as text.

Examples:
    >>> from minddata.audio import utils
    >>> utils.melscale_fbanks(5, 0.0, 8000.0, 2, 16000).shape
    (5, 2)
    >>> utils.create_dct(2, 4, utils.NormMode.ORTHO).astype(float).round(3).tolist()
    [[0.5, 0.653], [0.5, 0.271], [0.5, -0.271], [0.5, -0.653]]
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np

from minddata.audio._checks import check_enum, check_float, check_int
from minddata.errors import ArgumentError
from minddata.ops.plans import spectrogram as _plans

__all__ = [
    "BorderType",
    "DensityFunction",
    "FadeShape",
    "GainType",
    "Interpolation",
    "MelType",
    "Modulation",
    "NormMode",
    "NormType",
    "ResampleMethod",
    "ScaleType",
    "WindowType",
    "create_dct",
    "linear_fbanks",
    "melscale_fbanks",
]


class BorderType(str, Enum):
    """Padding mode: ``CONSTANT`` (zeros), ``EDGE`` (repeat the edge), ``REFLECT`` (mirror without the
    edge), ``SYMMETRIC`` (mirror with the edge)."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class DensityFunction(str, Enum):
    """Dither noise: triangular (``TPDF``), rectangular (``RPDF``) or Gaussian (``GPDF``)."""

    TPDF = "TPDF"
    RPDF = "RPDF"
    GPDF = "GPDF"


class FadeShape(str, Enum):
    """The shape of :class:`~minddata.audio.Fade`'s ramps."""

    QUARTER_SINE = "quarter_sine"
    HALF_SINE = "half_sine"
    LINEAR = "linear"
    LOGARITHMIC = "logarithmic"
    EXPONENTIAL = "exponential"


class GainType(str, Enum):
    """How :class:`~minddata.audio.Vol` reads its gain: an amplitude ratio, a power ratio or decibels."""

    AMPLITUDE = "amplitude"
    POWER = "power"
    DB = "db"


class Interpolation(str, Enum):
    """Delay-line interpolation of :class:`~minddata.audio.Flanger`."""

    LINEAR = "linear"
    QUADRATIC = "quadratic"


class MelType(str, Enum):
    """The mel scale: HTK's formula or Slaney's (the MATLAB Auditory Toolbox)."""

    HTK = "htk"
    SLANEY = "slaney"


class Modulation(str, Enum):
    """The modulation of :class:`~minddata.audio.Flanger`."""

    SINUSOIDAL = "sinusoidal"
    TRIANGULAR = "triangular"


class NormMode(str, Enum):
    """DCT normalization: ``ORTHO`` (orthonormal basis) or ``NONE``."""

    ORTHO = "ortho"
    NONE = "none"


class NormType(str, Enum):
    """Mel filter normalization: ``SLANEY`` (equal area) or ``NONE``."""

    SLANEY = "slaney"
    NONE = "none"


class ResampleMethod(str, Enum):
    """:class:`~minddata.audio.Resample`'s filter: a Hann-windowed sinc or a Kaiser-windowed sinc."""

    SINC_INTERPOLATION = "sinc_interpolation"
    KAISER_WINDOW = "kaiser_window"


class ScaleType(str, Enum):
    """Whether a spectrogram holds power or magnitude."""

    POWER = "power"
    MAGNITUDE = "magnitude"


class WindowType(str, Enum):
    """STFT windows (periodic, as PyTorch's; Kaiser with beta 12)."""

    BARTLETT = "bartlett"
    BLACKMAN = "blackman"
    HAMMING = "hamming"
    HANN = "hann"
    KAISER = "kaiser"


def create_dct(n_mfcc: int, n_mels: int, norm: NormMode = NormMode.NONE) -> np.ndarray:
    """The DCT-II matrix of shape ``(n_mels, n_mfcc)`` (float32), to right-multiply row-wise data;
    ``NormMode.ORTHO`` makes its basis orthonormal.

    Examples:
        >>> from minddata.audio import create_dct, NormMode
        >>> create_dct(100, 200, NormMode.NONE).shape
        (200, 100)
    """
    check_int("create_dct", "n_mfcc", n_mfcc, low=1)
    check_int("create_dct", "n_mels", n_mels, low=1)
    check_enum("create_dct", "norm", norm, NormMode)
    return _plans.create_dct(n_mfcc, n_mels, norm.value).copy()


def _check_band(name: str, n_freqs: Any, f_min: Any, f_max: Any) -> None:
    """The checks the filter-bank functions share: ``n_freqs`` >= 0 and ``0 <= f_min <= f_max``, ``f_max`` > 0."""
    check_int(name, "n_freqs", n_freqs, low=0)
    check_float(name, "f_min", f_min, low=0)
    check_float(name, "f_max", f_max, low=0, low_open=True)
    if f_min > f_max:
        raise ArgumentError(f"{name}: `f_min` must be at most `f_max` ({f_max}). Found: {f_min}")


def linear_fbanks(n_freqs: int, f_min: float, f_max: float, n_filter: int, sample_rate: int) -> np.ndarray:
    """A bank of ``n_filter`` triangular filters with linearly spaced centres between ``f_min`` and
    ``f_max``, over ``n_freqs`` frequencies from 0 to ``sample_rate // 2``: shape ``(n_freqs, n_filter)``.

    Examples:
        >>> from minddata.audio import linear_fbanks
        >>> linear_fbanks(n_freqs=4096, f_min=0, f_max=8000, n_filter=40, sample_rate=16000).shape
        (4096, 40)
    """
    name = "linear_fbanks"
    _check_band(name, n_freqs, f_min, f_max)
    check_int(name, "n_filter", n_filter, low=1)
    check_int(name, "sample_rate", sample_rate, low=1)
    return _plans.linear_fbanks(n_freqs, float(f_min), float(f_max), n_filter, sample_rate).copy()


def melscale_fbanks(
    n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int, norm: NormType = NormType.NONE,
    mel_type: MelType = MelType.HTK,
) -> np.ndarray:
    """The mel filter bank: ``n_mels`` triangular filters evenly spaced on the mel scale between
    ``f_min`` and ``f_max``, over ``n_freqs`` frequencies from 0 to ``sample_rate // 2``; shape
    ``(n_freqs, n_mels)``, float32.

    Examples:
        >>> from minddata.audio import melscale_fbanks
        >>> melscale_fbanks(n_freqs=4096, f_min=0, f_max=8000, n_mels=40, sample_rate=16000).shape
        (4096, 40)
    """
    name = "melscale_fbanks"
    _check_band(name, n_freqs, f_min, f_max)
    check_int(name, "n_mels", n_mels, low=1)
    check_int(name, "sample_rate", sample_rate, low=1)
    check_enum(name, "norm", norm, NormType)
    check_enum(name, "mel_type", mel_type, MelType)
    fb = _plans.melscale_fbanks(n_freqs, float(f_min), float(f_max), n_mels, sample_rate, norm.value, mel_type.value)
    return fb.copy()
