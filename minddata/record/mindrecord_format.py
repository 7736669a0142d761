"""MindSpore's own MindRecord format: the shard files and their SQLite index, read and written.

A MindRecord set is one or more shard files, each with an index database ``<shard>.db`` beside it
(as MindSpore's ``mindspore/ccsrc/minddata/mindrecord`` reader and writer define them):

- the shard file starts with a header region of ``header_size`` bytes: an 8-byte little-endian
  length, then that many bytes of JSON (the schema, the blob fields, the index fields, every page's
  description, the names of the set's shards, the format version);
- pages of ``page_size`` bytes follow, page ``p`` at ``header_size + p * page_size``; the last one
  is cut to its used length. A *blob page* (one row group) holds each row's blob fields (bytes and
  arrays), a *raw page* each row's other fields as a MessagePack map; every row entry starts with
  its length (8 bytes, little-endian);
- a blob with several fields is each field's length (8 bytes, big-endian) then its bytes; a blob of
  one field is just its bytes. From version 3.0 int32/int64 array fields are stored compressed when
  the schema has any: a 4-byte big-endian count, a bitmap of 2 bits per value (its width: 1, 2, 4 or
  8 bytes) and the values, little-endian, each at its width;
- the index database's ``INDEXES`` table gives every row's raw and blob page and byte range, plus
  the index fields' values; ``SHARD_NAME`` names the shard it belongs to.

Rows come back shard by shard, each in write order; ``FileWriter`` splits each ``write_raw_data``
call into contiguous blocks across the shards, as MindSpore does, so a single call reads back in
write order. A damaged or truncated file is reported with its name, the row or page and the rule
broken; file contents are never echoed.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import sqlite3
import struct
import tempfile
import threading
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

import msgpack
import numpy as np

from minddata.dataset import _storage
from minddata.errors import ArgumentError, DataFormatError
from minddata.record._files import CommitOnExit
from minddata.record._schema import Field, parse_schema, select_columns
from minddata.record._writer_checks import (
    MAX_SHARDS,
    bad_value,
    check_desc,
    check_index_list,
    check_open,
    check_row,
    normalize_value,
    refuse_existing,
    writer_target,
)

__all__ = [
    "MINDRECORD_TYPES",
    "NUMPY_TO_MINDRECORD",
    "MindRecordSet",
    "MindRecordWriter",
    "is_mindrecord",
    "read_as_mindrecord",
    "mindrecord_shard_paths",
    "read_mindrecord_header",
]

VERSION = "3.0"
DEFAULT_HEADER_SIZE = 1 << 24
DEFAULT_PAGE_SIZE = 1 << 25
MIN_HEADER_SIZE, MAX_HEADER_SIZE = 16 << 10, 128 << 20
MIN_PAGE_SIZE, MAX_PAGE_SIZE = 32 << 10, 256 << 20
_LEN = struct.Struct("<Q")
_BIG_LEN = struct.Struct(">Q")
# MindSpore's record types; arrays are int32/int64/float32/float64 with a shape.
MINDRECORD_TYPES = ("int32", "int64", "float32", "float64", "string", "bytes")
# The MindRecord type each NumPy number type is stored as (MindSpore 2.10's casts in Dataset.save):
# the types MindRecord lacks are widened.
NUMPY_TO_MINDRECORD = {
    "bool": "int32",
    "int8": "int32",
    "uint8": "int32",
    "int16": "int32",
    "uint16": "int32",
    "int32": "int32",
    "uint32": "int64",
    "int64": "int64",
    "uint64": "int64",
    "float16": "float32",
    "float32": "float32",
    "float64": "float64",
}
_ARRAY_TYPES = ("int32", "int64", "float32", "float64")
_FIELD_NAME = re.compile(r"^[0-9A-Za-z_]+$")
# The writer's public name (minddata.mindrecord.FileWriter, as MindSpore's), which its errors use.
_NAME = "FileWriter"
_SQL_TYPE = {"int32": "INTEGER", "int64": "INTEGER", "float32": "REAL", "float64": "REAL", "string": "TEXT"}
_INDEX_COLUMNS = (
    "ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, ROW_GROUP_ID, PAGE_ID_BLOB, "
    "PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END"
)
# Bytes stored for a row of a schema without blob fields (MindSpore writes the same placeholder).
_EMPTY_BLOB = b"\x00\x00\x00\x00"


def is_mindrecord(path: str | os.PathLike) -> bool:
    """Whether ``path`` starts like a MindRecord shard file (by content, not by name).

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"ARROW1")
        >>> is_mindrecord(path)
        False
    """
    try:
        with _storage.open_file(os.fspath(path), "rb", block=32) as f:
            head = f.read(32)
    except OSError:
        return False
    if len(head) < 10 or head[8:10] != b'{"':
        return False
    (length,) = _LEN.unpack_from(head)
    return 2 <= length <= MAX_HEADER_SIZE


def read_as_mindrecord(path: str | os.PathLike) -> bool:
    """Whether a reader should treat ``path`` as MindRecord: it starts like one, or it has a ``.db``
    index and no Arrow metadata beside it (a damaged MindRecord shard, reported as such)."""
    path = os.fspath(path)
    if is_mindrecord(path):
        return True
    if _storage.is_remote(path):
        return False
    from minddata.record.writer import META_SUFFIX

    return os.path.isfile(path + ".db") and not os.path.exists(path + META_SUFFIX)


def mindrecord_shard_paths(file_name: str, shard_num: int) -> list[str]:
    """MindSpore's names: ``file_name`` for one shard, else the shard number zero-padded to the width
    of ``shard_num - 1`` appended (``x0`` ... ``x9``, ``x00`` ... ``x11``)."""
    if shard_num == 1:
        return [file_name]
    width = len(str(shard_num - 1))
    return [f"{file_name}{str(i).rjust(width, '0')}" for i in range(shard_num)]


def read_mindrecord_header(path: str) -> dict[str, Any]:
    """The JSON header of shard file ``path``, checked for the keys and types a reader relies on."""
    try:
        size = _storage.file_size(path)
        with _storage.open_file(path, "rb", block=64 << 10) as f:
            head = f.read(8)
            if len(head) < 8:
                raise _bad_file(path, f"it is {size} bytes, too short for a MindRecord header")
            (length,) = _LEN.unpack(head)
            if not 2 <= length <= min(MAX_HEADER_SIZE, size - 8):
                raise _bad_file(path, f"its header length field says {length} bytes, but the file has {size} bytes")
            text = f.read(length)
    except OSError as error:
        raise DataFormatError(f"MindRecord file {path}: can't read it: {error.strerror or error}", path=path) from None
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _bad_file(path, "its header is not valid JSON (truncated or overwritten)") from None
    _check_header(path, header, size, length)
    return header


# What MindSpore 2.10 appends to a shard it wrote under mindspore.mindrecord.set_enc_key, after
# the encrypted blocks of the whole file.
_ENCRYPTED_FLAG = b"ENCRYPT"


def refuse_mindspore_encrypted(where: str, path: str | os.PathLike) -> None:
    """A :class:`DataFormatError` naming ``path`` and ``set_enc_key`` when MindSpore encrypted it (it
    ends as such a file does); nothing otherwise, or when its end cannot be read (other checks say why)."""
    path = os.fspath(path)
    try:
        size = _storage.file_size(path)
        if size < len(_ENCRYPTED_FLAG):
            return
        with _storage.open_file(path, "rb", block=16) as f:
            f.seek(size - len(_ENCRYPTED_FLAG))
            encrypted = f.read(len(_ENCRYPTED_FLAG)) == _ENCRYPTED_FLAG
    except (OSError, ValueError):
        return
    if encrypted:
        raise DataFormatError(
            f"{where}: MindRecord file {path}: it was encrypted by MindSpore (mindspore.mindrecord.set_enc_key); "
            "minddata reads plain MindRecord files only. Write the set again with MindSpore after "
            "set_enc_key(None), or with minddata's FileWriter.",
            path=path,
        )


def _bad_file(path: str, what: str) -> DataFormatError:
    return DataFormatError(
        f"MindRecord file {path}: {what}. The file is damaged or not a MindRecord shard; rewrite it with "
        "FileWriter or copy it again.",
        path=path,
    )


def _check_header(path: str, header: Any, size: int, length: int) -> None:
    if not isinstance(header, dict):
        raise _bad_file(path, "its header is not a JSON object")
    if "page" in header and header["page"] is None:  # a shard without rows (MindSpore writes null)
        header["page"] = []
    needs = {
        "header_size": int, "page_size": int, "page": list, "schema": list, "shard_addresses": list,
        "shard_id": int, "version": str,
    }
    for key, kind in needs.items():
        if not isinstance(header.get(key), kind) or isinstance(header.get(key), bool):
            raise _bad_file(path, f"its header lacks {key!r} (a {kind.__name__})")
    if not length + 8 <= header["header_size"] <= MAX_HEADER_SIZE:
        raise _bad_file(path, f"its header_size {header['header_size']} is out of range for a {length}-byte header")
    if not 1 <= header["page_size"] <= MAX_PAGE_SIZE:
        raise _bad_file(path, f"its page_size {header['page_size']} is out of range [1, {MAX_PAGE_SIZE}]")
    if size < header["header_size"] and header["page"]:
        raise _bad_file(path, f"it is truncated: {size} bytes, shorter than its header region ({header['header_size']} bytes)")
    if len(header["schema"]) != 1 or not isinstance(header["schema"][0], dict):
        raise _bad_file(path, f"its header holds {len(header['schema'])} schemas; MindRecord files hold one")
    schema = header["schema"][0]
    if not isinstance(schema.get("schema"), dict) or not isinstance(schema.get("blob_fields"), list):
        raise _bad_file(path, "its schema entry lacks 'schema' or 'blob_fields'")
    addresses = header["shard_addresses"]
    if not addresses or not all(isinstance(a, str) and a for a in addresses) or len(addresses) > MAX_SHARDS:
        raise _bad_file(path, "its shard_addresses must be 1 to 1000 file names")
    if not 0 <= header["shard_id"] < len(addresses):
        raise _bad_file(path, f"its shard_id {header['shard_id']} is not one of its {len(addresses)} shards")
    for k, page in enumerate(header["page"]):
        if not isinstance(page, dict) or not all(
            isinstance(page.get(key), int) and not isinstance(page.get(key), bool) and page[key] >= 0
            for key in ("page_id", "page_size", "page_type_id", "start_row_id", "end_row_id")
        ) or page.get("page_type") not in ("BLOB_DATA", "RAW_DATA") or page["page_id"] != k:
            raise _bad_file(path, f"page entry {k} of its header is malformed")
        if page["page_size"] > header["page_size"]:
            raise _bad_file(path, f"page {page['page_id']} claims {page['page_size']} bytes, more than the page size {header['page_size']}")


def _fields_of(path: str, schema_entry: dict[str, Any]) -> dict[str, Field]:
    """MindSpore schema (``{"type": T[, "shape": [...]]}``) -> :class:`Field`, sorted by name as MindSpore
    reports columns."""
    fields = {}
    for name in sorted(schema_entry["schema"]):
        spec = schema_entry["schema"][name]
        kind = spec.get("type") if isinstance(spec, dict) else None
        shape = spec.get("shape") if isinstance(spec, dict) else None
        if kind not in MINDRECORD_TYPES or (shape is not None and (
            kind not in _ARRAY_TYPES or not isinstance(shape, list) or not shape
            or not all(isinstance(d, int) and (d > 0 or d == -1) for d in shape)
        )):
            raise _bad_file(path, f"schema field {name!r} has an unsupported type or shape")
        fields[name] = Field(name, kind, tuple(shape) if shape is not None else None)
    blob = schema_entry["blob_fields"]
    expected = {n for n, f in fields.items() if f.type == "bytes" or f.shape is not None}
    if set(blob) != expected or len(blob) != len(set(blob)):
        raise _bad_file(path, "its blob_fields do not match its schema (bytes and array fields are blob fields)")
    return fields


# -- reading ------------------------------------------------------------------------------------


def resolve_mindrecord_files(where: str, dataset_files: Any) -> list[str]:
    """One path reads the whole set its header names (resolved in its folder, which the names may not
    leave); a list reads exactly the files listed (as MindSpore)."""
    dataset_files = _storage.local_paths(dataset_files)
    if isinstance(dataset_files, (str, os.PathLike)) and _storage.is_remote(dataset_files):
        first = dataset_files
        header = read_mindrecord_header(first)
        folder = first[: first.rfind("/") + 1]
        # The header names the writer's paths; a set in object storage is read from the first file's prefix.
        files = [_storage.RemotePath(folder + os.path.basename(str(name)), first.options)  # type: ignore[union-attr]  # a remote path (is_remote above) carries its options
                 for name in header["shard_addresses"]]
        if first not in files:
            raise DataFormatError(
                f"{where}: MindRecord file {first} is not among the shards its header names "
                f"({[os.path.basename(str(f)) for f in files]}); it was renamed. Restore its name or pass the list "
                "of shard files.",
                path=first,
            )
        return files
    if isinstance(dataset_files, (list, tuple)) and any(_storage.is_remote(f) for f in dataset_files):
        from minddata.record.reader import refuse_duplicates

        refuse_duplicates(where, dataset_files)
        return list(dataset_files)
    if isinstance(dataset_files, (str, os.PathLike)):
        first = os.path.abspath(os.fspath(dataset_files))
        header = read_mindrecord_header(first)
        folder = os.path.dirname(first)
        files = []
        for k, name in enumerate(header["shard_addresses"]):
            target = os.path.normpath(name if os.path.isabs(name) else os.path.join(folder, name))
            if os.path.commonpath([folder, target]) != folder or target == folder:
                raise DataFormatError(
                    f"{where}: MindRecord file {first}: entry {k} of its header's shard_addresses points outside "
                    f"its folder ({folder}); a set's shards are read only from the folder of the file given. "
                    "Pass the list of shard files instead of one file.",
                    path=first,
                )
            files.append(target)
        if first not in files:
            raise DataFormatError(
                f"{where}: MindRecord file {first} is not among the shards its header names "
                f"({[os.path.basename(f) for f in files]}); it was renamed. Restore its name or pass the list "
                "of shard files.",
                path=first,
            )
        return files
    from minddata.record.reader import listed_files

    return listed_files(where, dataset_files)


class MindRecordShard:
    """One shard file: header and index read at construction, data memory-mapped on first use."""

    def __init__(self, path: str, header: dict[str, Any]):
        self.path = path
        self.header = header
        self.header_size = int(header["header_size"])
        self.page_size = int(header["page_size"])
        schema = header["schema"][0]
        self.fields = _fields_of(path, schema)
        self.blob_fields: list[str] = list(schema["blob_fields"])
        has_int_array = any(f.shape is not None and f.type in ("int32", "int64") for f in self.fields.values())
        self.compressed = has_int_array and _version_at_least(header["version"], VERSION)
        self.index_fields = [e.get("index_field") for e in header.get("index_fields") or [] if isinstance(e, dict)]
        self.remote = _storage.is_remote(path)
        self.size = _storage.file_size(path)
        self.locations = self._read_index()
        self.num_rows = len(self.locations)
        self._lock = threading.Lock()
        self._fd: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(_lock=None, _fd=None)
        return state

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _read_index(self) -> np.ndarray:
        """Every row's ``(raw page, raw start, raw end, blob page, blob start, blob end)``, checked
        against the header's pages and the file's size."""
        path, db = self.path, self.path + ".db"
        if self.remote:
            with tempfile.TemporaryDirectory(prefix="minddata-mindrecord-") as folder:
                local = os.path.join(folder, "index.db")
                db_url = _storage.RemotePath(db, path.options)  # type: ignore[attr-defined]  # a remote file's path carries its options
                store, url = _storage.store_of(db_url)
                try:
                    data = store.read(url)
                except _storage.StorageError as error:
                    raise DataFormatError(
                        f"MindRecord file {path}: can't read its index file {db}: {error} MindRecord shards are read "
                        "with their .db index beside them.",
                        path=path,
                    ) from None
                with open(local, "wb") as f:
                    f.write(data)
                return self._read_index_from(local, os.path.basename(db))
        if not os.path.isfile(db):
            raise DataFormatError(
                f"MindRecord file {path}: its index file {os.path.basename(db)} is missing. MindRecord shards are "
                "read with their .db index; copy it beside the shard (a writer that did not reach commit() "
                "leaves none).",
                path=path,
            )
        return self._read_index_from(db, os.path.basename(db))

    def _read_index_from(self, db: str, db_name: str) -> np.ndarray:
        path = self.path
        uri = "file:" + urllib.parse.quote(db) + "?mode=ro&immutable=1"
        try:
            connection = sqlite3.connect(uri, uri=True)
            try:
                names = connection.execute("SELECT NAME FROM SHARD_NAME").fetchall()
                cursor = connection.execute(f"SELECT {_INDEX_COLUMNS} FROM INDEXES ORDER BY ROW_ID")
                chunks = []
                while batch := cursor.fetchmany(1 << 16):  # NumPy chunks: millions of rows stay compact
                    try:
                        chunks.append(np.asarray(batch, dtype=np.int64).reshape(len(batch), 8))
                    except (ValueError, TypeError, OverflowError):
                        raise self._bad_index("holds non-integer locations") from None
            finally:
                connection.close()
        except (sqlite3.Error, UnicodeDecodeError) as error:
            reason = "malformed text" if isinstance(error, UnicodeDecodeError) else f"{type(error).__name__}: {error}"
            raise DataFormatError(
                f"MindRecord file {path}: its index file {db_name} is not a readable MindRecord "
                f"index ({reason}). Rewrite the set, or copy the .db file again.",
                path=path,
            ) from None
        if not names or names[0][0] != os.path.basename(path):
            raise DataFormatError(
                f"MindRecord file {path}: its index file {db_name} belongs to another shard (its "
                "SHARD_NAME differs from the file's name). Shard files can't be renamed; restore the original "
                "names.",
                path=path,
            )
        table = np.concatenate(chunks) if chunks else np.zeros((0, 8), np.int64)
        if len(table) > 1:  # an array-valued index field repeats a row once per value
            table = table[np.concatenate([[True], table[1:, 0] != table[:-1, 0]])]
        if len(table) and not np.array_equal(table[:, 0], np.arange(len(table))):
            raise self._bad_index("its ROW_ID values are not 0, 1, 2, ... (a row is missing or repeated)")
        pages = {p["page_id"]: p for p in self.header["page"]}
        blob_rows = sum(p["end_row_id"] - p["start_row_id"] for p in self.header["page"] if p["page_type"] == "BLOB_DATA")
        if blob_rows != len(table):
            raise self._bad_index(f"lists {len(table)} rows, but the shard's blob pages hold {blob_rows}")
        locations = table[:, [1, 2, 3, 5, 6, 7]]
        for kind, column in (("RAW_DATA", 0), ("BLOB_DATA", 3)):
            for page_id in np.unique(locations[:, column]).tolist():
                page = pages.get(page_id)
                if page is None or page["page_type"] != kind:
                    raise self._bad_index(f"points rows at page {page_id}, which the header does not list as a {kind} page")
            starts, ends = locations[:, column + 1], locations[:, column + 2]
            page_used = np.zeros(max(pages, default=0) + 1, np.int64)
            for page_id, page in pages.items():
                page_used[page_id] = page["page_size"]
            used = page_used[locations[:, column]]
            bad = np.nonzero((starts < 0) | (ends < starts + 8) | (ends > used))[0]
            if bad.size:
                row = int(bad[0])
                raise self._bad_index(f"gives row {row} a {kind} byte range [{int(starts[row])}, {int(ends[row])}) outside its page")
        if len(locations):
            last = self.header_size + locations[:, [0, 3]] * self.page_size + locations[:, [2, 5]]
            if int(last.max()) > self.size:
                raise DataFormatError(
                    f"MindRecord file {path} is truncated: {self.size} bytes, but its rows reach byte {int(last.max())}. "
                    "Copy the file again or rewrite the set.",
                    path=path,
                )
        return locations

    def _bad_index(self, what: str) -> DataFormatError:
        return DataFormatError(
            f"MindRecord file {self.path}: its index {os.path.basename(self.path)}.db {what}; the index or the "
            "file is damaged. Rewrite the set.",
            path=self.path,
        )

    def _descriptor(self) -> int:
        if self._fd is None:
            with self._lock:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        return self._fd

    def span(self, row: int, blob: bool) -> tuple[int, int]:
        """The file's byte range ``[begin, end)`` of row ``row``'s raw or blob entry."""
        page, start, end = self.locations[row, 3:6] if blob else self.locations[row, 0:3]
        begin = self.header_size + int(page) * self.page_size + int(start)
        return begin, begin + int(end - start)

    def entry(self, row: int, blob: bool, ready: dict | None = None) -> memoryview:
        """Row ``row``'s raw (``blob=False``) or blob bytes, without their length prefix.

        Read with ``pread``, not through a map: a file truncated under the reader gives a short read,
        reported here, where a map would fault (SIGBUS). A shard in object storage: one ranged GET, or
        the bytes ``ready`` holds (read together with the chunk's other rows).
        """
        begin, stop = self.span(row, blob)
        want = stop - begin
        if self.remote:
            data = ready.pop((row, blob), None) if ready is not None else None
            if data is None:
                store, url = _storage.store_of(self.path)
                data = store.read(url, begin, stop)
            data = memoryview(data)
        else:
            data = memoryview(os.pread(self._descriptor(), want, begin))
        if len(data) < want:
            raise DataFormatError(
                f"MindRecord file {self.path} shrank while being read: row {row} needs bytes {begin} to "
                f"{begin + want}, the file now ends at {os.fstat(self._descriptor()).st_size}. It was truncated or "
                "rewritten in place; copy it again or rewrite the set, replacing files by rename.",
                path=self.path,
            )
        (length,) = _LEN.unpack_from(data)
        if length != len(data) - 8:
            raise DataFormatError(
                f"MindRecord file {self.path}, row {row}: its {'blob' if blob else 'raw'} entry says {length} bytes "
                f"but the index gives it {len(data) - 8}; the file is corrupted. Rewrite the set.",
                path=self.path,
            )
        return data[8:]

    def raw(self, row: int, ready: dict | None = None) -> dict[str, Any]:
        data = self.entry(row, False, ready)
        try:
            value = msgpack.unpackb(data, raw=False, strict_map_key=False)
        except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
            value = None
        if not isinstance(value, dict):
            raise DataFormatError(
                f"MindRecord file {self.path}, row {row}: its raw fields are not a valid MessagePack map; the file "
                "is corrupted. Rewrite the set.",
                path=self.path,
            )
        return value

    def blobs(self, row: int, ready: dict | None = None) -> dict[str, memoryview | np.ndarray]:
        """Row ``row``'s blob fields: bytes as memoryviews, arrays as flat NumPy arrays."""
        data = self.entry(row, True, ready)
        out: dict[str, Any] = {}
        if len(self.blob_fields) == 1:
            pieces = [(self.blob_fields[0], data)]
        else:
            pieces = []
            at = 0
            for name in self.blob_fields:
                if at + 8 > len(data):
                    raise self._bad_blob(row, name, "ends before its length field")
                (length,) = _BIG_LEN.unpack_from(data, at)
                if at + 8 + length > len(data):
                    raise self._bad_blob(row, name, f"claims {length} bytes, past the end of the row's blob")
                pieces.append((name, data[at + 8 : at + 8 + length]))
                at += 8 + length
        for name, piece in pieces:
            field = self.fields[name]
            if field.type == "bytes":
                out[name] = piece
            elif self.compressed and field.type in ("int32", "int64"):
                out[name] = _uncompress_ints(piece, field.dtype, lambda what, n=name: self._bad_blob(row, n, what))
            else:
                if len(piece) % field.dtype.itemsize:
                    raise self._bad_blob(row, name, f"holds {len(piece)} bytes, not a whole number of {field.type} values")
                out[name] = np.frombuffer(piece, dtype=field.dtype.newbyteorder("<"))
        return out

    def _bad_blob(self, row: int, name: str, what: str) -> DataFormatError:
        return DataFormatError(
            f"MindRecord file {self.path}, row {row}, field {name!r}: the stored value {what}; the file is corrupted. "
            "Rewrite the set.",
            path=self.path,
        )


def _version_at_least(found: str, wanted: str) -> bool:
    try:
        return tuple(int(p) for p in found.split(".")) >= tuple(int(p) for p in wanted.split("."))
    except ValueError:
        return False


def _uncompress_ints(data: memoryview, dtype: np.dtype, bad: Any) -> np.ndarray:
    if len(data) < 4:
        raise bad("is too short for a compressed integer array")
    count = int.from_bytes(data[:4], "big")
    bitmap_len = (count + 3) // 4
    if 4 + bitmap_len > len(data):
        raise bad(f"claims {count} integers, more than its {len(data)} bytes hold")
    bitmap = np.frombuffer(data, np.uint8, bitmap_len, 4)
    widths = 1 << ((bitmap[:, None] >> np.array([6, 4, 2, 0], np.uint8)) & 3).reshape(-1)[:count].astype(np.int64)
    values = np.frombuffer(data, np.uint8, offset=4 + bitmap_len)
    if int(widths.sum()) != values.size:
        raise bad(f"holds {values.size} value bytes, but its bitmap describes {int(widths.sum())}")
    out = np.empty(count, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]]) if count else np.zeros(0, np.int64)
    for width, kind in ((1, "<i1"), (2, "<i2"), (4, "<i4"), (8, "<i8")):
        chosen = np.nonzero(widths == width)[0]
        if chosen.size:
            gather = starts[chosen][:, None] + np.arange(width)
            out[chosen] = values[gather].copy().view(kind).reshape(-1)
    return out.astype(dtype)


