"""``Dataset.save(file_type="mindrecord")``: one epoch of a pipeline as MindSpore's MindRecord files.

The files are MindSpore's format (written by :class:`~minddata.record.mindrecord_format.MindRecordWriter`,
which is ``minddata.mindrecord.FileWriter``), laid out by MindSpore 2.10's ``Dataset.save`` rules, so
MindSpore reads them and a script that saves a pipeline ports by changing its import:

- the schema comes from the first row. Each column's NumPy type maps to a MindRecord type: bool,
  int8, uint8, int16, uint16 and int32 to ``int32``; uint32, int64 and uint64 to ``int64``;
  float16 and float32 to ``float32``; float64 to ``float64``; a string to ``string``; a bytes
  value (a 0-d or one-element ``S`` array) to ``bytes``. A 0-d value is a scalar field (and an
  index field, unless it is bytes); an array is an array field of shape ``[-1, *rest]``: its first
  dimension may vary between rows, the others may not. A 1-D uint8 array (an encoded image) is
  therefore an ``int32`` array, as MindSpore stores it;
- strings and bytes with more than one element, and other NumPy types (uint64 values past int64's
  range, complex, objects), are refused with an error that names the column, its type and the fix;
- column names have ASCII punctuation replaced by ``_`` (MindRecord's field names are letters,
  digits and ``_``);
- ``num_files`` shards: ``file_name`` itself for one, else ``file_name0``, ``file_name1``, ...
  (not zero-padded, as MindSpore's save names them); row ``i`` goes to shard ``i % num_files``.
"""

from __future__ import annotations

import os
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from minddata.errors import ArgumentError, DataFormatError
from minddata.record._writer_checks import MAX_SHARDS
from minddata.record.mindrecord_format import DEFAULT_PAGE_SIZE, NUMPY_TO_MINDRECORD, MindRecordWriter

__all__ = ["MAX_SAVE_FILES", "mindrecord_save_paths", "save_mindrecord"]

# MindSpore's save takes 1 to 1000 files, the MindRecord writer's bound.
MAX_SAVE_FILES = MAX_SHARDS
_PUNCTUATION = str.maketrans({c: "_" for c in string.punctuation})
_FIELD_CHARS = set(string.ascii_letters + string.digits + "_")
_OTHER_FORMAT = 'or save with file_type="arrow" (minddata\'s Arrow record files store every NumPy type and shape)'


@dataclass(frozen=True)
class _Column:
    name: str  # the pipeline's column name
    field: str  # its MindRecord field name
    type: str  # MindRecord type
    shape: tuple[int, ...] | None  # None for a scalar field, else (-1, *rest)

    def schema(self) -> dict[str, Any]:
        return {"type": self.type} if self.shape is None else {"type": self.type, "shape": list(self.shape)}

    def describe(self) -> str:
        return self.type if self.shape is None else f"{self.type} array of shape {list(self.shape)}"


def mindrecord_save_paths(file_name: str, num_files: int) -> list[str]:
    """MindSpore's save names: ``file_name`` for one file, else ``file_name`` + the file's number."""
    if num_files == 1:
        return [file_name]
    return [f"{file_name}{i}" for i in range(num_files)]


def _field_names(columns: list[str]) -> dict[str, str]:
    """Each column's MindRecord field name (punctuation as ``_``), refusing names that still break
    MindRecord's rule and names that become the same field."""
    fields: dict[str, str] = {}
    for name in columns:
        field = name.translate(_PUNCTUATION)
        if not field or not set(field) <= _FIELD_CHARS:
            raise ArgumentError(
                f"save: column {name!r} can't be a MindRecord field: field names are ASCII letters, digits and _ "
                "(punctuation becomes _). Rename the column (Dataset.rename) before save."
            )
        twin = next((other for other, f in fields.items() if f == field), None)
        if twin is not None:
            raise ArgumentError(
                f"save: columns {twin!r} and {name!r} would both be the MindRecord field {field!r} (punctuation "
                "becomes _). Rename one of them (Dataset.rename) before save."
            )
        fields[name] = field
    return fields


def _refuse(name: str, value: np.ndarray, rule: str, fix: str) -> DataFormatError:
    return DataFormatError(
        f"save: column {name!r} holds {value.dtype} values of shape {list(value.shape)}; {rule}. {fix}, {_OTHER_FORMAT}."
    )


