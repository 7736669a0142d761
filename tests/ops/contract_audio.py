"""The audio ops' entries of the op contract (tests/ops/test_contract.py): waveforms and spectrograms,
and odd audio standing for the odd images."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from minddata import audio


@functools.cache
def _odd(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """The odd audio for an odd image of ``shape``: nothing, one sample, 30 s at 16 kHz, integer samples,
    a last axis of 1, float64."""
    rng = np.random.default_rng(5)
    if 0 in shape:
        return np.zeros(0, np.float32)
    if shape == (1, 1, 3):
        return np.array([0.2], np.float32)
    if len(shape) == 3 and shape[0] >= 1000:
        return (0.3 * rng.standard_normal(480000)).astype(np.float32)
    if len(shape) == 2:
        return rng.integers(-3000, 3000, shape).astype(np.int16)
    if shape[-1] == 1:
        return rng.random(shape).astype(np.float32)
    return rng.random(shape) * 2 - 1  # float64


def odd_audio(img: np.ndarray) -> tuple[np.ndarray]:
    return (_odd(img.shape, str(img.dtype)),)


def _wave() -> tuple[Any, ...]:
    t = np.arange(2, dtype=np.float64)[:, None] + np.arange(800)[None, :] / 8000.0
    return ((0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32),)


def _spec() -> tuple[Any, ...]:
    return (np.random.default_rng(1).random((2, 33, 12)).astype(np.float32),)


def _complex() -> tuple[Any, ...]:
    return (np.random.default_rng(2).standard_normal((2, 33, 12, 2)).astype(np.float32),)


def odd_complex(img: np.ndarray) -> tuple[np.ndarray]:
    """The odd audio as complex numbers ``<..., 2>``."""
    (x,) = odd_audio(img)
    return (np.stack([x, x[..., ::-1]], axis=-1),)


def _codes(img: np.ndarray) -> tuple[Any, ...]:
    (x,) = odd_audio(img)
    return (np.abs(np.asarray(x)).astype(np.int64) % 256,)


# What each kind of op rejects among the odd inputs.
# An STFT of n_fft 64 needs more than 32 samples: the odd inputs but the large one have fewer.
TOO_SHORT = {k: ValueError for k in ("empty", "one_pixel", "gray", "gray_hw1", "rgba")}
NOT_2D = {"empty": ValueError, "one_pixel": ValueError, "large": ValueError}  # <..., freq, time> needs 2 axes
MASK = {**NOT_2D, "gray_hw1": ValueError}  # a band wider than the axis


def audio_cases(case: Any) -> dict[str, Any]:
    """``{op name: Case}`` for the audio ops; ``case`` is test_contract's ``Case`` class."""
    w, s = dict(inputs=_wave, adapt=odd_audio), dict(inputs=_spec, adapt=odd_audio)
    return {
        "Spectrogram": case(lambda: audio.Spectrogram(n_fft=64), rejects=TOO_SHORT, **w),
        "InverseSpectrogram": case(
            lambda: audio.InverseSpectrogram(n_fft=64), _complex, odd_audio,
            rejects={k: ValueError for k in ("empty", "one_pixel", "large", "gray", "gray_hw1", "rgba")},
        ),
        "MelScale": case(
            lambda: audio.MelScale(n_mels=8, n_stft=33), rejects={**NOT_2D, "gray": ValueError, "gray_hw1": ValueError,
                                                                    "rgba": ValueError}, **s
        ),
        "MelSpectrogram": case(lambda: audio.MelSpectrogram(n_fft=64, n_mels=8), rejects=TOO_SHORT, **w),
        "MFCC": case(lambda: audio.MFCC(n_mfcc=4, melkwargs={"n_fft": 64, "n_mels": 8}), rejects=TOO_SHORT, **w),
        "LFCC": case(lambda: audio.LFCC(n_filter=8, n_lfcc=4, speckwargs={"n_fft": 64}), rejects=TOO_SHORT, **w),
        "AmplitudeToDB": case(audio.AmplitudeToDB, **s),
        "DBToAmplitude": case(lambda: audio.DBToAmplitude(1.0, 0.5), **s),
        "ComputeDeltas": case(audio.ComputeDeltas, rejects=NOT_2D, **s),
        "FrequencyMasking": case(lambda: audio.FrequencyMasking(True, 1), rejects=NOT_2D, **s),
        "TimeMasking": case(lambda: audio.TimeMasking(False, 1, 0, 2.0), rejects=NOT_2D, **s),
        "MaskAlongAxis": case(lambda: audio.MaskAlongAxis(0, 1, 1.0, 2), rejects=NOT_2D, **s),
        "MaskAlongAxisIID": case(lambda: audio.MaskAlongAxisIID(1, 1.0, 1), rejects=NOT_2D, **s),
        "MuLawEncoding": case(audio.MuLawEncoding, **w),
        "MuLawDecoding": case(audio.MuLawDecoding, lambda: _codes(np.zeros((20, 30), np.uint8)), _codes),
        "Vol": case(lambda: audio.Vol(-3.0, audio.GainType.DB), **w),
        "Gain": case(lambda: audio.Gain(3.0), **w),
        "DCShift": case(lambda: audio.DCShift(0.2, 0.05), **w),
        "Fade": case(
            lambda: audio.Fade(2, 2, audio.FadeShape.HALF_SINE),
            rejects={"empty": ValueError, "one_pixel": ValueError, "gray_hw1": ValueError}, **w
        ),
        "Resample": case(lambda: audio.Resample(8000, 6000), **w),
        **biquad_cases(case),
        **phase_cases(case),
        "SpectralCentroid": case(lambda: audio.SpectralCentroid(8000, n_fft=64), rejects=TOO_SHORT, **w),
        "SlidingWindowCmn": case(lambda: audio.SlidingWindowCmn(8, 3, norm_vars=True),
                                 rejects={"empty": ValueError, "one_pixel": ValueError, "large": ValueError}, **s),
        "DetectPitchFrequency": case(lambda: audio.DetectPitchFrequency(8000, win_length=3), **w),
        # 33 frequency bins for n_fft 64: the odd inputs have other counts.
        "GriffinLim": case(lambda: audio.GriffinLim(n_fft=64, n_iter=2),
                           rejects={k: ValueError for k in ("empty", "one_pixel", "large", "gray", "gray_hw1", "rgba")},
                           **s),
        "InverseMelScale": case(lambda: audio.InverseMelScale(40, 33, 8000, max_iter=5),
                                rejects={k: ValueError for k in ("empty", "one_pixel", "large", "gray", "gray_hw1", "rgba")},
                                **s),
        "Dither": case(lambda: audio.Dither(audio.DensityFunction.GPDF, True), **w),
        "Phaser": case(lambda: audio.Phaser(8000), **w),
        "Vad": case(lambda: audio.Vad(8000), **w),
        # <..., channel, time>: the odd inputs of one axis have no channel axis.
        "Flanger": case(lambda: audio.Flanger(8000, regen=30.0), rejects={k: ValueError for k in ("empty", "one_pixel", "large")},
                        **w),
    }


