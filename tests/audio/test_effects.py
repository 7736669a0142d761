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
