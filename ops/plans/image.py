"""What the image plans share: square sizes, interpolation names, per-channel fill values."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["fill_values", "interpolation_name", "square"]


def square(size: int | tuple[int, int]) -> tuple[int, int]:
    """``(height, width)`` of a size given as an int (a square) or a pair.

    Examples:
        >>> from minddata.ops.plans.image import square
        >>> square(4), square((2, 3))
        ((4, 4), (2, 3))
    """
    return (size, size) if isinstance(size, int) else size


def interpolation_name(interpolation: Any) -> str:
    """The name kernels key on: an ``Inter`` member's ``name`` (``"BILINEAR"``), or the text given.

    Examples:
        >>> from minddata.ops.plans.image import interpolation_name
        >>> from minddata.vision import Inter
        >>> interpolation_name(Inter.LINEAR), interpolation_name("area")
        ('BILINEAR', 'AREA')
    """
    return getattr(interpolation, "name", str(interpolation)).upper()


def fill_values(fill: int | tuple[int, ...], channels: int) -> tuple[float, ...]:
    """One fill value per channel: an int fills every channel; an (R, G, B) tuple fills channels 0-2 in
    order (a one-channel image takes R, a fourth or later channel 0).

    Examples:
        >>> from minddata.ops.plans.image import fill_values
        >>> fill_values(7, 2), fill_values((1, 2, 3), 4)
        ((7.0, 7.0), (1.0, 2.0, 3.0, 0.0))
    """
    if isinstance(fill, (int, np.integer)):
        return (float(fill),) * channels
    vals = [float(v) for v in fill][:channels]
    return tuple(vals + [0.0] * (channels - len(vals)))
