"""The effect ops against their per-sample definitions (MindSpore itself: test_mindspore_audio.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minddata as md
from minddata import audio
from minddata.errors import ArgumentError
from minddata.ops.plans.effects import wave_table

RNG = np.random.default_rng(5)
WAVE = np.clip(RNG.standard_normal((2, 700)) * 0.3, -1, 1)


def test_dither_quantises_to_16_bits():
    out = audio.Dither()(WAVE.astype(np.float32))
    assert out.dtype == np.float32 and np.all(np.round(out.astype(np.float64) * 2**15) == out * 2**15)
    assert np.abs(out - WAVE).max() < 1e-4
    assert not audio.Dither().random and audio.Dither(audio.DensityFunction.RPDF).random


def test_random_dither_follows_the_row_rng():
    ds = md.NumpySlicesDataset({"a": np.stack([WAVE] * 4).astype(np.float32)}, shuffle=False)
    ds = ds.map(audio.Dither(audio.DensityFunction.GPDF), input_columns="a")

    def rows():
        return [r["a"] for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]

    md.config.set_seed(3)
    first, again = rows(), rows()
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def _phaser_loop(x, sr, gain_in, gain_out, delay_ms, decay, mod_speed, sinusoidal):
    """torchaudio's sample loop with its delay buffer."""
    buf_len = int(delay_ms * 0.001 * sr + 0.5)
    mod_len = int(sr / mod_speed + 0.5)
    mod = wave_table(sinusoidal, True, mod_len, 1.0, float(buf_len), math.pi / 2)
    buf = np.zeros((x.shape[0], buf_len))
    out = np.zeros_like(x)
    pos = mod_pos = 0
    for i in range(x.shape[-1]):
        idx = int((pos + mod[mod_pos]) % buf_len)
        mod_pos, pos = (mod_pos + 1) % mod_len, (pos + 1) % buf_len
        temp = x[:, i] * gain_in + buf[:, idx]
        buf[:, pos] = temp * decay
        out[:, i] = temp
    return np.clip(out * gain_out, -1, 1)


@pytest.mark.parametrize("args", [(8000, 0.4, 0.74, 3.0, 0.4, 0.5, True), (16000, 0.9, 0.8, 1.0, 0.9, 2.0, False)])
def test_phaser_matches_the_sample_loop(args):
    np.testing.assert_allclose(audio.Phaser(*args)(WAVE), _phaser_loop(WAVE, *args), atol=1e-12)


def test_flanger_feedback_is_stable_and_checked():
    out = audio.Flanger(8000, regen=90.0)(WAVE)
    assert out.shape == WAVE.shape and np.abs(out).max() <= 1
    with pytest.raises(ArgumentError, match=r"Flanger: `delay` must be in \[0, 30\]"):
        audio.Flanger(8000, delay=31)
    with pytest.raises(ValueError, match="Flanger: the input must have shape <..., channel, time>"):
        audio.Flanger(8000)(WAVE[0])


