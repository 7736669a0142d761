"""Parameter checks shared by the vision op specs.

Every check raises with the op, the argument, the rule and the value found, so a bad pipeline fails
where it is written rather than on the first row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np

# check_bool and show_value are re-exported: the op specs import every check from here.
from minddata._checks import check_bool as check_bool
from minddata._checks import check_int as _check_int
from minddata._checks import is_int as is_int
from minddata._checks import show_value as show_value
from minddata.errors import ArgumentError
from minddata.ops.base import TensorSpec
from minddata.vision._utils import Border, Inter

# MindSpore's bound for sizes and coordinates (it stores them as int32 and multiplies them).
MAX_INT_SIZE = 16777216


def is_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def check_int(op: str, arg: str, value: Any, *, low: int, high: int = MAX_INT_SIZE) -> int:
    """:func:`minddata._checks.check_int` with MindSpore's bound for sizes and coordinates as the default."""
    return _check_int(op, arg, value, low=low, high=high)


def check_real(op: str, arg: str, value: Any) -> float:
    if not is_real(value):
        raise TypeError(f"{op}: `{arg}` must be a number. Found: {show_value(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ArgumentError(f"{op}: `{arg}` must be finite. Found: {value}")
    return value


def check_pair(op: str, arg: str, value: Any, what: str = "numbers") -> tuple[Any, Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise TypeError(f"{op}: `{arg}` must be a sequence of 2 {what}. Found: {show_value(value)}")
    return value[0], value[1]


def check_size(op: str, value: Any, arg: str = "size") -> int | tuple[int, int]:
    """An int (kept as an int: ops read it as "shorter side" or "square") or (height, width)."""
    if is_int(value):
        if value <= 0:
            raise ArgumentError(f"{op}: `{arg}` must be greater than 0. Found: {value}")
        if value > MAX_INT_SIZE:
            raise ArgumentError(f"{op}: `{arg}` must be at most {MAX_INT_SIZE}. Found: {value}")
        return int(value)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise TypeError(
            f"{op}: `{arg}` must be an int or a sequence of 2 ints (height, width). Found: {show_value(value)}"
        )
    h = check_int(op, f"{arg}[0] (height)", value[0], low=1)
    w = check_int(op, f"{arg}[1] (width)", value[1], low=1)
    return (h, w)


def check_range(
    op: str, arg: str, value: Any, *, low: float, low_open: bool = False, need_positive_high: bool = False
) -> tuple[float, float]:
    """A (lo, hi) pair of finite numbers with low <= lo <= hi."""
    a, b = check_pair(op, arg, value)
    lo = check_real(op, f"{arg}[0]", a)
    hi = check_real(op, f"{arg}[1]", b)
    for name, v in ((f"{arg}[0]", lo), (f"{arg}[1]", hi)):
        if (v <= low) if low_open else (v < low):
            rule = f"greater than {low:g}" if low_open else f"at least {low:g}"
            raise ArgumentError(f"{op}: `{name}` must be {rule}. Found: {v}")
    if lo > hi:
        raise ArgumentError(f"{op}: `{arg}` must be (min, max) with min <= max. Found: {tuple(value)!r}")
    if need_positive_high and hi <= 0:
        raise ArgumentError(f"{op}: `{arg}[1]` must be greater than 0. Found: {hi}")
    return lo, hi


def check_inter(op: str, value: Any) -> Any:
    if not isinstance(value, Inter):
        raise TypeError(
            f"{op}: `interpolation` must be a vision.Inter member, e.g. Inter.BILINEAR. Found: {show_value(value)}"
        )
    return value


def is_sequence(value: Any) -> bool:
    """A list, tuple or other sequence, but not a string."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def check_prob(op: str, value: Any) -> float:
    prob = check_real(op, "prob", value)
    if not 0.0 <= prob <= 1.0:
        raise ArgumentError(f"{op}: `prob` must be in [0, 1]. Found: {prob}")
    return prob


def check_fill_value(op: str, value: Any, arg: str = "fill_value") -> int | tuple[int, int, int]:
    """An int for every channel, or an (R, G, B) 3-tuple; each in [0, 255], as in MindSpore."""
    if is_int(value):
        if not 0 <= value <= 255:
            raise ArgumentError(f"{op}: `{arg}` must be in [0, 255]. Found: {value}")
        return int(value)
    if not is_sequence(value) or len(value) != 3:
        raise TypeError(
            f"{op}: `{arg}` must be an int or a sequence of 3 ints (R, G, B). Found: {show_value(value)}"
        )
    return tuple(check_int(op, f"{arg}[{i}]", v, low=0, high=255) for i, v in enumerate(value))  # type: ignore[return-value]  # three values: the length was checked


def check_padding(op: str, value: Any, arg: str = "padding") -> tuple[int, int, int, int]:
    """MindSpore 2.x's rule, stored as (left, top, right, bottom): an int pads every side; (lr, tb)
    pads left and right with the first value, top and bottom with the second; 4 values are
    (left, top, right, bottom)."""
    if is_int(value):
        p = check_int(op, arg, value, low=0)
        return (p, p, p, p)
    if not is_sequence(value) or len(value) not in (2, 4):
        raise TypeError(
            f"{op}: `{arg}` must be an int, a sequence of 2 ints (left/right, top/bottom) or of 4 ints "
            f"(left, top, right, bottom). Found: {show_value(value)}"
        )
    vals = tuple(check_int(op, f"{arg}[{i}]", v, low=0) for i, v in enumerate(value))
    if len(vals) == 2:
        return (vals[0], vals[1], vals[0], vals[1])
    return vals  # type: ignore[return-value]  # four values: the length was checked


def check_border(op: str, value: Any) -> Border:
    if not isinstance(value, Border):
        raise TypeError(
            f"{op}: `padding_mode` must be a vision.Border member, e.g. Border.CONSTANT. Found: {show_value(value)}"
        )
    return value


# Pillow's resize-only filters have no meaning for a warp.
_WARP_INTERS = ("NEAREST", "BILINEAR", "BICUBIC", "AREA", "LANCZOS")


def check_resample(op: str, value: Any) -> Inter:
    if not isinstance(value, Inter):
        raise TypeError(
            f"{op}: `resample` must be a vision.Inter member, e.g. Inter.NEAREST. Found: {show_value(value)}"
        )
    if value.name not in _WARP_INTERS:
        raise ArgumentError(
            f"{op}: `resample` must be Inter.NEAREST, BILINEAR, BICUBIC, AREA or LANCZOS. Found: {value!r}"
        )
    return value


def check_center(op: str, value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if not is_sequence(value) or len(value) != 2:
        raise TypeError(
            f"{op}: `center` must be None or a sequence of 2 numbers (x, y). Found: {show_value(value)}"
        )
    return (check_real(op, "center[0] (x)", value[0]), check_real(op, "center[1] (y)", value[1]))


def check_degree_range(op: str, arg: str, value: Any, *, bound: float | None = None) -> tuple[float, float]:
    """A number ``d >= 0`` means (-d, d); a sequence is (min, max) with min <= max."""
    if is_real(value):
        d = check_real(op, arg, value)
        if d < 0:
            raise ArgumentError(f"{op}: `{arg}` must be at least 0 when it is a number. Found: {d}")
        lo, hi = -d, d
    elif is_sequence(value):
        if len(value) != 2:
            raise TypeError(
                f"{op}: `{arg}` must be a number or a sequence of 2 numbers. Found: {show_value(value)}"
            )
        lo, hi = check_range(op, arg, value, low=-math.inf)
    else:
        raise TypeError(
            f"{op}: `{arg}` must be a number or a sequence of 2 numbers. Found: {show_value(value)}"
        )
    if bound is not None and not (-bound <= lo and hi <= bound):
        raise ArgumentError(f"{op}: `{arg}` must lie in [-{bound:g}, {bound:g}]. Found: ({lo}, {hi})")
    return lo, hi


def check_channel_values(op: str, arg: str, values: Any, *, positive: bool) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(
            f"{op}: `{arg}` must be a sequence of numbers, one per channel. "
            f"Found: {values!r} ({type(values).__name__})"
        )
    if len(values) == 0:
        raise ArgumentError(f"{op}: `{arg}` must not be empty. Found: {values!r}")
    out = []
    for i, v in enumerate(values):
        f = check_real(op, f"{arg}[{i}]", v)
        if positive and not 0.0 < f <= 255.0:
            raise ArgumentError(f"{op}: `{arg}[{i}]` must be in (0, 255]. Found: {f}")
        if not positive and not 0.0 <= f <= 255.0:
            raise ArgumentError(f"{op}: `{arg}[{i}]` must be in [0, 255]. Found: {f}")
        out.append(f)
    return tuple(out)


# ---------------------------------------------------------------------------------------------- input specs


def image_spec_dims(
    op: str, spec: TensorSpec, *, numeric: bool = False
) -> tuple[int | None, int | None, tuple[int | None, ...]]:
    """(height, width, channel dims) of an ``<H, W>``/``<H, W, C>`` input spec, checked as the CPU
    kernels check the array: the engine can then reject a bad graph before the first row."""
    shape = tuple(spec.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{op}: expected an image of shape <H, W> or <H, W, C>. Found shape {shape}")
    if any(d == 0 for d in shape):
        raise ValueError(f"{op}: expected a non-empty image. Found shape {shape}")
    if numeric and spec.dtype is not None and np.dtype(spec.dtype).kind not in "biuf":
        raise TypeError(f"{op}: expected a numeric image. Found dtype {np.dtype(spec.dtype)} (shape {shape})")
    return shape[0], shape[1], shape[2:]


def one_image_spec(
    op: str, inputs: tuple[TensorSpec, ...], *, numeric: bool = False
) -> tuple[int | None, int | None, tuple[int | None, ...], np.dtype | None]:
    """(height, width, channel dims, dtype) of the one ``<H, W>``/``<H, W, C>`` input of an image op."""
    if len(inputs) != 1:
        raise ValueError(f"{op}: expected 1 input. Found: {len(inputs)}")
    spec = inputs[0]
    height, width, channels = image_spec_dims(op, spec, numeric=numeric)
    return height, width, channels, None if spec.dtype is None else np.dtype(spec.dtype)
