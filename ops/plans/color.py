"""Colour plans: ``RandomColorAdjust``'s per-row order of adjustments and their factors."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ADJUSTMENTS", "color_adjustments"]

# The four adjustments and the factor that leaves an image as it is (an identity range never draws).
ADJUSTMENTS = (("brightness", 1.0), ("contrast", 1.0), ("saturation", 1.0), ("hue", 0.0))


def color_adjustments(rng: np.random.Generator, op: Any) -> list[tuple[int, float]]:
    """``(adjustment index into ADJUSTMENTS, factor)`` in the order this row applies them.

    As MindSpore: the four adjustments are shuffled per row, then each factor is drawn uniformly from
    its range, skipping a range that is the identity.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> from minddata.ops.plans.color import color_adjustments
        >>> steps = color_adjustments(np.random.default_rng(0), vision.RandomColorAdjust(brightness=(0.5, 1.5)))
        >>> [(i, 0.5 <= f <= 1.5) for i, f in steps]
        [(0, True)]
    """
    steps = []
    for k in rng.permutation(len(ADJUSTMENTS)):
        name, identity = ADJUSTMENTS[k]
        lo, hi = getattr(op, name)
        if lo == hi == identity:
            continue
        steps.append((int(k), float(rng.uniform(lo, hi))))
    return steps
