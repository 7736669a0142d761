"""CPU kernels of the effect ops (``minddata/audio/effects.py``), NumPy in float64.

Flanger (with feedback) and Phaser are recursive with a delay swept by an oscillator: sample ``i``
depends on an earlier output at least one sample back. They run in stretches of samples none of which
depends on another sample of the same stretch, each stretch vectorised."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext
from minddata.ops.cpu.audio import as_waveform, out_dtype
from minddata.ops.plans.effects import dither_picks, wave_table
from minddata.ops.plans.spectrogram import window
from minddata.ops.registry import register_kernel


@register_kernel("Dither", "CPU")
def dither(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    if w.size == 0:
        return w.astype(out_dtype(arr))
    flat = w.reshape(-1, w.shape[-1])
    kind = str(getattr(op.density_function, "value", op.density_function))
    if kind == "TPDF":
        offset: Any = window("bartlett", flat.shape[-1])
    else:
        picks = dither_picks(kind, flat.shape[0], flat.shape[-1], ctx.rng)
        offset = sum(flat[c, t] for c, t in picks) - (0.5 if kind == "RPDF" else 0.0)
    out = np.round(flat * (2**15 - 2) + offset) / 2**15
    if op.noise_shaping:
        error = out - flat
        out = out + np.concatenate([np.zeros((len(flat), 1)), error[:, :-1]], axis=1)
    return out.reshape(w.shape).astype(out_dtype(arr))


def _stretches(dep: np.ndarray, reach: int) -> list[tuple[int, int]]:
    """``[start, end)`` runs of samples such that no sample of a run depends on one at or after the
    run's start: ``dep[i]`` is the latest sample ``i`` depends on (< i), at most ``reach`` back."""
    n, s, runs = len(dep), 0, []
    while s < n:
        ahead = dep[s + 1 : s + 1 + reach] >= s
        e = s + 1 + int(np.argmax(ahead)) if ahead.any() else min(n, s + 1 + reach)
        runs.append((s, e))
        s = e
    return runs