def _compress_ints(values: np.ndarray) -> bytes:
    """MindSpore's integer compression of one array (the inverse of :func:`_uncompress_ints`)."""
    flat = values.astype(np.int64).reshape(-1)
    count = flat.size
    widths = np.full(count, 3, np.uint8)
    widths[(flat >= -(1 << 31)) & (flat < (1 << 31))] = 2
    widths[(flat >= -(1 << 15)) & (flat < (1 << 15))] = 1
    widths[(flat >= -128) & (flat < 128)] = 0
    padded = np.zeros((count + 3) // 4 * 4, np.uint8)
    padded[:count] = widths
    bitmap = (padded.reshape(-1, 4) << np.array([6, 4, 2, 0], np.uint8)).sum(axis=1, dtype=np.uint8)
    little = flat.astype("<i8").view(np.uint8).reshape(count, 8)
    keep = np.arange(8) < (1 << widths.astype(np.int64))[:, None]
    return count.to_bytes(4, "big") + bitmap.tobytes() + little[keep].tobytes()


class MindRecordSet:
    """The rows of MindRecord shard files, shard by shard, read by global row index.

    Columns are sorted by name (as MindSpore reports them). Values: numeric scalars are NumPy
    scalars of the schema's type, strings 0-d ``str`` arrays, a bytes field a shape-(1,) bytes array
    (as MindSpore's ``MindDataset``), arrays of their schema shape (one ``-1`` resolved from the
    stored size; several give a 1-D array).

    Examples:
        >>> import os, tempfile
        >>> from minddata.record.mindrecord_format import MindRecordSet, MindRecordWriter
        >>> path = os.path.join(tempfile.mkdtemp(), "m.mindrecord")
        >>> writer = MindRecordWriter(path, shard_num=2)
        >>> _ = writer.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}})
        >>> writer.write_raw_data([{"label": i, "data": bytes([65 + i])} for i in range(3)])
        >>> writer.commit()
        >>> rows = MindRecordSet("doc", path + "0").fetch([0, 1, 2])
        >>> [(r[0].tolist(), int(r[1])) for r in rows]
        [([b'A'], 0), ([b'B'], 1), ([b'C'], 2)]
    """

    def __init__(self, where: str, dataset_files: Any, columns_list: Sequence[str] | None = None):
        self.where = where
        files = resolve_mindrecord_files(where, dataset_files)
        shards: list[MindRecordShard] = []
        first_meta = None
        for path in files:
            if _storage.is_remote(path):
                _storage.file_size(path)  # a missing object or denied access: an error naming the URL and the fix
            elif not os.path.isfile(path):
                from minddata.record.reader import missing_file_error

                named_by = os.path.abspath(os.fspath(dataset_files)) if isinstance(dataset_files, (str, os.PathLike)) else None
                raise missing_file_error(where, path, named_by)
            if not is_mindrecord(path):
                raise DataFormatError(
                    f"{where}: {path} is not a MindRecord shard file (it does not start with a MindRecord header); "
                    "files read together must all be MindRecord files.",
                    path=path,
                )
            header = read_mindrecord_header(path)
            meta = {k: header.get(k) for k in ("header_size", "page_size", "version", "index_fields", "schema")}
            if first_meta is None:
                first_meta = (meta, path)
            elif meta != first_meta[0]:
                differs = sorted(k for k in meta if meta[k] != first_meta[0][k])
                raise DataFormatError(
                    f"{where}: MindRecord file {path} differs from {first_meta[1]} in {differs}; files read together "
                    "must come from one set (one schema, page and header size).",
                    path=path,
                )
            shards.append(MindRecordShard(path, header))
        self.shards = shards
        self.fields = shards[0].fields
        self.columns = select_columns(where, columns_list, self.fields, "MindRecord file", files[0])
        self.index_fields = shards[0].index_fields
        self.starts = np.concatenate([[0], np.cumsum([s.num_rows for s in shards], dtype=np.int64)])
        self.num_rows = int(self.starts[-1])
        blob = set(shards[0].blob_fields)
        self._needs_raw = any(c not in blob for c in self.columns)
        self._needs_blob = any(c in blob for c in self.columns)

    def schema(self) -> dict[str, dict[str, Any]]:
        return {name: f.to_json() for name, f in self.fields.items()}

    def file_rows(self) -> list[tuple[int, int]]:
        return [(int(self.starts[i]), s.num_rows) for i, s in enumerate(self.shards)]

    def paths_of(self, ids: Sequence[int]) -> list[str]:
        files = np.searchsorted(self.starts, np.asarray(ids, dtype=np.int64), side="right") - 1
        return [self.shards[f].path if 0 <= f < len(self.shards) else "" for f in files.tolist()]

    def fetch(self, ids: Iterable[int], python: bool = False) -> list[tuple]:
        """Rows ``ids`` (global indices) as tuples of the selected columns; ``python=True`` gives
        MindSpore ``FileReader`` values (Python scalars, ``str``, ``bytes``, arrays)."""
        index = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids, dtype=np.int64)
        if index.size == 0:
            return []
        if index.min() < 0 or index.max() >= self.num_rows:
            raise ArgumentError(f"{self.where}: row ids must be in [0, {self.num_rows}). Found: {int(index.min())}..{int(index.max())}")
        shard_of = np.searchsorted(self.starts, index, side="right") - 1
        ready = self._prefetch(index, shard_of)
        out = []
        for g, s in zip(index.tolist(), shard_of.tolist()):
            shard = self.shards[s]
            row = g - int(self.starts[s])
            got = ready.get(s)
            raw = shard.raw(row, got) if self._needs_raw else {}
            blobs = shard.blobs(row, got) if self._needs_blob else {}
            out.append(tuple(self._value(shard, row, self.fields[c], raw, blobs, python) for c in self.columns))
        return out

    def _prefetch(self, index: np.ndarray, shard_of: np.ndarray) -> dict[int, dict]:
        """For shards in object storage: the entries of these rows, one ranged GET each, read
        ``requests_in_flight`` at a time; ``{shard: {(row, blob): bytes}}``. A failed batch is left to
        the per-row reads, which name the row."""
        wanted = [(s, g - int(self.starts[s]), blob) for g, s in zip(index.tolist(), shard_of.tolist())
                  if self.shards[s].remote for blob in (False, True) if (self._needs_blob if blob else self._needs_raw)]
        if len(wanted) < 2:
            return {}
        store, _ = _storage.store_of(self.shards[wanted[0][0]].path)
        requests = []
        for s, row, blob in wanted:
            _, url = _storage.store_of(self.shards[s].path)
            requests.append((url, *self.shards[s].span(row, blob)))
        try:
            blobs = store.read_many(requests)
        except _storage.StorageError:
            return {}
        ready: dict[int, dict] = {}
        for (s, row, blob), data in zip(wanted, blobs):
            ready.setdefault(s, {})[(row, blob)] = data
        return ready

    def _value(self, shard: MindRecordShard, row: int, field: Field, raw: dict, blobs: dict, python: bool) -> Any:
        name = field.name
        if name in blobs:
            value = blobs[name]
            if field.type == "bytes":
                data = bytes(value)
                return data if python else np.array([data])
            shape = field.shape or ()
            if shape.count(-1) > 1:
                return value
            known = math.prod(d for d in shape if d != -1)
            if (-1 in shape and value.size % known) or (-1 not in shape and value.size != known):
                raise shard._bad_blob(row, name, f"holds {value.size} values, which do not fit its shape {list(shape)}")
            return value.reshape(shape)
        if name not in raw:
            raise DataFormatError(
                f"MindRecord file {shard.path}, row {row}: field {name!r} is missing from its raw fields; the file is "
                "corrupted. Rewrite the set.",
                path=shard.path,
            )
        value = raw[name]
        if field.type == "string":
            if not isinstance(value, str):
                raise DataFormatError(
                    f"MindRecord file {shard.path}, row {row}: string field {name!r} holds a {type(value).__name__}; the "
                    "file is corrupted or was written with another schema.",
                    path=shard.path,
                )
            return value if python else np.array(value)
        if isinstance(value, str):  # MindSpore's reader also parses numbers stored as strings
            try:
                value = float(value) if field.type.startswith("float") else int(value)
            except ValueError:
                value = None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataFormatError(
                f"MindRecord file {shard.path}, row {row}: field {name!r} ({field.type}) holds a "
                f"{type(value).__name__}, not a number; the file is corrupted or was written with another schema.",
                path=shard.path,
            )
        if field.type.startswith("int"):
            info = np.iinfo(field.dtype)
            if not isinstance(value, int) or not info.min <= value <= info.max:
                raise DataFormatError(
                    f"MindRecord file {shard.path}, row {row}: field {name!r} holds {value!r}, not a {field.type}; the "
                    "file is corrupted or was written with another schema.",
                    path=shard.path,
                )
        scalar = field.dtype.type(value)
        return scalar.item() if python else scalar


