"""Where the masking ops (``minddata/audio/masking.py``) put their band: fixed, or drawn from the row's
RNG. Device-free."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Band", "fixed_band", "random_band"]


class Band(NamedTuple):
    """Masked indices ``[start, start + width)`` along the masked axis."""

    start: int
    width: int


def _check(op: str, axis_name: str, param_name: str, param: int, size: int) -> None:
    if param > size:
        raise ValueError(
            f"{op}: `{param_name}` ({param}) must be at most the input's {axis_name} length ({size})"
        )


def fixed_band(op: str, axis_name: str, param_name: str, start: int, width: int, size: int) -> Band:
    """The band ``[start, start + width)``, which must fit in ``size``."""
    _check(op, axis_name, param_name, width, size)
    if start + width > size:
        raise ValueError(
            f"{op}: `mask_start` + `{param_name}` ({start} + {width}) must be at most the input's {axis_name} "
            f"length ({size})"
        )
    return Band(start, width)


def random_band(
    op: str, axis_name: str, param_name: str, param: int, size: int, rng: np.random.Generator
) -> Band:
    """A width drawn uniformly from ``[0, param]``, then a start drawn uniformly from ``[0, size - width]``."""
    _check(op, axis_name, param_name, param, size)
    width = int(rng.integers(0, param + 1))
    start = int(rng.integers(0, size - width + 1))
    return Band(start, width)
