"""Spectral audio ops, named as in ``mindspore.dataset.audio``: :class:`Spectrogram`,
:class:`InverseSpectrogram`, :class:`MelScale`, :class:`MelSpectrogram`, :class:`MFCC`, :class:`LFCC`,
:class:`AmplitudeToDB`, :class:`DBToAmplitude`, :class:`ComputeDeltas`.

Waveforms have shape ``<..., time>``, spectrograms ``<..., freq, time>``; a complex spectrogram is a
real array with a last axis of 2 (real, imaginary), as in MindSpore. Outputs are float32, or float64
for float64 input. Specs only; the CPU kernels live in ``minddata.ops.cpu.spectrogram``, the windows,
filter banks and DCT matrices in ``minddata.ops.plans.spectrogram``.
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
from minddata.audio.utils import BorderType, MelType, NormMode, NormType, ScaleType, WindowType
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.spectrogram import frame_count

__all__ = [
    "AmplitudeToDB",
    "ComputeDeltas",
    "DBToAmplitude",
    "InverseSpectrogram",
    "LFCC",
    "MFCC",
    "MelScale",
    "MelSpectrogram",
    "Spectrogram",
]


def _check_stft(op: str, n_fft: Any, win_length: Any, hop_length: Any, pad: Any) -> tuple[int, int, int, int]:
    return (*check_stft_args(op, n_fft, win_length, hop_length), check_int(op, "pad", pad, low=0))


def _check_freqs(op: str, f_min: Any, f_max: Any, sample_rate: int, *, strict: bool) -> tuple[float, float]:
    f_min = check_float(op, "f_min", f_min)
    if f_max is None:
        if f_min >= sample_rate // 2:
            raise ArgumentError(
                f"{op}: `f_min` must be less than sample_rate // 2 ({sample_rate // 2}) when `f_max` is None. "
                f"Found: {f_min}"
            )
        return f_min, float(sample_rate // 2)
    f_max = check_float(op, "f_max", f_max, low=0, low_open=strict)
    if f_min > f_max or (strict and f_min == f_max):
        rule = "less than" if strict else "at most"
        raise ArgumentError(f"{op}: `f_min` must be {rule} `f_max` ({f_max}). Found: {f_min}")
    return f_min, f_max


class _Stft(Op):
    """The short-time Fourier transform's parameters, shared by the ops that take one."""

    def _frames(self, length: int | None) -> int | None:
        return frame_count(length, self.n_fft, self.hop_length, self.pad, self.center)


class Spectrogram(_Stft):
    """The spectrogram of a waveform ``<..., time>``: ``<..., n_fft // 2 + 1, frames>`` (``n_fft``
    bins when ``onesided`` is False), the STFT's magnitude raised to ``power``; ``power=0`` keeps the
    complex STFT as ``<..., freq, frames, 2>``.

    Args:
        n_fft: FFT size, > 0.
        win_length: window size, at most ``n_fft`` (None: ``n_fft``).
        hop_length: hop between frames (None: ``win_length // 2``).
        pad: zeros added to both ends first.
        window: the window function.
        power: exponent of the magnitude, >= 0 (1: magnitude, 2: power, 0: complex).
        normalized: divide by the window's L2 norm.
        center: pad ``n_fft // 2`` on both ends (with ``pad_mode``) so frames are centred on their time.
        pad_mode: the padding of ``center``.
        onesided: keep only the non-negative frequencies.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.Spectrogram(n_fft=16)(np.random.random([10, 20])).shape
        (10, 9, 3)
    """

    def __init__(
        self, n_fft: int = 400, win_length: int | None = None, hop_length: int | None = None, pad: int = 0,
        window: WindowType = WindowType.HANN, power: float = 2.0, normalized: bool = False, center: bool = True,
        pad_mode: BorderType = BorderType.REFLECT, onesided: bool = True,
    ) -> None:
        self.n_fft, self.win_length, self.hop_length, self.pad = _check_stft(
            self.name, n_fft, win_length, hop_length, pad
        )
        self.window = check_enum(self.name, "window", window, WindowType)
        self.power = check_float(self.name, "power", power, low=0)
        self.normalized = check_bool(self.name, "normalized", normalized)
        self.center = check_bool(self.name, "center", center)
        self.pad_mode = check_enum(self.name, "pad_mode", pad_mode, BorderType)
        self.onesided = check_bool(self.name, "onesided", onesided)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        freqs = self.n_fft // 2 + 1 if self.onesided else self.n_fft
        shape = (*spec.shape[:-1], freqs, self._frames(spec.shape[-1]))
        return TensorSpec(shape + ((2,) if self.power == 0 else ()), float_dtype(spec.dtype))


