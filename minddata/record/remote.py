"""Record files in object storage (``s3://``, ``gs://``, ``http(s)://``), read with ranged GETs.

A set is opened as on local disk, from its small ``.meta.json`` objects (one URL reads the set its
metadata names, from the same prefix; a list reads exactly the objects listed). A data file's Arrow
footer is read once (one ranged GET of the file's tail), then each record batch with one ranged GET
of exactly its bytes, checked against its CRC-32s as a local batch is; rows are copied out of that
batch while it is held in memory, else read with one ranged GET each. Every read goes through the
store's retries and its optional local cache (:mod:`minddata.dataset._storage`), so a read returns the
exact bytes or fails with the URL: a retried read never loses or duplicates a row.

``MindDataset("s3://bucket/rec/train.rec0")`` reads through this module; a bad argument is refused
before any request:

Examples:
    >>> from minddata.record.remote import open_remote_set
    >>> open_remote_set("MindDataset", [])
    Traceback (most recent call last):
    ...
    minddata.errors.ArgumentError: MindDataset: `dataset_files` must be a URL or a non-empty list of URLs. Found: []
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np
import pyarrow as pa

from minddata.dataset import _storage
from minddata.errors import ArgumentError, DataFormatError
from minddata.record.reader import (
    RecordSet,
    ShardFile,
    _record_batch_blocks,
    check_meta,
    check_set,
    refuse_duplicates,
)
from minddata.record.writer import META_SUFFIX

__all__ = ["RemoteRecordSet", "RemoteShardFile", "open_remote_set"]

# The tail read at open: the Arrow footer (schema and batch blocks) of files up to thousands of batches.
_TAIL_BYTES = 256 << 10


def _read_remote_meta(where: str, path: str, named_by: str | None = None) -> dict[str, Any]:
    """The checked metadata of data object ``path``; a missing data object or metadata object is an
    error naming its URL and the fix."""
    meta_path = _storage.RemotePath(path + META_SUFFIX, path.options) if isinstance(path, _storage.RemotePath) else path + META_SUFFIX
    meta_store, meta_url = _storage.store_of(meta_path)
    try:
        data = meta_store.read(meta_url)
    except _storage.StorageError as error:
        if error.status != 404:
            raise
        store, url = _storage.store_of(path)
        try:
            store.size(url)  # the data object itself missing is the likelier fault: name it
        except _storage.StorageError as missing:
            if missing.status == 404 and named_by is not None:
                raise DataFormatError(
                    f"{where}: record file {path} does not exist, but {os.path.basename(named_by)}'s set names it as "
                    "one of its shards. Upload every shard file of the set (with its .meta.json) to the same prefix, "
                    "or pass the files to read as a list.",
                    path=path,
                ) from None
            raise _storage.StorageError(f"{where}: {missing}", url=missing.url, status=missing.status,
                                        attempts=missing.attempts) from None
        raise DataFormatError(
            f"{where}: record file {path}: its metadata object {meta_url.shown} is missing, so it is not a committed "
            "record file. Upload the .meta.json written beside each data file, or rewrite the set.",
            path=path,
        ) from None
    try:
        meta = json.loads(data)
    except ValueError as error:
        raise DataFormatError(
            f"{where}: record file {path}: its metadata object {meta_url.shown} is not valid JSON ({error}). Upload "
            "the .meta.json written beside the data file again, or rewrite the set.",
            path=path,
        ) from None
    return check_meta(path, meta_url.shown, meta)


def _shard_url(first: str, meta: dict[str, Any], name: str) -> str:
    """Shard ``name`` of ``first``'s set: a plain file name, read from ``first``'s prefix."""
    if "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        raise DataFormatError(
            f"record file {first}: its metadata lists shard {name[:300]!r}, which is not a file name beside it (shards "
            "are read from the same prefix). To read objects elsewhere, pass them as a list: MindDataset([url, ...]).",
            path=first,
        )
    prefix = first[: first.rfind("/") + 1]
    options = first.options if isinstance(first, _storage.RemotePath) else _storage.StorageOptions("object storage")
    return _storage.RemotePath(prefix + name, options)


def open_remote_set(where: str, dataset_files: Any) -> list[tuple[str, dict[str, Any]]]:
    """The record objects to read, each with its checked metadata: one URL reads its whole set (the
    shards its metadata names, beside it), a list exactly the URLs listed."""
    if isinstance(dataset_files, str):
        first = dataset_files
        meta = _read_remote_meta(where, first)
        files = [_shard_url(first, meta, name) for name in meta["shards"]]
        out = [(p, meta if p == first else _read_remote_meta(where, p, named_by=first)) for p in files]
        check_set(where, first, meta, out)
        return out
    if not isinstance(dataset_files, (list, tuple)) or not dataset_files:
        raise ArgumentError(f"{where}: `dataset_files` must be a URL or a non-empty list of URLs. Found: {dataset_files!r}")
    refuse_duplicates(where, dataset_files)
    return [(path, _read_remote_meta(where, path)) for path in dataset_files]


class RemoteShardFile(ShardFile):
    """One data object of a record set: footer and schema on first use, then batches and rows by
    ranged GETs. Holds no connection: the store (and its client) is looked up per process, so a
    forked or spawned worker makes its own."""

    def _open(self) -> Any:
        path = self.path
        store, url = _storage.store_of(path)
        size = store.size(url)
        self.check_length(size, "The object is damaged or was replaced without its .meta.json; upload the set again.")
        start = max(0, size - _TAIL_BYTES)
        tail = store.read(url, start, size)

        def pread(n: int, at: int) -> bytes:
            if at >= start and at + n <= size:
                return tail[at - start : at - start + n]
            return store.read(url, at, at + n)

        raw = _storage.RangedFile(store, url, size=size, block=64 << 10)
        raw.prime(start, tail)
        try:
            with pa.PythonFile(io.BufferedReader(raw, buffer_size=64 << 10), mode="r") as handle:
                reader = pa.ipc.open_file(handle)
            self._blocks = _record_batch_blocks(pread, size)
        except _storage.StorageError:
            raise
        except (pa.ArrowException, OSError, ValueError) as error:
            raise DataFormatError(
                f"record file {path} is not a valid Arrow IPC file ({error}); it is corrupted or not a record file.",
                path=path,
            ) from None
        return self._check_reader(reader)

    def _read_at(self, out: np.ndarray, position: int) -> np.ndarray:
        store, url = _storage.store_of(self.path)
        data = store.read(url, position, position + out.nbytes)
        out.reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8)
        return out

    def check_size(self) -> None:
        """Objects do not shrink under a reader: a read returns the exact bytes asked for or fails."""


class RemoteRecordSet(RecordSet):
    """A record set whose data files are objects (see the module's notes)."""

    shard_file = RemoteShardFile
