"""What every CPU image kernel shares: the input checks (with the errors every device repeats) and
the cast back to an integer dtype after float arithmetic.

Kernels read only the op's attributes and never import ``minddata.vision`` (ops/ sits below the public
API); sizes, boxes and random draws come from the op's plan (:mod:`minddata.ops.plans`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["channels"]


def _as_array(op_name: str, x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "getbands") and hasattr(x, "mode"):  # a PIL image, e.g. from Decode(to_pil=True)
        return np.array(x)  # np.asarray of a PIL image is read-only; later ops may write in place
    raise TypeError(f"{op_name}: expected an image as a numpy array. Found: {type(x).__name__}")


def _image(op_name: str, x: Any, *, numeric: bool = False) -> np.ndarray:
    """An ``<H, W>`` or ``<H, W, C>`` array with H, W > 0."""
    img = _as_array(op_name, x)
    if img.ndim not in (2, 3):
        raise ValueError(
            f"{op_name}: expected an image of shape <H, W> or <H, W, C>. "
            f"Found shape {img.shape} ({img.ndim}-D, {img.dtype})"
        )
    if img.shape[0] == 0 or img.shape[1] == 0 or (img.ndim == 3 and img.shape[2] == 0):
        raise ValueError(f"{op_name}: expected a non-empty image. Found shape {img.shape}")
    if numeric and img.dtype.kind not in "biuf":
        raise TypeError(f"{op_name}: expected a numeric image. Found dtype {img.dtype} (shape {img.shape})")
    return img


def _cast_back(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return out > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype)


def channels(img: np.ndarray) -> int:
    """The channel count of an ``<H, W>`` (1) or ``<H, W, C>`` image."""
    return 1 if img.ndim == 2 else img.shape[2]
