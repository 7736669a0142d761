"""Plan of MixUp (the batch op of MindSpore's Python transforms): one weight per image and its partner."""

from __future__ import annotations

import numpy as np

__all__ = ["mixup_weights", "shifted_partners"]


def mixup_weights(rng: np.random.Generator, batch_size: int, alpha: float) -> np.ndarray:
    """``batch_size`` weights drawn from Beta(alpha, alpha), one per image, as MindSpore draws them."""
    return rng.beta(alpha, alpha, batch_size)


def shifted_partners(batch_size: int) -> np.ndarray:
    """Image ``i`` mixes with image ``i + 1`` (the last with the first): MindSpore's circular shift."""
    return np.roll(np.arange(batch_size), -1)
