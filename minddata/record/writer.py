"""``ArrowRecordWriter``: rows → minddata's Arrow record files (Arrow IPC shards, each with a
``.meta.json`` index). MindSpore's own MindRecord files are written by
:class:`minddata.mindrecord.FileWriter`.

Crash safety: every file (data and metadata) is written under a temporary name
(``<file>.tmp-<pid>-<token>``, locked by the writer while it lives) and :meth:`ArrowRecordWriter.commit`
switches the whole set at once through a commit journal (see :mod:`minddata.record._files`): a
reader sees the complete old set or the complete new one, whatever moment a writer is killed at, and
the next open of the folder finishes an interrupted switch and removes the temporary files of
writers that are gone. An error while writing removes the writer's temporary files at once.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import uuid
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from minddata.errors import ArgumentError, DataFormatError, MinddataError
from minddata.record._files import (
    JOURNAL_FORMAT,
    JOURNAL_SUFFIX,
    CommitOnExit,
    TempFile,
    folder_lock,
    fsync_folder,
    new_token,
    sweep_folder,
)
from minddata.record._schema import SCALAR_TYPES, Field, arrow_schema, parse_schema
from minddata.record._writer_checks import (
    check_desc,
    check_index_list,
    check_open,
    check_row,
    normalize_value,
    refuse_existing,
    writer_target,
)

__all__ = ["ArrowRecordWriter", "META_SUFFIX", "FORMAT", "VERSION", "shard_paths", "batch_crcs", "save_dataset"]

META_SUFFIX = ".meta.json"
FORMAT = "minddata.record"
VERSION = 1
SET_ID_KEY = b"minddata.record.set_id"
# The record schema (with tensor shapes, which Arrow types do not carry), also stored in the data file.
SCHEMA_KEY = b"minddata.record.schema"

# Record batches: the unit of a checksum and of a lazy read. Small enough that verifying one to read
# one row is cheap; large enough that per-batch metadata is negligible.
BATCH_ROWS = 1024
BATCH_BYTES = 4 << 20

# The class name errors use, so a message names what the user called.
_NAME = "ArrowRecordWriter"


def shard_paths(file_name: str, shard_num: int) -> list[str]:
    """MindSpore's naming: ``file_name`` for one shard, else ``file_name0``, ``file_name1``, ..."""
    return [file_name] if shard_num == 1 else [f"{file_name}{i}" for i in range(shard_num)]


def batch_crcs(batch: pa.RecordBatch) -> dict[str, int]:
    """CRC-32 of each column's buffers (validity, offsets, values, children) in one record batch."""
    out = {}
    for name, column in zip(batch.schema.names, batch.columns):
        crc = 0
        for buf in column.buffers():
            if buf is not None and buf.size:
                crc = zlib.crc32(buf, crc)
        out[name] = crc
    return out


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _writing(final: str, temp: str) -> Iterator[None]:
    """Name the file in an OSError from Arrow or the OS (disk full, quota, I/O error)."""
    try:
        yield
    except OSError as error:
        if isinstance(error, MinddataError):
            raise
        code = error.errno or (errno.ENOSPC if "No space left" in str(error) else errno.EIO)
        raise OSError(
            code,
            f"{_NAME}: can't write record file {final} (temporary file {os.path.basename(temp)}): "
            f"{error.strerror or error}. Free space on that disk (or write elsewhere) and write the set again",
            final,
        ) from None  # the message holds the OS's (or Arrow's) reason


