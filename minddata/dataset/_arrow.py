"""Arrow columns → NumPy row values, one gather per column per chunk (used by Parquet sources).

| Arrow type | a row's value |
|---|---|
| integer, float, bool | NumPy scalar |
| string | 0-d ``str`` array |
| binary, fixed-size binary | 1-D uint8 array (a view, zero-copy) |
| list / large_list / fixed_size_list of numbers (nested too) | an N-D array (views where possible) |
| fixed_shape_tensor | an array of the tensor's shape |
| timestamp, date, duration | NumPy datetime64 / timedelta64 scalar |
| dictionary | its decoded value |
| anything else (struct, map, ...) | ``np.asarray`` of the Python value |

Nulls have no NumPy form: reading a null is an error naming the row and the column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from minddata.errors import DataFormatError

__all__ = ["ColumnView"]


class ColumnView:
    """One Arrow array (a column of a record batch or a combined table column) read by row."""

    __slots__ = ("kind", "parts", "nulls", "name")

    def __init__(self, array: pa.Array, name: str):
        self.name = name
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
        self.nulls = array.is_null().to_numpy(zero_copy_only=False) if array.null_count else None
        t = array.type
        if pa.types.is_dictionary(t):
            array = array.dictionary_decode()
            t = array.type
        if isinstance(t, pa.BaseExtensionType):
            if hasattr(array, "to_numpy_ndarray"):
                try:
                    self.kind, self.parts = "values", (array.to_numpy_ndarray(),)
                    return
                except (pa.ArrowInvalid, NotImplementedError):
                    pass
            array = array.storage
            t = array.type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_temporal(t):
            self.kind, self.parts = "values", (array.to_numpy(zero_copy_only=False),)
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            self.kind, self.parts = "strings", (array.to_numpy(zero_copy_only=False),)
        elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
            _, offsets, data = array.buffers()
            width = np.int64 if pa.types.is_large_binary(t) else np.int32
            off = np.frombuffer(offsets, dtype=width)[array.offset : array.offset + len(array) + 1]
            self.kind, self.parts = "bytes", (off, np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8))
        elif pa.types.is_fixed_size_binary(t):
            data = array.buffers()[1]
            flat = np.frombuffer(data, np.uint8)[array.offset * t.byte_width : (array.offset + len(array)) * t.byte_width]
            self.kind, self.parts = "values", (flat.reshape(len(array), t.byte_width),)
        elif _numeric_lists(t):
            self.kind, self.parts = "lists", _flatten_lists(array)
        else:
            self.kind, self.parts = "python", (array,)

    def put(self, rows: np.ndarray, positions: Sequence[int], out: list[Any], where: Callable[[int], str]) -> None:
        """Write rows ``rows`` into ``out`` at ``positions``; ``where(row)`` names a row for errors."""
        if self.nulls is not None and self.nulls[rows].any():
            bad = int(rows[np.argmax(self.nulls[rows])])
            raise DataFormatError(
                f"{where(bad)}: column {self.name!r} is null there; pipeline rows have no nulls. Fill or drop "
                "the nulls (or leave the column out with columns_list)."
            )
        kind, parts = self.kind, self.parts
        if kind == "values":
            for p, value in zip(positions, parts[0][rows]):
                out[p] = value
        elif kind == "strings":
            for p, value in zip(positions, parts[0][rows]):
                out[p] = np.asarray(value)
        elif kind == "bytes":
            off, data = parts
            for p, a, b in zip(positions, off[rows].tolist(), off[rows + 1].tolist()):
                out[p] = data[a:b]
        elif kind == "lists":
            flat, levels = parts
            for p, r in zip(positions, rows.tolist()):
                out[p] = _list_value(flat, levels, r)
        else:
            array = parts[0]
            for p, r in zip(positions, rows.tolist()):
                out[p] = np.asarray(array[r].as_py())


def _numeric_lists(t: pa.DataType) -> bool:
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)


def _flatten_lists(array: pa.Array) -> tuple[np.ndarray, list[tuple[str, Any]]]:
    """Flat values plus one (kind, offsets or size) per list level, outermost first."""
    levels: list[tuple[str, Any]] = []
    current = array
    while True:
        t = current.type
        if pa.types.is_fixed_size_list(t):
            levels.append(("fixed", t.list_size, current.offset))
            current = current.values
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            levels.append(("var", current.offsets.to_numpy(), 0))
            current = current.values
        else:
            break
    return current.to_numpy(zero_copy_only=False), levels


def _list_value(flat: np.ndarray, levels: list[tuple[str, Any, int]], row: int) -> np.ndarray:
    a, b = row, row + 1
    shape: list[int] = []
    for kind, info, offset in levels:
        if kind == "fixed":
            shape.append(info)
            a, b = (a + offset) * info, (b + offset) * info
        else:
            lengths = np.diff(info[a : b + 1])
            if lengths.size and (lengths != lengths[0]).any():
                raise DataFormatError(
                    f"row {row} is a nested list whose inner lists have different lengths ({sorted(set(lengths.tolist()))[:4]}); "
                    "pipeline rows are N-D arrays, so inner lists must be regular."
                )
            shape.append(int(lengths[0]) if lengths.size else 0)
            a, b = int(info[a]), int(info[b])
    return flat[a:b].reshape(shape)
