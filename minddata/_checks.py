"""Argument checks shared by the public API's op specs and dataset nodes.

Each check names the op (or node), the argument, the rule and the value found, so a bad pipeline fails
where it is written rather than on its first row::

    >>> from minddata._checks import check_int
    >>> check_int("Resize", "size", 3, low=1, high=16777216)
    3
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from minddata.errors import ArgumentError

__all__ = ["check_bool", "check_int", "is_int", "show_value"]


def show_value(value: Any) -> str:
    """A value as errors show it: its repr and its type, e.g. ``'3' (str)``."""
    return f"{value!r} ({type(value).__name__})"


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (NumPy's included) and not a bool.

    bool is an int subclass, but ``size=True`` is always a mistake, so it is not an int here.
    """
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_bool(op: str, arg: str, value: Any) -> bool:
    """``value`` if it is a bool; otherwise a TypeError naming ``op`` and ``arg``."""
    if not isinstance(value, bool):
        raise TypeError(f"{op}: `{arg}` must be a bool. Found: {show_value(value)}")
    return value


def check_int(op: str, arg: str, value: Any, *, low: int, high: int) -> int:
    """``value`` as an int if it is an integer within ``[low, high]``; otherwise TypeError (not an
    integer) or ArgumentError (out of range) naming ``op``, ``arg``, the bound and the value."""
    if not is_int(value):
        raise TypeError(f"{op}: `{arg}` must be an int. Found: {show_value(value)}")
    if value < low:
        rule = "greater than 0" if low == 1 else f"at least {low}"
        raise ArgumentError(f"{op}: `{arg}` must be {rule}. Found: {value}")
    if value > high:
        raise ArgumentError(f"{op}: `{arg}` must be at most {high}. Found: {value}")
    return int(value)
