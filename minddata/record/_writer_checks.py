"""Checks both record writers share: their arguments, their call order and each row's values.

:class:`minddata.record.ArrowRecordWriter` (Arrow record files) and
:class:`minddata.mindrecord.FileWriter` (MindSpore's MindRecord files) take the same arguments and
the same rows; one set of checks keeps their rules and messages the same. Each error names the writer
class the user called, the argument (or row and field), the rule and the value found.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata._checks import is_int
from minddata.errors import ArgumentError
from minddata.record._schema import Field

__all__ = [
    "MAX_SHARDS", "bad_value", "check_desc", "check_index_list", "check_open", "check_row", "normalize_value", "refuse_existing",
    "writer_target",
]

# Both formats' bound on a set's files (MindSpore's).
MAX_SHARDS = 1000


def writer_target(writer: str, file_name: Any, shard_num: Any, overwrite: Any) -> tuple[str, int]:
    """The absolute path and shard count a writer was given, checked: a path whose folder exists,
    ``shard_num`` an int in [1, :data:`MAX_SHARDS`], ``overwrite`` a bool."""
    if not isinstance(file_name, (str, os.PathLike)) or not os.fspath(file_name):
        raise ArgumentError(f"{writer}: `file_name` must be a file path. Found: {file_name!r}")
    if not is_int(shard_num) or not 1 <= shard_num <= MAX_SHARDS:
        raise ArgumentError(f"{writer}: `shard_num` must be an int in [1, {MAX_SHARDS}]. Found: {shard_num!r}")
    if not isinstance(overwrite, bool):
        raise ArgumentError(f"{writer}: `overwrite` must be True or False. Found: {overwrite!r}")
    path = os.path.abspath(os.fspath(file_name))
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise ArgumentError(f"{writer}: the folder of `file_name` does not exist: {folder}. Create it first.")
    return path, int(shard_num)


def refuse_existing(writer: str, files: Sequence[str], overwrite: bool) -> None:
    """An error naming the first of ``files`` that exists, unless ``overwrite``."""
    existing = [p for p in files if os.path.exists(p)]
    if existing and not overwrite:
        raise ArgumentError(
            f"{writer}: {len(existing)} file(s) already exist, e.g. {existing[0]}. Pass overwrite=True to "
            "replace them, or choose another file_name."
        )


def check_open(writer: str, call: str, state: str) -> None:
    """Calls after ``commit`` or ``abort`` are errors: a writer writes one set once."""
    if state != "open":
        raise ArgumentError(f"{writer}.{call}: the writer is {state}; create a new {writer}.")


def check_desc(writer: str, desc: Any) -> str | None:
    if desc is not None and not isinstance(desc, str):
        raise ArgumentError(f"{writer}.add_schema: `desc` must be a str or None. Found: {desc!r}")
    return desc


def check_index_list(writer: str, index_fields: Any) -> list[Any]:
    """``add_index``'s argument as a list; whether each name may be indexed is the format's rule."""
    if isinstance(index_fields, (str, bytes)) or not isinstance(index_fields, (list, tuple)) or not index_fields:
        raise ArgumentError(
            f"{writer}.add_index: `index_fields` must be a non-empty list of field names. Found: {index_fields!r}"
        )
    return list(index_fields)


def check_row(writer: str, row: Any, k: int, fields: dict[str, Field], *, extra_allowed: bool = False) -> dict[str, Any]:
    """Row ``k`` of a ``write_raw_data`` call: a dict with every schema field, and no other unless
    ``extra_allowed`` (MindSpore's writer ignores fields the schema lacks)."""
    if not isinstance(row, dict):
        raise ArgumentError(f"{writer}.write_raw_data: row {k} must be a dict. Found: {type(row).__name__}")
    if row.keys() == fields.keys() or (extra_allowed and row.keys() >= fields.keys()):
        return row  # the usual case, without building the lists the error needs
    missing = [n for n in fields if n not in row]
    extra = [] if extra_allowed else [n for n in row if n not in fields]
    if missing or extra:
        unknown = f", unknown {extra}" if extra else ""
        raise ArgumentError(
            f"{writer}.write_raw_data: row {k} does not match the schema: missing {missing}{unknown}; every schema "
            f"field needs a value. Schema fields: {list(fields)}"
        )
    return row


def bad_value(writer: str, field: Field, value: Any, row: int, rule: str) -> ArgumentError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ArgumentError(
        f"{writer}.write_raw_data: row {row}, field {field.name!r} ({field.describe()}): {rule}. Found: {shown} "
        f"({type(value).__name__})"
    )


def normalize_value(writer: str, field: Field, value: Any, row: int) -> Any:
    """One row's value in its stored form (bytes-like, str, Python/NumPy scalar, ndarray), or an
    ArgumentError naming ``writer``, the row, the field, the rule and the value."""
    kind = field.type
    if kind == "bytes":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value) if not isinstance(value, bytes) else value
        if isinstance(value, np.ndarray) and value.dtype == np.uint8:
            return np.ascontiguousarray(value).reshape(-1)
        raise bad_value(writer, field, value, row, "expected bytes or a uint8 array")
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "U":
            return str(value)
        raise bad_value(writer, field, value, row, "expected a str")
    dtype = field.dtype
    if value is None:
        raise bad_value(writer, field, value, row, "a value is required (records have no nulls)")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        raise bad_value(writer, field, value, row, "expected a number or an array") from None
    if array.dtype.kind not in "biuf" or not np.can_cast(array.dtype, dtype, "same_kind") and not (
        array.dtype.kind in "iu" and dtype.kind in "iu"
    ):
        raise bad_value(writer, field, value, row, f"expected {dtype} values (found dtype {array.dtype})")
    if field.shape is None:
        if array.ndim != 0:
            raise bad_value(writer, field, value, row, f"expected a scalar (found shape {array.shape})")
        if dtype.kind in "iu" and array.dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= int(array) <= info.max:
                raise bad_value(writer, field, value, row, f"out of range for {dtype} [{info.min}, {info.max}]")
        with np.errstate(over="ignore"):  # checked just below, with a better message
            out = array.astype(dtype)
        _check_float_range(writer, field, row, array, out)
        return out
    shape = field.shape
    if array.ndim != len(shape) or any(d != -1 and d != n for d, n in zip(shape, array.shape)):
        raise bad_value(writer, field, f"array of shape {array.shape}", row, f"expected shape {list(shape)} (-1: any size)")
    if dtype.kind in "iu" and array.dtype.kind in "iu" and array.size and array.dtype != dtype:
        info = np.iinfo(dtype)
        if array.min() < info.min or array.max() > info.max:
            raise bad_value(writer, field, f"array of {array.dtype}", row, f"values out of range for {dtype}")
    with np.errstate(over="ignore"):
        out = np.ascontiguousarray(array, dtype=dtype)
    _check_float_range(writer, field, row, array, out)
    return out


def _check_float_range(writer: str, field: Field, row: int, given: np.ndarray, stored: np.ndarray) -> None:
    """A finite value that becomes inf in the field's float type is an error, as an int overflow is."""
    if stored.dtype.kind != "f" or given.dtype == stored.dtype:
        return
    with np.errstate(invalid="ignore"):
        lost = ~np.isfinite(stored) & np.isfinite(given)
    if not lost.any():
        return
    where = tuple(int(i) for i in np.argwhere(lost)[0]) if lost.ndim else ()
    bad = given[where] if where else given[()]
    at = f" at index {list(where)}" if where else ""
    raise bad_value(
        writer, field, bad.item(), row,
        f"value{at} overflows {stored.dtype} (largest finite magnitude {np.finfo(stored.dtype).max}); scale the "
        f"values or use a wider type in the schema",
    )
