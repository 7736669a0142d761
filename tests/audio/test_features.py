"""The feature ops against closed forms (MindSpore itself: test_mindspore_audio.py)."""

from __future__ import annotations

import numpy as np
import pytest

from minddata import audio
from minddata.errors import ArgumentError

RNG = np.random.default_rng(11)


def test_spectral_centroid_of_a_tone_is_its_frequency():
    t = np.arange(4000) / 8000.0
    out = audio.SpectralCentroid(8000, n_fft=256, hop_length=64)(np.sin(2 * np.pi * 1000 * t).astype(np.float32))
    assert out.shape == (1, 63) and out.dtype == np.float32
    np.testing.assert_allclose(out[0, 5:-5], 1000.0, rtol=2e-3)
    with pytest.raises(ArgumentError, match="SpectralCentroid: `win_length` must be at most `n_fft`"):
        audio.SpectralCentroid(8000, n_fft=16, win_length=32)


def _cmn_loop(x, cmn_window, min_cmn_window, center, norm_vars):
    """The per-frame definition (Kaldi's windows), one frame at a time."""
    n = x.shape[0]
    out = np.empty_like(x)
    for t in range(n):
        if center:
            start = t - cmn_window // 2
            end = start + cmn_window
        else:
            start, end = t - cmn_window, t + 1
        if start < 0:
            end -= start
            start = 0
        if not center and end > t:
            end = max(t + 1, min_cmn_window)
        if end > n:
            start = max(start - (end - n), 0)
            end = n
        window = x[start:end]
        out[t] = x[t] - window.mean(0)
        if norm_vars:
            out[t] = 0.0 if len(window) == 1 else out[t] / window.std(0)
    return out


@pytest.mark.parametrize("args", [(5, 2, False, False), (6, 3, True, True), (600, 100, False, True), (3, 0, True, False)])
def test_sliding_window_cmn_matches_the_per_frame_definition(args):
    x = RNG.standard_normal((40, 4))
    np.testing.assert_allclose(audio.SlidingWindowCmn(*args)(x), _cmn_loop(x, *args), atol=1e-10)
    assert audio.SlidingWindowCmn()(x[None].astype(np.float32)).shape == (1, 40, 4)


def test_detect_pitch_frequency_finds_a_tone():
    t = np.arange(16000) / 16000.0
    out = audio.DetectPitchFrequency(16000, win_length=5)(np.stack([np.sin(2 * np.pi * 250 * t)] * 2))
    assert out.shape == (2, 98) and out.dtype == np.float32
    np.testing.assert_allclose(out, 250.0, rtol=1e-6)
    assert audio.DetectPitchFrequency(16000)(np.zeros(1000)).shape == (0,)
    with pytest.raises(ArgumentError, match="DetectPitchFrequency: `sample_rate` must not be 0"):
        audio.DetectPitchFrequency(0)