class InverseSpectrogram(_Stft):
    """The waveform ``<..., time>`` of a complex spectrogram ``<..., freq, frames, 2>`` (the inverse STFT
    by overlap-add, as ``torch.istft``); the parameters are the :class:`Spectrogram`'s that made it.

    Args:
        length: the output length (None: what the frames give).
        n_fft, win_length, hop_length, pad, window, normalized, center, pad_mode, onesided: as for
            :class:`Spectrogram`.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
        >>> spec = audio.Spectrogram(n_fft=16, power=0)(x)
        >>> back = audio.InverseSpectrogram(length=64, n_fft=16)(spec)
        >>> bool(np.allclose(back, x, atol=1e-5))
        True
    """

    def __init__(
        self, length: int | None = None, n_fft: int = 400, win_length: int | None = None,
        hop_length: int | None = None, pad: int = 0, window: WindowType = WindowType.HANN,
        normalized: bool = False, center: bool = True, pad_mode: BorderType = BorderType.REFLECT,
        onesided: bool = True,
    ) -> None:
        self.length = None if length is None else check_int(self.name, "length", length, low=0)
        self.n_fft, self.win_length, self.hop_length, self.pad = _check_stft(
            self.name, n_fft, win_length, hop_length, pad
        )
        self.window = check_enum(self.name, "window", window, WindowType)
        self.normalized = check_bool(self.name, "normalized", normalized)
        self.center = check_bool(self.name, "center", center)
        self.pad_mode = check_enum(self.name, "pad_mode", pad_mode, BorderType)
        self.onesided = check_bool(self.name, "onesided", onesided)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 3, "<..., freq, time, 2>")
        if self.length:
            time: int | None = self.length
        elif spec.shape[-2] is None:
            time = None
        else:
            time = self.n_fft + self.hop_length * (spec.shape[-2] - 1)
            time -= 2 * (self.n_fft // 2) if self.center else 0
            time -= 2 * self.pad
        return TensorSpec((*spec.shape[:-3], time), float_dtype(spec.dtype))


class MelScale(Op):
    """Turn a spectrogram ``<..., n_stft, time>`` into a mel spectrogram ``<..., n_mels, time>`` with the
    filter bank of :func:`~minddata.audio.melscale_fbanks`.

    Args:
        n_mels: number of mel filters, > 0.
        sample_rate: the audio's sample rate, > 0.
        f_min, f_max: the frequency range (``f_max`` None: ``sample_rate // 2``).
        n_stft: frequency bins of the input (``n_fft // 2 + 1``).
        norm: ``NormType.SLANEY`` for equal-area filters.
        mel_type: the mel scale.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.MelScale(n_mels=8, n_stft=201)(np.random.random([201, 3])).shape
        (8, 3)
    """

    def __init__(
        self, n_mels: int = 128, sample_rate: int = 16000, f_min: float = 0.0, f_max: float | None = None,
        n_stft: int = 201, norm: NormType = NormType.NONE, mel_type: MelType = MelType.HTK,
    ) -> None:
        self.n_mels = check_int(self.name, "n_mels", n_mels, low=1)
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=1)
        self.f_min, self.f_max = _check_freqs(self.name, f_min, f_max, self.sample_rate, strict=True)
        self.n_stft = check_int(self.name, "n_stft", n_stft, low=1)
        self.norm = check_enum(self.name, "norm", norm, NormType)
        self.mel_type = check_enum(self.name, "mel_type", mel_type, MelType)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., freq, time>")
        return TensorSpec((*spec.shape[:-2], self.n_mels, spec.shape[-1]), float_dtype(spec.dtype))


class MelSpectrogram(_Stft):
    """The mel spectrogram of a waveform: :class:`Spectrogram` then :class:`MelScale`;
    ``<..., time>`` → ``<..., n_mels, frames>``.

    Args:
        sample_rate, f_min, f_max, n_mels, norm: as for :class:`MelScale` (``mel_scale`` is its
            ``mel_type``).
        n_fft, win_length, hop_length, pad, window, power, normalized, center, pad_mode, onesided: as for
            :class:`Spectrogram` (``power`` > 0 here).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.MelSpectrogram(n_fft=16, n_mels=4)(np.random.random([32])).shape
        (4, 5)
    """

    def __init__(
        self, sample_rate: int = 16000, n_fft: int = 400, win_length: int | None = None,
        hop_length: int | None = None, f_min: float = 0.0, f_max: float | None = None, pad: int = 0,
        n_mels: int = 128, window: WindowType = WindowType.HANN, power: float = 2.0, normalized: bool = False,
        center: bool = True, pad_mode: BorderType = BorderType.REFLECT, onesided: bool = True,
        norm: NormType = NormType.NONE, mel_scale: MelType = MelType.HTK,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=1)
        self.n_fft, self.win_length, self.hop_length, self.pad = _check_stft(
            self.name, n_fft, win_length, hop_length, pad
        )
        self.f_min, self.f_max = _check_freqs(self.name, f_min, f_max, self.sample_rate, strict=False)
        self.n_mels = check_int(self.name, "n_mels", n_mels, low=1)
        self.window = check_enum(self.name, "window", window, WindowType)
        self.power = check_float(self.name, "power", power, low=0, low_open=True)
        self.normalized = check_bool(self.name, "normalized", normalized)
        self.center = check_bool(self.name, "center", center)
        self.pad_mode = check_enum(self.name, "pad_mode", pad_mode, BorderType)
        self.onesided = check_bool(self.name, "onesided", onesided)
        self.norm = check_enum(self.name, "norm", norm, NormType)
        self.mel_scale = check_enum(self.name, "mel_scale", mel_scale, MelType)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec((*spec.shape[:-1], self.n_mels, self._frames(spec.shape[-1])), float_dtype(spec.dtype))