class ArrowRecordWriter(CommitOnExit):
    """Writes rows to minddata's Arrow record files, with the API of MindSpore's
    ``mindspore.mindrecord.FileWriter`` (MindSpore does not read these files: for MindSpore's
    MindRecord format use :class:`minddata.mindrecord.FileWriter`).

    Arrow record files take every NumPy number type and are read through a memory map;
    :class:`minddata.MindDataset` reads both formats.

    Args:
        file_name: the file to write; with ``shard_num > 1`` the shards are ``file_name0`` ...
            ``file_name{shard_num-1}`` (MindSpore's naming). Each data file gets a
            ``<file>.meta.json`` beside it (schema, row counts, checksums, index fields).
        shard_num: how many files to spread the rows over, round-robin (1 to 1000).
        overwrite: replace existing files of the same names; otherwise they are an error.

    Use :meth:`add_schema`, optionally :meth:`add_index`, then :meth:`write_raw_data` any number of
    times and :meth:`commit`. Nothing appears under the final names before ``commit`` (see the module
    docstring); as a context manager the writer commits on success and removes its temporary files
    on an exception.

    Examples:
        >>> import os, tempfile
        >>> from minddata.record import ArrowRecordWriter
        >>> path = os.path.join(tempfile.mkdtemp(), "demo.arrow")
        >>> writer = ArrowRecordWriter(path)
        >>> writer.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}}, "demo")
        0
        >>> writer.write_raw_data([{"label": 1, "data": b"abc"}, {"label": 2, "data": b"de"}])
        >>> writer.commit()
        >>> sorted(os.listdir(os.path.dirname(path)))
        ['demo.arrow', 'demo.arrow.meta.json']
    """

    def __init__(self, file_name: str | os.PathLike, shard_num: int = 1, overwrite: bool = False):
        path, shard_num = writer_target(_NAME, file_name, shard_num, overwrite)
        self.paths = shard_paths(path, shard_num)
        sweep_folder(os.path.dirname(path))  # a killed writer's leftovers must not count as existing files
        refuse_existing(_NAME, [p for d in self.paths for p in (d, d + META_SUFFIX)], overwrite)
        self.overwrite = overwrite
        self._token = new_token()
        self._temps: list[TempFile | None] = [None] * len(self.paths)
        self._tmp = [f"{p}.tmp-{self._token}" for p in self.paths]
        self._set_id = uuid.uuid4().hex
        self._fields: dict[str, Field] | None = None
        self._desc: str | None = None
        self._index: list[str] = []
        self._buffers: list[list[list[Any]]] = [[] for _ in self.paths]
        self._buffer_bytes = [0] * len(self.paths)
        self._sinks: list[Any] = [None] * len(self.paths)
        self._writers: list[Any] = [None] * len(self.paths)
        self._schema: pa.Schema | None = None
        self._rows = 0
        self._state = "open"

    # -- MindSpore API ---------------------------------------------------------------------------

    def add_schema(self, content: dict[str, dict[str, Any]], desc: str | None = None) -> int:
        """Set the schema: ``{field: {"type": T}}`` or ``{field: {"type": T, "shape": [...]}}``.

        Types: ``int32``, ``int64``, ``float32``, ``float64``, ``string``, ``bytes`` (MindSpore's),
        and ``bool``, ``int8``, ``int16``, ``uint8`` ... ``uint64``, ``float16``. A ``shape`` makes the
        field a tensor; ``-1`` marks a dimension that varies by row. Returns the schema id (0).
        """
        self._check_open("add_schema")
        if self._fields is not None:
            raise ArgumentError(f"{_NAME}.add_schema: the schema is already set; a record file has one schema.")
        fields = parse_schema(f"{_NAME}.add_schema", content)
        self._desc = check_desc(_NAME, desc)
        self._fields = fields
        return 0

    def add_index(self, index_fields: Sequence[str]) -> None:
        """Mark scalar fields (numbers or strings) as index fields, for :meth:`FileReader.find`."""
        self._check_open("add_index")
        if self._fields is None:
            raise ArgumentError(f"{_NAME}.add_index: call add_schema first; index fields must be schema fields.")
        for name in check_index_list(_NAME, index_fields):
            field = self._fields.get(name)
            if field is None:
                raise ArgumentError(
                    f"{_NAME}.add_index: {name!r} is not a schema field. Fields: {list(self._fields)}"
                )
            if field.type == "bytes" or field.shape is not None:
                raise ArgumentError(
                    f"{_NAME}.add_index: index field {name!r} must be a scalar number or a string; it is "
                    f"{field.describe()}."
                )
        self._index = list(dict.fromkeys([*self._index, *index_fields]))

    def write_raw_data(self, raw_data: Iterable[dict[str, Any]], parallel_writer: bool = False) -> None:
        """Append rows: each a dict with one value per schema field.

        ``bytes`` fields take ``bytes`` (or a uint8 array); ``string`` fields ``str``; scalars a number;
        tensors an array (or nested list) of the field's shape. Values are cast to the field's type
        when NumPy can do so without changing kind (float64 → float32, not float → int) and the value
        fits (an integer out of range, or a float that would become inf, is an error). A bad row
        raises naming the row and the field, and aborts the writer: its temporary files are removed
        at once (as the ``with`` block does), so nothing is left behind when the writer is dropped.
        """
        self._check_open("write_raw_data")
        if self._fields is None:
            raise ArgumentError(f"{_NAME}.write_raw_data: call add_schema before writing rows.")
        if isinstance(raw_data, dict):
            raise ArgumentError(f"{_NAME}.write_raw_data: `raw_data` must be a list of dicts (one per row), not one dict.")
        try:
            self._write_rows(raw_data)
        except BaseException:
            self.abort()
            raise

    def _write_shard(self, shard: int, raw_data: Iterable[dict[str, Any]]) -> None:
        """Append rows to one shard (converters that lay out the shards themselves, so that a set
        reads back in their order)."""
        self._check_open("write_raw_data")
        try:
            self._write_rows(raw_data, shard)
        except BaseException:
            self.abort()
            raise

    def _write_rows(self, raw_data: Iterable[dict[str, Any]], to_shard: int | None = None) -> None:
        fields = list(self._fields.values())  # type: ignore[union-attr]  # rows are written after the schema
        rows = []
        for k, row in enumerate(raw_data):
            check_row(_NAME, row, k, self._fields)  # type: ignore[arg-type]  # rows are written after the schema
            rows.append([normalize_value(_NAME, f, row[f.name], k) for f in fields])
        n = len(self.paths)
        for values in rows:
            shard = self._rows % n if to_shard is None else to_shard
            self._rows += 1
            self._buffers[shard].append(values)
            self._buffer_bytes[shard] += sum(getattr(v, "nbytes", None) or (len(v) if isinstance(v, (bytes, str)) else 8) for v in values)
            if len(self._buffers[shard]) >= BATCH_ROWS or self._buffer_bytes[shard] >= BATCH_BYTES:
                self._flush(shard)

    def commit(self) -> None:
        """Write the buffered rows and switch the whole set into place at once.

        Every file is written and fsynced under its temporary name first; then one rename (of the
        commit journal) commits, and the renames onto the final names follow (finished by the next
        open of the folder if this process dies first). Until the commit point, files of an old set
        of the same names stay as they were.
        """
        self._check_open("commit")
        if self._fields is None:
            raise ArgumentError(f"{_NAME}.commit: no schema was added; call add_schema (and write rows) first.")
        folder = os.path.dirname(self.paths[0])
        journal_path = self.paths[0] + JOURNAL_SUFFIX
        switched = False
        meta_temps: list[TempFile] = []
        journal: TempFile | None = None
        try:
            for shard in range(len(self.paths)):
                self._flush(shard)
                self._open(shard)
                with _writing(self.paths[shard], self._tmp[shard]):
                    self._writers[shard].close()
                    self._sinks[shard].close()
                    _fsync(self._tmp[shard])
            for shard, p in enumerate(self.paths):
                meta = self._meta(shard)
                temp = TempFile(p + META_SUFFIX, self._token)
                meta_temps.append(temp)
                with _writing(temp.final, temp.path):
                    temp.write_json(meta)
            temps = [t for t in self._temps if t is not None] + meta_temps
            journal = TempFile(journal_path, self._token)
            with _writing(journal_path, journal.path):
                journal.write_json({"format": JOURNAL_FORMAT, "set_id": self._set_id,
                                    "temporary_files": [os.path.basename(t.path) for t in temps]})
            with folder_lock(folder, exclusive=True), _writing(journal_path, journal.path):
                os.replace(journal.path, journal_path)
                fsync_folder(folder)
                switched = True  # the commit point: from here on, the new set is the set
                for temp in temps:
                    os.replace(temp.path, temp.final)
                fsync_folder(folder)
                os.remove(journal_path)
                fsync_folder(folder)
        except BaseException:
            if not switched:
                for temp in meta_temps:
                    temp.remove()
                if journal is not None:
                    journal.remove()
                self.abort()
                raise
            # Past the commit point the temporary files are the committed set: keep them, and let the
            # next open of the folder finish the renames (our locks go when the files close).
            self._release()
            self._state = "failed"
            raise
        finally:
            for temp in meta_temps:
                temp.release()
            if journal is not None:
                journal.release()
        self._release()
        self._state = "committed"

    def abort(self) -> None:
        """Drop everything written so far and remove the temporary files."""
        for shard in range(len(self.paths)):
            try:
                if self._writers[shard] is not None:
                    self._writers[shard].close()
            except Exception:  # noqa: BLE001 - closing a half-written file may fail; it is removed anyway
                pass
            try:
                if self._sinks[shard] is not None:
                    self._sinks[shard].close()
            except Exception:  # noqa: BLE001
                pass
            self._writers[shard] = self._sinks[shard] = None
            temp = self._temps[shard]
            if temp is not None:
                temp.remove()
                self._temps[shard] = None
        self._state = "aborted"

    @property
    def num_rows(self) -> int:
        """Rows written so far."""
        return self._rows

    # -- internals -------------------------------------------------------------------------------

    def _check_open(self, call: str) -> None:
        check_open(_NAME, call, self._state)

    def _release(self) -> None:
        for temp in self._temps:
            if temp is not None:
                temp.release()

    def _open(self, shard: int) -> None:
        if self._writers[shard] is None:
            if self._schema is None:
                schema_json = json.dumps({name: f.to_json() for name, f in self._fields.items()})  # type: ignore[union-attr]  # files open after the schema
                self._schema = arrow_schema(
                    self._fields, {SET_ID_KEY.decode(): self._set_id, SCHEMA_KEY.decode(): schema_json}  # type: ignore[arg-type]  # files open after the schema
                )
            with _writing(self.paths[shard], self._tmp[shard]):
                self._temps[shard] = TempFile(self.paths[shard], self._token)
                self._sinks[shard] = pa.OSFile(self._tmp[shard], "wb")
                self._writers[shard] = pa.ipc.new_file(self._sinks[shard], self._schema)

    def _flush(self, shard: int) -> None:
        rows = self._buffers[shard]
        if not rows:
            return
        self._open(shard)
        columns = []
        for i, field in enumerate(self._fields.values()):  # type: ignore[union-attr]  # rows are written after the schema
            columns.extend(_to_arrow(field, [r[i] for r in rows]))
        with _writing(self.paths[shard], self._tmp[shard]):
            self._writers[shard].write_batch(pa.RecordBatch.from_arrays(columns, schema=self._schema))
        self._buffers[shard] = []
        self._buffer_bytes[shard] = 0

    def _meta(self, shard: int) -> dict[str, Any]:
        tmp = self._tmp[shard]
        batches = []
        with pa.OSFile(tmp, "r") as source:
            reader = pa.ipc.open_file(source)
            for b in range(reader.num_record_batches):
                batch = reader.get_batch(b)
                batches.append({"rows": batch.num_rows, "crc32": batch_crcs(batch)})
        return {
            "format": FORMAT,
            "version": VERSION,
            "set_id": self._set_id,
            "shard_id": shard,
            "shard_num": len(self.paths),
            "shards": [os.path.basename(p) for p in self.paths],
            "schema": {name: f.to_json() for name, f in self._fields.items()},  # type: ignore[union-attr]  # a committed writer has its schema
            "desc": self._desc,
            "index_fields": self._index,
            "num_rows": sum(b["rows"] for b in batches),
            "data_bytes": os.path.getsize(tmp),
            "batches": batches,
        }


