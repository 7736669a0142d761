"""The waveform ops against closed forms and SciPy (MindSpore itself: test_mindspore_audio.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from minddata import audio

RNG = np.random.default_rng(3)
UNIT = np.clip(RNG.standard_normal((2, 300)) * 0.4, -1, 1).astype(np.float32)


def test_mu_law_round_trip():
    codes = audio.MuLawEncoding()(UNIT)
    assert codes.dtype == np.int32 and codes.min() >= 0 and codes.max() <= 255
    back = audio.MuLawDecoding()(codes)
    assert back.dtype == np.float32 and np.abs(back - UNIT).max() < 0.05


def test_vol_and_gain():
    np.testing.assert_allclose(audio.Vol(6.0, audio.GainType.DB)(UNIT * 0.1), np.clip(UNIT * 0.1 * 10 ** 0.3, -1, 1), rtol=1e-6)
    np.testing.assert_allclose(audio.Vol(4.0, audio.GainType.POWER)(UNIT * 0.1), UNIT * 0.2, rtol=1e-6)
    assert audio.Vol(10.0)(UNIT).max() <= 1.0
    np.testing.assert_allclose(audio.Gain(-20.0)(UNIT), UNIT * 0.1, rtol=1e-6)


def test_dc_shift_limiter_is_symmetric():
    x = np.array([0.9, 0.5, -0.5, -0.9])
    up = audio.DCShift(0.4, 0.05)(x)
    down = audio.DCShift(-0.4, 0.05)(-x)
    np.testing.assert_allclose(down, -up)
    assert up[0] == pytest.approx(0.65) and up[1] == pytest.approx(0.9)


def test_fade_shapes():
    ones = np.ones(11)
    assert audio.Fade(11)(ones).tolist() == pytest.approx(np.linspace(0, 1, 11).tolist())
    exp = audio.Fade(0, 11, audio.FadeShape.EXPONENTIAL)(ones)
    assert exp[0] == 1.0 and exp[-1] == 0.0 and np.all(np.diff(exp) < 0)
    with pytest.raises(ValueError, match="Fade: `fade_in_len` \\(12\\) must be at most the waveform's length \\(11\\)"):
        audio.Fade(12)(ones)


def test_resample_matches_scipy_on_a_band_limited_signal():
    t = np.arange(4000) / 16000.0
    x = np.sin(2 * np.pi * 300 * t)
    got = audio.Resample(16000, 12000)(x)
    assert got.shape == (3000,) and got.dtype == np.float64
    want = signal.resample_poly(x, 3, 4)
    np.testing.assert_allclose(got[100:-100], want[100:-100], atol=2e-3)
    assert audio.Resample(16000, 16000)(UNIT).tolist() == UNIT.tolist()
