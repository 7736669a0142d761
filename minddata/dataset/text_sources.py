"""Streamed file sources: ``CSVDataset``, ``TextFileDataset``, ``TFRecordDataset``.

These formats have no row index, so they are read front to back (MindSpore reads them the same
way). Sharding and shuffling follow :mod:`minddata.dataset._files`: files in sorted order (or an
order drawn from the seed), rows dealt to shards by position in the stream, each shard padded to
equal length; ``shuffle`` is ``Shuffle.GLOBAL`` (default, same as True: file order and rows through
a seeded buffer of 10,000), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False. Errors name the file,
the line or record, and what is wrong.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import math
import os
import re
import struct
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minddata.dataset import _storage
from minddata.dataset import _validate as v
from minddata.dataset._crc32c import masked_crc
from minddata.dataset._files import (
    MINDSPORE_DEFAULT_WORKERS,
    expand_files,
    shard_args,
    shuffle_mode,
    stream_rows,
)
from minddata.dataset._protobuf import ProtobufError, parse_example
from minddata.dataset.base import Dataset
from minddata.dataset.cache import with_cache
from minddata.dataset.schema import Schema, as_schema
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["CSVDataset", "TextFileDataset", "TFRecordDataset"]


def _as_row(item: Any, position: int) -> tuple:
    return item


class _Stream:
    """``open_iter(pass_index, seed)`` of a streamed source: this shard's rows of one epoch."""

    def __init__(
        self,
        files: list[str],
        read_file: Callable[[str], Iterator[tuple]],
        count_file: Callable[[str], int],
        mode: str | None,
        sharding: tuple[int, int] | None,
        by_file: bool,
        readers: int | None = None,
    ):
        self.files = files
        # MindSpore interleaves its file readers' rows: the reader count sets the order.
        self.readers = readers or MINDSPORE_DEFAULT_WORKERS
        self.read_file = read_file
        self.count_file = count_file
        self.mode = mode
        self.sharding = sharding
        self.by_file = by_file
        self._counts: list[int] | None = None

    def __call__(self, pass_index: int, seed: int = 0, row_seed: int | None = None) -> Iterator[tuple]:
        return stream_rows(
            self.files, self.read_file, mode=self.mode, sharding=self.sharding, by_file=self.by_file,
            seed=seed, pass_index=pass_index, counts=self.file_counts, readers=self.readers, row_seed=row_seed,
            files_read_ahead=True,
        )

    def file_counts(self) -> list[int]:
        if self._counts is None:
            self._counts = [self.count_file(f) for f in self.files]
        return self._counts

    def count_files_with(self, count_files: Callable[[Callable[[str], int], list[str]], list[int]]) -> None:
        """Count the files' rows with ``count_files(count_file, files)`` unless they are counted already:
        an executor that reads in workers of its own counts there, so that the process planning the
        passes never reads the files' contents."""
        if self._counts is None:
            counts = [int(n) for n in count_files(self.count_file, list(self.files))]
            if len(counts) != len(self.files):
                raise ValueError(f"counting {len(self.files)} files gave {len(counts)} counts")
            self._counts = counts

    def size(self) -> int | None:
        """Rows per epoch for this shard (counted once by reading the files), or None if it varies."""
        total = sum(self.file_counts())
        if self.sharding is None:
            return total
        shards, me = self.sharding
        if not self.by_file:
            return math.ceil(total / shards) if total else 0
        if self.mode in ("global", "files"):
            return None  # which files are ours changes every epoch
        return sum(c for j, c in enumerate(self.file_counts()) if j % shards == me)


def _readers(where: str, num_parallel_workers: Any) -> int | None:
    """The reader count that sets the interleaving; None: MindSpore's default (8), whatever the
    machine, so the row order never depends on the number of cores."""
    return None if num_parallel_workers is None else int(v.workers(where, num_parallel_workers))


def _node(where: str, names: list[str], stream: _Stream, num_samples: Any) -> ir.IterableSourceNode:
    limit = v.non_negative_int(where, "num_samples", num_samples) if num_samples is not None else None
    return ir.IterableSourceNode(
        where, names, stream, _as_row, limit or None, size=stream.size, seeded=True, sharded=stream.sharding is not None
    )