@register_kernel("Phaser", "CPU")
def phaser(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    n = w.shape[-1]
    if w.size == 0:
        return w.astype(out_dtype(arr))
    flat = w.reshape(-1, n) * op.gain_in
    length = int(op.delay_ms * 0.001 * op.sample_rate + 0.5)
    out = flat.copy()
    if n and length > 0:
        mod_len = int(op.sample_rate / op.mod_speed + 0.5)
        mod = wave_table(op.sinusoidal, True, mod_len, 1.0, float(length), math.pi / 2)
        # temp[i] = x[i] + decay · temp[i - k], k = length + 1 - mod[i % mod_len] (>= 1).
        lag = length + 1 - mod[np.arange(n) % mod_len].astype(np.int64)
        dep = np.arange(n) - lag
        for s, e in _stretches(dep, int(lag.max())):
            d = dep[s:e]
            prior = np.where(d >= 0, out[:, np.maximum(d, 0)], 0.0)
            out[:, s:e] = flat[:, s:e] + op.decay * prior
    return np.clip(out * op.gain_out, -1.0, 1.0).reshape(w.shape).astype(out_dtype(arr))


@register_kernel("Flanger", "CPU")
def flanger(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr, 2, "<..., channel, time>")
    channels, n = w.shape[-2], w.shape[-1]
    if w.size == 0:
        return w.astype(out_dtype(arr))
    x3 = w.reshape(-1, channels, n)
    feedback, delay_gain, channel_phase = op.regen / 100, op.width / 100, op.phase / 100
    delay_min, delay_depth = op.delay / 1000, op.depth / 1000
    in_gain = 1.0 / (1 + delay_gain)
    delay_gain = delay_gain / (1 + delay_gain) * (1 - abs(feedback))
    buf_len = int((delay_min + delay_depth) * op.sample_rate + 0.5) + 2
    lfo_len = int(op.sample_rate / op.speed)
    if lfo_len <= 0:
        return w.astype(out_dtype(arr))
    sine = str(getattr(op.modulation, "value", op.modulation)) == "sinusoidal"
    lfo = wave_table(sine, False, lfo_len, float(math.floor(delay_min * op.sample_rate + 0.5)), buf_len - 2.0,
                     3 * math.pi / 2)
    phase = (np.arange(channels) * lfo_len * channel_phase + 0.5).astype(np.int64)
    delay = lfo[(np.arange(n)[None, :] + phase[:, None]) % lfo_len]  # (channels, n), float32 as SoX's table
    frac = (delay - np.floor(delay)).astype(np.float64)
    whole = np.floor(delay).astype(np.int64)
    taps = 3 if str(getattr(op.interpolation, "value", op.interpolation)) == "quadratic" else 2
    t = np.arange(n)
    # Tap m of sample i reads the delay line's input at sample i - ((whole + m) % buf_len).
    sources = [t - (whole + m) % buf_len for m in range(taps)]  # each (channels, n)
    c_idx = np.arange(channels)[:, None]

    def interpolate(line: np.ndarray, i: slice) -> np.ndarray:
        got = [np.where(src[:, i] >= 0, line[:, c_idx, np.maximum(src[:, i], 0)], 0.0) for src in sources]
        f = frac[:, i]
        if taps == 2:
            return got[0] + (got[1] - got[0]) * f
        d1, d2 = got[1] - got[0], got[2] - got[0]
        return got[0] + ((d2 * 0.5 - d1) * f + (d1 * 2 - d2 * 0.5)) * f

    if feedback == 0:
        delayed = interpolate(x3, slice(None))
    else:
        # line[j] = x[j] + feedback · delayed[j - 1]: sample i needs delayed[source - 1] for each tap.
        line = x3.copy()
        delayed = np.zeros_like(x3)
        nearest = np.min(np.stack([t - src for src in sources]), axis=(0, 1))  # the shortest tap delay
        dep = t - nearest - 1
        for s, e in _stretches(dep, int(buf_len + 1)):
            delayed[..., s:e] = interpolate(line, slice(s, e))
            line[..., s + 1 : e + 1] = x3[..., s + 1 : e + 1] + feedback * delayed[..., s : min(e, n - 1)]
    out = x3 * in_gain + delayed * delay_gain
    return np.clip(out, -1.0, 1.0).reshape(w.shape).astype(out_dtype(arr))


def _decay(seconds: float, rate: float) -> float:
    return math.exp(-1.0 / (seconds * rate)) if seconds * rate > 0 else 0.0


def _flush_count(ring: np.ndarray, k: int, level: float, gap: int, count: int) -> int:
    """SoX's count of measures before the trigger to keep: back from measure ``k`` over the ring of the
    last ``len(ring)`` measures, through bursts at most ``gap`` apart, to the last zero measure."""
    n = len(ring)
    j_trigger = j_zero = n
    for j in range(n):
        value = ring[(k - j) % n]
        if value >= level and j <= j_trigger + gap:
            j_trigger = j_zero = j
        elif value == 0 and j_trigger >= j_zero:
            j_zero = j
    return min(max(count, j_zero), n)


@register_kernel("Vad", "CPU")
def vad(op: Any, ctx: KernelContext, x: Any) -> np.ndarray:
    arr = np.asarray(x)
    w = as_waveform(op, arr)
    lead, n = w.shape[:-1], w.shape[-1]
    sr = op.sample_rate
    length = int(sr * op.measure_duration + 0.5)
    dft = 16
    while dft < length:
        dft *= 2
    period = int(sr / op.measure_freq + 0.5)
    ring_len = math.ceil(op.search_time * op.measure_freq)
    gap = int(op.allowed_gap * op.measure_freq + 0.5)
    held = int(op.pre_trigger_time * sr + 0.5) + ring_len * period + length
    s0 = max(int(op.hp_filter_freq / sr * dft + 0.5), 1)
    s1 = min(int(op.lp_filter_freq / sr * dft + 0.5), dft // 2)
    c0, c1 = math.ceil(sr * 0.5 / op.lp_lifter_freq), min(math.floor(sr * 0.5 / op.hp_lifter_freq), dft // 4)
    if s1 <= s0:
        raise ValueError(f"{op.name}: the spectrum's band is empty: `hp_filter_freq` is too high or `lp_filter_freq` "
                         "too low for the sample rate")
    if c1 <= c0:
        raise ValueError(f"{op.name}: the cepstrum's band is empty: `hp_lifter_freq` is too high or `lp_lifter_freq` "
                         "too low for the sample rate")
    flat = w.reshape(-1, n) if w.size else np.zeros((max(int(np.prod(lead)), 1), n))
    channels = flat.shape[0]
    start = n - held  # without a trigger
    positions = np.arange(length - 1, n, period) if period > 0 else np.zeros(0, np.int64)
    if len(positions) and ring_len > 0 and length > 0:
        spectrum_window = 2.0 / math.sqrt(length) * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length))
        bins = s1 - s0
        cepstrum_window = 2.0 / math.sqrt(bins) * (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(bins) / bins))
        # Measure k sees samples [p - length, p) of its position p (zeros before the start).
        padded = np.pad(flat, [(0, 0), (length, 0)])
        frames = padded[:, positions[:, None] + np.arange(length)[None, :]] * spectrum_window
        magnitudes = np.abs(np.fft.rfft(frames, n=dft, axis=-1))[..., s0:s1]  # (channels, measures, bins)
        smooth, up, down = (_decay(op.measure_smooth_time, op.measure_freq), _decay(op.noise_up_time, op.measure_freq),
                            _decay(op.noise_down_time, op.measure_freq))
        trigger_mult = _decay(op.trigger_time, op.measure_freq)
        boot_max = int(op.boot_time * op.measure_freq - 0.5)
        spectrum = np.zeros((channels, bins))
        noise = np.zeros((channels, bins))
        mean = np.zeros(channels)
        ring = np.zeros((channels, ring_len))
        boot = 0
        for k, position in enumerate(positions.tolist()):
            mult = boot / (1.0 + boot) if boot >= 0 else smooth
            spectrum = spectrum * mult + magnitudes[:, k] * (1 - mult)
            power = spectrum**2
            mult2 = 0.0 if boot >= 0 else np.where(power > noise, up, down)
            noise = noise * mult2 + power * (1 - mult2)
            cepstrum = np.zeros((channels, dft // 2))
            cepstrum[:, s0:s1] = np.sqrt(np.maximum(power - op.noise_reduction_amount * noise, 0.0)) * cepstrum_window
            total = (np.abs(np.fft.rfft(cepstrum, axis=-1)[:, c0:c1]) ** 2).sum(-1)
            with np.errstate(divide="ignore"):
                measure = np.where(total > 0, 21 + np.log(np.where(total > 0, total, 1.0) / (c1 - c0)), 0.0)
            measure = np.maximum(measure, 0.0)
            ring[:, k % ring_len] = measure
            mean = mean * trigger_mult + measure * (1.0 - trigger_mult)
            fired = np.flatnonzero(mean >= op.trigger_level)
            if boot >= 0:
                boot = -1 if boot == boot_max else boot + 1
            if len(fired):
                count = 0
                for c in range(int(fired[0]), channels):  # the channels measured after the first that fires
                    count = _flush_count(ring[c], k % ring_len, op.trigger_level, gap, count)
                # SoX keeps everything from the start when the trigger comes before a full search stretch
                # (torchaudio's and MindSpore's slice would count a negative start from the end).
                start = max(position + 1 - held + (ring_len - count) * period, 0)
                break
    if start < -n:
        start = 0
    elif start < 0:
        start += n  # without a trigger, a negative start counts from the end, as in torchaudio and MindSpore
    return flat[:, start:].reshape(*lead, n - start).astype(out_dtype(arr))
