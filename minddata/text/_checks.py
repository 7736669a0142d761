"""Parameter checks shared by the text op specs: each names the op, the argument, the rule and the value."""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata._checks import check_bool, check_int, is_int, show_value
from minddata.errors import ArgumentError

__all__ = [
    "is_int",
    "check_bool",
    "check_int",
    "check_str",
    "check_enum",
    "check_str_list",
    "check_file",
    "check_numeric_dtype",
]


def check_str(op: str, arg: str, value: Any, *, non_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{op}: `{arg}` must be a str. Found: {show_value(value)}")
    if non_empty and not value:
        raise ArgumentError(f"{op}: `{arg}` must not be empty. Found: ''")
    return value


def check_enum(op: str, arg: str, value: Any, kind: type[enum.Enum]) -> Any:
    if not isinstance(value, kind):
        members = ", ".join(f"{kind.__name__}.{m.name}" for m in kind)
        raise TypeError(f"{op}: `{arg}` must be one of {members}. Found: {show_value(value)}")
    return value


def check_str_list(op: str, arg: str, value: Any, *, unique: bool = True) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{op}: `{arg}` must be a list of str. Found: {show_value(value)}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{op}: `{arg}[{i}]` must be a str. Found: {show_value(item)}")
        out.append(str(item))
    if unique and len(set(out)) != len(out):
        seen: set[str] = set()
        dup = next(w for w in out if w in seen or seen.add(w))  # type: ignore[func-returns-value]  # add() is None: records w, keeps the test false
        raise ArgumentError(f"{op}: `{arg}` must not repeat a word. Found {dup!r} twice")
    return out


def check_file(op: str, arg: str, value: Any) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{op}: `{arg}` must be a file path. Found: {show_value(value)}")
    path = os.fspath(value)
    if not os.path.isfile(path):
        raise ArgumentError(f"{op}: `{arg}` must be an existing file. Found: {path!r}, which does not exist")
    return path


def check_numeric_dtype(op: str, arg: str, value: Any) -> np.dtype:
    """A NumPy dtype (or name) of a number type: int, uint, float or bool."""
    try:
        dtype = np.dtype(value) if value is not None else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or dtype.kind not in "biuf":
        raise TypeError(
            f"{op}: `{arg}` must be a numeric NumPy dtype such as np.int32 or 'float32'. Found: {show_value(value)}"
        )
    return dtype
