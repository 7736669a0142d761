"""The filter coefficients of the biquad family (``minddata/audio/biquad.py``): the Audio EQ Cookbook's
and SoX's designs, as torchaudio and MindSpore compute them. Device-free: plain floats."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

__all__ = ["Coefficients", "coefficients"]


class Coefficients(NamedTuple):
    """``b`` (numerator) and ``a`` (denominator) of a filter, unnormalized."""

    b: tuple[float, ...]
    a: tuple[float, ...]


def _shelf(gain: float, central_freq: float, q: float, sample_rate: int) -> tuple[float, ...]:
    w0 = 2 * math.pi * central_freq / sample_rate
    alpha = math.sin(w0) / 2 / q
    big_a = math.exp(gain / 40 * math.log(10))
    return big_a, 2 * math.sqrt(big_a) * alpha, (big_a - 1) * math.cos(w0), (big_a + 1) * math.cos(w0)


def _treble_from(big_a: float, t1: float, t2: float, t3: float) -> Coefficients:
    return Coefficients(
        (big_a * ((big_a + 1) + t2 + t1), -2 * big_a * ((big_a - 1) + t3), big_a * ((big_a + 1) + t2 - t1)),
        ((big_a + 1) - t2 + t1, 2 * ((big_a - 1) - t3), (big_a + 1) - t2 - t1),
    )


_DEEMPH = {44100: (5283.0, 0.4845, -9.477), 48000: (5356.0, 0.479, -9.62)}
_RIAA = {
    44100: ((-0.2014898, 0.9233820), (0.7083149, 0.9924091)),
    48000: ((-0.1766069, 0.9321590), (0.7396325, 0.9931330)),
    88200: ((-0.1168735, 0.9648312), (0.8590646, 0.9964002)),
    96000: ((-0.1141486, 0.9676817), (0.8699137, 0.9966946)),
}


def coefficients(op: Any) -> Coefficients:
    """The coefficients of a biquad-family op from its parameters."""
    name = type(op).__name__
    if name == "Biquad":
        return Coefficients((op.b0, op.b1, op.b2), (op.a0, op.a1, op.a2))
    if name in ("LFilter", "Filtfilt"):
        return Coefficients(tuple(op.b_coeffs), tuple(op.a_coeffs))
    sr = op.sample_rate
    if name == "DeemphBiquad":
        freq, slope, gain = _DEEMPH[sr]
        w0 = 2 * math.pi * freq / sr
        big_a = math.exp(gain / 40 * math.log(10))
        alpha = math.sin(w0) / 2 * math.sqrt((big_a + 1 / big_a) * (1 / slope - 1) + 2)
        t1, t2, t3 = 2 * math.sqrt(big_a) * alpha, (big_a - 1) * math.cos(w0), (big_a + 1) * math.cos(w0)
        return _treble_from(big_a, t1, t2, t3)
    if name == "RiaaBiquad":
        zeros, poles = _RIAA[sr]
        b = [1.0, -(zeros[0] + zeros[1]), zeros[0] * zeros[1]]
        a = [1.0, -(poles[0] + poles[1]), poles[0] * poles[1]]
        y = 2 * math.pi * 1000 / sr
        b_re = b[0] + b[1] * math.cos(-y) + b[2] * math.cos(-2 * y)
        a_re = a[0] + a[1] * math.cos(-y) + a[2] * math.cos(-2 * y)
        b_im = b[1] * math.sin(-y) + b[2] * math.sin(-2 * y)
        a_im = a[1] * math.sin(-y) + a[2] * math.sin(-2 * y)
        g = 1 / math.sqrt((b_re**2 + b_im**2) / (a_re**2 + a_im**2))
        return Coefficients(tuple(v * g for v in b), tuple(a))
    freq = op.cutoff_freq if hasattr(op, "cutoff_freq") else (
        op.center_freq if hasattr(op, "center_freq") else op.central_freq
    )
    w0 = 2 * math.pi * freq / sr
    cos, alpha = math.cos(w0), math.sin(w0) / 2 / op.Q
    if name == "AllpassBiquad":
        return Coefficients((1 - alpha, -2 * cos, 1 + alpha), (1 + alpha, -2 * cos, 1 - alpha))
    if name == "BandpassBiquad":
        temp = math.sin(w0) / 2 if op.const_skirt_gain else alpha
        return Coefficients((temp, 0.0, -temp), (1 + alpha, -2 * cos, 1 - alpha))
    if name == "BandrejectBiquad":
        return Coefficients((1.0, -2 * cos, 1.0), (1 + alpha, -2 * cos, 1 - alpha))
    if name == "HighpassBiquad":
        return Coefficients(((1 + cos) / 2, -1 - cos, (1 + cos) / 2), (1 + alpha, -2 * cos, 1 - alpha))
    if name == "LowpassBiquad":
        return Coefficients(((1 - cos) / 2, 1 - cos, (1 - cos) / 2), (1 + alpha, -2 * cos, 1 - alpha))
    if name == "EqualizerBiquad":
        big_a = math.exp(op.gain / 40 * math.log(10))
        return Coefficients(
            (1 + alpha * big_a, -2 * cos, 1 - alpha * big_a), (1 + alpha / big_a, -2 * cos, 1 - alpha / big_a)
        )
    if name == "BandBiquad":
        bw_hz = freq / op.Q
        a2 = math.exp(-2 * math.pi * bw_hz / sr)
        a1 = -4 * a2 / (1 + a2) * cos
        b0 = math.sqrt(1 - a1 * a1 / (4 * a2)) * (1 - a2)
        if op.noise:
            b0 *= math.sqrt(((1 + a2) * (1 + a2) - a1 * a1) * (1 - a2) / (1 + a2)) / b0
        return Coefficients((b0, 0.0, 0.0), (1.0, a1, a2))
    big_a, t1, t2, t3 = _shelf(op.gain, freq, op.Q, sr)
    if name == "BassBiquad":
        return Coefficients(
            (big_a * ((big_a + 1) - t2 + t1), 2 * big_a * ((big_a - 1) - t3), big_a * ((big_a + 1) - t2 - t1)),
            ((big_a + 1) + t2 + t1, -2 * ((big_a - 1) + t3), (big_a + 1) + t2 - t1),
        )
    if name == "TrebleBiquad":
        return _treble_from(big_a, t1, t2, t3)
    raise KeyError(name)