# -- writing ------------------------------------------------------------------------------------


class _ShardState:
    """Pages of one shard being written: the open blob page (row group) and raw page."""

    def __init__(self, path: str, tmp: str, shard_id: int):
        self.path = path
        self.tmp = tmp
        self.shard_id = shard_id
        self.pages: list[dict[str, Any]] = []
        self.blob_page: dict[str, Any] | None = None
        self.raw_page: dict[str, Any] | None = None
        self.groups = 0
        self.rows = 0
        self.index: list[tuple] = []
        self.fd = -1


class MindRecordWriter(CommitOnExit):
    """Writes MindSpore MindRecord files (``minddata.mindrecord.FileWriter``): MindSpore reads them.

    Args:
        file_name: the file to write; with ``shard_num > 1`` the shards are named as MindSpore names
            them (``file_name0`` ..., zero-padded to the width of ``shard_num - 1``). Each shard gets
            its ``.db`` index beside it.
        shard_num: how many shard files (1 to 1000). Each ``write_raw_data`` call is split into
            contiguous blocks, one per shard, as MindSpore splits it.
        overwrite: replace existing files of the same names; otherwise they are an error.

    Everything is written under temporary names; :meth:`commit` renames the shard files, then their
    index files, into place, so a writer that dies first leaves no file a reader accepts (a shard
    is only read with its index). Unlike MindSpore, a row that does not match the schema is an
    error that names the row and field, not a warning that drops it.

    Examples:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from minddata.mindrecord import FileReader, FileWriter
        >>> path = os.path.join(tempfile.mkdtemp(), "w.mindrecord")
        >>> writer = FileWriter(path, shard_num=1)
        >>> _ = writer.add_schema({"label": {"type": "int64"}, "x": {"type": "float32", "shape": [2]}}, "demo")
        >>> writer.add_index(["label"])
        >>> writer.write_raw_data([{"label": 7, "x": np.array([1, 2], np.float32)}])
        >>> writer.commit()
        >>> [(row["label"], row["x"].tolist()) for row in FileReader(path).get_next()]
        [(7, [1.0, 2.0])]
    """

    def __init__(self, file_name: str | os.PathLike, shard_num: int = 1, overwrite: bool = False):
        path, shard_num = writer_target(_NAME, file_name, shard_num, overwrite)
        self._start(mindrecord_shard_paths(path, shard_num), overwrite)

    @classmethod
    def _at_paths(cls, paths: Sequence[str]) -> MindRecordWriter:
        """A writer of shards named by the caller (``Dataset.save`` names them as MindSpore's save
        does, without zero-padding); the caller has checked that none of them exists."""
        writer = cls.__new__(cls)
        writer._start([os.path.abspath(p) for p in paths], overwrite=False)
        return writer

    def _start(self, paths: list[str], overwrite: bool) -> None:
        self.paths = paths
        refuse_existing(_NAME, [p for d in self.paths for p in (d, d + ".db")], overwrite)
        self.overwrite = overwrite
        self.header_size = DEFAULT_HEADER_SIZE
        self.page_size = DEFAULT_PAGE_SIZE
        self._fields: dict[str, Field] | None = None
        self._desc = ""
        self._index: list[str] | None = None
        self._compression = 0
        self._state = "open"
        token = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._shards = [_ShardState(p, f"{p}.tmp-{token}", i) for i, p in enumerate(self.paths)]

    # -- MindSpore API ---------------------------------------------------------------------------

    @classmethod
    def open_for_append(cls, file_name: str | os.PathLike) -> MindRecordWriter:
        """Open a committed MindRecord set (any one of its shards) to add rows; :meth:`commit` replaces
        the files (until then the set stays as it was)."""
        path = os.path.abspath(os.fspath(file_name))
        existing = MindRecordSet("FileWriter.open_for_append", path)
        first = existing.shards[0]
        writer = cls.__new__(cls)
        writer.paths = [s.path for s in existing.shards]
        writer.overwrite = True
        writer.header_size, writer.page_size = first.header_size, first.page_size
        schema = first.header["schema"][0]
        writer._fields = {name: existing.fields[name] for name in schema["schema"]}
        writer._desc = schema.get("desc") or ""
        writer._index = list(first.index_fields)
        writer._compression = int(first.header.get("compression_size") or 0)
        writer._state = "open"
        token = f"{os.getpid()}-{secrets.token_hex(4)}"
        writer._shards = []
        for i, shard in enumerate(existing.shards):
            state = _ShardState(shard.path, f"{shard.path}.tmp-{token}", i)
            state.pages = [dict(p) for p in shard.header["page"]]
            state.groups = sum(1 for p in state.pages if p["page_type"] == "BLOB_DATA")
            state.rows = shard.num_rows
            writer._shards.append(state)
            state.fd = os.open(state.tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(shard.path, "rb") as source:
                while chunk := source.read(1 << 24):
                    os.write(state.fd, chunk)
            state.index = _read_index_rows(shard.path + ".db", writer._index)
        return writer

    def set_header_size(self, header_size: int) -> None:
        """Bytes reserved for each shard's header (16 KiB to 128 MiB; default 16 MiB, as MindSpore)."""
        self.header_size = self._size_arg("set_header_size", "header_size", header_size, MIN_HEADER_SIZE, MAX_HEADER_SIZE)

    def set_page_size(self, page_size: int) -> None:
        """Bytes per page (32 KiB to 256 MiB; default 32 MiB): a row's blob must fit in one page."""
        self.page_size = self._size_arg("set_page_size", "page_size", page_size, MIN_PAGE_SIZE, MAX_PAGE_SIZE)

    def add_schema(self, content: dict[str, dict[str, Any]], desc: str | None = None) -> int:
        """Set the schema (MindSpore's types: int32, int64, float32, float64, string, bytes; arrays of
        the four numeric types with a ``shape``). Returns the schema id, 0."""
        self._check_state("add_schema")
        if self._fields is not None:
            raise ArgumentError("FileWriter.add_schema: a schema was already added; MindRecord files hold one schema.")
        fields = parse_schema("FileWriter.add_schema", content)
        for name, field in fields.items():
            if not _FIELD_NAME.match(name):
                raise ArgumentError(
                    f"FileWriter.add_schema: field name {name!r} must use only 0-9, a-z, A-Z and _ (MindRecord's rule)."
                )
            if field.type not in MINDRECORD_TYPES or (field.shape is not None and field.type not in _ARRAY_TYPES):
                raise ArgumentError(
                    f"FileWriter.add_schema: field {name!r} has type {field.describe()}; MindRecord stores "
                    f"{', '.join(MINDRECORD_TYPES)} and arrays of {', '.join(_ARRAY_TYPES)}. Use one of those (or "
                    "minddata.record.ArrowRecordWriter, whose Arrow record files take every NumPy type)."
                )
        self._desc = check_desc(_NAME, desc) or ""
        self._fields = fields
        return 0

    def add_index(self, index_fields: Sequence[str]) -> None:
        """Index these scalar fields in each shard's ``.db`` (default: every int, float and string
        scalar field, as MindSpore)."""
        self._check_state("add_index")
        fields = self._need_schema("add_index")
        for name in check_index_list(_NAME, index_fields):
            field = fields.get(name) if isinstance(name, str) else None
            if field is None or field.type == "bytes" or field.shape is not None:
                raise ArgumentError(
                    f"FileWriter.add_index: {name!r} can't be an index field: index fields are scalar int, float or "
                    f"string fields of the schema ({[n for n, f in fields.items() if f.type in _SQL_TYPE and f.shape is None]})."
                )
        if self._index is not None and any(s.rows for s in self._shards):
            raise ArgumentError("FileWriter.add_index: rows were already written; call add_index before write_raw_data.")
        self._index = list(dict.fromkeys(index_fields))

    def write_raw_data(self, raw_data: Sequence[dict[str, Any]], parallel_writer: bool = False) -> None:
        """Write rows (a list of dicts, one value per schema field). The list is split into
        contiguous blocks, the first ``len % shard_num`` shards taking one row more."""
        self._check_state("write_raw_data")
        self._need_schema("write_raw_data")
        if isinstance(raw_data, dict):
            raw_data = [raw_data]
        if not isinstance(raw_data, (list, tuple)) or not raw_data:
            raise ArgumentError(f"FileWriter.write_raw_data: `raw_data` must be a non-empty list of dicts. Found: {type(raw_data).__name__}")
        encoded = self._encode_rows(raw_data)
        per, extra = divmod(len(encoded), len(self._shards))
        start = 0
        for s, shard in enumerate(self._shards):
            stop = start + per + (1 if s < extra else 0)
            for raw, blob, index_values in encoded[start:stop]:
                self._append(shard, raw, blob, index_values)
            start = stop

    def _write_shard(self, shard: int, raw_data: Sequence[dict[str, Any]]) -> None:
        """Append rows to one shard (converters that lay out the shards themselves)."""
        self._check_state("write_raw_data")
        for raw, blob, index_values in self._encode_rows(raw_data):
            self._append(self._shards[shard], raw, blob, index_values)

    def _encode_rows(self, raw_data: Sequence[dict[str, Any]]) -> list[tuple]:
        fields = self._need_schema("write_raw_data")
        if self._index is None:
            self._index = [n for n, f in fields.items() if f.type in _SQL_TYPE and f.shape is None]
        blob_fields = sorted(n for n, f in fields.items() if f.type == "bytes" or f.shape is not None)
        compress = any(f.shape is not None and f.type in ("int32", "int64") for f in fields.values())
        return [self._encode(row, k, fields, blob_fields, compress) for k, row in enumerate(raw_data)]

    def commit(self) -> None:
        """Write headers and index files, then move every file into place (shards, then indexes)."""
        self._check_state("commit")
        self._need_schema("commit")
        if self._index is None:
            self._index = [n for n, f in self._fields.items() if f.type in _SQL_TYPE and f.shape is None]  # type: ignore[union-attr]  # _need_schema: the schema is set
        try:
            for shard in self._shards:
                self._open(shard)
                self._finish(shard)
                self._write_db(shard)
            if self.overwrite:
                # Old indexes go first: an interrupted overwrite leaves shards without indexes (which
                # readers refuse), never an old index beside a new shard.
                for p in self.paths:
                    for old in (p + ".db", p):
                        if os.path.exists(old):
                            os.remove(old)
            for shard in self._shards:
                os.replace(shard.tmp, shard.path)
            for shard in self._shards:
                os.replace(shard.tmp + ".db", shard.path + ".db")
            _fsync_dir(os.path.dirname(self.paths[0]))
        except BaseException:
            self.abort()
            raise
        self._state = "committed"

    def abort(self) -> None:
        """Drop everything written so far and remove the temporary files."""
        for shard in getattr(self, "_shards", []):
            if shard.fd >= 0:
                os.close(shard.fd)
                shard.fd = -1
            for tmp in (shard.tmp, shard.tmp + ".db"):
                if os.path.exists(tmp):
                    os.remove(tmp)
        self._state = "aborted"

    # -- internals -------------------------------------------------------------------------------

    def _size_arg(self, call: str, name: str, value: Any, low: int, high: int) -> int:
        self._check_state(call)
        if any(s.rows for s in self._shards):
            raise ArgumentError(f"FileWriter.{call}: rows were already written; set the {name} before write_raw_data.")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
            raise ArgumentError(f"FileWriter.{call}: `{name}` must be an int in [{low}, {high}]. Found: {value!r}")
        return int(value)

    def _check_state(self, call: str) -> None:
        check_open(_NAME, call, self._state)

    def _need_schema(self, call: str) -> dict[str, Field]:
        if self._fields is None:
            raise ArgumentError(f"FileWriter.{call}: no schema was added; call add_schema first.")
        return self._fields

    def _encode(self, row: Any, k: int, fields: dict[str, Field], blob_fields: list[str], compress: bool) -> tuple:
        check_row(_NAME, row, k, fields, extra_allowed=True)
        raw: dict[str, Any] = {}
        arrays: dict[str, Any] = {}
        for name, field in fields.items():
            value = row[name]
            if field.shape is None:
                value = normalize_value(_NAME, field, value, k)
                if field.type == "bytes":
                    arrays[name] = bytes(value)
                else:
                    raw[name] = value if isinstance(value, str) else value.item()
                continue
            try:  # MindSpore's rule: any array that reshapes to the schema's shape
                array = np.asarray(value)
                if array.dtype.kind not in "biuf":
                    raise ValueError
                stored = normalize_value(_NAME, Field(name, field.type, (-1,)), array.reshape(-1), k)
                stored.reshape(field.shape)
            except ValueError:
                raise bad_value(_NAME, field, value, k, f"expected {field.type} values that reshape to {list(field.shape)}") from None
            arrays[name] = stored
        pieces: list[bytes] = []
        for name in blob_fields:
            field, value = fields[name], arrays[name]
            if field.type == "bytes":
                data = value
            else:
                little = value.astype(field.dtype.newbyteorder("<"), copy=False)
                data = _compress_ints(little) if compress and field.type in ("int32", "int64") else little.tobytes()
                self._compression += little.nbytes - len(data)
            pieces.append(data)
        if len(pieces) == 1:
            blob = pieces[0]
        elif pieces:
            blob = b"".join(_BIG_LEN.pack(len(p)) + p for p in pieces)
        else:
            blob = _EMPTY_BLOB
        index_values = tuple(raw[n] for n in self._index or [])
        return msgpack.packb(raw, use_bin_type=True), blob, index_values

    def _open(self, shard: _ShardState) -> None:
        if shard.fd < 0:
            shard.fd = os.open(shard.tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)

    def _new_page(self, shard: _ShardState, kind: str) -> dict[str, Any]:
        page = {
            "end_row_id": shard.rows if kind == "BLOB_DATA" else 0,
            "page_id": len(shard.pages),
            "page_size": 0,
            "page_type": kind,
            "page_type_id": shard.groups if kind == "BLOB_DATA" else len(shard.pages),
            "row_group_ids": [{"id": 0, "offset": 0}] if kind == "BLOB_DATA" else [],
            "shard_id": shard.shard_id,
            "start_row_id": shard.rows if kind == "BLOB_DATA" else 0,
        }
        shard.pages.append(page)
        if kind == "BLOB_DATA":
            shard.groups += 1
        return page

    def _append(self, shard: _ShardState, raw: bytes, blob: bytes, index_values: tuple) -> None:
        raw_len, blob_len = 8 + len(raw), 8 + len(blob)
        if max(raw_len, blob_len) > self.page_size:
            raise ArgumentError(
                f"FileWriter.write_raw_data: a row of {max(raw_len, blob_len)} bytes does not fit in a page of "
                f"{self.page_size} bytes. Call set_page_size with a larger size (up to {MAX_PAGE_SIZE}) before writing."
            )
        self._open(shard)
        new_raw = shard.raw_page is None or shard.raw_page["page_size"] + raw_len > self.page_size
        if new_raw or shard.blob_page is None or shard.blob_page["page_size"] + blob_len > self.page_size:
            shard.blob_page = self._new_page(shard, "BLOB_DATA")
            if new_raw:
                shard.raw_page = self._new_page(shard, "RAW_DATA")
            raw_page = shard.raw_page
            raw_page["row_group_ids"].append({"id": shard.blob_page["page_type_id"], "offset": raw_page["page_size"]})  # type: ignore[index]  # both pages exist: opened just above
        blob_page, raw_page = shard.blob_page, shard.raw_page
        assert raw_page is not None
        blob_at, raw_at = blob_page["page_size"], raw_page["page_size"]
        self._pwrite(shard, blob_page, blob_at, _LEN.pack(len(blob)) + blob)
        self._pwrite(shard, raw_page, raw_at, _LEN.pack(len(raw)) + raw)
        shard.index.append(
            (shard.rows, raw_page["page_id"], raw_at, raw_at + raw_len, blob_page["page_type_id"], blob_page["page_id"],
             blob_at, blob_at + blob_len, *index_values)
        )
        blob_page["page_size"] += blob_len
        blob_page["end_row_id"] += 1
        raw_page["page_size"] += raw_len
        shard.rows += 1

    def _pwrite(self, shard: _ShardState, page: dict[str, Any], offset: int, data: bytes) -> None:
        at = self.header_size + page["page_id"] * self.page_size + offset
        written = os.pwrite(shard.fd, data, at)
        if written != len(data):
            raise OSError(f"short write to {shard.tmp}")

    def _finish(self, shard: _ShardState) -> None:
        header = {
            "header_size": self.header_size,
            "index_fields": [{"index_field": n, "schema_id": 0} for n in self._index or []],
            "page": shard.pages or None,
            "page_size": self.page_size,
            "compression_size": max(self._compression, 0),
            "schema": [{
                "blob_fields": sorted(n for n, f in self._fields.items() if f.type == "bytes" or f.shape is not None),  # type: ignore[union-attr]  # a committed writer has its schema
                "desc": self._desc,
                "schema": {n: self._fields[n].to_json() for n in sorted(self._fields)},  # type: ignore[index, arg-type]  # a committed writer has its schema
            }],
            "shard_addresses": [os.path.basename(p) for p in self.paths],
            "shard_id": shard.shard_id,
            "statistics": None,
            "version": VERSION,
        }
        text = json.dumps(header, separators=(",", ":")).encode()
        if len(text) + 8 > self.header_size:
            raise ArgumentError(
                f"FileWriter.commit: the header of {shard.path} needs {len(text) + 8} bytes, more than the header "
                f"size {self.header_size}. Call set_header_size with a larger size, or set_page_size with a larger "
                "page (fewer pages to describe)."
            )
        os.pwrite(shard.fd, _LEN.pack(len(text)) + text, 0)
        end = self.header_size if shard.pages else 8 + len(text)  # a shard without rows: its header only
        if shard.pages:
            last = shard.pages[-1]
            end += last["page_id"] * self.page_size + last["page_size"]
        os.ftruncate(shard.fd, end)
        os.fsync(shard.fd)
        os.close(shard.fd)
        shard.fd = -1

    def _write_db(self, shard: _ShardState) -> None:
        db = shard.tmp + ".db"
        if os.path.exists(db):
            os.remove(db)
        columns = "".join(
            f",INC_{i} INT, {name}_0 {_SQL_TYPE[self._fields[name].type]}" for i, name in enumerate(self._index or [])  # type: ignore[index]  # a committed writer has its schema
        )
        keys = "".join(f",INC_{i}" for i in range(len(self._index or [])))
        connection = sqlite3.connect(db)
        try:
            connection.execute(
                "CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL, "
                "PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL, ROW_GROUP_ID         INT  NOT NULL, "
                "PAGE_ID_BLOB         INT  NOT NULL, PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL"
                f"{columns}, PRIMARY KEY(ROW_ID{keys}))"
            )
            connection.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL)")
            connection.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?)", (os.path.basename(shard.path),))
            width = len(self._index or [])
            placeholders = ",".join("?" * (8 + 2 * width))
            connection.executemany(
                f"INSERT INTO INDEXES VALUES ({placeholders})",
                [(*r[:8], *(v for value in r[8:] for v in (0, value))) for r in shard.index],
            )
            connection.commit()
        finally:
            connection.close()


def _read_index_rows(db: str, index_fields: list[str]) -> list[tuple]:
    """An existing index's rows, in the form :class:`MindRecordWriter` keeps them (for appending)."""
    values = "".join(f", {name}_0" for name in index_fields)
    connection = sqlite3.connect("file:" + urllib.parse.quote(db) + "?mode=ro&immutable=1", uri=True)
    try:
        return [tuple(r) for r in connection.execute(f"SELECT {_INDEX_COLUMNS}{values} FROM INDEXES ORDER BY ROW_ID")]
    finally:
        connection.close()


def _fsync_dir(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
