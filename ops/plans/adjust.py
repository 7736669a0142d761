"""Device-free plans of the pixel-adjusting ops (``minddata.vision.adjust``): the random parameters each
row draws, from the row's RNG only, in MindSpore's order. Every device's kernel executes these plans, so
all devices draw alike and output never depends on worker count.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "LIGHTING_EIGEN",
    "applies",
    "lighting_shift",
    "posterize_bits",
    "solarize_range",
    "uniform_factor",
]

# AlexNet's PCA of ImageNet's RGB pixels: eigenvalue * eigenvector, row = output channel (R, G, B),
# column = component. MindSpore's RandomLighting uses these values.
LIGHTING_EIGEN = np.array(
    [
        [55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
        [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
        [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203],
    ],
    dtype=np.float32,
)


def applies(rng: np.random.Generator, prob: float) -> bool:
    """Whether a ``Random*`` op with probability ``prob`` acts on this row (one draw)."""
    return bool(rng.random() < prob)


def uniform_factor(rng: np.random.Generator, low: float, high: float) -> float:
    """A factor drawn uniformly from ``[low, high]`` (RandomSharpness, RandomColor)."""
    return float(rng.uniform(low, high))


def posterize_bits(rng: np.random.Generator, low: int, high: int) -> int:
    """RandomPosterize: the bits to keep, uniform over the integers ``low..high``."""
    return int(rng.integers(low, high, endpoint=True))


def solarize_range(rng: np.random.Generator, low: int, high: int) -> tuple[int, int]:
    """RandomSolarize: two thresholds drawn uniformly from ``low..high``, sorted into (min, max)."""
    a, b = (int(v) for v in rng.integers(low, high, size=2, endpoint=True))
    return (a, b) if a <= b else (b, a)


def lighting_shift(rng: np.random.Generator, alpha: float) -> np.ndarray:
    """RandomLighting: the (R, G, B) shift ``LIGHTING_EIGEN @ a``, ``a ~ N(0, alpha)`` per component, in
    float32 as MindSpore computes it. ``alpha == 0`` draws nothing and shifts nothing."""
    if alpha == 0:
        return np.zeros(3, np.float32)
    weights = rng.normal(0.0, alpha, size=3).astype(np.float32)
    return (LIGHTING_EIGEN * weights[None, :]).sum(axis=1, dtype=np.float32)
