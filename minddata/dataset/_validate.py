"""Argument checks shared by dataset nodes; messages follow "`x` must be greater than 0. Found: -1"."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata._checks import is_int
from minddata.engine.autotune import is_autotune
from minddata.errors import ArgumentError


def positive_int(where: str, name: str, value: Any, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if not is_int(value):
        raise ArgumentError(f"{where}: `{name}` must be an int. Found: {value!r} ({type(value).__name__})")
    if value <= 0:
        raise ArgumentError(f"{where}: `{name}` must be greater than 0. Found: {value}")
    return int(value)


def non_negative_int(where: str, name: str, value: Any) -> int:
    if not is_int(value):
        raise ArgumentError(f"{where}: `{name}` must be an int. Found: {value!r} ({type(value).__name__})")
    if value < 0:
        raise ArgumentError(f"{where}: `{name}` must be 0 or greater. Found: {value}")
    return int(value)


def column_list(where: str, name: str, value: Any, *, allow_none: bool = True) -> list[str] | None:
    if value is None:
        if allow_none:
            return None
        raise ArgumentError(f"{where}: `{name}` is required.")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(c, str) and c for c in value):
        raise ArgumentError(
            f"{where}: `{name}` must be a column name or a non-empty list of column names. Found: {value!r}"
        )
    if len(set(value)) != len(value):
        raise ArgumentError(f"{where}: `{name}` names a column more than once. Found: {list(value)}")
    return list(value)


def bool_arg(where: str, name: str, value: Any, *, allow_none: bool = False) -> bool | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{where}: `{name}` must be True or False. Found: {value!r}")
    return bool(value)


def workers(where: str, value: Any) -> int:
    from minddata import config

    if value is None:
        return config.get_num_parallel_workers()
    if is_autotune(value):
        return value  # starts at 1; autotune adjusts it while the pipeline runs
    count = positive_int(where, "num_parallel_workers", value)
    config.warn_if_oversubscribed(count)  # type: ignore[arg-type]  # positive_int gives None only with allow_none
    return count  # type: ignore[return-value]  # positive_int gives None only with allow_none