def _vad_loop(x, sr, trigger_level=7.0, trigger_time=0.25, search_time=1.0, allowed_gap=0.25, pre_trigger_time=0.0,
              boot_time=0.35, noise_up_time=0.1, noise_down_time=0.01, noise_reduction_amount=1.35,
              measure_freq=20.0, measure_smooth_time=0.4, hp_filter_freq=50.0, lp_filter_freq=6000.0,
              hp_lifter_freq=150.0, lp_lifter_freq=2000.0):
    """SoX's vad one sample at a time through its ring buffer (MindSpore's loop, with SoX's measure)."""
    n_ch, n = x.shape
    length = int(sr * 2.0 / measure_freq + 0.5)
    dft = 16
    while dft < length:
        dft *= 2
    period = int(sr / measure_freq + 0.5)
    ring_len = math.ceil(search_time * measure_freq)
    gap = int(allowed_gap * measure_freq + 0.5)
    held = int(pre_trigger_time * sr + 0.5) + ring_len * period + length
    s0, s1 = max(int(hp_filter_freq / sr * dft + 0.5), 1), min(int(lp_filter_freq / sr * dft + 0.5), dft // 2)
    c0, c1 = math.ceil(sr * 0.5 / lp_lifter_freq), min(math.floor(sr * 0.5 / hp_lifter_freq), dft // 4)
    sw = [2 / math.sqrt(length) * (0.5 - 0.5 * math.cos(2 * math.pi * i / length)) for i in range(length)]
    cw = [2 / math.sqrt(s1 - s0) * (0.5 - 0.5 * math.cos(2 * math.pi * i / (s1 - s0))) for i in range(s1 - s0)]
    up, down = math.exp(-1 / (noise_up_time * measure_freq)), math.exp(-1 / (noise_down_time * measure_freq))
    smooth, tmult = math.exp(-1 / (measure_smooth_time * measure_freq)), math.exp(-1 / (trigger_time * measure_freq))
    boot_max, boot, timer, index, flushed, si = int(boot_time * measure_freq - 0.5), 0, length, 0, 0, 0
    samples, spec, noise = np.zeros((n_ch, held)), np.zeros((n_ch, dft)), np.zeros((n_ch, dft))
    measures, mean = np.zeros((n_ch, ring_len)), np.zeros(n_ch)
    triggered, flush, pos = False, 0, 0
    while pos < n and not triggered:
        timer -= 1
        for i in range(n_ch):
            samples[i, si] = x[i, pos]
            if timer == 0:
                start = (si + held - length) % held
                buf = np.zeros(dft)
                buf[:length] = [samples[i, (start + k) % held] * sw[k] for k in range(length)]
                mag = np.abs(np.fft.rfft(buf))
                mult = boot / (1.0 + boot) if boot >= 0 else smooth
                cep = np.zeros(dft // 2)
                for b in range(s0, s1):
                    spec[i, b] = spec[i, b] * mult + mag[b] * (1 - mult)
                    d = spec[i, b] ** 2
                    m2 = 0 if boot >= 0 else (up if d > noise[i, b] else down)
                    noise[i, b] = noise[i, b] * m2 + d * (1 - m2)
                    d -= noise_reduction_amount * noise[i, b]
                    cep[b] = (0 if d <= 0 else math.sqrt(d)) * cw[b - s0]
                total = float((np.abs(np.fft.rfft(cep)[c0:c1]) ** 2).sum())
                meas = max(0.0, 21 + math.log(total / (c1 - c0))) if total > 0 else 0.0
                measures[i, index] = meas
                mean[i] = mean[i] * tmult + meas * (1 - tmult)
                triggered = triggered or mean[i] >= trigger_level
                if triggered:
                    k, j_trigger, j_zero = index, ring_len, ring_len
                    for j in range(ring_len):
                        if measures[i, k] >= trigger_level and j <= j_trigger + gap:
                            j_trigger = j_zero = j
                        elif measures[i, k] == 0 and j_trigger >= j_zero:
                            j_zero = j
                        k = (k + ring_len - 1) % ring_len
                    flush = min(max(flush, j_zero), ring_len)
        si, pos = (si + 1) % held, pos + 1
        if timer == 0:
            timer, index = period, (index + 1) % ring_len
            if boot >= 0:
                boot = -1 if boot == boot_max else boot + 1
        if triggered:
            flushed = (ring_len - flush) * period
    start = pos - held + flushed
    if triggered:
        start = max(start, 0)
    start = 0 if start < -n else start + n if start < 0 else start
    return x[:, start:]


def _speech(seconds_silent=1.0, sr=8000):
    t = np.arange(2 * sr) / sr
    bursts = (np.sin(2 * np.pi * 3 * t) > 0.3) * np.linspace(0.1, 1, 2 * sr) * np.sign(np.sin(2 * np.pi * 150 * t))
    quiet = 0.001 * np.random.default_rng(1).standard_normal(int(seconds_silent * sr))
    return np.concatenate([quiet, 0.5 * bursts])


@pytest.mark.parametrize("kwargs", [{}, {"pre_trigger_time": 0.2, "allowed_gap": 0.1}, {"noise_reduction_amount": 0.0}])
def test_vad_matches_the_sample_loop_and_cuts_before_speech(kwargs):
    x = np.stack([_speech(), np.pad(_speech(0.5), (0, 4000))])
    got = audio.Vad(8000, **kwargs)(x)
    want = _vad_loop(x, 8000, **kwargs)
    assert got.shape == want.shape and np.array_equal(got, want)
    assert 16000 < got.shape[-1] <= 24000  # cut in the silence before the speech (at 0.5 s and 1 s)


def test_vad_without_a_trigger_keeps_the_last_searched_stretch():
    quiet = np.zeros(20000, np.float32)
    assert audio.Vad(8000)(quiet).shape == (8800,)  # search_time + measure_duration at 8 kHz
    assert audio.Vad(8000)(quiet[:3000]).shape == (3000,)
    with pytest.raises(ArgumentError, match="Vad: `noise_up_time` must be at least `noise_down_time`"):
        audio.Vad(8000, noise_up_time=0.01, noise_down_time=0.1)
