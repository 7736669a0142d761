"""Record schemas: MindSpore's ``add_schema`` dictionaries, checked, and their Arrow storage.

A schema maps a field name to ``{"type": T}`` (a scalar, a string or a bytes blob) or
``{"type": T, "shape": [d0, d1, ...]}`` (a tensor; ``-1`` marks a dimension that varies by row).

Storage (one Arrow column per field, plus one for each variable-shape tensor):

| field | Arrow type |
|---|---|
| ``bytes`` | ``large_binary`` (read back as a 1-D uint8 array, zero-copy) |
| ``string`` | ``large_string`` |
| numeric scalar | the primitive type |
| tensor, fixed shape | ``fixed_size_list<T>[prod(shape)]`` (read back reshaped, zero-copy) |
| tensor with ``-1`` | ``large_list<T>`` plus ``__shape__.<name>``: ``fixed_size_list<int32>[ndim]`` |
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from minddata.errors import ArgumentError, DataFormatError

__all__ = ["Field", "parse_schema", "select_columns", "SCALAR_TYPES", "SHAPE_PREFIX"]

# MindSpore's record types are int32, int64, float32, float64, string and bytes; the rest are ours.
SCALAR_TYPES = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
}
TYPES = (*SCALAR_TYPES, "string", "bytes")
SHAPE_PREFIX = "__shape__."
# Arrow's fixed-size lists count their values in an int32.
_MAX_TENSOR_SIZE = 2**31 - 1


@dataclass(frozen=True)
class Field:
    """One schema field: ``type`` (a name of :data:`TYPES`) and ``shape`` (None for a scalar,
    string or bytes field; a tuple with -1 for variable dimensions for a tensor)."""

    name: str
    type: str
    shape: tuple[int, ...] | None = None

    @property
    def dtype(self) -> np.dtype:
        if self.type == "bytes":
            return np.dtype(np.uint8)
        if self.type == "string":
            return np.dtype(str)
        return np.dtype(SCALAR_TYPES[self.type])

    @property
    def variable(self) -> bool:
        return self.shape is not None and -1 in self.shape

    @property
    def size(self) -> int:
        return math.prod(self.shape) if self.shape is not None else 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.shape is not None:
            out["shape"] = list(self.shape)
        return out

    def arrow_fields(self) -> list[pa.Field]:
        """The Arrow column(s) that store this field."""
        if self.type == "bytes":
            return [pa.field(self.name, pa.large_binary(), nullable=False)]
        if self.type == "string":
            return [pa.field(self.name, pa.large_string(), nullable=False)]
        value = pa.from_numpy_dtype(self.dtype)
        if self.shape is None:
            return [pa.field(self.name, value, nullable=False)]
        if not self.variable:
            return [pa.field(self.name, pa.list_(value, self.size), nullable=False)]
        return [
            pa.field(self.name, pa.large_list(value), nullable=False),
            pa.field(SHAPE_PREFIX + self.name, pa.list_(pa.int32(), len(self.shape)), nullable=False),
        ]

    def describe(self) -> str:
        return self.type if self.shape is None else f"{self.type}{list(self.shape)}"


def parse_schema(where: str, content: Any) -> dict[str, Field]:
    """Check a MindSpore-style schema dictionary; returns name -> :class:`Field` in order."""
    if not isinstance(content, dict) or not content:
        raise ArgumentError(
            f"{where}: the schema must be a non-empty dict like {{'label': {{'type': 'int32'}}, 'image': "
            f"{{'type': 'bytes'}}}}. Found: {content!r}"
        )
    fields: dict[str, Field] = {}
    for name, spec in content.items():
        if not isinstance(name, str) or not name or name.startswith(SHAPE_PREFIX):
            raise ArgumentError(
                f"{where}: schema field names must be non-empty strings not starting with {SHAPE_PREFIX!r}. "
                f"Found: {name!r}"
            )
        if not isinstance(spec, dict) or "type" not in spec or set(spec) - {"type", "shape"}:
            raise ArgumentError(
                f"{where}: schema field {name!r} must be {{'type': T}} or {{'type': T, 'shape': [...]}}. "
                f"Found: {spec!r}"
            )
        kind = spec["type"]
        if kind not in TYPES:
            raise ArgumentError(f"{where}: schema field {name!r} has unknown type {kind!r}; types: {', '.join(TYPES)}")
        shape = spec.get("shape")
        if shape is not None:
            if kind in ("string", "bytes"):
                raise ArgumentError(
                    f"{where}: schema field {name!r} of type {kind} can't have a shape (one value per row). "
                    f"Found: shape {shape!r}"
                )
            if (
                isinstance(shape, (str, bytes))
                or not isinstance(shape, (list, tuple))
                or not shape
                or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and (d > 0 or d == -1) for d in shape)
            ):
                raise ArgumentError(
                    f"{where}: schema field {name!r} shape must be a non-empty list of ints > 0 or -1 (variable). "
                    f"Found: {shape!r}"
                )
            shape = tuple(int(d) for d in shape)
            if math.prod(d for d in shape if d != -1) > _MAX_TENSOR_SIZE:
                raise ArgumentError(
                    f"{where}: schema field {name!r} shape {list(shape)} holds more than {_MAX_TENSOR_SIZE} values per "
                    "row (Arrow's fixed-size list limit); use -1 for large dimensions or split the field."
                )
        fields[name] = Field(name, kind, shape)
    return fields


def fields_from_json(content: dict[str, Any]) -> dict[str, Field]:
    return {name: Field(name, spec["type"], tuple(spec["shape"]) if spec.get("shape") is not None else None)
            for name, spec in content.items()}


def arrow_schema(fields: dict[str, Field], metadata: dict[str, str]) -> pa.Schema:
    columns = [f for field in fields.values() for f in field.arrow_fields()]
    return pa.schema(columns, metadata=metadata)


def select_columns(where: str, columns_list: Any, fields: dict[str, Field], file_kind: str, first_file: str) -> list[str]:
    """The columns a reader reads: ``columns_list`` in its order, or every field; a name the set lacks
    is an error naming the file (``file_kind``: "record file", "MindRecord file") and its columns."""
    if columns_list is None:
        return list(fields)
    unknown = [c for c in columns_list if c not in fields]
    if unknown:
        raise DataFormatError(
            f"{where}: columns_list names {unknown}, which {file_kind} {first_file} does not have. Its "
            f"columns: {list(fields)}.",
            path=first_file,
        )
    return list(columns_list)