# -- CSV ------------------------------------------------------------------------------------------


class CSVDataset(Dataset):
    """Rows of CSV files (MindSpore's ``CSVDataset``).

    Args:
        dataset_files: a file, a glob pattern, or a list of them (read in sorted order); local paths or
            ``s3://``/``gs://`` URLs (prefixes and globs listed in the bucket) and ``http(s)://`` URLs.
        field_delim: the field separator (default ``","``); fields may be quoted (RFC 4180).
        column_defaults: one default per column; its Python type sets the column's type (int →
            int32, float → float32, str → string) and it fills empty numeric fields (MindSpore
            raises on those instead). An empty string field is ``""``, as in MindSpore. Without
            it every column is a string.
        column_names: the column names. Without them the first line of each file is its header
            (every file's header must match the first's).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: MindSpore's file readers (default 8): rows of the files (or shard
            blocks) dealt to different readers are interleaved one at a time, as in MindSpore.
        shuffle: see the module docstring (default ``Shuffle.GLOBAL``).
        num_shards, shard_id: this shard's rows: row ``p`` of the stream goes to shard
            ``p % num_shards``, shards padded to equal length.
        storage_options: object storage settings over the environment's (docs/data.md, "Object
            storage"); secrets in it are never shown or serialized.
        cache_dir: a local folder caching what is read from object storage (size-bounded, least
            recently used first out, shared by processes), so later epochs read from disk.

    Each value is a 0-d array (str, int32 or float32). A row with the wrong number of fields, or a
    field that does not parse as its column's type, is an error naming the file and line.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
        >>> _ = open(path, "w").write("name,age\\nann,31\\nbob,\\n")
        >>> ds = md.CSVDataset(path, column_defaults=["", 0], shuffle=False)
        >>> [(str(r["name"]), int(r["age"])) for r in ds.create_dict_iterator(output_numpy=True)]
        [('ann', 31), ('bob', 0)]
    """

    def __init__(
        self,
        dataset_files: Any,
        field_delim: str = ",",
        column_defaults: Sequence[Any] | None = None,
        column_names: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "CSVDataset"
        files = expand_files(where, dataset_files, storage_options=_storage.StorageOptions(where, storage_options, cache_dir=cache_dir))
        if not isinstance(field_delim, str) or len(field_delim) != 1 or field_delim in '"\r\n':
            raise ArgumentError(f"{where}: `field_delim` must be one character other than a quote or newline. Found: {field_delim!r}")
        names = v.column_list(where, "column_names", column_names)
        header = names is None
        if header:
            names = _csv_header(files[0], field_delim)
        if column_defaults is not None:
            if isinstance(column_defaults, (str, bytes)) or not isinstance(column_defaults, (list, tuple)):
                raise ArgumentError(f"{where}: `column_defaults` must be a list. Found: {column_defaults!r}")
            for d in column_defaults:
                if isinstance(d, bool) or not isinstance(d, (int, float, str)):
                    raise ArgumentError(f"{where}: each of `column_defaults` must be an int, float or str. Found: {d!r}")
            if len(column_defaults) != len(names):  # type: ignore[arg-type]  # the names: given, or read from the header above
                source = f"in the header of {files[0]}" if header else "in `column_names`"
                raise ArgumentError(
                    f"{where}: `column_defaults` has {len(column_defaults)} value(s) but there are {len(names)} "  # type: ignore[arg-type]  # the names: given, or read from the header above
                    f"columns {source}: {names}. Give one default per column."
                )
        reader = _CsvReader(names, field_delim, list(column_defaults) if column_defaults is not None else None, header)  # type: ignore[arg-type]  # the names: given, or read from the header above
        stream = _Stream(
            files, reader.read, reader.count, shuffle_mode(where, shuffle), shard_args(where, num_shards, shard_id), False,
            _readers(where, num_parallel_workers),
        )
        super().__init__(with_cache(where, _node(where, names, stream, num_samples), cache))  # type: ignore[arg-type]  # the names: given, or read from the header above


def _csv_header(path: str, delim: str) -> list[str]:
    try:
        with _storage.open_file(path, "r", newline="", encoding="utf-8") as f:
            header = next(csv.reader(f, delimiter=delim), None)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise DataFormatError(f"CSVDataset: can't read the header of {path}: {error}", path=path) from None
    if not header or not all(header):
        raise DataFormatError(
            f"CSVDataset: {path} has no usable header line (found {header!r}); give `column_names`, or add a "
            "header row naming every column.",
            path=path,
        )
    return header


# What a CSV number is: ASCII digits with an optional sign (no "1_000", no padding, no other scripts'
# digits, all of which Python's int()/float() accept); floats may have a fraction, an exponent, or be
# nan/inf.
_CSV_INT = re.compile(r"[+-]?[0-9]+\Z")
_CSV_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z|[+-]?(?:nan|inf|infinity)\Z", re.I)
_INT32 = np.iinfo(np.int32)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# From here on a float64 rounds to float32 infinity (the largest float32 plus half its ulp, 2**104).
_FLOAT32_ROUNDS_TO_INF = _FLOAT32_MAX + 2.0**103


def _parse_number(text: str, is_int: bool, path: str, line: int, name: str) -> int | float:
    """A CSV field as its column's int32 or float32, or an error naming file, line, column and rule."""
    where = f"CSVDataset: {path}, line {line}, column {name!r}"
    if is_int:
        if not _CSV_INT.match(text):
            raise DataFormatError(
                f"{where}: {text!r} is not an int (ASCII digits with an optional sign; its column_defaults entry "
                "sets the type).",
                path=path,
            )
        digits = text.lstrip("+-").lstrip("0")
        # Checked before int(): a field longer than Python's int-parsing limit (4,300 digits) would
        # raise a bare ValueError there, and no int32 has more than 10 digits.
        value = (-1 if text.startswith("-") else 1) * int(digits or "0") if len(digits) <= 10 else None
        if value is None or not _INT32.min <= value <= _INT32.max:
            shown = text if len(text) <= 24 else f"{text[:20]}... ({len(digits)} digits)"
            raise DataFormatError(
                f"{where}: {shown} does not fit the column's int32 ({_INT32.min} to {_INT32.max}).", path=path
            )
        return value
    if not _CSV_FLOAT.match(text):
        raise DataFormatError(
            f"{where}: {text!r} is not a float (ASCII digits, an optional sign, fraction and exponent, or nan/inf; "
            "its column_defaults entry sets the type).",
            path=path,
        )
    number = float(text)
    spelled_out = text.lstrip("+-").lower() in ("nan", "inf", "infinity")
    if not spelled_out and abs(number) >= _FLOAT32_ROUNDS_TO_INF:
        raise DataFormatError(
            f"{where}: {text} overflows the column's float32 (largest finite value {_FLOAT32_MAX:.8g}).", path=path
        )
    return number


class _CsvReader:
    """Rows of CSV files; ``where`` names the dataset in errors (the corpora built on CSV files reuse
    it), ``quoting`` is the :mod:`csv` rule (tab-separated corpora read quotes as text)."""

    def __init__(
        self,
        names: list[str],
        delim: str,
        defaults: list[Any] | None,
        header: bool,
        where: str = "CSVDataset",
        quoting: int = csv.QUOTE_MINIMAL,
    ):
        self.names = names
        self.delim = delim
        self.defaults = defaults
        self.header = header
        self.where = where
        self.quoting = quoting

    def _rows(self, path: str) -> Iterator[tuple[int, list[str]]]:
        try:
            with _storage.open_file(path, "r", newline="", encoding="utf-8") as f:
                reader = csv.reader(f, delimiter=self.delim, strict=True, quoting=self.quoting)
                first = True
                for fields in reader:
                    if first and self.header:
                        first = False
                        if fields != self.names:
                            raise DataFormatError(
                                f"{self.where}: {path}: its header {fields} differs from the first file's {self.names}; "
                                "files read together must share columns (or give `column_names`).",
                                path=path,
                            )
                        continue
                    first = False
                    if not fields:
                        continue  # a blank line
                    yield reader.line_num, fields
        except (OSError, csv.Error, UnicodeDecodeError) as error:
            raise DataFormatError(f"{self.where}: {path}: can't parse it: {error}", path=path) from None

    def count(self, path: str) -> int:
        return sum(1 for _ in self._rows(path))

    def read(self, path: str) -> Iterator[tuple]:
        width = len(self.names)
        defaults = self.defaults
        for line, fields in self._rows(path):
            if len(fields) != width:
                raise DataFormatError(
                    f"{self.where}: {path}, line {line}: {len(fields)} field(s) but {width} column(s) {self.names}.",
                    path=path,
                )
            if defaults is None:
                yield tuple(np.asarray(x) for x in fields)
                continue
            row = []
            for name, text, default in zip(self.names, fields, defaults):
                if isinstance(default, str):
                    text_value: Any = text  # an empty string field stays "", as in MindSpore
                elif text == "":
                    # MindSpore rejects an empty numeric field ("type does not match"); the
                    # column's default is the useful reading of a missing number.
                    text_value = default
                else:
                    text_value = _parse_number(text, isinstance(default, int), path, line, name)
                if isinstance(default, str):
                    row.append(np.asarray(text_value))
                elif isinstance(default, int):
                    row.append(np.asarray(text_value, dtype=np.int32))
                else:
                    row.append(np.asarray(text_value, dtype=np.float32))
            yield tuple(row)


# -- text lines -----------------------------------------------------------------------------------


class TextFileDataset(Dataset):
    """Lines of text files, one row per non-empty line, in column ``text`` (MindSpore's
    ``TextFileDataset``). As in MindSpore, lines end at ``\\n`` only: the ``\\n`` is dropped, a
    ``\\r`` before it stays in the text (a CRLF file's rows end in ``\\r``), a line holding only
    ``\\r`` is a row, and empty lines are skipped. Arguments as in :class:`CSVDataset`.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "t.txt")
        >>> _ = open(path, "w").write("first\\n\\nsecond\\n")
        >>> [str(r["text"]) for r in md.TextFileDataset(path, shuffle=False).create_dict_iterator(output_numpy=True)]
        ['first', 'second']
    """

    def __init__(
        self,
        dataset_files: Any,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "TextFileDataset"
        files = expand_files(where, dataset_files, storage_options=_storage.StorageOptions(where, storage_options, cache_dir=cache_dir))
        stream = _Stream(
            files, _read_lines, _count_lines, shuffle_mode(where, shuffle), shard_args(where, num_shards, shard_id), False,
            _readers(where, num_parallel_workers),
        )
        super().__init__(with_cache(where, _node(where, ["text"], stream, num_samples), cache))


def _lines(path: str) -> Iterator[tuple[int, bytes]]:
    try:
        with _storage.open_file(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                line = raw[:-1] if raw.endswith(b"\n") else raw  # MindSpore's getline: "\r" stays
                if line:
                    yield number, line
    except OSError as error:
        raise DataFormatError(f"TextFileDataset: can't read {path}: {error.strerror or error}", path=path) from None


def _read_lines(path: str) -> Iterator[tuple]:
    for number, line in _lines(path):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataFormatError(
                f"TextFileDataset: {path}, line {number}: not UTF-8 text (byte {error.start} of the line).",
                path=path,
            ) from None
        yield (np.asarray(text),)


def _count_lines(path: str) -> int:
    return sum(1 for _ in _lines(path))


# -- TFRecord -------------------------------------------------------------------------------------


class TFRecordDataset(Dataset):
    """``tf.train.Example`` records from TFRecord files, read without TensorFlow.

    Args:
        dataset_files: a file, a glob pattern, or a list of them (read in sorted order); local paths or
            ``s3://``/``gs://`` URLs (prefixes and globs listed in the bucket) and ``http(s)://`` URLs.
        schema: a :class:`Schema`, a schema JSON file, or ``{name: {"type": T, "shape": [...]}}``:
            the columns to read, their types and shapes. Without it the columns are the features of
            the first record, typed by their lists: bytes → uint8, float → float32, int64 → int64.
            That record is read here, by the process making the dataset; with a schema, the Ray
            executor's driver reads no record at all (the files are counted and read in Ray tasks).
        columns_list: read only these columns (in this order).
        num_samples: read at most this many rows per epoch (per shard); the schema's ``numRows``
            applies when not given.
        shuffle: see the module docstring (default ``Shuffle.GLOBAL``).
        num_shards, shard_id: with ``shard_equal_rows=False`` (default, MindSpore's) whole files are
            dealt to shards (file ``j`` of the epoch's order to shard ``j % num_shards``; needs at
            least ``num_shards`` files; shards may differ in size). With ``shard_equal_rows=True``
            rows are dealt as in :class:`CSVDataset`, shards padded to equal length.
        compression_type: None or ``""`` (plain), ``"GZIP"`` or ``"ZLIB"``.
        storage_options: object storage settings over the environment's (docs/data.md, "Object
            storage"); secrets in it are never shown or serialized.
        cache_dir: a local folder caching what is read from object storage (size-bounded, least
            recently used first out, shared by processes), so later epochs read from disk.

    Framing: each record is ``uint64 length, uint32 masked CRC-32C of the length, data, uint32
    masked CRC-32C of the data`` (little-endian); both CRCs are checked. Values by column type:
    ``string`` → str array; ``uint8``/``int8`` from a bytes list → the bytes as an array (one per
    value: a second axis when there are several); numbers from int64/float lists → 1-D arrays cast
    to the column type; a schema ``shape`` reshapes (one -1 allowed, ``[]`` for a scalar).

    Examples:
        >>> import minddata as md
        >>> md.TFRecordDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: TFRecordDataset: no/such/folder is not a file and matches no file.
    """

    def __init__(
        self,
        dataset_files: Any,
        schema: Any = None,
        columns_list: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        shard_equal_rows: bool = False,
        cache: Any = None,
        compression_type: str | None = None,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "TFRecordDataset"
        options = _storage.StorageOptions(where, storage_options, cache_dir=cache_dir)
        files = expand_files(where, dataset_files, storage_options=options)
        compression = (compression_type or "").upper()
        if compression not in ("", "GZIP", "ZLIB"):
            raise ArgumentError(f"{where}: `compression_type` must be None, '', 'GZIP' or 'ZLIB'. Found: {compression_type!r}")
        v.bool_arg(where, "shard_equal_rows", shard_equal_rows)
        wanted = v.column_list(where, "columns_list", columns_list)
        spec = as_schema(where, schema, options)
        inferred_from = None
        if spec is None:
            inferred_from = files[0]
            spec = _infer_schema(inferred_from, compression)
        columns = {c["name"]: c for c in spec.columns}
        if not columns:
            if inferred_from is not None:
                raise DataFormatError(
                    f"{where}: the schema inferred from {inferred_from} (its first record) names no columns: that "
                    "record has no features. Pass a `schema`, or check the file.",
                    path=inferred_from,
                )
            raise ArgumentError(f"{where}: the schema names no columns; give it at least one column.")
        if wanted is not None:
            unknown = [c for c in wanted if c not in columns]
            if unknown:
                raise ArgumentError(f"{where}: columns_list names {unknown}, which the schema does not have: {list(columns)}")
            columns = {c: columns[c] for c in wanted}
        sharding = shard_args(where, num_shards, shard_id)
        by_file = sharding is not None and not shard_equal_rows
        if by_file and len(files) < sharding[0]:  # type: ignore[index]  # by_file: sharding is set
            raise ArgumentError(
                f"{where}: sharding by file needs at least num_shards={sharding[0]} files; found {len(files)}. "  # type: ignore[index]  # by_file: sharding is set
                "Pass shard_equal_rows=True to shard by rows."
            )
        reader = _TFRecordReader(list(columns.values()), compression)
        stream = _Stream(
            files, reader.read, reader.count, shuffle_mode(where, shuffle), sharding, by_file,
            _readers(where, num_parallel_workers),
        )
        if num_samples is None and spec.num_rows:
            num_samples = spec.num_rows
        node = _node(where, list(columns), stream, num_samples)
        if compression == "":  # compressed records can only be found by reading from the start
            node = dataclasses.replace(node, record_reads=_TFRecordReads(where, stream, reader))
        super().__init__(with_cache(where, node, cache))


class _ZlibFile:
    """``read(n)`` over a zlib stream (TFRecord's ZLIB compression)."""

    def __init__(self, path: str):
        self.raw = _storage.open_file(path, "rb")
        self.inflate = zlib.decompressobj()
        self.buffer = bytearray()

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.raw.read(1 << 16)
            if not chunk:
                self.buffer += self.inflate.flush()
                break
            self.buffer += self.inflate.decompress(chunk)
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out

    def close(self) -> None:
        self.raw.close()


def _open_records(path: str, compression: str) -> Any:
    if compression == "GZIP":
        return gzip.open(_storage.open_file(path, "rb"), "rb")
    if compression == "ZLIB":
        return _ZlibFile(path)
    if _storage.is_remote(path):
        return _storage.open_file(path, "rb")
    return open(path, "rb", buffering=1 << 20)


_READ_PIECE = 1 << 20


def _read_at_most(f: Any, length: int) -> bytes:
    """Up to ``length`` bytes of ``f``: in pieces, so that a crafted length field (up to 2**64) costs
    only the bytes that are really there, never an allocation of its own size."""
    if length <= _READ_PIECE:
        return f.read(length)
    data = bytearray()
    while len(data) < length:
        piece = f.read(min(_READ_PIECE, length - len(data)))
        if not piece:
            break
        data += piece
    return bytes(data)


def _records(path: str, compression: str, *, with_data: bool = True) -> Iterator[tuple[int, int, bytes | None]]:
    """``(record number, byte offset, data)`` of each record, both CRCs checked."""
    where = "TFRecordDataset"
    try:
        f = _open_records(path, compression)
    except OSError as error:
        raise DataFormatError(f"{where}: can't open {path}: {error.strerror or error}", path=path) from None
    plain = compression == ""
    size = _storage.known_size(path) if plain else None
    number = 0
    offset = 0
    try:
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise DataFormatError(
                    f"{where}: {path} is truncated: record {number} at byte {offset} has a {len(header)}-byte header "
                    "(12 expected).",
                    path=path,
                )
            length, length_crc = struct.unpack("<QI", header)
            if masked_crc(header[:8]) != length_crc:
                raise DataFormatError(
                    f"{where}: {path} is corrupted: record {number} at byte {offset} fails its length CRC (not a "
                    "TFRecord file, or damaged there).",
                    path=path,
                )
            if size is not None and offset + 16 + length > size:
                raise DataFormatError(
                    f"{where}: {path} is truncated: record {number} at byte {offset} needs {length} data bytes, the "
                    f"file ends {size - offset - 12} bytes later.",
                    path=path,
                )
            if not with_data and plain:
                f.seek(length + 4, io.SEEK_CUR)
                data = None
            else:
                data = _read_at_most(f, length)
                footer = f.read(4) if len(data) == length else b""
                if len(data) < length or len(footer) < 4:
                    raise DataFormatError(
                        f"{where}: {path} is truncated inside record {number} (at byte {offset} of the "
                        f"{'decompressed ' if not plain else ''}stream): its length field says {length} data bytes "
                        f"and a 4-byte CRC, the stream holds {len(data) + len(footer)} more.",
                        path=path,
                    )
                if with_data:
                    _check_data_crc(data, footer, path, number, offset)
            yield number, offset, data
            number += 1
            offset += 16 + length
    except (zlib.error, EOFError, gzip.BadGzipFile) as error:
        raise DataFormatError(f"{where}: {path}: the {compression} stream is damaged near record {number}: {error}", path=path) from None
    finally:
        f.close()


def _check_data_crc(data: bytes, footer: bytes, path: str, number: int, offset: int) -> None:
    if masked_crc(data) != struct.unpack("<I", footer)[0]:
        raise DataFormatError(
            f"TFRecordDataset: {path} is corrupted: record {number} at byte {offset} fails its data CRC. Copy or "
            "write the file again.",
            path=path,
        )


def _infer_schema(path: str, compression: str) -> Schema:
    schema = Schema()
    for number, offset, data in _records(path, compression):
        try:
            features = parse_example(data)  # type: ignore[arg-type]  # _records reads each record's data here
        except ProtobufError as error:
            raise DataFormatError(
                f"TFRecordDataset: {path}, record {number} (byte {offset}): not a tf.train.Example: {error}", path=path
            ) from None
        for name, (kind, _) in features.items():
            schema.add_column(name, {"bytes": "uint8", "float": "float32", "int64": "int64"}.get(kind, "float32"))
        return schema
    raise DataFormatError(
        f"TFRecordDataset: {path} holds no records, so the columns can't be inferred; pass a `schema`.", path=path
    )


class _TFRecordReader:
    def __init__(self, columns: list[dict[str, Any]], compression: str):
        self.columns = columns
        self.compression = compression

    def count(self, path: str) -> int:
        return sum(1 for _ in _records(path, self.compression, with_data=False))

    def read(self, path: str) -> Iterator[tuple]:
        for number, offset, data in _records(path, self.compression):
            yield self.row(path, number, offset, data)  # type: ignore[arg-type]  # _records reads each record's data here

    def row(self, path: str, number: int, offset: int, data: bytes) -> tuple:
        """The row of record ``number`` (at byte ``offset``) of ``path``."""
        try:
            features = parse_example(data)
        except ProtobufError as error:
            raise DataFormatError(
                f"TFRecordDataset: {path}, record {number} (byte {offset}): not a tf.train.Example: {error}",
                path=path,
            ) from None
        row = []
        for column in self.columns:
            name = column["name"]
            found = features.get(name)
            if found is None:
                raise DataFormatError(
                    f"TFRecordDataset: {path}, record {number} (byte {offset}): feature {name!r} is missing; the "
                    f"record has {list(features)}.",
                    path=path,
                )
            try:
                row.append(_convert(found, column))
            except ValueError as error:
                raise DataFormatError(
                    f"TFRecordDataset: {path}, record {number} (byte {offset}), feature {name!r}: {error}", path=path
                ) from None
        return tuple(row)


class _TFRecordReads:
    """An uncompressed TFRecord stream's rows by record number (the files' records numbered one after
    another): what lets an executor split a pass into tasks (``IterableSourceNode.record_reads``).

    ``order`` runs the stream's own file order, sharding and shuffle (:func:`stream_rows`) over record
    numbers instead of rows, so a split pass holds the local pass's rows in its order. Each file's
    record offsets are found once per process (headers only, CRC-checked).
    """

    def __init__(self, name: str, stream: _Stream, reader: _TFRecordReader):
        self.name = name
        self.stream = stream
        self.reader = reader
        self._offsets: dict[int, np.ndarray] = {}
        self._first_numbers: np.ndarray | None = None

    def count_files_with(self, count_files: Callable[[Callable[[str], int], list[str]], list[int]]) -> None:
        """Count each file's records with ``count_files(count_file, files)`` (an executor's: in its
        workers, which read the files; only the counts come back), unless counted already. The record
        numbers of :meth:`order` are the same whoever counts."""
        self.stream.count_files_with(count_files)

    def _starts(self) -> np.ndarray:
        """Each file's first record number, and the total at the end (counted once)."""
        if self._first_numbers is None:
            self._first_numbers = np.concatenate([[0], np.cumsum(self.stream.file_counts())]).astype(np.int64)
        return self._first_numbers

    def order(self, pass_index: int, seed: int = 0, row_seed: int | None = None) -> np.ndarray:
        files, starts = self.stream.files, self._starts()
        index = {path: f for f, path in enumerate(files)}

        def numbers(path: str) -> Iterator[int]:
            f = index[path]
            return iter(range(int(starts[f]), int(starts[f + 1])))

        stream = self.stream
        return np.fromiter(
            stream_rows(files, numbers, mode=stream.mode, sharding=stream.sharding, by_file=stream.by_file, seed=seed,
                        pass_index=pass_index, counts=stream.file_counts, readers=stream.readers, row_seed=row_seed),
            dtype=np.int64,
        )

    def _locate(self, numbers: list[int]) -> tuple[np.ndarray, np.ndarray]:
        starts = self._starts()
        files = np.searchsorted(starts, numbers, side="right") - 1
        return files, np.asarray(numbers, dtype=np.int64) - starts[files]

    def fetch(self, numbers: list[int]) -> list[tuple]:
        files, records = self._locate(numbers)
        rows = []
        opened: tuple[int, Any] | None = None  # one open file while the numbers stay in it
        try:
            for f, record in zip(files.tolist(), records.tolist()):
                path = self.stream.files[f]
                offsets = self._offsets.get(f)
                if offsets is None:
                    offsets = self._offsets[f] = np.fromiter(
                        (offset for _, offset, _ in _records(path, "", with_data=False)), dtype=np.int64)
                if opened is None or opened[0] != f:
                    if opened is not None:
                        opened[1].close()
                    # a record is one ranged GET for an object (small blocks: reads seek to one record)
                    opened = (f, _storage.open_file(path, "rb", block=64 << 10))
                offset = int(offsets[record])
                rows.append(self.reader.row(path, record, offset, _record_at(opened[1], path, record, offset)))
        finally:
            if opened is not None:
                opened[1].close()
        return rows

    def origins(self, numbers: list[int]) -> list[str]:
        return [self.stream.files[f] for f in self._locate(numbers)[0].tolist()]


def _record_at(f: Any, path: str, number: int, offset: int) -> bytes:
    """The data of record ``number`` of uncompressed TFRecord file ``f`` (open ``path``), which starts
    at byte ``offset``."""
    f.seek(offset)
    header = f.read(12)
    length = struct.unpack("<Q", header[:8])[0] if len(header) == 12 else 0
    data = f.read(length)
    footer = f.read(4)
    if len(header) < 12 or len(data) < length or len(footer) < 4:
        raise DataFormatError(
            f"TFRecordDataset: {path} changed after it was indexed: record {number} at byte {offset} is cut short. "
            "Leave the files alone while a pipeline reads them, and start the pipeline again.",
            path=path,
        )
    _check_data_crc(data, footer, path, number, offset)
    return data


_INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _convert(found: tuple[str, Any], column: dict[str, Any]) -> np.ndarray:
    kind, values = found
    target, shape = column["type"], column["shape"]
    if target in ("string", "bytes") and kind not in ("bytes", "empty"):
        raise ValueError(f"a {kind} list can't fill a {target} column")
    if target == "string":
        texts = [b.decode("utf-8") for b in values] if values else []
        out = np.asarray(texts, dtype=str) if texts else np.zeros(0, dtype=str)
    elif target == "bytes":
        if kind == "empty" or len(values) != 1:
            raise ValueError(f"a bytes column takes exactly one value; found {0 if kind == 'empty' else len(values)}")
        out = np.frombuffer(values[0], dtype=np.uint8)
    elif kind == "empty":
        out = np.zeros(0, dtype=target)
    elif kind == "bytes":
        dtype = np.dtype(target)
        arrays = []
        for b in values:
            if len(b) % dtype.itemsize:
                raise ValueError(f"{len(b)} bytes do not divide into {target} values")
            arrays.append(np.frombuffer(b, dtype=dtype))
        if len(arrays) == 1:
            out = arrays[0]
        elif arrays and all(len(a) == len(arrays[0]) for a in arrays):
            out = np.stack(arrays)
        else:
            raise ValueError(f"{len(arrays)} byte strings of different lengths can't form one {target} array")
    elif kind == "float":
        if target not in ("float16", "float32", "float64"):
            raise ValueError(f"a float list can't fill a {target} column (only float16/32/64)")
        out = values.astype(target, copy=False)
    else:
        if target not in _INT_TYPES and target not in ("float16", "float32", "float64", "bool"):
            raise ValueError(f"an int64 list can't fill a {target} column")
        out = values.astype(target, copy=False)
    if shape is not None:
        try:
            out = out.reshape(shape)
        except ValueError:
            raise ValueError(f"{out.size} value(s) don't fit the schema shape {shape}") from None
    return out
