"""The audio ops against MindSpore 2.10 itself: every case of audio_differential.CASES runs eagerly
under ``mindspore.dataset.audio`` (in MindSpore's own Python, found or made by tests/peers.py) and under
``minddata.audio``; outputs must have the same dtype and shape and agree within ``TOLERANCE``.

Tolerances: minddata computes in float64 and rounds once; MindSpore computes float32 inputs in float32.
A float32 result then differs by a few float32 ulps of the output's scale per operation: ``rtol`` is
relative to each element, ``atol`` to the largest magnitude of the output (cancellation in FFT sums and
DCTs leaves small elements with absolute, not relative, error)."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from audio_differential import CASES, make_inputs, run
from peers import peer_env

from minddata import audio

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "audio_differential.py")

# (rtol, atol relative to the output's largest magnitude); the default is for float32 element-wise maths.
DEFAULT = (1e-5, 1e-6)
# Filter banks: MindSpore evaluates the mel/linear points in float32; a triangle's edge weight then
# moves by ~1e-7 of the frequency (8000 Hz) over the bin spacing (~40 Hz): up to ~2e-5.
# Resample: MindSpore's float32 sinc taps (sin of arguments up to ~20) carry ~2e-6 each, summed over
# up to ~150 taps.
# IIR filters (the biquads, LFilter, Filtfilt, Overdrive's DC blocker): MindSpore runs the recursion in
# float32, and each step's rounding (6e-8) is amplified by up to 1 / (1 - |pole|): ~300 for RIAA's
# pole at 0.9967: up to 6e-5 of the scale seen.
# PhaseVocoder, TimeStretch: MindSpore accumulates each bin's phase in float32 (and makes TimeStretch's
# phase advance in float32 for float64 input too); after k frames the phase reaches k·π·hop (~900 rad
# here), whose float32 ulp (6e-5) is the error of the output relative to its magnitude.
# SlidingWindowCmn: MindSpore keeps the window's running sums (of values and squares) in float32, adding
# and removing a frame per step, so each step's rounding stays in the sums (~n ulps after n frames);
# the variance E[x²] - E[x]² then cancels: ~1e-4 of the scale with norm_vars on values up to 10.
_FBANKS, _RESAMPLE, _IIR, _PHASE = (1e-5, 2e-5), (1e-4, 3e-5), (1e-4, 1e-4), (1e-4, 1e-4)
_CMN = (1e-3, 2e-4)
# PitchShift: the phase vocoder's float32 phase (as _PHASE) through an inverse STFT and a resampling
# that sums ~100 taps: up to ~1.5e-4 of the scale (a stretch by 0.5 accumulates twice the frames).
_PITCH = (1e-4, 3e-4)
# GriffinLim: each round is an inverse STFT and an STFT in float32, and the rounding compounds over the
# rounds: ~1e-6 of the scale after 8.
_GRIFFIN_LIM = (1e-4, 1e-5)
# Flanger (with feedback) and Phaser are recursive too: the same float32 rounding kept in the loop.
_IIR_OPS = ("Biquad", "LFilter", "Filtfilt", "Overdrive", "Flanger", "Phaser")
TOLERANCE: dict[str, tuple[float, float]] = {
    "melscale_fbanks": _FBANKS, "melscale_fbanks_slaney": _FBANKS, "linear_fbanks": _FBANKS,
    "resample_down": _RESAMPLE, "resample_up": _RESAMPLE, "resample_kaiser": _RESAMPLE,
    **{name: _IIR for name, case in CASES.items() if case[0].endswith(_IIR_OPS)},
    **{name: _PHASE for name, case in CASES.items() if case[0] in ("PhaseVocoder", "TimeStretch")},
    **{name: _CMN for name, case in CASES.items() if case[0] == "SlidingWindowCmn"},
    **{name: _PITCH for name, case in CASES.items() if case[0] == "PitchShift"},
    **{name: _GRIFFIN_LIM for name, case in CASES.items() if case[0] == "GriffinLim"},
}
# Integer outputs (MuLawEncoding) must be equal, except where a float32 value sits on a rounding edge.
INTEGER_MISMATCH_ALLOWED = 0.01


@pytest.fixture(scope="module")
def both(mindspore_python_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("audio-differential")
    inputs = make_inputs()
    np.savez(folder / "inputs.npz", **inputs)
    done = subprocess.run(
        [mindspore_python_path, RUNNER, str(folder / "inputs.npz"), str(folder / "mindspore.npz")],
        capture_output=True, text=True, timeout=300, cwd=str(folder), env=peer_env(),
    )
    assert done.returncode == 0, f"the MindSpore run failed:\n{done.stderr[-3000:]}"
    with np.load(folder / "mindspore.npz") as f:
        ms = {k: f[k] for k in f.files}
    ms_errors = json.loads((folder / "mindspore.npz.json").read_text(encoding="utf-8"))
    return (ms, ms_errors), run(audio, inputs)


@pytest.mark.parametrize("name", list(CASES))
def test_audio_op_matches_mindspore(both, name):
    (ms, ms_errors), (mine, my_errors) = both
    assert name not in ms_errors, f"MindSpore raised on {name}: {ms_errors[name]}"
    assert name not in my_errors, f"minddata raised on {name}: {my_errors[name]}"
    a, b = ms[name], mine[name]
    assert b.dtype == a.dtype and b.shape == a.shape, f"{name}: {b.dtype} {b.shape}, MindSpore {a.dtype} {a.shape}"
    if a.dtype.kind in "iu":
        assert np.mean(a != b) <= INTEGER_MISMATCH_ALLOWED and np.abs(a.astype(int) - b).max(initial=0) <= 1, name
        return
    rtol, atol = TOLERANCE.get(name, DEFAULT)
    scale = float(np.abs(a).max(initial=0.0)) or 1.0
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol * scale, err_msg=name)
