"""Feature ops, named as in ``mindspore.dataset.audio``: :class:`SpectralCentroid`,
:class:`SlidingWindowCmn`, :class:`DetectPitchFrequency`.

Outputs are float32, or float64 for float64 input. Specs only; the CPU kernels live in
``minddata.ops.cpu.features``.
"""

from __future__ import annotations

import math

import numpy as np

from minddata.audio._checks import (
    check_bool,
    check_enum,
    check_float,
    check_int,
    check_stft_args,
    float_dtype,
    one_input,
)
from minddata.audio.utils import WindowType
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.spectrogram import frame_count

__all__ = ["DetectPitchFrequency", "SlidingWindowCmn", "SpectralCentroid"]


class SpectralCentroid(Op):
    """The spectral centroid (the magnitude-weighted mean frequency, in Hz) of each STFT frame of a
    waveform ``<..., time>``: ``<..., 1, frames>`` (torchaudio's ``spectral_centroid``: a centred,
    reflect-padded STFT's magnitude). A silent frame gives NaN.

    Args:
        sample_rate: the sample rate, >= 0.
        n_fft: FFT size, > 0.
        win_length: window size, at most ``n_fft`` (None: ``n_fft``).
        hop_length: hop between frames (None: ``win_length // 2``).
        pad: zeros added to both ends first.
        window: the window function.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.SpectralCentroid(16000, n_fft=64)(np.random.random(320)).shape
        (1, 11)
    """

    center, pad_mode, onesided = True, "reflect", True

    def __init__(
        self, sample_rate: int, n_fft: int = 400, win_length: int | None = None, hop_length: int | None = None,
        pad: int = 0, window: WindowType = WindowType.HANN,
    ) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate, low=0)
        self.n_fft, self.win_length, self.hop_length = check_stft_args(self.name, n_fft, win_length, hop_length)
        self.pad = check_int(self.name, "pad", pad, low=0)
        self.window = check_enum(self.name, "window", window, WindowType)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        frames = frame_count(spec.shape[-1], self.n_fft, self.hop_length, self.pad, True)
        return TensorSpec((*spec.shape[:-1], 1, frames), float_dtype(spec.dtype))


class SlidingWindowCmn(Op):
    """Sliding-window cepstral mean (and optionally variance) normalisation of features
    ``<..., time, feature>`` (Kaldi's ``apply-cmvn-sliding``, torchaudio's ``sliding_window_cmn``):
    each frame less the mean of the frames in its window.

    Args:
        cmn_window: the window, in frames, >= 0.
        min_cmn_window: the smallest window at the start (when ``center`` is False), >= 0.
        center: centre the window on the frame (else it ends at the frame).
        norm_vars: also divide by the window's standard deviation.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> audio.SlidingWindowCmn(cmn_window=2, min_cmn_window=1)(np.array([[1.0], [3.0], [5.0]])).tolist()
        [[0.0], [1.0], [2.0]]
    """

    def __init__(self, cmn_window: int = 600, min_cmn_window: int = 100, center: bool = False,
                 norm_vars: bool = False) -> None:
        self.cmn_window = check_int(self.name, "cmn_window", cmn_window, low=0)
        self.min_cmn_window = check_int(self.name, "min_cmn_window", min_cmn_window, low=0)
        self.center = check_bool(self.name, "center", center)
        self.norm_vars = check_bool(self.name, "norm_vars", norm_vars)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs, 2, "<..., time, feature>")
        return TensorSpec(tuple(spec.shape), float_dtype(spec.dtype))


class DetectPitchFrequency(Op):
    """The pitch (Hz) of each ``frame_time``-second frame of a waveform ``<..., time>``, from the
    normalised cross-correlation's best lag, median-smoothed over ``win_length`` frames
    (torchaudio's ``detect_pitch_frequency``): ``<..., frames + (win_length - 1) // 2 - win_length + 1>``
    float32 (as MindSpore, float32 for float64 input too), ``frames = ceil(time / ceil(sample_rate ·
    frame_time))``. Fewer frames than the median filter needs give an empty array (MindSpore 2.10
    does so for a batch, and raises "Failed to create empty tensor" for one waveform).

    Args:
        sample_rate: the sample rate, not 0.
        frame_time: the frame's duration in seconds, > 0.
        win_length: the median filter's width in frames, > 0.
        freq_low, freq_high: the lowest and highest pitch looked for, > 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import audio
        >>> t = np.arange(8000) / 8000.0
        >>> float(audio.DetectPitchFrequency(8000, win_length=3)(np.sin(2 * np.pi * 200 * t))[5].round())
        200.0
    """

    def __init__(self, sample_rate: int, frame_time: float = 0.01, win_length: int = 30, freq_low: float = 85,
                 freq_high: float = 3400) -> None:
        self.sample_rate = check_int(self.name, "sample_rate", sample_rate)
        if self.sample_rate == 0:
            raise ArgumentError(f"{self.name}: `sample_rate` must not be 0. Found: 0")
        self.frame_time = check_float(self.name, "frame_time", frame_time, low=0, low_open=True)
        self.win_length = check_int(self.name, "win_length", win_length, low=1)
        self.freq_low = check_float(self.name, "freq_low", freq_low, low=0, low_open=True)
        self.freq_high = check_float(self.name, "freq_high", freq_high, low=0, low_open=True)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_input(self.name, inputs)
        n = spec.shape[-1]
        frames = None
        if n is not None:
            frames = n and math.ceil(n / math.ceil(self.sample_rate * self.frame_time))
            frames = max(frames + (self.win_length - 1) // 2 - self.win_length + 1, 0) if frames else 0
        return TensorSpec((*spec.shape[:-1], frames), np.dtype(np.float32))
