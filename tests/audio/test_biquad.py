"""The IIR filter family against SciPy's filter designs and frequency responses (MindSpore itself:
test_mindspore_audio.py)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy import signal

from minddata import audio
from minddata.ops.plans.biquad import coefficients

SR = 16000


def _gain_at(op, freq: float) -> float:
    b, a = coefficients(op)
    _, h = signal.freqz(b, a, worN=[freq], fs=op.sample_rate)
    return float(np.abs(h[0]))


def test_cookbook_responses():
    assert _gain_at(audio.LowpassBiquad(SR, 1000.0), 50.0) == pytest.approx(1.0, abs=1e-3)
    assert _gain_at(audio.LowpassBiquad(SR, 1000.0), 1000.0) == pytest.approx(0.707, abs=1e-3)
    assert _gain_at(audio.HighpassBiquad(SR, 1000.0), 7000.0) == pytest.approx(1.0, abs=1e-2)
    assert _gain_at(audio.BandrejectBiquad(SR, 1000.0), 1000.0) == pytest.approx(0.0, abs=1e-6)
    assert _gain_at(audio.BandpassBiquad(SR, 1000.0), 1000.0) == pytest.approx(1.0, abs=1e-6)
    assert _gain_at(audio.AllpassBiquad(SR, 1000.0), 3000.0) == pytest.approx(1.0, abs=1e-9)
    assert 20 * np.log10(_gain_at(audio.EqualizerBiquad(SR, 1000.0, 6.0), 1000.0)) == pytest.approx(6.0, abs=1e-6)
    assert 20 * np.log10(_gain_at(audio.BassBiquad(SR, 6.0, 100.0), 10.0)) == pytest.approx(6.0, abs=0.1)
    assert 20 * np.log10(_gain_at(audio.TrebleBiquad(SR, -6.0, 3000.0), 7900.0)) == pytest.approx(-6.0, abs=0.2)
    assert _gain_at(audio.RiaaBiquad(44100), 1000.0) == pytest.approx(1.0, abs=1e-6)  # 0 dB at 1 kHz


def test_filters_match_scipy_lfilter_and_filtfilt():
    x = np.random.default_rng(1).uniform(-0.3, 0.3, (3, 500))
    b, a = [0.4, 0.2, 0.1], [1.0, -0.6, 0.2]
    np.testing.assert_allclose(audio.LFilter(a, b, clamp=False)(x), signal.lfilter(b, a, x), rtol=1e-12)
    # From rest both ways (scipy.signal.filtfilt starts from the steady state instead).
    want = signal.lfilter(b, a, signal.lfilter(b, a, x)[..., ::-1])[..., ::-1]
    np.testing.assert_allclose(audio.Filtfilt(a, b, clamp=False)(x), want, rtol=1e-10, atol=1e-12)
    assert np.abs(audio.LFilter([1.0, -0.99], [5.0, 0.0])(x)).max() <= 1.0  # clamped


def test_overdrive_and_contrast_stay_in_range():
    x = np.linspace(-1, 1, 201, dtype=np.float32)
    for op in (audio.Overdrive(40.0, 50.0), audio.Contrast(100.0)):
        y = op(x)
        assert y.dtype == np.float32 and np.abs(y).max() <= 1.0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: audio.LowpassBiquad(16000, 100.0, Q=0), "LowpassBiquad: `Q` must be in (0.0, 1.0]. Found: 0"),
        (lambda: audio.BandBiquad(0, 100.0), "BandBiquad: `sample_rate` must not be 0. Found: 0"),
        (lambda: audio.RiaaBiquad(16000), "RiaaBiquad: `sample_rate` must be one of 44100, 48000, 88200, 96000"),
        (lambda: audio.DeemphBiquad(16000), "DeemphBiquad: `sample_rate` must be 44100 or 48000. Found: 16000"),
        (lambda: audio.Biquad(1, 0, 0, 0, 0, 0), "Biquad: `a0` must not be 0. Found: 0"),
        (lambda: audio.LFilter([1.0], [1.0, 2.0]), "`a_coeffs` and `b_coeffs` must have the same length"),
        (lambda: audio.Overdrive(gain=120), "Overdrive: `gain` must be in [0, 100]. Found: 120"),
    ],
)
def test_bad_arguments(make, message):
    with pytest.raises((ValueError, TypeError)) as caught:
        make()
    assert message in str(caught.value)


def test_a_filter_without_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.signal", None)  # what an install without the audio extra has
    wave = np.zeros((1, 64), np.float32)
    with pytest.raises(ImportError, match=r"LowpassBiquad filters with SciPy.*pip install 'minddata\[audio\]'"):
        audio.LowpassBiquad(16000, 1000.0)(wave)
