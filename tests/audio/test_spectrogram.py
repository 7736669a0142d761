"""The spectral audio ops against independent references (SciPy's STFT, closed forms); MindSpore itself
is compared in test_mindspore_audio.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

import minddata as md
from minddata import audio
from minddata.errors import ArgumentError

RNG = np.random.default_rng(0)
WAVE = (0.4 * RNG.standard_normal((2, 700))).astype(np.float32)


def test_spectrogram_matches_scipy_stft():
    n_fft, hop = 64, 16
    got = audio.Spectrogram(n_fft=n_fft, hop_length=hop, power=1.0, center=False)(WAVE.astype(np.float64))
    window = signal.get_window("hann", n_fft, fftbins=True)
    _, _, z = signal.stft(WAVE.astype(np.float64), window=window, nperseg=n_fft, noverlap=n_fft - hop,
                          boundary=None, padded=False, scaling="spectrum")
    np.testing.assert_allclose(got, np.abs(z) * window.sum(), rtol=1e-10, atol=1e-12)
    assert got.dtype == np.float64


def test_spectrogram_shapes_dtypes_and_parseval():
    spec = audio.Spectrogram(n_fft=32, power=0.0)(WAVE)
    assert spec.shape == (2, 17, 44, 2) and spec.dtype == np.float32
    assert audio.Spectrogram(n_fft=32, onesided=False)(WAVE.astype(np.int16)).shape == (2, 32, 44)
    # A Hann frame of a constant signal has its energy at DC and the first bin only.
    dc = audio.Spectrogram(n_fft=16, center=False)(np.ones(16))
    assert dc[0, 0] == pytest.approx(8.0**2) and np.allclose(dc[2:], 0, atol=1e-12)


def test_inverse_spectrogram_reconstructs():
    for kwargs in ({"n_fft": 64}, {"n_fft": 64, "hop_length": 16, "window": audio.WindowType.HAMMING, "pad": 5}):
        spec = audio.Spectrogram(power=0.0, **kwargs)(WAVE)
        back = audio.InverseSpectrogram(length=700, **kwargs)(spec)
        np.testing.assert_allclose(back, WAVE, atol=2e-6)


def test_mel_spectrogram_is_spectrogram_then_mel_scale():
    spec = audio.Spectrogram(n_fft=128)(WAVE)
    mel = audio.MelScale(n_mels=20, sample_rate=8000, n_stft=65)(spec)
    np.testing.assert_allclose(audio.MelSpectrogram(8000, n_fft=128, n_mels=20)(WAVE), mel, rtol=1e-5, atol=1e-6)


def test_mel_filters_are_triangles_summing_where_they_overlap():
    fb = audio.melscale_fbanks(257, 0.0, 8000.0, 10, 16000)
    assert fb.shape == (257, 10) and fb.dtype == np.float32 and fb.max() <= 1.0 and fb.min() >= 0.0
    inside = fb[20:200].sum(axis=1)
    assert np.all((inside > 0.99) & (inside < 1.01))  # adjacent HTK triangles sum to one between centres


def test_mfcc_is_dct_of_db_mel():
    kw = {"n_fft": 128, "n_mels": 16}
    mel = audio.MelSpectrogram(n_fft=128, n_mels=16)(WAVE)
    db = audio.AmplitudeToDB(top_db=80.0)(mel)
    want = np.einsum("...mt,mk->...kt", db, audio.create_dct(6, 16, audio.NormMode.ORTHO))
    np.testing.assert_allclose(audio.MFCC(n_mfcc=6, melkwargs=kw)(WAVE), want, rtol=1e-4, atol=1e-4)


def test_amplitude_db_round_trip_and_top_db():
    x = np.array([[1e-3, 1.0, 10.0, 1000.0]], np.float32)
    db = audio.AmplitudeToDB(top_db=40.0)(x)
    assert db.tolist() == [[-10.0, 0.0, 10.0, 30.0]]  # floored at 30 - 40
    np.testing.assert_allclose(audio.DBToAmplitude(1.0, 1.0)(audio.AmplitudeToDB(top_db=200.0)(x)), x, rtol=1e-5)


def test_compute_deltas_of_a_ramp():
    ramp = np.tile(np.arange(10, dtype=np.float32), (3, 1))
    d = audio.ComputeDeltas(win_length=5)(ramp)
    np.testing.assert_allclose(d[:, 2:-2], 1.0, rtol=1e-6)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: audio.Spectrogram(n_fft=-1), "Spectrogram: `n_fft` must be greater than 0. Found: -1"),
        (lambda: audio.Spectrogram(n_fft=8, win_length=9), "`win_length` must be at most `n_fft` (8). Found: 9"),
        (lambda: audio.Spectrogram(window="hann"), "`window` must be one of WindowType.BARTLETT"),
        (lambda: audio.MelScale(f_min=9000.0), "`f_min` must be less than sample_rate // 2 (8000)"),
        (lambda: audio.MFCC(n_mfcc=200), "`n_mfcc` must be at most melkwargs['n_mels'] (128)"),
        (lambda: audio.MFCC(melkwargs={"nfft": 3}), "`melkwargs` has unknown keys ['nfft']"),
        (lambda: audio.AmplitudeToDB(top_db=0), "`top_db` must be greater than 0. Found: 0"),
        (lambda: audio.ComputeDeltas(win_length=2), "`win_length` must be at least 3. Found: 2"),
        (lambda: audio.create_dct(0, 4), "create_dct: `n_mfcc` must be greater than 0. Found: 0"),
    ],
)
def test_bad_arguments_fail_at_construction(make, message):
    with pytest.raises((ArgumentError, TypeError)) as caught:
        make()
    assert message in str(caught.value)


def test_in_a_pipeline_with_workers():
    ds = md.NumpySlicesDataset({"audio": np.repeat(WAVE[:1], 6, axis=0)}, shuffle=False)
    ds = ds.map([audio.MelSpectrogram(n_fft=64, n_mels=8), audio.AmplitudeToDB()], input_columns="audio",
                num_parallel_workers=2)
    rows = [r["audio"] for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert len(rows) == 6 and all(r.shape == (8, 22) and np.array_equal(r, rows[0]) for r in rows)
