"""``Schema``: column names, types and shapes for sources that need them (TFRecord, RandomDataset).

Follows ``mindspore.dataset.Schema``: ``add_column(name, de_type, shape)``, ``to_json`` /
``from_json``, and the JSON layout ``{"numRows": N, "columns": {name: {"type": T, "rank": R,
"shape": [...]}}}`` (a schema file may be given by path).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError

__all__ = ["Schema", "TYPE_NAMES"]

TYPE_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "string", "bytes",
)


def type_name(where: str, de_type: Any) -> str:
    """A type given as a name, a NumPy dtype or a NumPy scalar type → one of :data:`TYPE_NAMES`."""
    if isinstance(de_type, str):
        name = de_type.lower()
        name = {"str": "string", "float": "float32", "int": "int32"}.get(name, name)
        if name in TYPE_NAMES:
            return name
    else:
        try:
            dtype = np.dtype(de_type)
        except TypeError:
            dtype = None
        if dtype is not None:
            if dtype.kind in "US":
                return "string"
            if dtype.name in TYPE_NAMES:
                return dtype.name
    raise ArgumentError(f"{where}: unknown column type {de_type!r}; types: {', '.join(TYPE_NAMES)}")


class Schema:
    """Column names, types and (optional) shapes, in order.

    Args:
        schema_file: a JSON schema file to load (MindSpore's layout), or None for an empty schema.

    Examples:
        >>> from minddata.dataset import Schema
        >>> schema = Schema()
        >>> schema.add_column("image", de_type="uint8", shape=[-1])
        >>> schema.add_column("label", de_type="int64", shape=[1])
        >>> [c["name"] for c in schema.columns]
        ['image', 'label']
    """

    def __init__(self, schema_file: str | os.PathLike | None = None):
        self.columns: list[dict[str, Any]] = []
        self.num_rows: int | None = None
        self.dataset_type = ""
        if schema_file is not None:
            from minddata.dataset import _storage

            # A path, a file:// URL, or an object (s3://, gs://, http(s)://; a RemotePath carries its
            # dataset's storage options).
            path = schema_file if isinstance(schema_file, str) else os.fspath(schema_file)
            try:
                with _storage.open_file(path, "r", encoding="utf-8") as f:
                    content = json.load(f)
            except (OSError, ValueError) as error:
                shown = _storage.split_url(path).shown if _storage.is_remote(path) else path  # type: ignore[union-attr]  # a remote path splits into an ObjectURL
                raise ArgumentError(f"Schema: can't load schema file {shown}: {error}") from None
            self.from_json(content)

    def add_column(self, name: str, de_type: Any, shape: Sequence[int] | None = None) -> None:
        """Append a column. ``shape`` (optional): sizes, with -1 for one size taken from the data."""
        if not isinstance(name, str) or not name:
            raise ArgumentError(f"Schema.add_column: `name` must be a non-empty string. Found: {name!r}")
        if any(c["name"] == name for c in self.columns):
            raise ArgumentError(f"Schema.add_column: column {name!r} is already in the schema.")
        kind = type_name(f"Schema.add_column({name!r})", de_type)
        if shape is not None:
            if isinstance(shape, (str, bytes)) or not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, (int, np.integer)) and not isinstance(d, bool) and (d >= 0 or d == -1) for d in shape
            ):
                raise ArgumentError(f"Schema.add_column({name!r}): `shape` must be a list of ints >= 0 or -1. Found: {shape!r}")
            if list(shape).count(-1) > 1:
                raise ArgumentError(f"Schema.add_column({name!r}): `shape` may hold at most one -1. Found: {list(shape)}")
            shape = [int(d) for d in shape]
        self.columns.append({"name": name, "type": kind, "shape": shape})

    def parse_columns(self, columns: Any) -> None:
        """Replace the columns with ``columns``: a dict ``{name: {"type": T, "shape": [...]}}`` or a
        list of dicts with a ``"name"`` each."""
        self.columns = []
        if isinstance(columns, dict):
            items = [(name, spec) for name, spec in columns.items()]
        elif isinstance(columns, list):
            items = [(spec.get("name") if isinstance(spec, dict) else None, spec) for spec in columns]
        else:
            raise ArgumentError(f"Schema: `columns` must be a dict or a list of dicts. Found: {columns!r}")
        for name, spec in items:
            if not isinstance(spec, dict) or "type" not in spec:
                raise ArgumentError(f"Schema: column {name!r} needs at least a 'type'. Found: {spec!r}")
            self.add_column(name, spec["type"], spec.get("shape"))

    def from_json(self, json_obj: dict[str, Any]) -> None:
        if not isinstance(json_obj, dict) or "columns" not in json_obj:
            raise ArgumentError(f"Schema: a schema JSON object needs 'columns'. Found keys: {list(json_obj) if isinstance(json_obj, dict) else json_obj!r}")
        self.parse_columns(json_obj["columns"])
        rows = json_obj.get("numRows")
        self.num_rows = int(rows) if rows else None
        self.dataset_type = json_obj.get("datasetType", "")

    def to_json(self) -> str:
        columns = {}
        for c in self.columns:
            spec: dict[str, Any] = {"type": c["type"]}
            if c["shape"] is not None:
                spec["rank"] = len(c["shape"])
                spec["shape"] = c["shape"]
            columns[c["name"]] = spec
        out: dict[str, Any] = {"columns": columns}
        if self.dataset_type:
            out["datasetType"] = self.dataset_type
        if self.num_rows:
            out["numRows"] = self.num_rows
        return json.dumps(out, indent=2)

    def __repr__(self) -> str:
        return self.to_json()


def as_schema(where: str, schema: Any, storage_options: Any = None) -> Schema | None:
    """``schema`` given as a :class:`Schema`, a path or URL of a schema file (an object read with
    ``storage_options``, a ``_storage.StorageOptions``), a JSON dict or ``{name: {"type", "shape"}}``."""
    if schema is None or isinstance(schema, Schema):
        return schema
    if isinstance(schema, (str, os.PathLike)):
        from minddata.dataset import _storage

        if storage_options is not None and _storage.is_remote(schema):
            return Schema(_storage.RemotePath(os.fspath(schema), storage_options))
        return Schema(schema)
    if isinstance(schema, dict):
        out = Schema()
        if "columns" in schema:
            out.from_json(schema)
        else:
            out.parse_columns(schema)
        return out
    raise ArgumentError(f"{where}: `schema` must be a Schema, a schema file path or a dict. Found: {schema!r}")
