"""What the effect ops (``minddata/audio/effects.py``) compute before touching samples: Dither's random
picks and the low-frequency oscillator tables of Flanger and Phaser (SoX's wave tables, as torchaudio
builds them). Device-free: NumPy only."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dither_picks", "wave_table"]


def dither_picks(kind: str, channels: int, length: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """The (channel, time) samples whose values make Dither's offset: one for RPDF, seven for GPDF,
    drawn as torchaudio draws them (channels and times below the last one)."""
    count = 1 if kind == "RPDF" else 7
    c, t = max(channels - 1, 1), max(length - 1, 1)
    return [(int(rng.integers(c)) if channels > 1 else 0, int(rng.integers(t)) if length > 1 else 0)
            for _ in range(count)]


def wave_table(sine: bool, as_int: bool, size: int, low: float, high: float, phase: float) -> np.ndarray:
    """SoX's oscillator table of ``size`` points between ``low`` and ``high``, starting at ``phase``:
    float32 values, or rounded half away from zero to int32."""
    offset = int(phase / math.pi / 2 * size + 0.5)
    point = (np.arange(size) + offset) % size
    if sine:
        d = (np.sin(point / size * 2 * math.pi) + 1) / 2
    else:
        d = point * 2.0 / size
        quarter = (4 * point) // size
        d = np.select([quarter == 0, quarter == 1, quarter == 2, quarter == 3],
                      [d + 0.5, 1.5 - d, 1.5 - d, d - 1.5], d)
    d = d * (high - low) + low
    if as_int:
        return np.where(d < 0, d - 0.5, d + 0.5).astype(np.int32)
    return d.astype(np.float32)
