"""Reading record files: Arrow IPC shards read with ``pread``, rows by index, checked against their metadata.

Opening a set reads only the small ``.meta.json`` files; a shard's data file is opened on first use
and checked (size, Arrow footer, schema, set id). Each record batch is read once, on first use, in
one ``pread`` of exactly its bytes, and checked against the CRC-32 of its columns stored in the
metadata, so a corrupted byte is reported with its file, batch and rows instead of flowing on as
wrong data. From that read the reader keeps the small columns (scalars, strings, offsets) and the
file position of every large payload; a row's image bytes or tensor are then read with one
``pread`` into an array of its own.

Nothing is memory-mapped. A file that shrinks under a reader (truncated, or rewritten in place
instead of replaced by rename) therefore gives a short read, reported as an error naming the file,
never SIGBUS, whichever thread is reading when it shrinks. A file replaced by rename (as
``ArrowRecordWriter`` does) is harmless: the reader keeps the old file open.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import re
import struct
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from minddata.dataset import _storage
from minddata.errors import ArgumentError, DataFormatError
from minddata.record._files import folder_lock, sweep_folder
from minddata.record._schema import SHAPE_PREFIX, Field, fields_from_json, parse_schema, select_columns
from minddata.record.writer import FORMAT, META_SUFFIX, SCHEMA_KEY, SET_ID_KEY, VERSION, batch_crcs

__all__ = ["RecordSet", "ShardFile", "FileReader", "read_meta", "open_set"]

_META_KEYS = ("format", "version", "set_id", "shard_id", "shard_num", "shards", "schema", "num_rows", "data_bytes", "batches")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _MetaChecker:
    """Checks a ``.meta.json`` against the format's rules; every error names the file and the field."""

    def __init__(self, path: str, meta_path: str):
        self.path = path
        self.meta_path = meta_path

    def error(self, field: str, rule: str, found: Any) -> DataFormatError:
        return DataFormatError(
            f"record file {self.path}: metadata {os.path.basename(self.meta_path)}, field {field!r}: {rule}. Found: "
            f"{_shown(found)} ({type(found).__name__}). The metadata is damaged; rewrite the set.",
            path=self.path,
        )

    def int_in(self, field: str, value: Any, low: int, high: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            rule = f"must be an int in [{low}, {high}]" if high is not None else f"must be an int >= {low}"
            raise self.error(field, rule, value)
        return value

    def str_list(self, field: str, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.error(field, "must be a list of non-empty strings", value)
        return value

    def check(self, meta: dict[str, Any]) -> None:
        version = meta["version"]
        if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
            raise DataFormatError(
                f"record file {self.path} is format version {version}; this minddata reads up to {VERSION}. Upgrade "
                "minddata.",
                path=self.path,
            )
        self.int_in("version", version, 1, VERSION)
        if not isinstance(meta["set_id"], str) or not _HEX32.match(meta["set_id"]):
            raise self.error("set_id", "must be 32 hex digits", meta["set_id"])
        shard_num = self.int_in("shard_num", meta["shard_num"], 1, 1000)
        self.int_in("shard_id", meta["shard_id"], 0, shard_num - 1)
        shards = self.str_list("shards", meta["shards"])
        if len(shards) != shard_num:
            raise self.error("shards", f"must list shard_num={shard_num} file names", shards)
        if not isinstance(meta["schema"], dict):
            raise self.error("schema", "must be a dict of field name -> {'type': T, 'shape': [...]}", meta["schema"])
        try:
            fields = parse_schema("schema", meta["schema"])
        except ArgumentError as error:
            raise self.error("schema", str(error), meta["schema"]) from None
        if meta.get("desc") is not None and not isinstance(meta["desc"], str):
            raise self.error("desc", "must be a string or null", meta["desc"])
        index = self.str_list("index_fields", meta.get("index_fields", []))
        for name in index:
            if name not in fields:
                raise self.error("index_fields", "must name schema fields", name)
        num_rows = self.int_in("num_rows", meta["num_rows"], 0)
        self.int_in("data_bytes", meta["data_bytes"], 0)
        batches = meta["batches"]
        if not isinstance(batches, list):
            raise self.error("batches", "must be a list of {'rows': n, 'crc32': {column: crc}}", batches)
        columns = {a.name for f in fields.values() for a in f.arrow_fields()}
        for b, batch in enumerate(batches):
            where = f"batches[{b}]"
            if not isinstance(batch, dict) or set(batch) != {"rows", "crc32"}:
                raise self.error(where, "must be {'rows': n, 'crc32': {column: crc}}", batch)
            self.int_in(f"{where}.rows", batch["rows"], 0)
            crcs = batch["crc32"]
            if not isinstance(crcs, dict) or set(crcs) != columns:
                raise self.error(f"{where}.crc32", f"must map each column {sorted(columns)} to its CRC-32", crcs)
            for column, crc in crcs.items():
                self.int_in(f"{where}.crc32.{column}", crc, 0, 2**32 - 1)
        total = sum(batch["rows"] for batch in batches)
        if total != num_rows:
            raise self.error("num_rows", f"must equal the rows of its batches ({total})", num_rows)


_SHARD_NUMBER = re.compile(r"[0-9]+")


def numbered_shards(path: str) -> list[str]:
    """The files beside ``path`` named ``path`` plus a shard number, in shard order: the files of a
    set written to ``path`` with ``shard_num`` > 1 (``x.mindrecord0``, ``x.mindrecord1``, ... in both
    formats), which is what a missing ``path`` most often means."""
    folder, base = os.path.split(path)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    found = [n for n in names if n.startswith(base) and _SHARD_NUMBER.fullmatch(n[len(base) :])]
    return [os.path.join(folder, n) for n in sorted(found, key=lambda n: int(n[len(base) :]))]


def missing_file_error(where: str | None, path: str, named_by: str | None = None) -> DataFormatError:
    """The error for a record file ``path`` that is not there: names it, and says what to pass instead
    when its folder holds the numbered shard files of a set written to that name. ``named_by``: the
    file whose metadata or header lists ``path`` as a shard of its set (then a shard went missing)."""
    head = f"{where}: " if where else ""
    if named_by is not None:
        return DataFormatError(
            f"{head}record file {path} does not exist, but {os.path.basename(named_by)}'s set names it as one of its "
            "shards. Copy every shard file of the set (with its .meta.json or .db file) into the folder, or pass "
            "the files to read as a list.",
            path=path,
        )
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        return DataFormatError(f"{head}record file {path} does not exist: its folder {folder} does not exist either. "
                               "Check the path.", path=path)
    shards = numbered_shards(path)
    if shards:
        names = [os.path.basename(f) for f in shards]
        shown = ", ".join(names[:3]) + (f", ... ({len(names)} files)" if len(names) > 3 else "")
        return DataFormatError(
            f"{head}record file {path} does not exist, but its folder has shard files named after it: {shown}. A set "
            f"written with shard_num > 1 numbers its files so: pass the path of one of them, e.g. {shards[0]} "
            "(one file's path reads its whole set).",
            path=path,
        )
    return DataFormatError(f"{head}record file {path} does not exist. Check the path and the file name.", path=path)


def read_meta(path: str, where: str | None = None, named_by: str | None = None) -> dict[str, Any]:
    """The metadata of data file ``path``, checked against the format's rules; errors name the file,
    the field and the rule (and start with ``where``, when given). ``named_by``: the shard whose
    metadata lists ``path``."""
    meta_path = path + META_SUFFIX
    if not os.path.exists(path):
        raise missing_file_error(where, path, named_by)
    if not os.path.exists(meta_path):
        raise DataFormatError(
            f"record file {path}: its metadata file {os.path.basename(meta_path)} is missing, so it is not a "
            "committed record file (a writer that did not reach commit() leaves no metadata). Rewrite it.",
            path=path,
        )
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as error:
        raise DataFormatError(f"record file {path}: its metadata file {meta_path} is unreadable: {error}", path=path) from None
    return check_meta(path, meta_path, meta)


def check_meta(path: str, meta_path: str, meta: Any) -> dict[str, Any]:
    """``meta`` (the parsed ``.meta.json`` of data file ``path``) checked against the format's rules."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise DataFormatError(
            f"record file {path}: {meta_path} is not minddata record metadata (format {_shown(found)}, expected {FORMAT!r}).",
            path=path,
        )
    missing = [k for k in _META_KEYS if k not in meta]
    if missing:
        raise DataFormatError(f"record file {path}: metadata {meta_path} lacks {missing}; it is damaged.", path=path)
    _MetaChecker(path, meta_path).check(meta)
    return meta


def _shard_path(first: str, meta: dict[str, Any], name: str) -> str:
    """Shard ``name`` of the set of ``first``, refused unless it stays inside ``first``'s folder.

    The decision depends only on the name and on symlinks inside the folder, so the error says
    nothing about paths outside it, and it is made before anything outside is touched.
    """
    folder = os.path.dirname(first)
    real_folder = os.path.realpath(folder)
    joined = os.path.normpath(os.path.join(folder, name))
    inside = "\0" not in name and os.path.dirname(joined) == folder and os.path.realpath(joined).startswith(real_folder + os.sep)
    if not inside:
        raise DataFormatError(
            f"record file {first}: its metadata lists shard {_shown(name, 300)}, which is not a file in the set's folder "
            f"{folder} (shards are file names there; paths that leave the folder, absolute paths and symlinks out "
            "of it are refused). To read files elsewhere, pass them as a list: MindDataset([file, ...]).",
            path=first,
        )
    return joined


def refuse_duplicates(where: str, files: Sequence[str]) -> None:
    """Refuse a ``dataset_files`` list that names one file twice (the first such, in sort order)."""
    seen: set[str] = set()
    dupes: set[str] = set()
    for f in map(str, files):
        (dupes if f in seen else seen).add(f)
    if dupes:
        raise ArgumentError(f"{where}: `dataset_files` lists {min(dupes)} more than once; list each file once.")


def listed_files(where: str, dataset_files: Any) -> list[str]:
    """``dataset_files`` given as a list (MindSpore's rule: exactly the files listed), as absolute
    paths; one file listed twice, or anything but a non-empty list of paths, is refused."""
    dataset_files = _storage.local_paths(dataset_files)
    if isinstance(dataset_files, (list, tuple)) and dataset_files and all(isinstance(f, (str, os.PathLike)) for f in dataset_files):
        files = [os.path.abspath(os.fspath(f)) for f in dataset_files]
        refuse_duplicates(where, files)
        return files
    raise ArgumentError(f"{where}: `dataset_files` must be a file path or a non-empty list of paths. Found: {dataset_files!r}")


def open_set(where: str, dataset_files: Any) -> list[tuple[str, dict[str, Any]]]:
    """The files to read, each with its checked metadata, read as one consistent snapshot.

    MindSpore's rule: one path reads its whole shard set (named by its metadata; every shard must be
    of the same write); a list reads exactly the files listed. The folders are swept first
    (interrupted commits finished, dead writers' temporary files removed), and the metadata is read
    under each folder's shared lock, so a commit in progress is seen before or after, never halfway.
    """
    dataset_files = _storage.local_paths(dataset_files)
    if isinstance(dataset_files, (str, os.PathLike)):
        first = os.path.abspath(os.fspath(dataset_files))
        folder = os.path.dirname(first)
        sweep_folder(folder)
        with folder_lock(folder, exclusive=False):
            meta = read_meta(first, where)
            files = [_shard_path(first, meta, name) for name in meta["shards"]]
            out = [(p, meta if p == first else read_meta(p, where, named_by=first)) for p in files]
        check_set(where, first, meta, out)
        return out
    files = listed_files(where, dataset_files)
    for folder in dict.fromkeys(os.path.dirname(f) for f in files):
        sweep_folder(folder)
    out = []
    for path in files:
        with folder_lock(os.path.dirname(path), exclusive=False):
            out.append((path, read_meta(path, where)))
    return out


def check_set(where: str, first: str, meta: dict[str, Any], out: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """The shards ``out`` (path, metadata) of the set that ``first`` (with ``meta``) names: one write,
    each shard once, each metadata agreeing with ``first``'s about the set."""
    files = [path for path, _ in out]
    if len(set(files)) != len(files) or files[meta["shard_id"]] != first:
        raise DataFormatError(
            f"{where}: record file {first}: its metadata's shard list {_shown(meta['shards'])} must name each shard "
            f"once, this file at its shard_id ({meta['shard_id']}). The metadata is damaged; rewrite the set.",
            path=first,
        )
    for k, (path, other) in enumerate(out):
        if other["set_id"] == meta["set_id"] and (other["shards"] != meta["shards"] or other["shard_id"] != k):
            raise DataFormatError(
                f"{where}: record file {path}: its metadata disagrees with {os.path.basename(first)}'s about the "
                "set's shards. The metadata is damaged; rewrite the set.",
                path=path,
            )
        if other["set_id"] != meta["set_id"]:
            raise DataFormatError(
                f"{where}: record file {path} is not of the same write as {first} (set ids {other['set_id']} and "
                f"{meta['set_id']}): the set was partly overwritten by other files. Rewrite the set, or pass the "
                "files to read as a list.",
                path=path,
            )


def _pread_into(fd: int, out: np.ndarray, offset: int, shard: ShardFile) -> np.ndarray:
    """Fill ``out`` from the file at ``offset``; a short read means the file shrank under the reader."""
    want = out.nbytes
    if want == 0:
        return out
    target = memoryview(out).cast("B")
    got = 0
    while got < want:
        n = os.preadv(fd, [target[got:]], offset + got)
        if n == 0:
            raise shard.shrank_error()
        got += n
    return out


class _RecentBatches:
    """The whole bytes of the record batches read last (all shard files together, at most
    ``budget`` bytes): a fetch that follows the first read of its batch copies rows out of memory
    instead of reading the file again. Sequential reads then read each byte from the file once."""

    def __init__(self, budget: int):
        self.budget = budget
        self._held = 0
        self._entries: collections.OrderedDict[tuple[int, int], tuple[np.ndarray, int]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def put(self, key: tuple[int, int], message: np.ndarray, file_offset: int) -> None:
        if message.nbytes > self.budget:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (message, file_offset)
            self._held += message.nbytes
            while self._held > self.budget:
                _, (old, _) = self._entries.popitem(last=False)
                self._held -= old.nbytes

    def get(self, key: tuple[int, int]) -> tuple[np.ndarray, int] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found


_RECENT = _RecentBatches(64 << 20)
_shard_tokens = itertools.count()


class _BatchView:
    """Where one record batch's selected columns lie in the file, found once; rows are then read with
    ``pread`` at those offsets, so no page of the file is ever mapped.

    Small per-row values (scalars, strings) and the offsets of variable-length columns are copied
    into memory when the batch is first read (they are also what the CRC check reads); the payload of
    ``bytes``, fixed-shape and ragged tensor columns stays on disk until a row asks for it.
    """

    __slots__ = ("batch", "rows", "columns")

    def __init__(self, b: int, batch: pa.RecordBatch, fields: list[Field], message: pa.Buffer, file_offset: int):
        self.batch = b
        self.rows = batch.num_rows
        self.columns: list[Any] = []

        def where(array: np.ndarray) -> int | None:
            """File offset of ``array``'s first byte, when it is a view of the batch's message."""
            address = array.__array_interface__["data"][0]
            if array.nbytes == 0 or not message.address <= address <= message.address + message.size - array.nbytes:
                return None
            return file_offset + address - message.address

        for field in fields:
            column = batch.column(field.name)
            if field.type == "bytes":
                _, offsets, data = column.buffers()
                off = np.array(np.frombuffer(offsets, dtype=np.int64)[column.offset : column.offset + len(column) + 1])
                payload = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
                self.columns.append(self._on_disk("bytes", payload, where, off))
            elif field.type == "string" or field.shape is None:
                self.columns.append(("values", np.array(column.to_numpy(zero_copy_only=False))))
            elif not field.variable:
                flat = column.values.to_numpy(zero_copy_only=False)
                self.columns.append(self._on_disk("fixed", flat.reshape(len(column), *field.shape), where))
            else:
                flat = column.values.to_numpy(zero_copy_only=False)
                off = np.array(column.offsets.to_numpy())
                shapes = np.array(batch.column(SHAPE_PREFIX + field.name).values.to_numpy().reshape(len(column), len(field.shape)))
                self.columns.append(self._on_disk("ragged", flat, where, off, shapes))

    @staticmethod
    def _on_disk(kind: str, payload: np.ndarray, where: Any, *extra: np.ndarray) -> tuple:
        at = where(payload)
        if at is None:  # empty, or a copy (no file position): keep it in memory
            return (kind + "-memory", payload.copy(), *extra)
        return (kind, (at, payload.dtype, payload.shape), *extra)

    def put(self, c: int, rows: np.ndarray, positions: Sequence[int], out: list[Any], read: Any) -> None:
        """Write column ``c`` of batch rows ``rows`` into ``out`` at ``positions``."""
        col = self.columns[c]
        kind = col[0]
        if kind == "values":
            picked = col[1][rows]
            if picked.dtype == object:
                for p, value in zip(positions, picked):
                    out[p] = np.asarray(value)
            else:
                for p, value in zip(positions, picked):
                    out[p] = value
            return
        if kind.endswith("-memory"):
            self._put_from_memory(kind[: -len("-memory")], col, rows, positions, out)
            return
        (at, dtype, shape) = col[1]
        if kind == "bytes":
            off = col[2]
            for p, a, b in zip(positions, off[rows].tolist(), off[rows + 1].tolist()):
                out[p] = read(np.empty(b - a, np.uint8), at + a)
        elif kind == "fixed":
            row_shape = shape[1:]
            row_bytes = dtype.itemsize * int(np.prod(row_shape, dtype=np.int64))
            first, last = int(rows[0]), int(rows[-1])
            if last - first + 1 == len(rows) and (len(rows) < 2 or (np.diff(rows) == 1).all()):
                block = read(np.empty((len(rows), *row_shape), dtype), at + first * row_bytes)
                for p, value in zip(positions, block):
                    out[p] = value
            else:
                for p, r in zip(positions, rows.tolist()):
                    out[p] = read(np.empty(row_shape, dtype), at + r * row_bytes)
        else:
            off, shapes = col[2], col[3]
            for p, a, b, row_shape in zip(positions, off[rows].tolist(), off[rows + 1].tolist(), shapes[rows].tolist()):
                out[p] = read(np.empty(b - a, dtype), at + a * dtype.itemsize).reshape(row_shape)

    @staticmethod
    def _put_from_memory(kind: str, col: tuple, rows: np.ndarray, positions: Sequence[int], out: list[Any]) -> None:
        if kind == "bytes":
            data, off = col[1], col[2]
            for p, a, b in zip(positions, off[rows].tolist(), off[rows + 1].tolist()):
                out[p] = data[a:b].copy()
        elif kind == "fixed":
            for p, value in zip(positions, col[1][rows]):
                out[p] = value
        else:
            flat, off, shapes = col[1], col[2], col[3]
            for p, a, b, shape in zip(positions, off[rows].tolist(), off[rows + 1].tolist(), shapes[rows].tolist()):
                out[p] = flat[a:b].reshape(shape).copy()


class ShardFile:
    """One data file of a record set: opened on first use, each batch read and checked on first use."""

    def __init__(self, path: str, meta: dict[str, Any]):
        self.path = path
        self.meta = meta
        self.fields = fields_from_json(meta["schema"])
        rows = [int(b["rows"]) for b in meta["batches"]]
        self.batch_starts = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)]) if rows else np.zeros(1, np.int64)
        self.num_rows = int(meta["num_rows"])
        if self.num_rows != int(self.batch_starts[-1]):
            raise DataFormatError(
                f"record file {path}: its metadata counts {self.num_rows} rows but its batches add up to "
                f"{int(self.batch_starts[-1])}; the metadata is damaged.",
                path=path,
            )
        self._lock = threading.Lock()
        self._token = next(_shard_tokens)  # names this file's batches in the shared recent-batch memory
        self._schema: pa.Schema | None = None
        self._blocks: list[tuple[int, int, int]] = []
        self._fd: int | None = None
        self._views: dict[tuple[int, tuple[str, ...]], _BatchView] = {}
        self._checked: set[tuple[int, str]] = set()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(_lock=None, _schema=None, _blocks=[], _fd=None, _views={}, _checked=set())
        return state

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def check_size(self) -> None:
        """Refuse to read on when the open file is shorter than written (rows past the cut are gone)."""
        if self._fd is None:
            return
        if os.fstat(self._fd).st_size < self.meta["data_bytes"]:
            raise self.shrank_error()

    def shrank_error(self) -> DataFormatError:
        size = os.fstat(self._fd).st_size if self._fd is not None else 0
        return DataFormatError(
            f"record file {self.path} shrank to {size} bytes while being read (it had {self.meta['data_bytes']} "
            "when opened): it was truncated or rewritten in place. Rewrite the set, replacing files by rename "
            "(ArrowRecordWriter does), and read it again.",
            path=self.path,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._token = next(_shard_tokens)  # tokens name files of this process only

    def check_length(self, size: int, fix: str) -> None:
        """Refuse the data file when its ``size`` is not the length its metadata records; ``fix``: what to do."""
        written = self.meta["data_bytes"]
        if size != written:
            what = "truncated" if size < written else "longer than written"
            raise DataFormatError(
                f"record file {self.path} is {what}: {size} bytes, but its metadata says {written}. {fix}",
                path=self.path,
            )

    def _open(self) -> Any:
        path = self.path
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as error:
            raise DataFormatError(f"record file {path}: can't read it: {error.strerror or error}", path=path) from None
        try:
            reader = self._open_fd(fd)
        except (pa.ArrowException, UnicodeError) as error:
            os.close(fd)
            raise DataFormatError(
                f"record file {path}: its Arrow schema is damaged ({type(error).__name__}: {error}); rewrite the set.",
                path=path,
            ) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return reader

    def _open_fd(self, fd: int) -> Any:
        path = self.path
        size = os.fstat(fd).st_size
        self.check_length(size, "The file is damaged or was replaced; rewrite it.")
        try:
            # The reads and the size checks must see one file: read through the descriptor we fstat.
            with pa.OSFile(_fd_path(fd, path), "r") as handle:
                reader = pa.ipc.open_file(handle)
                self._blocks = _record_batch_blocks(lambda n, at: os.pread(fd, n, at), size)
        except (pa.ArrowException, OSError) as error:
            raise DataFormatError(
                f"record file {path} is not a valid Arrow IPC file ({error}); it is corrupted or not a record file.",
                path=path,
            ) from None
        return self._check_reader(reader)

    def _check_reader(self, reader: Any) -> pa.Schema:
        """The opened Arrow file ``reader`` checked against the metadata (set id, schema, batches); its schema."""
        path, meta = self.path, self.meta
        set_id = (reader.schema.metadata or {}).get(SET_ID_KEY, b"").decode(errors="replace")
        if set_id != meta["set_id"]:
            raise DataFormatError(
                f"record file {path} does not belong to its metadata file (set id {set_id or 'missing'} inside the "
                f"data, {meta['set_id']} in {os.path.basename(path)}{META_SUFFIX}): one of them was replaced. Rewrite "
                "the set.",
                path=path,
            )
        stored_schema = (reader.schema.metadata or {}).get(SCHEMA_KEY)
        if stored_schema is not None and _json_or_none(stored_schema) != meta["schema"]:
            raise DataFormatError(
                f"record file {path}: the schema in its metadata file differs from the one stored in the data file; "
                "one of them was changed. Rewrite the set.",
                path=path,
            )
        expected = [f.name for field in self.fields.values() for f in field.arrow_fields()]
        if reader.schema.names != expected:
            raise DataFormatError(
                f"record file {path}: its columns {reader.schema.names} differ from its metadata's schema {expected}.",
                path=path,
            )
        for field in self.fields.values():
            for arrow_field in field.arrow_fields():
                found = reader.schema.field(arrow_field.name).type
                if found != arrow_field.type:
                    raise DataFormatError(
                        f"record file {path}: column {arrow_field.name!r} is stored as {found}, but the schema "
                        f"({field.describe()}) needs {arrow_field.type}.",
                        path=path,
                    )
        if reader.num_record_batches != len(meta["batches"]):
            raise DataFormatError(
                f"record file {path} holds {reader.num_record_batches} record batches, but its metadata lists "
                f"{len(meta['batches'])}; it is damaged.",
                path=path,
            )
        if len(self._blocks) != reader.num_record_batches:
            raise DataFormatError(
                f"record file {path}: its Arrow footer lists {len(self._blocks)} record batches, its reader "
                f"{reader.num_record_batches}; it is damaged.",
                path=path,
            )
        return reader.schema

    def view(self, b: int, fields: tuple[str, ...]) -> _BatchView:
        key = (b, fields)
        view = self._views.get(key)
        if view is not None:
            return view
        with self._lock:
            view = self._views.get(key)
            if view is not None:
                return view
            if self._schema is None:
                self._schema = self._open()
            self.check_size()
            offset, meta_bytes, body_bytes = self._blocks[b]
            message = self._read_at(np.empty(meta_bytes + body_bytes, np.uint8), offset)
            buffer = pa.py_buffer(message)
            try:
                batch = pa.ipc.read_record_batch(pa.ipc.read_message(buffer), self._schema)
            except (pa.ArrowException, OSError) as error:
                raise DataFormatError(f"record file {self.path}: record batch {b} is unreadable: {error}", path=self.path) from None
            self._verify(b, batch, fields)
            view = _BatchView(b, batch, [self.fields[f] for f in fields], buffer, offset)
            _RECENT.put((self._token, b), message, offset)
            self._views[key] = view
            return view

    def _read_at(self, out: np.ndarray, position: int) -> np.ndarray:
        """Fill ``out`` from the data file at ``position`` (a file in object storage: a ranged GET)."""
        return _pread_into(self._fd, out, position, self)  # type: ignore[arg-type]  # set by _open(), which runs before any read

    def reader_for(self, b: int) -> Any:
        """``read(out, file_position) -> out``: from batch ``b``'s bytes in memory if still held, else
        with ``pread``."""
        recent = _RECENT.get((self._token, b))
        if recent is None:
            return self._read_at
        message, start = recent

        def copy(out: np.ndarray, position: int) -> np.ndarray:
            flat = out.reshape(-1).view(np.uint8)
            flat[:] = message[position - start : position - start + flat.size]
            return out

        return copy

    def _verify(self, b: int, batch: pa.RecordBatch, fields: tuple[str, ...]) -> None:
        try:
            self._verify_columns(b, batch, fields)
        except pa.ArrowException as error:  # buffers too small for their lengths, bad offsets, ...
            raise DataFormatError(f"record file {self.path}: record batch {b} is malformed: {error}", path=self.path) from None

    def _verify_columns(self, b: int, batch: pa.RecordBatch, fields: tuple[str, ...]) -> None:
        path = self.path
        start, stop = int(self.batch_starts[b]), int(self.batch_starts[b + 1])
        if batch.num_rows != stop - start:
            raise DataFormatError(
                f"record file {path}: record batch {b} has {batch.num_rows} rows, its metadata says {stop - start}.",
                path=path,
            )
        stored = self.meta["batches"][b].get("crc32", {})
        columns = [a.name for f in fields for a in self.fields[f].arrow_fields()]
        todo = [c for c in columns if (b, c) not in self._checked]
        if not todo:
            return
        sub = pa.RecordBatch.from_arrays([batch.column(c) for c in todo], names=todo)
        found = batch_crcs(sub)
        for c in todo:
            if c in stored and found[c] != stored[c]:
                raise DataFormatError(
                    f"record file {path} is corrupted: column {c!r} of record batch {b} (rows {start} to {stop - 1}) "
                    f"fails its checksum (CRC-32 {found[c]:#010x}, written {stored[c]:#010x}). Rewrite the file.",
                    path=path,
                )
        try:
            sub.validate(full=True)
        except pa.ArrowInvalid as error:
            raise DataFormatError(f"record file {path}: record batch {b} is malformed: {error}", path=path) from None
        self._checked.update((b, c) for c in todo)


def _json_or_none(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _flatbuffer_field(buf: bytes, table: int, index: int) -> int | None:
    """Position of field ``index`` of the flatbuffer table at ``table``, or None when absent."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vtable_bytes = struct.unpack_from("<H", buf, vtable)[0]
    if 4 + 2 * index >= vtable_bytes:
        return None
    at = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)[0]
    return table + at if at else None


def _record_batch_blocks(pread: Any, size: int) -> list[tuple[int, int, int]]:
    """``(offset, metadata bytes, body bytes)`` of each record batch, from the Arrow file footer
    (``pread(n, offset)`` reads the file's bytes).

    pyarrow reads the footer but does not expose these; with them a batch is read with one
    ``pread`` of exactly its bytes (Arrow's File.fbs: Footer field 3 is ``recordBatches``, a vector of
    24-byte ``Block`` structs).
    """
    tail = pread(10, size - 10)
    footer_bytes = struct.unpack_from("<i", tail)[0]
    if tail[4:] != b"ARROW1" or not 0 < footer_bytes <= size - 18:
        raise pa.ArrowInvalid("bad Arrow file footer")
    footer = pread(footer_bytes, size - 10 - footer_bytes)
    try:
        root = struct.unpack_from("<I", footer)[0]
        field = _flatbuffer_field(footer, root, 3)
        if field is None:
            return []
        vector = field + struct.unpack_from("<I", footer, field)[0]
        count = struct.unpack_from("<I", footer, vector)[0]
        blocks = [struct.unpack_from("<qi4xq", footer, vector + 4 + 24 * k) for k in range(count)]
    except struct.error:
        raise pa.ArrowInvalid("bad Arrow file footer") from None
    if any(o < 8 or m <= 0 or n < 0 or o + m + n > size for o, m, n in blocks):
        raise pa.ArrowInvalid("an Arrow record batch block lies outside the file")
    return blocks


def _fd_path(fd: int, path: str) -> str:
    """A path that opens the file behind ``fd`` (Linux's /proc), else the file's own path."""
    proc = f"/proc/self/fd/{fd}"
    return proc if os.path.exists(proc) else path


class RecordSet:
    """The rows of several record files, in file order, read by global row index."""

    shard_file: Any = ShardFile  # the class reading one data file (a subclass reads files in object storage)

    def __init__(self, where: str, opened: Sequence[tuple[str, dict[str, Any]]], columns_list: Sequence[str] | None = None):
        self.where = where
        shards = []
        schema = None
        first = None
        files = [path for path, _ in opened]
        for path, meta in opened:
            if schema is None:
                schema, first = meta["schema"], path
            elif meta["schema"] != schema:
                ours = fields_from_json(schema)
                theirs = fields_from_json(meta["schema"])
                diff = sorted(
                    {n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n)}
                )
                details = ", ".join(
                    f"{n}: {ours[n].describe() if n in ours else 'absent'} vs {theirs[n].describe() if n in theirs else 'absent'}"
                    for n in diff
                )
                raise DataFormatError(
                    f"{where}: record file {path} has a different schema from {first} ({details}); files read "
                    "together must share one schema.",
                    path=path,
                )
            shards.append(self.shard_file(path, meta))
        self.shards = shards
        self.fields = fields_from_json(schema)  # type: ignore[arg-type]  # the first file's schema, read above
        self.columns = select_columns(where, columns_list, self.fields, "record file", files[0])
        self._key = tuple(self.columns)
        self.starts = np.concatenate([[0], np.cumsum([s.num_rows for s in shards], dtype=np.int64)])
        self.num_rows = int(self.starts[-1])
        self.index_fields = shards[0].meta.get("index_fields", []) if shards else []

    def file_rows(self) -> list[tuple[int, int]]:
        """``(first global row, row count)`` of each file, in order."""
        return [(int(self.starts[i]), s.num_rows) for i, s in enumerate(self.shards)]

    def paths_of(self, ids: Sequence[int]) -> list[str]:
        files = np.searchsorted(self.starts, np.asarray(ids, dtype=np.int64), side="right") - 1
        return [self.shards[f].path if 0 <= f < len(self.shards) else "" for f in files.tolist()]

    def fetch(self, ids: Sequence[int]) -> list[tuple]:
        """Rows ``ids`` (global indices) as tuples of the selected columns."""
        index = np.asarray(ids, dtype=np.int64)
        n = index.size
        if n == 0:
            return []
        width = len(self.columns)
        out: list[list[Any]] = [[None] * n for _ in range(width)]
        key = self._key
        for f, where, rows in locate_rows(self.starts, index):
            shard = self.shards[f]
            for b, within, in_batch in locate_rows(shard.batch_starts, rows):
                positions = where[within].tolist()
                view = shard.view(b, key)
                shard.check_size()
                read = shard.reader_for(b)  # once per batch: every column reads through it
                for c in range(width):
                    view.put(c, in_batch, positions, out[c], read)
        return list(zip(*out))


def locate_rows(starts: np.ndarray, rows: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Group row numbers by the block holding them (``starts``: each block's first row, then the end).

    Returns ``[(block, positions in rows, offsets within the block)]``; one block (the common case
    for a chunk of consecutive rows) takes no grouping pass.
    """
    blocks = np.searchsorted(starts, rows, side="right") - 1
    first = int(blocks[0])
    if first == blocks[-1] and (blocks == first).all():
        return [(first, np.arange(rows.size), rows - starts[first])]
    located = []
    for block in np.unique(blocks).tolist():
        positions = np.nonzero(blocks == block)[0]
        located.append((block, positions, rows[positions] - starts[block]))
    return located


class FileReader:
    """Reads a record file set row by row (MindSpore's ``mindspore.mindrecord.FileReader``).

    Args:
        file_name: one file of the set (the whole set is read) or a list of files.
        num_consumer: accepted for MindSpore compatibility; reading is single-threaded here.
        columns: the fields to read (default: all).

    Examples:
        >>> import os, tempfile
        >>> from minddata.record import ArrowRecordWriter, FileReader
        >>> path = os.path.join(tempfile.mkdtemp(), "r.arrow")
        >>> with ArrowRecordWriter(path) as w:
        ...     _ = w.add_schema({"id": {"type": "int64"}, "name": {"type": "string"}})
        ...     w.add_index(["name"])
        ...     w.write_raw_data([{"id": i, "name": n} for i, n in enumerate("aba")])
        >>> reader = FileReader(path)
        >>> [int(row["id"]) for row in reader.get_next()]
        [0, 1, 2]
        >>> reader.find("name", "a")
        [0, 2]
    """

    def __init__(self, file_name: Any, num_consumer: int = 4, columns: Sequence[str] | None = None, operator: Any = None):
        self._set = RecordSet("FileReader", open_set("FileReader", file_name), columns)

    def __len__(self) -> int:
        return self._set.num_rows

    def schema(self) -> dict[str, dict[str, Any]]:
        """The schema, as given to ``ArrowRecordWriter.add_schema``."""
        return {name: f.to_json() for name, f in self._set.fields.items()}

    def index_fields(self) -> list[str]:
        return list(self._set.index_fields)

    def get_next(self) -> Any:
        """Yield every row as a dict, in file order."""
        step = 256
        names = self._set.columns
        for start in range(0, self._set.num_rows, step):
            for row in self._set.fetch(range(start, min(start + step, self._set.num_rows))):
                yield dict(zip(names, row))

    def find(self, field: str, value: Any) -> list[int]:
        """Row indices whose index field ``field`` equals ``value`` (vectorized over each batch)."""
        if field not in self._set.index_fields:
            raise ArgumentError(
                f"FileReader.find: {field!r} is not an index field of this set; index fields: {self._set.index_fields}"
            )
        found: list[int] = []
        for s, shard in enumerate(self._set.shards):
            base = int(self._set.starts[s])
            for b in range(len(shard.meta["batches"])):
                values = shard.view(b, (field,)).columns[0][1]
                shard.check_size()
                hits = np.nonzero(values == value)[0]
                found.extend((hits + base + int(shard.batch_starts[b])).tolist())
        return found

    def close(self) -> None:
        """Release the files (MindSpore API; the descriptors close when the reader is collected)."""
        self._set = None  # type: ignore[assignment]  # closed: any later use fails