def _column_of(name: str, field: str, value: Any) -> _Column:
    """The MindRecord field for a column, from its first row's value."""
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind == "U":
        if array.ndim != 0:
            raise _refuse(name, array, "MindRecord stores one string per row, not arrays of strings",
                          "Join the strings or store them as separate columns")
        return _Column(name, field, "string", None)
    if kind == "S":
        if array.size != 1 or array.ndim > 1:
            raise _refuse(name, array, "MindRecord stores one bytes value per row, not arrays of them",
                          "Join the values or store them as separate columns")
        return _Column(name, field, "bytes", None)
    record_type = NUMPY_TO_MINDRECORD.get(array.dtype.name)
    if record_type is None:
        raise _refuse(
            name, array,
            "MindRecord stores bool, int8-int64, uint8-uint64, float16-float64, strings and bytes",
            "Cast the column to one of those first (e.g. transforms.TypeCast(mstype.float32) in a map)",
        )
    if array.ndim == 0:
        return _Column(name, field, record_type, None)
    return _Column(name, field, record_type, (-1, *array.shape[1:]))


def _stored(column: _Column, value: Any, row: int) -> Any:
    """Row ``row``'s value of ``column`` in the form the writer takes, or an error naming the row
    when it does not fit the column the first row set."""
    array = np.asarray(value)
    kind = array.dtype.kind
    if column.type == "string":
        if kind != "U" or array.ndim != 0:
            raise _mismatch(column, array, row)
        return str(array)
    if column.type == "bytes":
        if kind != "S" or array.size != 1 or array.ndim > 1:
            raise _mismatch(column, array, row)
        return array.tobytes()
    if NUMPY_TO_MINDRECORD.get(array.dtype.name) != column.type or (array.ndim == 0) != (column.shape is None):
        raise _mismatch(column, array, row)
    if column.shape is not None and (array.ndim != len(column.shape) or array.shape[1:] != column.shape[1:]):
        raise DataFormatError(
            f"save: row {row}, column {column.name!r} has shape {list(array.shape)}, but the first row made it a "
            f"{column.describe()}: MindRecord lets only the first dimension vary between rows. Pad or reshape the "
            f"column to a fixed shape (after the first dimension) in a map before save, {_OTHER_FORMAT}."
        )
    if array.dtype == np.uint64 and array.size and int(array.max()) > np.iinfo(np.int64).max:
        raise DataFormatError(
            f"save: row {row}, column {column.name!r} holds the uint64 value {int(array.max())}, past int64's range "
            f"(MindRecord stores uint64 as int64). Cast the column to a type that holds it (e.g. float64), {_OTHER_FORMAT}."
        )
    dtype = np.dtype(column.type)
    return array.astype(dtype) if column.shape is not None else dtype.type(array)


def _mismatch(column: _Column, array: np.ndarray, row: int) -> DataFormatError:
    return DataFormatError(
        f"save: row {row}, column {column.name!r} holds {array.dtype} values of shape {list(array.shape)}, but the "
        f"first row made it a MindRecord {column.describe()}; a column keeps one type and rank in every row. Cast "
        "the column to one type (transforms.TypeCast in a map) before save."
    )


def save_mindrecord(dataset: Any, file_name: str, num_files: int) -> None:
    """``Dataset.save(file_name, num_files, "mindrecord")``: see the module's rules."""
    paths = mindrecord_save_paths(os.path.abspath(file_name), num_files)
    folder = os.path.dirname(paths[0])
    if not os.path.isdir(folder):
        raise ArgumentError(f"save: the folder of `file_name` does not exist: {folder}. Create it first.")
    existing = [p for path in paths for p in (path, path + ".db") if os.path.exists(p)]
    if existing:
        raise ArgumentError(
            f"save: {len(existing)} file(s) of this MindRecord set already exist, e.g. {existing[0]}. Remove them or "
            "choose another file_name (save never overwrites, as MindSpore's)."
        )
    names = dataset.get_col_names()
    fields = _field_names(names)
    iterator = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
    writer: MindRecordWriter | None = None
    columns: list[_Column] = []
    try:
        for row_number, row in enumerate(iterator):
            if writer is None:
                columns = [_column_of(n, fields[n], v) for n, v in zip(names, row)]
                writer = MindRecordWriter._at_paths(paths)
                writer.add_schema({c.field: c.schema() for c in columns}, "mindrecord")
            stored = {c.field: _stored(c, v, row_number) for c, v in zip(columns, row)}
            _write(writer, row_number % len(paths), stored, row_number)
        if writer is None:
            raise DataFormatError(
                f"save: the dataset produced no rows, so there is no schema to write to {file_name} (MindRecord takes "
                "its schema from the first row)."
            )
        writer.commit()
    except BaseException:
        if writer is not None and writer._state == "open":
            writer.abort()
        raise
    finally:
        iterator.close()


def _write(writer: MindRecordWriter, shard: int, row: dict[str, Any], row_number: int) -> None:
    try:
        writer._write_shard(shard, [row])
    except ArgumentError as error:
        if "does not fit in a page" not in str(error):
            raise
        raise DataFormatError(
            f"save: row {row_number} needs more than a MindRecord page ({DEFAULT_PAGE_SIZE >> 20} MiB, "
            f"MindSpore's page size) for its arrays and bytes. Make the rows smaller (e.g. keep images encoded), "
            f"{_OTHER_FORMAT}."
        ) from error
