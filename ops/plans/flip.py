"""Flip plans: whether a random flip flips this row."""

from __future__ import annotations

import numpy as np

__all__ = ["flips"]


def flips(rng: np.random.Generator, prob: float) -> bool:
    """``RandomHorizontalFlip``/``RandomVerticalFlip``: one uniform draw, below ``prob`` flips.

    Examples:
        >>> import numpy as np
        >>> from minddata.ops.plans.flip import flips
        >>> flips(np.random.default_rng(0), 1.0), flips(np.random.default_rng(0), 0.0)
        (True, False)
    """
    return bool(rng.random() < prob)