def _offsets(lengths: list[int]) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _to_arrow(field: Field, values: list[Any]) -> list[pa.Array]:
    n = len(values)
    if field.type == "bytes":
        offsets = _offsets([len(v) if isinstance(v, bytes) else v.size for v in values])
        data = b"".join(v if isinstance(v, bytes) else memoryview(v) for v in values)
        return [pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])]
    if field.type == "string":
        return [pa.array(values, type=pa.large_string())]
    dtype = field.dtype
    if field.shape is None:
        return [pa.array(np.asarray(values, dtype=dtype))]
    flat = np.concatenate([v.reshape(-1) for v in values]) if values else np.zeros(0, dtype)
    flat_array = pa.array(flat)
    if not field.variable:
        return [pa.FixedSizeListArray.from_arrays(flat_array, field.size)]
    offsets = _offsets([v.size for v in values])
    shapes = np.asarray([v.shape for v in values], dtype=np.int32).reshape(-1)
    return [
        pa.LargeListArray.from_arrays(pa.array(offsets), flat_array),
        pa.FixedSizeListArray.from_arrays(pa.array(shapes), len(field.shape)),
    ]


# -- Dataset.save -------------------------------------------------------------------------------

_INFER_ROWS = 256


def _infer_field(name: str, samples: list[Any]) -> dict[str, Any]:
    first = np.asarray(samples[0])
    kind = first.dtype.kind
    if kind in "US" and first.ndim == 0:
        return {"type": "string" if kind == "U" else "bytes"}
    if kind in "USO":
        raise DataFormatError(
            f"save: column {name!r} holds {first.dtype} values of shape {first.shape}; record files store strings "
            "one per row (0-d) and numbers as tensors. Convert the column in a map before save."
        )
    if first.dtype == np.uint8 and first.ndim == 1:
        return {"type": "bytes"}
    type_name = first.dtype.name
    if type_name not in SCALAR_TYPES:
        raise DataFormatError(f"save: column {name!r} has dtype {first.dtype}, which record files do not store.")
    if first.ndim == 0:
        return {"type": type_name}
    shapes = [np.shape(s) for s in samples]
    if any(len(s) != first.ndim for s in shapes):
        raise DataFormatError(
            f"save: column {name!r} has rows of different ranks ({sorted(set(shapes))[:4]}); record tensors need "
            "one rank per column."
        )
    shape = [d if all(s[i] == d for s in shapes) else -1 for i, d in enumerate(first.shape)]
    return {"type": type_name, "shape": shape}