_MEL_DEFAULTS: dict[str, Any] = {
    "n_fft": 400, "win_length": None, "hop_length": None, "f_min": 0.0, "f_max": None, "pad": 0, "n_mels": 128,
    "window": WindowType.HANN, "power": 2.0, "normalized": False, "center": True, "pad_mode": BorderType.REFLECT,
    "onesided": True, "norm": NormType.NONE, "mel_scale": MelType.HTK,
}
_SPEC_DEFAULTS: dict[str, Any] = {
    "n_fft": 400, "win_length": None, "hop_length": None, "pad": 0, "window": WindowType.HANN, "power": 2.0,
    "normalized": False, "center": True, "pad_mode": BorderType.REFLECT, "onesided": True,
}


def _kwargs(op: str, arg: str, given: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    if given is None:
        return dict(defaults)
    if not isinstance(given, dict):
        raise TypeError(f"{op}: `{arg}` must be a dict. Found: {given!r} ({type(given).__name__})")
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ArgumentError(f"{op}: `{arg}` has unknown keys {unknown}; the keys are {sorted(defaults)}")
    return {**defaults, **given}


class MFCC(Op):
    """Mel-frequency cepstral coefficients of a waveform: the :class:`MelSpectrogram` in decibels
    (``AmplitudeToDB`` with ``top_db=80``; or ``log(mel + 1e-6)`` with ``log_mels``), then a DCT-II;
    ``<..., time>`` → ``<..., n_mfcc, frames>``.

    Args:
        sample_rate: the audio's sample rate.
        n_mfcc: coefficients to keep, at most ``n_mels``.
        dct_type: the DCT type (only 2).
        norm: the DCT's normalization.
        log_mels: take the log of the mel spectrogram instead of decibels.
        melkwargs: :class:`MelSpectrogram`'s arguments (those not given keep their defaults;
            ``f_max`` None means ``sample_rate // 2``).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> op = audio.MFCC(n_mfcc=4, melkwargs={"n_fft": 16, "n_mels": 8})
        >>> op(np.random.random([32])).shape
        (4, 5)
    """

    def __init__(
        self, sample_rate: int = 16000, n_mfcc: int = 40, dct_type: int = 2, norm: NormMode = NormMode.ORTHO,
        log_mels: bool = False, melkwargs: dict[str, Any] | None = None,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=0)
        self.n_mfcc = check_int(self.name, "n_mfcc", n_mfcc, low=1)
        if dct_type != 2:
            raise ArgumentError(f"{self.name}: `dct_type` must be 2. Found: {dct_type!r}")
        self.dct_type = 2
        self.norm = check_enum(self.name, "norm", norm, NormMode)
        self.log_mels = check_bool(self.name, "log_mels", log_mels)
        kw = _kwargs(self.name, "melkwargs", melkwargs, _MEL_DEFAULTS)
        self.melkwargs = kw
        self._mel = MelSpectrogram(sample_rate=sample_rate, **kw)
        if self._mel.n_mels < self.n_mfcc:
            raise ArgumentError(
                f"{self.name}: `n_mfcc` must be at most melkwargs['n_mels'] ({self._mel.n_mels}). Found: {n_mfcc}"
            )

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = self._mel.output_spec(*inputs)
        return TensorSpec((*spec.shape[:-2], self.n_mfcc, spec.shape[-1]), spec.dtype)


class LFCC(Op):
    """Linear-frequency cepstral coefficients of a waveform: the :class:`Spectrogram` through
    ``n_filter`` linear triangular filters, in decibels (``top_db=80``; or ``log(x + 1e-6)`` with
    ``log_lf``), then a DCT-II; ``<..., time>`` → ``<..., n_lfcc, frames>``.

    Args:
        sample_rate: the audio's sample rate.
        n_filter: number of linear filters.
        n_lfcc: coefficients to keep.
        f_min, f_max: the filters' frequency range (``f_max`` None: ``sample_rate // 2``).
        dct_type: the DCT type (only 2).
        norm: the DCT's normalization.
        log_lf: take the log instead of decibels.
        speckwargs: :class:`Spectrogram`'s arguments (those not given keep their defaults).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> op = audio.LFCC(n_filter=8, n_lfcc=4, speckwargs={"n_fft": 16})
        >>> op(np.random.random([32])).shape
        (4, 5)
    """

    def __init__(
        self, sample_rate: int = 16000, n_filter: int = 128, n_lfcc: int = 40, f_min: float = 0.0,
        f_max: float | None = None, dct_type: int = 2, norm: NormMode = NormMode.ORTHO, log_lf: bool = False,
        speckwargs: dict[str, Any] | None = None,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=0)
        self.n_filter = check_int(self.name, "n_filter", n_filter, low=1)
        self.n_lfcc = check_int(self.name, "n_lfcc", n_lfcc, low=1)
        check_float(self.name, "f_min", f_min, low=0)
        self.f_min, self.f_max = _check_freqs(self.name, f_min, f_max, self.sample_rate, strict=False)
        if dct_type != 2:
            raise ArgumentError(f"{self.name}: `dct_type` must be 2. Found: {dct_type!r}")
        self.dct_type = 2
        self.norm = check_enum(self.name, "norm", norm, NormMode)
        self.log_lf = check_bool(self.name, "log_lf", log_lf)
        kw = _kwargs(self.name, "speckwargs", speckwargs, _SPEC_DEFAULTS)
        self.speckwargs = kw
        self._spec = Spectrogram(**kw)
        if self._spec.n_fft < self.n_lfcc:
            raise ArgumentError(
                f"{self.name}: `n_lfcc` must be at most speckwargs['n_fft'] ({self._spec.n_fft}). Found: {n_lfcc}"
            )

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = self._spec.output_spec(*inputs)
        if self._spec.power == 0:
            spec = TensorSpec(spec.shape[:-1], spec.dtype)
        return TensorSpec((*spec.shape[:-2], self.n_lfcc, spec.shape[-1]), spec.dtype)


class AmplitudeToDB(Op):
    """Turn a power or magnitude spectrogram into decibels: ``10·log10`` (``20·log10`` for magnitude) of
    the input clamped below at ``amin``, relative to ``ref_value``, then clamped below at the maximum
    minus ``top_db``.

    Args:
        stype: whether the input is power or magnitude.
        ref_value: the reference that becomes 0 dB, > 0.
        amin: the smallest value taken, > 0.
        top_db: the dynamic range kept, > 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.AmplitudeToDB()(np.array([[1.0, 10.0, 100.0]])).tolist()
        [[0.0, 10.0, 20.0]]
    """

    def __init__(
        self, stype: ScaleType = ScaleType.POWER, ref_value: float = 1.0, amin: float = 1e-10, top_db: float = 80.0
    ) -> None:
        self.stype = check_enum(self.name, "stype", stype, ScaleType)
        self.ref_value = check_float(self.name, "ref_value", ref_value, low=0, low_open=True)
        self.amin = check_float(self.name, "amin", amin, low=0, low_open=True)
        self.top_db = check_float(self.name, "top_db", top_db, low=0, low_open=True)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


class DBToAmplitude(Op):
    """Turn decibels back into amplitude: ``ref · (10 ** (x / 10)) ** power``.

    Args:
        ref: the scale of the output.
        power: the exponent (0.5 for magnitude, 1 for power).

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.DBToAmplitude(1.0, 1.0)(np.array([0.0, 10.0, 20.0])).tolist()
        [1.0, 10.0, 100.0]
    """

    def __init__(self, ref: float, power: float) -> None:
        self.ref = check_float(self.name, "ref", ref)
        self.power = check_float(self.name, "power", power)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


class ComputeDeltas(Op):
    """Delta coefficients of a spectrogram ``<..., freq, time>`` along time: the regression
    ``Σ_k k·(x[t+k] − x[t−k]) / (2·Σ_k k²)`` over ``k = 1 … (win_length − 1) // 2``, with the ends padded
    by ``pad_mode``.

    Args:
        win_length: the window, >= 3.
        pad_mode: the padding at both ends of time.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.ComputeDeltas(win_length=3)(np.array([[0.0, 1.0, 2.0, 3.0]])).tolist()
        [[0.5, 1.0, 1.0, 0.5]]
    """

    def __init__(self, win_length: int = 5, pad_mode: BorderType = BorderType.EDGE) -> None:
        self.win_length = check_int(self.name, "win_length", win_length, low=3)
        self.pad_mode = check_enum(self.name, "pad_mode", pad_mode, BorderType)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., freq, time>")
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))