def biquad_cases(case: Any) -> dict[str, Any]:
    """``{op name: Case}`` for the IIR filter family: any waveform, even empty, filters."""
    w = dict(inputs=_wave, adapt=odd_audio)
    return {
        "AllpassBiquad": case(lambda: audio.AllpassBiquad(8000, 1000.0), **w),
        "BandBiquad": case(lambda: audio.BandBiquad(8000, 1000.0, noise=True), **w),
        "BandpassBiquad": case(lambda: audio.BandpassBiquad(8000, 1000.0), **w),
        "BandrejectBiquad": case(lambda: audio.BandrejectBiquad(8000, 1000.0), **w),
        "BassBiquad": case(lambda: audio.BassBiquad(8000, 6.0), **w),
        "TrebleBiquad": case(lambda: audio.TrebleBiquad(8000, -6.0), **w),
        "EqualizerBiquad": case(lambda: audio.EqualizerBiquad(8000, 1000.0, 3.0), **w),
        "HighpassBiquad": case(lambda: audio.HighpassBiquad(8000, 1000.0), **w),
        "LowpassBiquad": case(lambda: audio.LowpassBiquad(8000, 1000.0), **w),
        "DeemphBiquad": case(lambda: audio.DeemphBiquad(44100), **w),
        "RiaaBiquad": case(lambda: audio.RiaaBiquad(48000), **w),
        "Biquad": case(lambda: audio.Biquad(0.2, 0.3, 0.2, 1.0, -0.4, 0.1), **w),
        "LFilter": case(lambda: audio.LFilter([1.0, -0.6], [0.4, 0.2]), **w),
        "Filtfilt": case(lambda: audio.Filtfilt([1.0, -0.6], [0.4, 0.2], clamp=False), **w),
        "Contrast": case(audio.Contrast, **w),
        "Overdrive": case(audio.Overdrive, **w),
    }


def phase_cases(case: Any) -> dict[str, Any]:
    """``{op name: Case}`` for the complex-spectrogram family: ``<..., 2>`` arrays; the phase vocoders
    need ``<..., freq, time, 2>`` with the bins of their phase advance (33)."""
    c = dict(inputs=_complex, adapt=odd_complex)
    # Odd inputs without 3 axes, or whose bins are not the phase advance's 33.
    vocoder = {k: ValueError for k in ("empty", "one_pixel", "large", "gray", "gray_hw1", "rgba")}
    return {
        "Angle": case(audio.Angle, **c),
        "ComplexNorm": case(lambda: audio.ComplexNorm(2.0), **c),
        "Magphase": case(audio.Magphase, **c),
        "PhaseVocoder": case(
            lambda: audio.PhaseVocoder(1.3, np.linspace(0, np.pi * 16, 33)[:, None]), rejects=vocoder, **c
        ),
        "TimeStretch": case(lambda: audio.TimeStretch(16, 33, 0.7), rejects=vocoder, **c),
        "PitchShift": case(lambda: audio.PitchShift(8000, 12, n_fft=64), rejects=TOO_SHORT, inputs=_wave, adapt=odd_audio),
    }
