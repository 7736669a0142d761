"""Parameter checks shared by the vision op specs.

Every check raises with the op, the argument, the rule and the value found, so a bad pipeline fails
where it is written rather than on the first row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

from minddata.errors import ArgumentError

# MindSpore's bound for sizes and coordinates (it stores them as int32 and multiplies them).
MAX_INT_SIZE = 16777216


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def is_int(value: Any) -> bool:
    # bool is an int subclass; `size=True` is always a mistake.
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def check_bool(op: str, arg: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{op}: `{arg}` must be a bool. Found: {_show(value)}")
    return value


def check_int(op: str, arg: str, value: Any, *, low: int, high: int = MAX_INT_SIZE) -> int:
    if not is_int(value):
        raise TypeError(f"{op}: `{arg}` must be an int. Found: {_show(value)}")
    if value < low:
        rule = "greater than 0" if low == 1 else f"at least {low}"
        raise ArgumentError(f"{op}: `{arg}` must be {rule}. Found: {value}")
    if value > high:
        raise ArgumentError(f"{op}: `{arg}` must be at most {high}. Found: {value}")
    return int(value)


def check_real(op: str, arg: str, value: Any) -> float:
    if not is_real(value):
        raise TypeError(f"{op}: `{arg}` must be a number. Found: {_show(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ArgumentError(f"{op}: `{arg}` must be finite. Found: {value}")
    return value


def check_pair(op: str, arg: str, value: Any, what: str = "numbers") -> tuple[Any, Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise TypeError(f"{op}: `{arg}` must be a sequence of 2 {what}. Found: {_show(value)}")
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
            f"{op}: `{arg}` must be an int or a sequence of 2 ints (height, width). Found: {_show(value)}"
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
    from minddata.vision._utils import Inter

    if not isinstance(value, Inter):
        raise TypeError(
            f"{op}: `interpolation` must be a vision.Inter member, e.g. Inter.BILINEAR. Found: {_show(value)}"
        )
    return value
