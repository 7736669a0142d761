"""Input checks and conversions shared by the audio kernels (``spectrogram``, ``masking``, ``waveform``,
``biquad``)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

__all__ = ["as_waveform", "out_dtype", "BORDER_MODES"]

# BorderType's values -> np.pad modes.
BORDER_MODES: dict[str, Literal["constant", "edge", "reflect", "symmetric"]] = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


def out_dtype(x: np.ndarray) -> np.dtype:
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)


def as_waveform(op: Any, x: Any, min_rank: int = 1, what: str = "<..., time>") -> np.ndarray:
    """The input as a float64 array (the kernels compute in float64 and round once at the end), checked
    to be numeric with at least ``min_rank`` axes."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{op.name}: the input must be a numeric array. Found dtype {arr.dtype}")
    if arr.ndim < min_rank:
        raise ValueError(f"{op.name}: the input must have shape {what}. Found shape {arr.shape}")
    return arr.astype(np.float64, copy=False)