def _bytes_value(value: Any) -> Any:
    """A bytes value as the pipeline carries it (a 0-d or one-element ``S`` array, as MindDataset
    gives a bytes field) as ``bytes``, so it is stored as a bytes field; other values unchanged."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "S" and value.size == 1 and value.ndim <= 1:
        return value.tobytes()
    return value


def save_dataset(dataset: Any, file_name: str, num_files: int) -> None:
    """``Dataset.save``: one epoch of ``dataset`` into ``num_files`` record shards."""
    names = dataset.get_col_names()
    writer = ArrowRecordWriter(file_name, shard_num=num_files, overwrite=False)
    iterator = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
    pending: list[dict[str, Any]] = []
    schema_set = False
    try:
        for row in iterator:
            pending.append({n: _bytes_value(v) for n, v in zip(names, row)})
            if not schema_set and len(pending) >= _INFER_ROWS:
                writer.add_schema({n: _infer_field(n, [r[n] for r in pending]) for n in names}, "Dataset.save")
                schema_set = True
            if schema_set and len(pending) >= _INFER_ROWS:
                writer.write_raw_data(pending)
                pending = []
        if not schema_set:
            if not pending:
                raise DataFormatError(f"save: the dataset produced no rows, so there is nothing to write to {file_name}.")
            writer.add_schema({n: _infer_field(n, [r[n] for r in pending]) for n in names}, "Dataset.save")
        if pending:
            writer.write_raw_data(pending)
        writer.commit()
    except BaseException:
        if writer._state == "open":
            writer.abort()
        raise
    finally:
        iterator.close()
