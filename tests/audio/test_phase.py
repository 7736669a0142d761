"""The complex-spectrogram ops against closed forms (MindSpore itself: test_mindspore_audio.py)."""

from __future__ import annotations

import numpy as np
import pytest

import minddata as md
from minddata import audio
from minddata.errors import ArgumentError

RNG = np.random.default_rng(7)
Z = RNG.standard_normal((2, 9, 6, 2)).astype(np.float32)


def test_angle_norm_magphase():
    z = Z[..., 0] + 1j * Z[..., 1]
    np.testing.assert_allclose(audio.Angle()(Z), np.angle(z), rtol=1e-6)
    np.testing.assert_allclose(audio.ComplexNorm(2.0)(Z), np.abs(z) ** 2, rtol=1e-6)
    mag, phase = audio.Magphase(1.0)(Z)
    assert mag.dtype == phase.dtype == np.float32 and mag.shape == (2, 9, 6)
    np.testing.assert_allclose(mag * np.cos(phase), Z[..., 0], atol=1e-6)
    assert audio.Angle()(Z.astype(np.float64)).dtype == np.float64
    with pytest.raises(ValueError, match="Angle: the input must have shape <..., complex=2>"):
        audio.Angle()(np.ones((3, 4)))
    with pytest.raises(ArgumentError, match="ComplexNorm: `power` must be non-negative"):
        audio.ComplexNorm(-1.0)


def test_magphase_gives_two_columns_in_a_pipeline():
    ds = md.NumpySlicesDataset({"spec": Z}, shuffle=False)
    ds = ds.map(audio.Magphase(), input_columns="spec", output_columns=["mag", "phase"])
    row = next(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert row["mag"].shape == row["phase"].shape == (9, 6)


def test_time_stretch_keeps_a_steady_tone():
    # A bin whose phase advances by exactly the expected amount per hop keeps magnitude and advance.
    n_freq, hop, frames = 9, 8, 20
    advance = np.linspace(0, np.pi * hop, n_freq)
    phase = advance[:, None] * np.arange(frames)[None, :]
    spec = np.stack([np.cos(phase), np.sin(phase)], -1)
    out = audio.TimeStretch(hop, n_freq, 2.0)(spec)
    assert out.shape == (n_freq, 10, 2) and out.dtype == np.float64
    np.testing.assert_allclose(np.hypot(out[..., 0], out[..., 1]), 1.0, rtol=1e-9)
    same = audio.PhaseVocoder(2.0, advance[:, None])(spec)
    np.testing.assert_allclose(same, out)
    assert audio.TimeStretch(n_freq=n_freq)(spec).tolist() == spec.tolist()
    assert audio.TimeStretch(hop, n_freq, 0.5).output_spec(md.ops.base.TensorSpec((9, 20, 2), np.float32)).shape[-2] == 40


def test_phase_vocoder_checks():
    with pytest.raises(TypeError, match="PhaseVocoder: `phase_advance` must be a numpy.ndarray"):
        audio.PhaseVocoder(1.5, [0.0])
    with pytest.raises(ArgumentError, match="PhaseVocoder: `rate` must be greater than 0"):
        audio.PhaseVocoder(0, np.zeros((9, 1)))
    with pytest.raises(ValueError, match="one value per frequency bin"):
        audio.PhaseVocoder(1.5, np.zeros((4, 1)))(Z)


def test_pitch_shift_moves_a_tone_by_its_steps():
    sr = 8000
    t = np.arange(8000) / sr
    out = audio.PitchShift(sr, 12, n_fft=512)(np.sin(2 * np.pi * 300 * t).astype(np.float32))
    assert out.shape == (8000,) and out.dtype == np.float32
    spectrum = np.abs(np.fft.rfft(out[1000:-1000] * np.hanning(6000)))
    assert np.argmax(spectrum) * sr / 6000 == pytest.approx(600, abs=5)
    with pytest.raises(ArgumentError, match="PitchShift: `bins_per_octave` must not be 0"):
        audio.PitchShift(sr, 1, 0)


@pytest.mark.parametrize("n_steps, bound", [(2**40, "at most 2147483647"), (-(2**40), "at least -2147483648")])
def test_an_integer_outside_int32_names_the_bound_it_crossed(n_steps, bound):
    with pytest.raises(ArgumentError, match=f"PitchShift: `n_steps` must be {bound}"):
        audio.PitchShift(16000, n_steps=n_steps)
