"""WebDataset tar shards: the ``WebDataset`` source, and the writer behind
``Dataset.save(file_type="webdataset")`` and ``minddata convert --format webdataset``.

A shard is a plain tar file. Its regular members are grouped into samples as the ``webdataset``
package groups them: a member's *key* is its path up to the first dot of its file name (the folder
part included), its *extension* the rest (lower-cased); consecutive members with the same key form
one sample, and each extension is a column. Members named ``__...__``, ``__...__/`` folders and
members whose key is ``__...__`` (``__meta__.json``) are metadata and skipped.

The reader is random access: each shard's member headers are read once (offsets and sizes, as
``tarfile``'s member list; for a shard in object storage, kept between runs by :func:`kept_index`)
and a sample's members are then read by offset, so shuffling, sharding,
samplers and exact resume are those of every random-access source. Files are opened in one place,
:func:`open_shard`: a local file, or an object in object storage read by ranged GETs (the index
through one streaming GET per shard, shards ``requests_in_flight`` at a time; a chunk's samples of one
shard read together: neighbouring ranges merged into few ranged GETs, ``requests_in_flight`` at a time).
A remote shard read in order (``shuffle=False``, or shards shuffled as wholes) is read through one
streaming GET that a process's worker threads share (:class:`_Readahead`), where each chunk would
otherwise send its own.
"""

from __future__ import annotations

import functools
import glob
import io
import os
import re
import sys
import tarfile
import threading
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from minddata.dataset import _storage
from minddata.dataset import _validate as v
from minddata.dataset._braces import brace_expand
from minddata.dataset._files import block_sampler, shuffle_mode
from minddata.dataset.base import Dataset
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError, RowError, warn

__all__ = ["WebDataset", "open_shard", "expand_shards", "write_webdataset", "write_index_files", "sidecar_path",
           "INT_EXTENSIONS", "STR_EXTENSIONS", "IMAGE_EXTENSIONS", "member_extension"]

# Extensions read as values rather than bytes (by the last part of the extension, as webdataset's
# decoders look at it: "seg.cls" is an integer too).
INT_EXTENSIONS = frozenset({"cls", "cls2", "index", "inx", "id"})
STR_EXTENSIONS = frozenset({"txt", "json"})
KEY = "__key__"

# Rows per chunk: samples usually carry an encoded image (as ImageFolderDataset's IMAGE_CHUNK_ROWS).
_CHUNK_ROWS = 8
# Rows per chunk of shards in object storage: a chunk's samples of one shard are read by one ranged
# GET (read_many merges neighbouring ranges), and each GET costs the server and the client CPU time
# whatever its size, so larger chunks cost fewer requests; 32 samples of ~100 KB are a few MB in a
# worker's hands at a time.
_REMOTE_CHUNK_ROWS = 32
# Remote shards read in order (_Readahead): the bytes a shard's stream keeps behind its position for
# a chunk that arrives late, and the streams a process keeps open.
_STREAM_WINDOW = 8 << 20
_STREAMS_KEPT = 4
# A shard read in file order after the one before it: when its stream has less than this left to
# give, the next shard's GET is sent ahead (in a thread of its own), so the chunk that starts that
# shard finds its first bytes on the way instead of waiting a round trip.
_OPEN_NEXT_BYTES = 4 << 20
_BLOCK = 512  # a tar block: headers and data padding
# How a kept shard index is written (a new layout gets a new name: old entries are then not read).
# Layout: the format name and a newline, the header's length (8 bytes, little-endian), a JSON header
# (keys, exts), then first, offsets and sizes as little-endian int64 (np.savez took ~1 ms per index to
# read back, 20 ms at the start of a run over 20 shards).
_INDEX_FORMAT = "minddata-shard-index-3"  # 3: __meta__.json-style members skipped
_INDEX_CACHE_BYTES = 1 << 30
# The index minddata's writer puts first in each shard it writes: a member named so that readers of
# WebDataset skip it as metadata (webdataset's "__...__" rule, and ours), holding the samples' offsets
# counted from the end of the member, and the byte count of the rest of the archive. A reader that
# finds it valid reads a shard's first kilobytes instead of all of it to index it.
_EMBEDDED_NAME = b"__minddata_index__"
_EMBEDDED_FORMAT = "minddata-shard-index-embedded-1"
_INDEX_FOLDERS: dict[tuple[str, int], _storage.ObjectCache] = {}
_INDEX_FOLDERS_LOCK = threading.Lock()
# A streamed shard's index reads it in pieces of this size (what one call to the HTTP body reads).
_STREAM_PIECE = 1 << 20
_REMOTE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_META = re.compile(r"__[^/]*__($|/)")
_COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
_DECOMPRESS = {"gzip": "gunzip -k", "bzip2": "bunzip2 -k", "xz": "unxz -k", "zstd": "unzstd"}


# -- file names ----------------------------------------------------------------------------------


def _check_local(where: str, text: str) -> None:
    remote = _REMOTE.match(text)
    scheme = remote.group(1).lower() if remote else ("pipe" if text.startswith("pipe:") else None)
    if scheme is not None and scheme not in ("file", *_storage.REMOTE_SCHEMES):
        raise ArgumentError(
            f"{where}: {text} is a {scheme}: URL; WebDataset reads local shards and s3://, gs://, http(s):// URLs "
            "(pipe: commands are not run). Pass their paths or URLs (a list, a glob or 'shard-{000000..000099}.tar')."
        )


def expand_shards(where: str, dataset_files: Any, storage_options: _storage.StorageOptions | None = None) -> list[str]:
    """A path, a glob, a brace pattern (``shard-{000000..000099}.tar``) or a list of them → the shard
    files, in the order given (a glob's matches sorted), each once. ``s3://``/``gs://`` URLs are listed
    (globs) or checked (single objects) in the bucket; ``http(s)://`` URLs are single files."""
    items = [dataset_files] if isinstance(dataset_files, (str, os.PathLike)) else dataset_files
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, (str, os.PathLike)) for i in items):
        raise ArgumentError(
            f"{where}: `dataset_files` must be a path, a glob, a brace pattern ('shard-{{000000..000099}}.tar') or "
            f"a non-empty list of them. Found: {dataset_files!r}"
        )
    files: list[str] = []
    for item in items:
        text = os.fspath(item)
        _check_local(where, text)
        if _storage.is_remote(text):
            options = storage_options or _storage.StorageOptions(where)
            for url in brace_expand(text, where):
                files.extend(u.url for u, _ in _storage.expand_urls(where, url, options))
            continue
        text = _storage.local_path(text)  # file:// (any case, file://localhost/) removed as every source does
        for path in brace_expand(os.path.expanduser(text), where):
            if glob.has_magic(path):
                matches = sorted(m for m in glob.glob(path) if os.path.isfile(m))
                if not matches:
                    raise ArgumentError(f"{where}: the pattern {text} matches no file ({path} matched nothing).")
                files.extend(os.path.abspath(m) for m in matches)
            elif os.path.isfile(path):
                files.append(os.path.abspath(path))
            else:
                shown = text if path == text else f"{path} (from the pattern {text})"
                raise ArgumentError(f"{where}: shard {shown} is not a file. Check the path and the pattern.")
    return list(dict.fromkeys(files))


# -- opening shards ------------------------------------------------------------------------------


class _LocalShard:
    """A local shard file: a stream for indexing, positioned reads for samples (thread-safe)."""

    def __init__(self, path: str):
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> _LocalShard:
        try:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as error:
            raise DataFormatError(f"{self.path}: can't open the shard: {error.strerror or error}", path=self.path) from None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def size(self) -> int:
        return os.fstat(self._fd).st_size  # type: ignore[arg-type]  # open until close()

    def stream(self) -> io.BufferedReader:
        """A seekable binary file object over the shard (closed by the caller)."""
        return open(os.dup(self._fd), "rb", closefd=True)  # type: ignore[arg-type, return-value]  # open until close(); 'rb' opens a BufferedReader

    def blocks(self, stream: Any) -> Any:
        """``block(offset)``: the 512 bytes at ``offset`` (fewer at the end), one positioned read each."""
        fd = self._fd
        return lambda offset: os.pread(fd, _BLOCK, offset)  # type: ignore[arg-type]  # open until close()

    def read_at(self, offset: int, size: int) -> np.ndarray:
        buf = np.empty(size, np.uint8)  # not bytearray(size): zeroing it cost more than the read
        got = os.preadv(self._fd, [buf], offset) if hasattr(os, "preadv") else _pread_into(self._fd, buf, offset)  # type: ignore[arg-type]  # open until close()
        if got != size:
            raise DataFormatError(
                f"{self.path}: the file ends at byte {offset + got}, inside a member that needs bytes {offset} to "
                f"{offset + size}; it shrank or was truncated after it was indexed. Re-copy the shard.",
                path=self.path,
            )
        return buf


def _pread_into(fd: int, buf: np.ndarray, offset: int) -> int:
    data = os.pread(fd, len(buf), offset)
    buf[: len(data)] = np.frombuffer(data, np.uint8)
    return len(data)


class _RemoteShard:
    """A shard in object storage: ``stream()`` reads 1 MiB ranges (tar headers for the index),
    ``read_at`` is one ranged GET, or a hit among the ranges ``prefetch`` read together."""

    def __init__(self, path: str, storage_options: Any):
        self.path = path
        self.url = _storage.split_url(path)
        options = storage_options
        if not isinstance(options, _storage.StorageOptions):  # WebDataset passes its checked options: reused per fetch
            options = _storage.StorageOptions("WebDataset", options)
        self.options = options
        self.store = _storage.get_store(self.url, self.options)  # type: ignore[arg-type]  # split_url of a remote path gives an ObjectURL
        self._size: int | None = None
        self._ready: dict[tuple[int, int], bytes] = {}

    def __enter__(self) -> _RemoteShard:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ready.clear()

    def size(self) -> int:
        if self._size is None:
            self._size = self.store._sizes(self.url)  # type: ignore[arg-type]  # split_url of a remote path gives an ObjectURL
        return self._size

    def stream(self) -> io.BufferedReader:
        """The shard front to back for its headers: one streaming GET (headers and data arrive in one
        round trip; data a header skips by more than 8 MiB is not read). With a ``cache_dir``, aligned
        ranged GETs through the cache instead, so the bytes read here serve the samples' reads."""
        if self.options.get("cache_dir"):
            raw: io.RawIOBase = _storage.RangedFile(self.store, self.url, self.size())  # type: ignore[arg-type]  # split_url of a remote path gives an ObjectURL
        else:
            raw = _storage.StreamedFile(self.store, self.url, self.size(), window=_STREAM_PIECE)  # type: ignore[arg-type]  # split_url of a remote path gives an ObjectURL
        return io.BufferedReader(raw, buffer_size=1 << 16)

    def blocks(self, stream: io.BufferedReader) -> Any:
        """``block(offset)``: the 512 bytes at ``offset`` (fewer at the end) from ``stream``, read on in
        pieces of 1 MiB (a streamed shard's headers sit between its data)."""
        return _Blocks(stream.raw, _STREAM_PIECE)

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        """Read these (offset, size) ranges now, ``requests_in_flight`` at a time."""
        todo = [r for r in dict.fromkeys(ranges) if r not in self._ready]
        try:
            blobs = self.store.read_many([(self.url, o, o + n) for o, n in todo])  # type: ignore[misc]  # split_url of a remote path gives an ObjectURL
        except _storage.StorageError:
            return  # read_at reads them one by one, and names the sample that fails
        self._ready.update(zip(todo, blobs))

    def read_at(self, offset: int, size: int) -> bytes:
        data = self._ready.pop((offset, size), None)
        return data if data is not None else self.store.read(self.url, offset, offset + size)  # type: ignore[arg-type]  # split_url of a remote path gives an ObjectURL


class _Blocks:
    """512-byte blocks at increasing offsets of a remote shard, read in large pieces into one reused
    buffer (one call per piece rather than a read and a seek per member header), by the file's
    positional ``read_on``: a streamed shard's bytes are copied once on their way to its headers
    (indexing a remote shard reads all of it)."""

    def __init__(self, file: Any, piece: int):
        self._file = file
        self._piece = bytearray(piece)
        self._view = memoryview(self._piece)
        self._at = 0  # the offset of _piece[0]
        self._filled = 0

    def __call__(self, offset: int) -> bytes:
        start = offset - self._at
        if 0 <= start and start + _BLOCK <= self._filled:
            return bytes(self._view[start:start + _BLOCK])
        kept = self._filled - start if 0 <= start < self._filled else 0  # the block's first bytes, at the piece's end
        if kept:
            self._view[:kept] = self._view[start:self._filled]
        self._at, self._filled = offset, kept
        while self._filled < _BLOCK:
            got = self._file.read_on(offset + self._filled, self._view[self._filled:])
            if not got:
                break
            self._filled += got
        return bytes(self._view[:min(_BLOCK, self._filled)])


class _Readahead:
    """Remote shards read in order, one streaming GET per shard shared by a process's worker threads.

    A chunk of samples that follow each other in a shard asks :meth:`take` for its ranges. They are
    read from the shard's open stream (a GET from the first chunk's first byte to the shard's end,
    read as far as each chunk needs), so the chunks after it cost no request of their own, and a
    thread reads only its own chunk's bytes while the others decode theirs. A chunk that arrives after
    the stream passed it is served from the bytes skipped on the way (up to ``_STREAM_WINDOW``), or
    else starts the stream again from its first byte (a new pass, as after an iterator left a shard
    half read); at most ``_STREAMS_KEPT`` streams are open (the one used least recently is closed),
    and a stream that reached its shard's last sample is closed. A stream that fails is closed too,
    and leaves the chunk's remaining ranges to the caller's own reads, which retry and name the sample
    that fails; the shard's next chunk opens a new stream."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: OrderedDict[str, _ShardStream] = OrderedDict()
        self._last_opened = -1  # the file number of the shard whose stream opened last

    def take(self, shard: _RemoteShard, index: ShardIndex, reads: list[tuple[int, int]], number: int = -1,
             following: Callable[[], tuple[_RemoteShard, ShardIndex]] | None = None) -> dict[tuple[int, int], bytes]:
        """The bytes of the (offset, size) ``reads`` that the shard's stream gives. ``number`` is the
        shard's place in the file order and ``following`` gives the next shard in it: a shard opened
        right after the one before it is being read in file order, and near its end it sends the next
        shard's GET ahead."""
        closing: list[_ShardStream] = []
        with self._lock:
            stream = self._streams.get(shard.path)
            if stream is None:
                stream = self._add(shard, index, closing)
                stream.in_file_order = number >= 0 and self._last_opened == number - 1
                self._last_opened = number
            self._streams.move_to_end(shard.path)
        for old in closing:
            old.close()
        got = stream.take(sorted(set(reads)))
        if stream.done:
            with self._lock:
                if self._streams.get(shard.path) is stream:
                    del self._streams[shard.path]
            stream.close()
        if following is not None and stream.in_file_order and not stream.next_opened and stream.left() < _OPEN_NEXT_BYTES:
            stream.next_opened = True
            self._open_ahead(*following(), number + 1)
        return got

    def _add(self, shard: _RemoteShard, index: ShardIndex, closing: list[_ShardStream]) -> _ShardStream:
        """A new stream for ``shard`` (under the lock); the least recently used over the limit go to ``closing``."""
        stream = self._streams[shard.path] = _ShardStream(shard, index)
        while len(self._streams) > _STREAMS_KEPT:
            closing.append(self._streams.popitem(last=False)[1])
        return stream

    def _open_ahead(self, shard: _RemoteShard, index: ShardIndex, number: int) -> None:
        closing: list[_ShardStream] = []
        with self._lock:
            if shard.path in self._streams:
                return
            stream = self._add(shard, index, closing)
            stream.in_file_order = True
            stream.opening = threading.Event()
            self._last_opened = number
        for old in closing:
            old.close()
        threading.Thread(target=stream.open_at_start, name="minddata-shard-open", daemon=True).start()


class _ShardStream:
    """One shard's stream for :class:`_Readahead`: reads under a lock, in increasing offsets. Bytes
    skipped on the way to a read (a chunk that another thread will ask for) are kept, up to
    ``_STREAM_WINDOW`` bytes, the oldest dropped first."""

    def __init__(self, shard: _RemoteShard, index: ShardIndex):
        self._store, self._url = shard.store, shard.url
        last = int(index.first[-1]) - 1
        self._last_byte = int(index.offsets[last] + index.sizes[last]) if last >= 0 else 0  # the end of the last member
        self._first_byte = int(index.offsets[0]) if last >= 0 else 0
        self._lock = threading.Lock()
        self._body: Any = None
        self._at = 0  # the next byte the open body gives
        self._skipped: deque[tuple[int, bytes]] = deque()
        self._skipped_bytes = 0
        self._closed = False
        self.done = False
        self.in_file_order = False  # opened right after the shard before it in the file order
        self.next_opened = False  # the next shard's GET was sent ahead
        self.opening: threading.Event | None = None  # set when a GET sent ahead for this shard is answered

    def left(self) -> int:
        """The bytes the stream has yet to give."""
        return self._last_byte - self._at

    def open_at_start(self) -> None:
        """Send the GET from the shard's first member now (a chunk's read that takes the lock first
        opens its own; a failure leaves the stream closed, for the chunk's read to open again)."""
        try:
            with self._lock:
                if self._body is not None or self._closed or self._at:
                    return
                try:
                    self._body = self._store.open_body(self._url, self._first_byte)
                    self._at = self._first_byte
                except Exception:  # noqa: BLE001 - sent ahead on a guess: the chunk's own read retries and names errors
                    self._body = None
        finally:
            if self.opening is not None:
                self.opening.set()

    def take(self, reads: list[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        got: dict[tuple[int, int], bytes] = {}
        if self.opening is not None:
            # the GET sent ahead: its answer, not a second GET (it is bounded by the store's timeouts)
            self.opening.wait()
        with self._lock:
            if self._closed:
                return got
            for offset, size in reads:
                data = self._from_skipped(offset, size) if offset < self._at else None
                if data is None:
                    data = self._read(offset, size)
                if data is None:  # failed: this stream is done, the next chunk opens another
                    self.done = True
                    return got
                got[(offset, size)] = data
            self.done = self._at >= self._last_byte
        return got

    def _from_skipped(self, offset: int, size: int) -> bytes | None:
        for start, piece in self._skipped:
            if start <= offset and offset + size <= start + len(piece):
                return piece[offset - start:offset - start + size]
        return None

    def _read(self, offset: int, size: int) -> bytes | None:
        """The bytes at ``offset``, reading on from the open body (a new GET from ``offset`` if none
        is open, if ``offset`` lies more than ``_STREAM_WINDOW`` ahead, or if the body passed it: a
        new pass over the shard); None if the stream fails. One try: the caller's own reads retry
        (with backoff, bounded) and name the sample that fails, so a failing server is waited for once."""
        try:
            if self._body is None or not 0 <= offset - self._at <= _STREAM_WINDOW:
                self._drop_body()
                self._body = self._store.open_body(self._url, offset)
                self._at = offset
            if offset > self._at:
                self._keep(self._at, self._exactly(offset - self._at))
            return self._exactly(size)
        except Exception:  # noqa: BLE001 - a cut or failed stream: the caller's read retries and names the sample
            self._drop_body()
            return None

    def _exactly(self, size: int) -> bytes:
        data = self._body.read(size)
        if len(data) != size:
            raise _storage.StorageError(f"the stream ended {size - len(data)} bytes short", url=self._url.url)
        self._at += size
        return data

    def _keep(self, offset: int, piece: bytes) -> None:
        self._skipped.append((offset, piece))
        self._skipped_bytes += len(piece)
        while self._skipped_bytes > _STREAM_WINDOW and len(self._skipped) > 1:
            self._skipped_bytes -= len(self._skipped.popleft()[1])

    def _drop_body(self) -> None:
        body, self._body = self._body, None
        _storage.close_body(body)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop_body()
            self._skipped.clear()


def open_shard(path: str, storage_options: Any = None) -> _LocalShard | _RemoteShard:
    """The one place shards are opened (a context manager with ``size()``, ``stream()`` and
    ``read_at(offset, size)``): a local file, or an object read by ranged GETs."""
    if _storage.is_remote(path):
        return _RemoteShard(path, storage_options)
    return _LocalShard(path)


# -- the index -----------------------------------------------------------------------------------


def split_name(name: str) -> tuple[str, str] | None:
    """A member name's (key, extension) as webdataset splits it, or None (no extension)."""
    slash = name.rfind("/") + 1
    dot = name.find(".", slash)
    if dot <= slash or dot == len(name) - 1:
        return None
    return name[:dot], name[dot + 1:]


class ShardIndex:
    """One shard's samples: keys, and per sample its members' extensions, data offsets and sizes."""

    __slots__ = ("path", "keys", "first", "exts", "offsets", "sizes")

    def __init__(self, path: str, keys: list[str], first: np.ndarray, exts: list[str], offsets: np.ndarray, sizes: np.ndarray):
        self.path = path
        self.keys = keys
        self.first = first  # int64, len(keys) + 1: sample i's members are first[i]:first[i + 1]
        self.exts = exts
        self.offsets = offsets
        self.sizes = sizes

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, s) for s in self.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(self.__slots__, state):
            setattr(self, name, value)


def _corrupt(where: str, path: str, what: str, offset: int) -> DataFormatError:
    return DataFormatError(
        f"{where}: {path} is not a complete tar file: {what} at byte offset {offset}. The shard is truncated or "
        "damaged (an interrupted download, copy or writer leaves such a file): copy or write it again.",
        path=path,
    )


def index_shard(where: str, path: str, storage_options: Any = None) -> ShardIndex:
    """Read the member headers of one shard (not its data) and group the members into samples."""
    with open_shard(path, storage_options) as shard, shard.stream() as stream:
        size = shard.size()
        _check_plain_tar(where, path, stream, size)
        embedded = _embedded_index(path, stream, size)
        if embedded is not None and _ends_where_indexed(shard, embedded, size):
            return embedded
        return _group(where, path, _walk_members(where, path, shard, stream, size))


def _check_plain_tar(where: str, path: str, stream: Any, size: int) -> None:
    """An error naming the fix for a compressed or empty shard (``stream`` at its start)."""
    magic = stream.read(6)
    for prefix, kind in _COMPRESSED.items():
        if magic.startswith(prefix):
            raise DataFormatError(
                f"{where}: {path} is a {kind}-compressed file; samples are read by offset, which needs an "
                f"uncompressed tar. Decompress it (`{_DECOMPRESS[kind]} {os.path.basename(path)}`) and read the .tar.",
                path=path,
            )
    if size == 0:
        raise _corrupt(where, path, "the file is empty (a tar has at least its end-of-archive blocks)", 0)


def _walk_members(where: str, path: str, shard: Any, stream: Any, size: int) -> Any:
    """(name, data offset, size) of every regular member of an open shard, from its headers."""
    stream.seek(0)
    members: Any = _plain_members(shard.blocks(stream), size)
    if members is None:  # not plain ustar/GNU headers, or damaged: tarfile reads it and names what is wrong
        stream.seek(0)
        members = _tarfile_members(where, path, stream, size)
    return members


def _embedded_index(path: str, stream: Any, size: int) -> ShardIndex | None:
    """The index minddata's writer put first in the shard (read from ``stream``'s start), or None: no
    such member, or one that does not fit this shard (the shard is then indexed by its headers)."""
    stream.seek(0)
    fields = _header_fields(stream.read(_BLOCK))
    if fields is None or fields[0] != _EMBEDDED_NAME or fields[1] not in _REGULAR_TYPES:
        return None
    length = fields[2]
    base = _BLOCK + -(-length // _BLOCK) * _BLOCK
    if base > size:
        return None
    return _decode_index(path, stream.read(length), size, _EMBEDDED_FORMAT, base)


def _ends_where_indexed(shard: Any, index: ShardIndex, size: int) -> bool:
    """Whether the archive's end-of-archive block follows the last indexed member: members added
    after the index was written (``tar -r``, tarfile's append mode) write over it, often without
    changing the file's size (they fill the last record's padding)."""
    if not len(index.sizes):
        return False  # nothing to check against: such a shard is small, its headers are walked
    end = int((index.offsets + -(-index.sizes // _BLOCK) * _BLOCK).max())
    return end + _BLOCK <= size and bytes(shard.read_at(end, _BLOCK)).count(0) == _BLOCK


def kept_index(where: str, path: str, storage_options: _storage.StorageOptions) -> ShardIndex:
    """A shard's index; for a shard in object storage, kept between runs.

    Indexing a remote shard reads all of it (its headers sit between its data), so each index is kept
    in ``<cache_dir>/shard-index`` (``~/.cache/minddata/shard-index`` without a ``cache_dir``; about
    1 GiB at most, trimmed least recently used first by each process when it first keeps one) under
    the object's URL, size and version tag (its ETag, from the listing or a HEAD): a later run, or
    another process, reads the index from there instead of the shard, and a shard that changed in the
    bucket (a new ETag) is indexed again. Processes that need one shard's index at once (the ranks of
    a node starting together) make it once: the others wait for it (:meth:`ObjectCache.making`). A
    shard without a version tag, or with ``storage_options={"index_cache": False}``, is indexed on every run."""
    if not _storage.is_remote(path):
        return index_shard(where, path, storage_options)
    url = _storage.split_url(path)
    assert isinstance(url, _storage.ObjectURL)
    store = _storage.get_store(url, storage_options)
    size = store._sizes(url)  # a HEAD where no listing saw the shard, which gives its version tag too
    version = store.version(url) if storage_options.get("index_cache") else None
    kept = _index_folder(storage_options) if version else None
    entry = f"{_INDEX_FORMAT}:{size}:{version}"
    if kept is None:
        return sidecar_index(where, path, store, url, size) or index_shard(where, path, storage_options)
    index = _decode_index(path, kept.get_entry(store, url, entry), size)
    if index is not None:
        return index
    with kept.making(store, url, entry):  # the ranks of a node that start together index each shard once
        index = _decode_index(path, kept.get_entry(store, url, entry), size)  # made while this one waited
        if index is None:
            index = sidecar_index(where, path, store, url, size) or index_shard(where, path, storage_options)
            kept.put_entry(store, url, entry, _encode_index(index))
    return index


# -- index files next to the shards (DALI's format) ----------------------------------------------

_SIDECAR_VERSION = "v1.2"


def sidecar_path(path: str) -> str:
    """The index file of a shard, where DALI's ``wds2idx`` writes it by default: the shard's path up
    to the first dot of its file name, then ``.idx``.

    >>> sidecar_path("s3://bucket/train/shard-000042.tar")
    's3://bucket/train/shard-000042.idx'
    """
    name_at = path.rfind("/") + 1
    dot = path.find(".", name_at + 1)
    return (path[:dot] if dot > 0 else path) + ".idx"


def sidecar_text(where: str, path: str, members: Any) -> str:
    """A shard's index in DALI's format (``v1.2 <samples>``, then per sample its members as
    ``<ext> <data offset> <size> <name>``), from its (name, data offset, size) members: what DALI's
    ``fn.readers.webdataset(index_paths=...)`` and :class:`WebDataset` read."""
    samples: list[list[str]] = []
    current = None
    for name, key, ext, offset, size in _sample_members(members):
        if any(c.isspace() for c in name):
            raise DataFormatError(
                f"{where}: {path}: the member {name!r} has a space in its name, which DALI's index format (fields "
                "separated by spaces) cannot hold. Rename the member, or read the shard without an index file.",
                path=path,
            )
        if key != current:
            samples.append([])
            current = key
        samples[-1].append(f"{ext} {offset} {size} {name}")
    return "".join([f"{_SIDECAR_VERSION} {len(samples)}\n", *(" ".join(sample) + "\n" for sample in samples)])


def write_index_files(dataset_files: Any, *, overwrite: bool = False,
                      storage_options: dict[str, Any] | None = None) -> list[str]:
    """Write each shard's index file next to it, in DALI's format (:func:`sidecar_path`,
    :func:`sidecar_text`), from the shard's member headers; returns the index files written.

    A remote shard read by :class:`WebDataset` for the first time is read whole to find its samples
    (on every machine of a job, unless its index is kept from an earlier run there); with its index
    file next to it, it costs two small requests instead. DALI's ``fn.readers.webdataset`` reads these
    files as its ``index_paths``. Shards in object storage get their index file there (a PUT each).
    Nothing is written when any index file exists already, unless ``overwrite``.

    Examples:
        >>> import io, os, tarfile, tempfile
        >>> from minddata.dataset.webdataset import write_index_files
        >>> path = os.path.join(tempfile.mkdtemp(), "shard-000000.tar")
        >>> with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        ...     for name, data in (("a.cls", b"3"), ("a.txt", b"hello")):
        ...         info = tarfile.TarInfo(name); info.size = len(data); tar.addfile(info, io.BytesIO(data))
        >>> [os.path.basename(p) for p in write_index_files(path)]
        ['shard-000000.idx']
        >>> print(open(path[:-4] + ".idx").read(), end="")
        v1.2 1
        cls 512 1 a.cls txt 1536 5 a.txt
    """
    where = "minddata index"
    options = _storage.StorageOptions(where, storage_options)
    files = expand_shards(where, dataset_files, options)
    targets = [sidecar_path(path) for path in files]
    for path, target in zip(files, targets):
        if target == path:
            raise ArgumentError(f"{where}: {path} is named as an index file (.idx), not a shard: leave it out of the shards.")
    if not overwrite:
        there = [t for t in targets if _storage.exists(t, options)]
        if there:
            raise ArgumentError(
                f"{where}: {len(there)} index file(s) exist already, e.g. {there[0]}. Pass overwrite=True to write "
                "them again."
            )

    def one(path: str, target: str) -> str:
        with open_shard(path, options) as shard, shard.stream() as stream:
            size = shard.size()
            _check_plain_tar(where, path, stream, size)
            members = list(_walk_members(where, path, shard, stream, size))
        _storage.write_file(target, sidecar_text(where, path, members).encode(), options)
        return target

    at_once = min(len(files), options.get("requests_in_flight")) if any(map(_storage.is_remote, files)) else 1
    with ThreadPoolExecutor(max(at_once, 1), thread_name_prefix="minddata-index") as pool:
        return list(pool.map(one, files, targets))


def _sidecar_members(data: bytes, size: int) -> list[tuple[str, int, int]] | None:
    """The (name, data offset, size) members an index file in DALI's v1.2 format lists, or None when
    it is not one, or lists members that cannot be in a tar of ``size`` bytes (unaligned,
    overlapping, past the end)."""
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    head = lines[0].split()
    rows = [line for line in lines[1:] if line.strip()]
    if len(head) != 2 or head[0] != _SIDECAR_VERSION or not head[1].isdigit() or int(head[1]) != len(rows):
        return None
    members: list[tuple[str, int, int]] = []
    end = 0  # where the previous member's data (padded to blocks) ends: the next header at least
    for row in rows:
        tokens = row.split()
        if not tokens or len(tokens) % 4:
            return None
        for i in range(0, len(tokens), 4):
            _, offset_text, size_text, name = tokens[i:i + 4]
            if not (offset_text.isdigit() and size_text.isdigit()):
                return None
            offset, length = int(offset_text), int(size_text)
            if offset % _BLOCK or offset < end + _BLOCK or offset + length > size:
                return None
            members.append((name, offset, length))
            end = offset + -(-length // _BLOCK) * _BLOCK
    return members if members else None


def sidecar_index(where: str, path: str, store: Any, url: Any, size: int) -> ShardIndex | None:
    """A remote shard's index from the index file next to it (:func:`sidecar_path`: DALI's
    ``wds2idx`` and ``minddata index`` write them), checked against the shard (its first member's
    header and the end-of-archive block after its last member: one more request); None when there is
    none (a listing that saw the shards tells without a request), or it does not fit the shard: then
    the shard's headers are read (a warning names an index file that does not fit)."""
    if url.scheme in ("http", "https"):
        return None
    side = url.child(sidecar_path(url.key))
    if store.listed(side) is False:
        return None
    try:
        data = store.read(side)
    except _storage.StorageError:
        return None  # none there (or not readable): the shard is indexed by its headers
    members = _sidecar_members(data, size)
    if members is None:
        problem = (f"is not in DALI's {_SIDECAR_VERSION} format (or lists members that can't be in the shard's "
                   f"{size} bytes)")
    else:
        first_name, first_offset, first_size = members[0]
        end = members[-1][1] + -(-members[-1][2] // _BLOCK) * _BLOCK
        # two GETs at once (gap=0: not one GET spanning the shard between them)
        header, tail = store.read_many([(url, first_offset - _BLOCK, first_offset), (url, end, end + _BLOCK)], gap=0)
        fields = _header_fields(header)
        if fields is None or fields[0].decode(tarfile.ENCODING, "surrogateescape") != first_name or fields[2] != first_size:
            problem = f"does not match the shard: no header of its first member {first_name!r} at byte {first_offset - _BLOCK}"
        elif len(tail) != _BLOCK or tail.count(0) != _BLOCK:
            problem = f"does not match the shard: the archive does not end after its last member (byte {end})"
        else:
            return _group(where, path, members)
    warn("%s: the index file %s of %s %s; the shard's headers are read instead. Fix: write it again with "
         "`minddata index %s --overwrite`.", where, side.shown, url.shown, problem, url.shown)
    return None


def _index_folder(storage_options: _storage.StorageOptions) -> _storage.ObjectCache | None:
    """The folder of kept indexes, one per folder and process; None where it can't be written."""
    from minddata.engine.cache_store import user_cache_folder

    folder = storage_options.get("cache_dir") or user_cache_folder()
    key = (folder, os.getpid())
    with _INDEX_FOLDERS_LOCK:
        kept = _INDEX_FOLDERS.get(key)
        if kept is None:
            try:
                kept = _storage.ObjectCache(folder, _INDEX_CACHE_BYTES, kind="shard-index")
                # Each process writes few indexes, far below the tenth of the bound after which a
                # writer evicts: trimming once per process is what keeps the folder bounded over runs.
                kept.evict()
            except OSError:  # a home folder that can't be written: indexes are not kept
                return None
            _INDEX_FOLDERS[key] = kept
    return kept


def _encode_index(index: ShardIndex, fmt: str = _INDEX_FORMAT, **fields: Any) -> bytes:
    import json

    header = json.dumps({"keys": index.keys, "exts": index.exts, **fields}).encode()  # ASCII: any key round-trips
    arrays = [np.ascontiguousarray(a, dtype="<i8").tobytes() for a in (index.first, index.offsets, index.sizes)]
    return b"".join([fmt.encode() + b"\n", len(header).to_bytes(8, "little"), header, *arrays])


def _decode_index(path: str, data: bytes | None, size: int, fmt: str = _INDEX_FORMAT, base: int = 0) -> ShardIndex | None:
    """The index in ``data`` (format ``fmt``; its offsets counted from byte ``base`` of the shard), or
    None when it is missing, damaged, of another format, or written for a shard of another size."""
    import json

    magic = fmt.encode() + b"\n"
    if not data or not data.startswith(magic):
        return None
    try:
        at = len(magic)
        length = int.from_bytes(data[at:at + 8], "little")
        header = json.loads(data[at + 8:at + 8 + length])
        keys, exts = header["keys"], header["exts"]
        if "archive_bytes" in header and base + int(header["archive_bytes"]) != size:
            return None  # the shard changed after its index was written (members appended, a copy cut short)
        body = memoryview(data)[at + 8 + length:]
        if not (isinstance(keys, list) and isinstance(exts, list)) or len(body) != 8 * (len(keys) + 1 + 2 * len(exts)):
            return None
        numbers = np.frombuffer(body, dtype="<i8").astype(np.int64)
        first, offsets, sizes = np.split(numbers, [len(keys) + 1, len(keys) + 1 + len(exts)])
        offsets = offsets + base
    except Exception:  # noqa: BLE001 - a damaged or foreign file: the shard is indexed again
        return None
    members = len(exts)
    arrays = (first, offsets, sizes)
    consistent = (
        all(a.dtype == np.int64 and a.ndim == 1 for a in arrays)
        and len(first) == len(keys) + 1 and len(offsets) == len(sizes) == members
        and first[0] == 0 and first[-1] == members and bool(np.all(np.diff(first) >= 1))
        and bool(np.all(offsets >= 0)) and bool(np.all(sizes >= 0)) and bool(np.all(offsets + sizes <= size))
    )
    if not consistent:
        return None
    return ShardIndex(path, [str(k) for k in keys], first, [sys.intern(str(e)) for e in exts], offsets, sizes)


def _sample_members(members: Any) -> Iterator[tuple[str, str, str, int, int]]:
    """(name, key, extension, data offset, size) of the members that belong to samples: not metadata
    (``__name__`` at the top, ``__*__/`` folders and minddata's own index, which the ``webdataset``
    package skips too; ``__name__.ext`` at the top, such as ``__meta__.json``, a shard's metadata by
    the same convention, which the package would yield as a sample keyed ``__meta__``), not without
    an extension."""
    for name, offset, size in members:
        if ("/" not in name and name.startswith("__") and name.endswith("__")) or _META.match(name):
            continue
        parts = split_name(name)
        if parts is not None and not _META.match(parts[0]):
            yield name, parts[0], parts[1], offset, size


def _group(where: str, path: str, members: Any) -> ShardIndex:
    """(name, data offset, size) of a shard's regular members, in order → its samples."""
    keys: list[str] = []
    first: list[int] = []
    exts: list[str] = []
    offsets: list[int] = []
    sizes: list[int] = []
    current: str | None = None
    seen: set[str] = set()
    for name, key, original_ext, offset, size in _sample_members(members):
        ext = sys.intern(original_ext.lower())
        if key != current:
            keys.append(key)
            first.append(len(exts))
            current, seen = key, set()
        elif ext in seen:
            raise DataFormatError(
                f"{where}: {path}: sample {key!r} has two members with the extension {ext!r} ({name}); "
                "each extension may appear once per sample.",
                path=path,
            )
        seen.add(ext)
        exts.append(ext)
        offsets.append(offset)
        sizes.append(size)
    return ShardIndex(
        path, keys, np.asarray([*first, len(exts)], dtype=np.int64), exts,
        np.asarray(offsets, dtype=np.int64), np.asarray(sizes, dtype=np.int64),
    )


_USTAR_MAGICS = (b"ustar\x0000", b"ustar  \x00")  # POSIX ustar (its prefix field extends the name), GNU
_REGULAR_TYPES = frozenset(b"0\x007")
_NO_DATA_TYPES = frozenset(b"123456")  # links, devices, folders, FIFOs: tarfile reads no data after them
_CHECKSUM_FIELD = slice(148, 156)


def _byte_sum(data: bytes) -> int:
    """The sum of the bytes of ``data`` (a header: at most 512 bytes), without a Python loop:
    Adler-32's low half is 1 plus the byte sum modulo 65521, exact for up to 256 bytes (256 x 255 + 1
    < 65521). A Python ``sum`` was most of a header's cost in the walk (2.1 of 3.3 us)."""
    return (zlib.adler32(data[:256]) & 0xFFFF) + (zlib.adler32(data[256:512]) & 0xFFFF) - 2


def _header_fields(header: bytes) -> tuple[bytes, int, int] | None:
    """A plain ustar or GNU header's (name, type flag, data size), or None: not such a header, a bad
    checksum, or a size in GNU's base-256 form (the ones tarfile is left to read)."""
    if len(header) < _BLOCK:
        return None
    magic, size_field = header[257:265], header[124:136]
    if magic not in _USTAR_MAGICS or size_field[0] & 0x80:
        return None
    try:
        checksum = int(header[148:156].split(b"\0", 1)[0].strip() or b"0", 8)
        size = int(size_field.split(b"\0", 1)[0].strip() or b"0", 8)
    except ValueError:
        return None
    # the checksum counts its own field as eight spaces (8 x 32)
    if checksum != 256 + _byte_sum(header[:_BLOCK]) - sum(header[_CHECKSUM_FIELD]):
        return None
    name = header[:100].split(b"\0", 1)[0]
    if magic == _USTAR_MAGICS[0]:
        prefix = header[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    return name, header[156], size


def _plain_members(block: Any, size: int) -> list[tuple[str, int, int]] | None:
    """(name, data offset, size) of the regular members of a tar whose headers are all plain ustar or
    GNU headers (what tar, tarfile and webdataset's writers produce for short ASCII names), read with
    ``block(offset)`` (512 bytes, fewer at the end of the file), up to its end-of-archive block.

    None for anything else (PAX or GNU long-name headers, sparse members, a bad checksum, a member that
    runs past the end, a missing end): tarfile then reads the shard, names what is wrong, and parses
    what this does not. This walk costs a few microseconds per member; tarfile's costs ~50."""
    members: list[tuple[str, int, int]] = []
    position = 0
    encoding = tarfile.ENCODING
    while True:
        header = block(position)
        if len(header) < _BLOCK:
            return None
        if header.count(0) == _BLOCK:
            return members if members or position else None  # the end-of-archive block (tarfile: an empty archive is an error)
        fields = _header_fields(header)
        if fields is None:
            return None
        name, kind, member_size = fields
        data = position + _BLOCK
        if kind in _REGULAR_TYPES and not (kind == 0 and name.endswith(b"/")):
            if data + member_size > size:
                return None
            members.append((name.decode(encoding, "surrogateescape"), data, member_size))
            position = data + -(-member_size // _BLOCK) * _BLOCK
        elif kind in _NO_DATA_TYPES or kind == 0:
            position = data
        else:
            return None


def _tarfile_members(where: str, path: str, stream: Any, size: int) -> Iterator[tuple[str, int, int]]:
    """(name, data offset, size) of a shard's regular members as tarfile reads them (every tar
    format), then the check that the archive ends with its end-of-archive block."""
    archive = None
    try:
        archive = tarfile.open(fileobj=stream, mode="r:")
        for info in archive:
            if not info.isreg():
                continue
            if info.issparse():
                raise DataFormatError(f"{where}: {path}: member {info.name} is a sparse file, which can't be read by "
                                      "offset. Write the shard without --sparse.", path=path)
            if info.offset_data + info.size > size:
                raise _corrupt(where, path, f"member {info.name} needs {info.size} bytes of data from byte "
                               f"{info.offset_data}, but the file ends at byte {size}", info.offset_data)
            yield info.name, info.offset_data, info.size
        end = archive.offset
    except tarfile.TarError as error:
        offset = archive.offset if archive is not None else 0
        raise _corrupt(where, path, f"{error}", offset) from None
    finally:
        if archive is not None:
            archive.close()
    # tarfile stops quietly at a bad header after the first; the archive must end with a zero block.
    stream.seek(end)
    trailer = stream.read(512)
    if len(trailer) < 512 or trailer.count(0) != 512:
        what = ("the end-of-archive blocks are missing" if not trailer
                else "a damaged member header (bad checksum or cut short)" if trailer.count(0) != len(trailer)
                else "the end-of-archive blocks are cut short")
        raise _corrupt(where, path, what, end)


# -- values --------------------------------------------------------------------------------------


def member_value(ext: str, data: memoryview | bytes, describe: Any) -> np.ndarray:
    """A member's bytes as a column value: an int64 scalar, a str, or a 1-D uint8 array."""
    last = ext.rsplit(".", 1)[-1]
    if last in INT_EXTENSIONS:
        text = bytes(data).strip()
        try:
            return np.int64(int(text.decode("ascii")))  # type: ignore[return-value]  # an int64 scalar: one of the documented results
        except (UnicodeDecodeError, ValueError, OverflowError):
            raise ValueError(f"{describe()}: a .{last} member holds an ASCII integer; found {bytes(text[:40])!r}") from None
    if last in STR_EXTENSIONS:
        try:
            return np.array(bytes(data).decode("utf-8"))
        except UnicodeDecodeError as error:
            raise ValueError(f"{describe()}: a .{last} member holds UTF-8 text: {error}") from None
    return np.frombuffer(data, dtype=np.uint8)


class _Shards:
    """The shards as one row space (sample i of shard f is row starts[f] + i), indexed on first use."""

    def __init__(self, where: str, files: list[str], columns: list[str] | None, storage_options: _storage.StorageOptions):
        self.where = where
        self.files = files
        self.requested = columns
        self.storage_options = storage_options
        self.columns: list[str] | None = columns
        self._indexes: list[ShardIndex] | None = None
        self._common: list[str] | None = None  # the extensions every sample has, found when a sample lacks one
        self._lock = threading.Lock()
        self._ahead = _Readahead()

    def __getstate__(self) -> dict[str, Any]:
        self.ensure()
        state = dict(self.__dict__)
        state["_lock"] = state["_ahead"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._ahead = _Readahead()

    def ensure(self) -> list[ShardIndex]:
        if self._indexes is None:
            with self._lock:
                if self._indexes is None:
                    self._index()
        return self._indexes  # type: ignore[return-value]  # _index() sets it

    def index_files_with(self, run_per_file: Callable[[Callable[[str], ShardIndex], list[str]], list[ShardIndex]]) -> None:
        """Index the shards with ``run_per_file(index_file, files)`` unless they are indexed already: an
        executor that reads in workers of its own (Ray) indexes remote shards there, so that the process
        planning the passes never reads a shard's contents."""
        if self._indexes is not None or not any(_storage.is_remote(path) for path in self.files):
            return
        with self._lock:
            if self._indexes is None:
                indexes = run_per_file(self._index_one, list(self.files))
                if len(indexes) != len(self.files):
                    raise ValueError(f"indexing {len(self.files)} shards gave {len(indexes)} indexes")
                self._index(list(indexes))

    def _index(self, indexes: list[ShardIndex] | None = None) -> None:
        if indexes is None:
            indexes = self._read_indexes()
        found = sorted({e for index in indexes for e in index.exts})
        if self.requested is None:
            self.columns = [KEY, *found]
            _warn_uneven(self.where, indexes, found)
        else:
            unknown = [c for c in self.requested if c != KEY and c not in found]
            if unknown:
                raise DataFormatError(
                    f"{self.where}: columns_list names {unknown}, which no sample of the {len(self.files)} shard(s) "
                    f"has (from {self.files[0]}). Extensions found: {found}.",
                    path=self.files[0],
                )
        self.starts = np.concatenate([[0], np.cumsum([len(i.keys) for i in indexes], dtype=np.int64)])
        self._indexes = indexes

    def _read_indexes(self) -> list[ShardIndex]:
        remote = [path for path in self.files if _storage.is_remote(path)]
        at_once = min(len(remote), self.storage_options.get("requests_in_flight"))
        if at_once > 1:  # remote shards: their index reads overlap (results and the first error in shard order)
            with ThreadPoolExecutor(at_once, thread_name_prefix="minddata-index") as pool:
                return list(pool.map(self._index_one, self.files))
        return [self._index_one(path) for path in self.files]

    @property
    def _index_one(self) -> Callable[[str], ShardIndex]:
        """A shard's index (kept, from an index file, or walked) by its path; picklable, so an
        executor's workers can run it."""
        return functools.partial(kept_index, self.where, storage_options=self.storage_options)

    def count(self) -> int:
        self.ensure()
        return int(self.starts[-1])

    def file_rows(self) -> list[tuple[int, int]]:
        indexes = self.ensure()
        return [(int(self.starts[f]), len(index.keys)) for f, index in enumerate(indexes)]

    def paths_of(self, ids: Sequence[int]) -> list[str]:
        self.ensure()
        files = np.searchsorted(self.starts, np.asarray(ids, dtype=np.int64), side="right") - 1
        return [self.files[f] for f in files.tolist()]

    def fetch(self, ids: list[int]) -> list[tuple]:
        indexes = self.ensure()
        columns = self.columns
        assert columns is not None
        wanted = [c for c in columns if c != KEY]
        files = (np.searchsorted(self.starts, np.asarray(ids, dtype=np.int64), side="right") - 1).tolist()
        out: list[tuple | None] = [None] * len(ids)
        by_file: dict[int, list[int]] = {}
        for position, f in enumerate(files):
            by_file.setdefault(f, []).append(position)
        for f, positions in by_file.items():
            index = indexes[f]
            with open_shard(index.path, self.storage_options) as shard:
                if isinstance(shard, _RemoteShard):
                    samples = [ids[p] - int(self.starts[f]) for p in positions]
                    members = [_members(index, i, wanted) for i in samples]
                    reads = [r for m in members if m for r in _reads(index, m)]
                    if (samples == list(range(samples[0], samples[0] + len(samples)))  # in order, and no cache to read through
                            and not self.storage_options.get("cache_dir")):
                        following = None
                        if f + 1 < len(indexes):
                            after = indexes[f + 1]
                            following = lambda after=after: (open_shard(after.path, self.storage_options), after)  # noqa: E731
                        shard._ready.update(self._ahead.take(shard, index, reads, f, following))
                    shard.prefetch([r for r in reads if r not in shard._ready])
                for position in positions:
                    row = ids[position]
                    out[position] = self._sample(shard, index, row, row - int(self.starts[f]), wanted, columns)
        return out  # type: ignore[return-value]  # every position was filled

    def _sample(self, shard: Any, index: ShardIndex, row: int, i: int, wanted: list[str], columns: list[str]) -> tuple:
        key = index.keys[i]
        picked = _members(index, i, wanted)
        if picked is None:
            have = [index.exts[j] for j in range(int(index.first[i]), int(index.first[i + 1]))]
            missing = [c for c in wanted if c not in have]
            if self.requested is None:
                if self._common is None:  # once: under the skip mode, every such row builds this error
                    self._common = _common_columns(self.ensure())
                common = self._common
                fix = (f"The columns are every extension found in the shards, and not every sample has them all: pass "
                       f"columns_list={[KEY, *common]!r} (the members every sample has), or list the ones you need")
            else:
                fix = "Name only members every sample has in columns_list"
            raise RowError(
                f"{self.where}: shard {index.path}, sample {key!r} (row {row}) has no member {', '.join(missing)} "
                f"(its members: {', '.join(have) or 'none'}). {fix}, or skip such samples with "
                "config.set_error_samples_mode('skip').",
                op=self.where, row=row, source=index.path,
            )
        values: dict[str, Any] = {KEY: np.array(key)} if KEY in columns else {}
        if picked:
            try:
                reads = _reads(index, picked)
                if len(reads) == 1:  # the members sit together: one read, sliced
                    start, size = reads[0]
                    buf = memoryview(shard.read_at(start, size))
                    pieces = [buf[int(index.offsets[j]) - start: int(index.offsets[j] + index.sizes[j]) - start]
                              for j in picked]
                else:
                    pieces = [memoryview(shard.read_at(o, n)) for o, n in reads]
                for c, piece in zip(wanted, pieces):
                    values[c] = member_value(c, piece, lambda c=c: f"shard {index.path}, member {key}.{c}")
            except (DataFormatError, ValueError, _storage.StorageError) as error:
                raise RowError(f"{self.where}: row {row}: {error}", op=self.where, row=row, source=index.path) from None
        return tuple(values[c] for c in columns)


def _common_columns(indexes: list[ShardIndex]) -> list[str]:
    """The extensions every sample of the shards has, sorted (an extension appears at most once per
    sample, so it is in every sample of a shard when it appears once per sample)."""
    common: set[str] | None = None
    for index in indexes:
        if not index.keys:
            continue
        counts: dict[str, int] = {}
        for ext in index.exts:
            counts[ext] = counts.get(ext, 0) + 1
        here = {ext for ext, n in counts.items() if n == len(index.keys)}
        common = here if common is None else common & here
    return sorted(common or ())


def _warn_uneven(where: str, indexes: list[ShardIndex], found: list[str]) -> None:
    """A warning, when the dataset is made, that some samples lack a column others have (those rows
    fail, or are skipped under the skip mode, when they are read): with the shard, the key, the
    missing members and the ``columns_list`` that every sample has."""
    lacking = 0
    first: tuple[ShardIndex, int] | None = None
    for index in indexes:
        short = np.flatnonzero(np.diff(index.first) < len(found))
        lacking += len(short)
        if first is None and len(short):
            first = (index, int(short[0]))
    if first is None:
        return
    index, i = first
    have = set(index.exts[int(index.first[i]):int(index.first[i + 1])])
    total = sum(len(index.keys) for index in indexes)
    warn("%s: %d of %d samples lack a member that other samples have (e.g. shard %s, sample %r has no %s); "
         "reading such a sample is a RowError (skipped under config.set_error_samples_mode('skip')). Found "
         "columns: %s. Fix: pass columns_list=%r (the members every sample has), or the columns you need.",
         where, lacking, total, index.path, index.keys[i], ", ".join(e for e in found if e not in have),
         [KEY, *found], [KEY, *_common_columns(indexes)])


def _members(index: ShardIndex, i: int, wanted: list[str]) -> list[int] | None:
    """The member numbers of sample ``i`` for the ``wanted`` extensions, in order (None if one is missing)."""
    have = {index.exts[j]: j for j in range(int(index.first[i]), int(index.first[i + 1]))}
    if any(c not in have for c in wanted):
        return None
    return [have[c] for c in wanted]


def _reads(index: ShardIndex, picked: list[int]) -> list[tuple[int, int]]:
    """The (offset, size) reads of the members ``picked``: one read when they sit together (at most
    twice their bytes apart, plus 4 KiB), else one per member. ``fetch``'s prefetch and ``_sample``
    both use it, so a prefetched range is the range ``read_at`` asks for."""
    if not picked:
        return []
    start = int(min(index.offsets[j] for j in picked))
    stop = int(max(index.offsets[j] + index.sizes[j] for j in picked))
    if stop - start <= 2 * int(sum(index.sizes[j] for j in picked)) + 4096:
        return [(start, stop - start)]
    return [(int(index.offsets[j]), int(index.sizes[j])) for j in picked]


class WebDataset(Dataset):
    """Samples of WebDataset tar shards (as the ``webdataset`` package and ``webdataset.TarWriter`` write them).

    Members with the same key (the member's path up to the first dot of its file name) form one
    sample; each extension (lower-cased) is a column, plus ``__key__`` (the key, a str). Values are the
    member's bytes as a 1-D uint8 array (as ``ImageFolderDataset``'s ``image``: ``vision.Decode()``
    takes a ``jpg`` column as it is), except ``cls``, ``cls2``, ``index``, ``inx``, ``id`` (an ASCII
    integer, read as an int64 scalar) and ``txt``, ``json`` (read as a str).

    Args:
        dataset_files: a shard, a glob (``"train/*.tar"``), the brace notation
            (``"train/shard-{000000..000099}.tar"``; steps ``{000000..000098..2}``, lists
            ``{train,val}`` and nesting as the ``braceexpand`` package), or a list of them; read in
            the order given (a glob's matches sorted). ``s3://bucket/prefix/shard-*.tar`` and ``gs://`` URLs (globs listed
            in the bucket) and ``http(s)://`` URLs are read by ranged GETs; ``pipe:`` is refused.
        columns_list: the columns to read, in this order (extensions, and ``"__key__"`` if wanted).
            Default: ``"__key__"`` and every extension found, sorted; when some samples lack one of
            them, a warning names the first such sample and the ``columns_list`` every sample has.
        num_samples: read at most this many samples per epoch (per shard when sharding).
        num_parallel_workers: reader workers (the default from ``config``).
        shuffle: True or ``Shuffle.GLOBAL`` (default): a new permutation of all samples every epoch,
            drawn from the seed (``config.get_seed()`` when sharding, so ranks agree);
            ``Shuffle.FILES``: shards in a random order, samples in order; ``Shuffle.INFILE``: shards
            in order, samples shuffled within each; False: shard order, then tar order.
        num_shards, shard_id: read one part of the samples (every sample in exactly one part per
            epoch; parts are padded to equal length, as every source).
        storage_options: object storage settings over the environment's (``endpoint_url``,
            ``access_key_id``, ``secret_access_key``, ``session_token``, ``region``, ``profile``,
            retry and concurrency limits, ``index_cache``; see docs/data.md, "Object storage").
            Secrets are never shown.
        cache_dir: a local folder caching what is read from object storage (size-bounded, least
            recently used first out, shared by processes), so later epochs read from disk.

    A sample without a member that ``columns_list`` names (or, by default, that another sample has) is
    a ``RowError`` naming the shard, the key, the missing members and the fix, or is skipped under
    ``config.set_error_samples_mode("skip")``. Two members of one sample with
    the same extension, a compressed shard (``.tar.gz``: decompress it; samples are read by offset)
    and a truncated or damaged tar are errors naming the file (and the byte offset).

    Indexing cost: the first time the shards are used (at construction when ``columns_list`` is
    None, since the columns come from the members; else when the dataset is first sized or iterated)
    every member header of every shard is read once: one 512-byte read per member, no data (plain
    ustar/GNU headers are walked directly, a few microseconds each; other tars go through Python's
    ``tarfile``, of the order of seconds per 100,000 members). The index keeps each member's
    extension, offset and size (about 24 bytes per member, plus the key string per sample), travels
    with the pipeline to worker processes, and is not rebuilt per epoch. Reading a sample then costs one positioned read of its
    members (they are adjacent in the tar). A shard in object storage is indexed through one
    streaming GET (shards ``requests_in_flight`` at a time), and its index is kept for later runs
    (:func:`kept_index`; ``storage_options={"index_cache": False}`` turns that off); a remote shard with
    its index file next to it (``shard-000000.idx``, DALI's format: ``minddata index`` or DALI's
    ``wds2idx`` write them) costs two small requests instead of a read of the whole shard. Read in order
    (``shuffle=False`` or ``Shuffle.FILES``), a remote shard's samples come through one streaming GET
    that a process's worker threads share, each reading its own chunk's bytes from it (as the
    ``webdataset`` package streams a shard; a cut stream falls back to ranged GETs, retried); in any
    other order, a chunk of up to 32 samples of a shard is read by few ranged GETs (neighbouring ranges
    merged), one per sample at worst (global shuffle). With a ``cache_dir``, samples are read through
    the cache's 4 MiB blocks.

    Examples:
        >>> import io, os, tarfile, tempfile
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "shard-000000.tar")
        >>> with tarfile.open(path, "w") as tar:
        ...     for key, label in (("a", 3), ("b", 5)):
        ...         for ext, data in (("cls", str(label).encode()), ("txt", key.encode() * 2)):
        ...             info = tarfile.TarInfo(f"{key}.{ext}"); info.size = len(data)
        ...             tar.addfile(info, io.BytesIO(data))
        >>> ds = md.WebDataset(path, shuffle=False)
        >>> ds.get_col_names()
        ['__key__', 'cls', 'txt']
        >>> [(str(r["__key__"]), int(r["cls"]), str(r["txt"])) for r in ds.create_dict_iterator(output_numpy=True)]
        [('a', 3, 'aa'), ('b', 5, 'bb')]
    """

    def __init__(
        self,
        dataset_files: Any,
        columns_list: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = True,
        num_shards: int | None = None,
        shard_id: int | None = None,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "WebDataset"
        options = _storage.StorageOptions(where, storage_options, cache_dir=cache_dir)
        columns = v.column_list(where, "columns_list", columns_list)
        shuffle_mode(where, shuffle)
        files = expand_shards(where, dataset_files, options)
        workers = v.workers(where, num_parallel_workers)
        shards = _Shards(where, files, [c.lower() if c != KEY else c for c in columns] if columns else None, options)
        if columns is None:
            shards.ensure()
        chosen = block_sampler(
            where, shuffle=shuffle, blocks=shards.file_rows, sampler=None, num_samples=num_samples,
            num_shards=num_shards, shard_id=shard_id,
        )
        self._shards = shards
        node = ir.RandomAccessSourceNode(
            where, list(shards.columns), shards.count, chosen, shards.fetch,  # type: ignore[arg-type]  # given, or found by ensure() above
            origins=shards.paths_of, num_workers=workers, index_files_with=shards.index_files_with,
            chunk_rows=_REMOTE_CHUNK_ROWS if any(_storage.is_remote(f) for f in files) else _CHUNK_ROWS,
        )
        super().__init__(node)


# -- writing -------------------------------------------------------------------------------------


def shard_names(file_name: str, num_files: int) -> list[str]:
    """``file_name`` for one shard; else ``name-000000.tar`` ... (the ``.tar`` kept at the end), which
    reads back as ``name-{000000..00000N}.tar``."""
    if num_files == 1:
        return [file_name]
    stem, suffix = (file_name[:-4], ".tar") if file_name.endswith(".tar") else (file_name, "")
    return [f"{stem}-{k:06d}{suffix}" for k in range(num_files)]


def _check_column(name: str) -> str:
    if name == KEY:
        return name
    if not name or "/" in name or name != name.lower() or name.startswith(".") or name.endswith("."):
        raise ArgumentError(
            f"save: column {name!r} can't be a WebDataset extension: extensions are lower-case (readers lower-case "
            "them) with no '/' and no leading or trailing '.'. Rename the column (Dataset.rename)."
        )
    return name


# Extensions whose value readers know how to read (minddata's reader, and the ``webdataset`` package's
# decoders, which look at the last part of an extension): a column whose name ends in one is written
# under its own name; any other column gets the extension of its values added (``label`` ->
# ``label.cls``), so that the value reads back as what it was.
IMAGE_EXTENSIONS = frozenset({"jpg", "jpeg", "png", "gif", "bmp", "webp", "tif", "tiff", "jp2", "ppm", "pgm", "pbm", "pnm"})
_TYPED_EXTENSIONS = INT_EXTENSIONS | STR_EXTENSIONS | IMAGE_EXTENSIONS | frozenset(
    {"npy", "npz", "text", "transcript", "jsn", "class", "count", "pyd", "pickle", "pkl", "pth", "ten", "tb", "mp",
     "msg", "msgpack", "cbor"})
_SNIFFED = {"JPEG": "jpg", "PNG": "png", "GIF": "gif", "WebP": "webp", "TIFF": "tiff", "JPEG 2000": "jp2", "BMP": "bmp"}


def _value_kind(value: Any) -> tuple[str, Any]:
    """``("bytes", bytes)`` (bytes, a NumPy bytes scalar, a 0-d or one-element ``S`` array as
    MindRecord's ``bytes`` columns give, a 1-D uint8 array), ``("str", str)``, ``("int", int)`` (an
    integer or bool scalar), else ``("array", ndarray)``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes", bytes(value)
    if isinstance(value, str):
        return "str", value
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype == np.uint8 and array.ndim == 1:
        return "bytes", array.tobytes()
    if array.size == 1 and array.ndim <= 1 and array.dtype.kind in "SU":
        item = array.reshape(()).item()
        return ("bytes", bytes(item)) if array.dtype.kind == "S" else ("str", str(item))
    if array.ndim == 0 and array.dtype.kind in "iub":
        return "int", int(array)
    return "array", array


def _image_extension(data: bytes) -> str | None:
    """The extension of an encoded image by its first bytes (``jpg``, ``png``, ...), or None. A BMP
    needs its info header's size too: "BM" alone starts too many other byte strings."""
    from minddata.ops.formats import sniff_format

    fmt = sniff_format(data[:16])
    if fmt == "BMP" and not (len(data) >= 18 and int.from_bytes(data[14:18], "little") in (12, 40, 52, 56, 64, 108, 124)):
        return None
    return _SNIFFED.get(fmt)


def member_extension(column: str, value: Any) -> str:
    """The member extension a column is written under, from its first row's value: the column's name
    when its last part is an extension readers decode (``jpg``, ``cls``, ``txt``, ``seg.png``, ...), else
    the name plus the extension of the value: an encoded image (bytes or a 1-D uint8 array) ``.jpg``,
    ``.png``, ... by its first bytes (other bytes keep the name), a str ``.txt``, an integer ``.cls``; any
    other value (floats, arrays) ``.npy``."""
    last = column.rsplit(".", 1)[-1]
    kind, data = _value_kind(value)
    if kind == "array":
        if last in INT_EXTENSIONS and data.ndim == 0:
            raise ArgumentError(f"save: column {column!r} is read back as an integer. Found: {data.dtype} {data!r}. "
                                "Cast it to an integer (a map), or rename the column.")
        return column if last == "npy" else f"{column}.npy"
    if last in _TYPED_EXTENSIONS:
        return column
    if kind == "bytes":
        image = _image_extension(data)
        return f"{column}.{image}" if image else column
    return f"{column}.txt" if kind == "str" else f"{column}.cls"


def encode_member(column: str, ext: str, value: Any, row: int) -> bytes:
    """A value as the bytes of a member with extension ``ext`` (:func:`member_extension`): ``.npy``
    in NumPy's format (which ``webdataset``'s decoders load), integers as ASCII digits, bytes as they
    are, str as UTF-8."""
    last = ext.rsplit(".", 1)[-1]
    kind, data = _value_kind(value)
    if last == "npy":
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(value), allow_pickle=False)
        return buffer.getvalue()
    if kind == "array" or (last in INT_EXTENSIONS and kind != "int" and not _ascii_int(data)):
        shown = f"{data.dtype} array of shape {data.shape}" if kind == "array" else f"{kind} value"
        raise ArgumentError(
            f"save: row {row}: column {column!r} is written as .{ext} members (the extension comes from its name "
            f"or its first row), which a {shown} can't be. Found: {_short(value)}. Give the column one type in "
            "every row (a map), or split it into two columns."
        )
    if kind == "int":
        return str(data).encode("ascii")
    return data.encode("utf-8") if kind == "str" else data


def _ascii_int(data: str | bytes) -> bool:
    """Whether a str or bytes value is an integer in ASCII digits, as a ``.cls`` member holds one."""
    try:
        int(data.encode("ascii") if isinstance(data, str) else data)
    except (ValueError, UnicodeError):
        return False
    return True


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key_of(value: Any, row: int) -> str:
    key = str(np.asarray(value)) if not isinstance(value, str) else value
    base = key.rsplit("/", 1)[-1]
    if not base or "." in base or key.startswith("/") or _META.match(key):
        raise ArgumentError(
            f"save: row {row}: __key__ {key!r} can't name a WebDataset sample: the file name part must be non-empty "
            "without '.', the key relative, and not a __meta__ name. Map __key__ to another value or drop the column."
        )
    return key


def _add_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o444
    info.mtime = 0  # the same rows give the same bytes
    tar.addfile(info, io.BytesIO(data))


def write_webdataset(
    rows: Iterator[Sequence[Any]], names: list[str], file_name: str, num_files: int, *, overwrite: bool = False
) -> list[str]:
    """Write ``rows`` (one value per name in ``names``) as WebDataset samples into ``num_files``
    shards, row ``i`` into shard ``i % num_files``; the key is the ``__key__`` column when there is
    one, else the row number (9 digits). Each column is written under the extension its first row
    gives (:func:`member_extension`). Shards are written under temporary names and renamed when
    every row is written. Returns the shard paths."""
    columns = [_check_column(n) for n in names]
    key_column = columns.index(KEY) if KEY in columns else None
    exts: list[str] = []

    def samples() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
        for i, row in enumerate(rows):
            if i == 0:
                exts.extend(member_extension(c, value) if c != KEY else KEY for c, value in zip(columns, row))
                written = [(c, e) for c, e in zip(columns, exts) if c != KEY]
                for c, e in written:
                    clash = [other for other, e2 in written if e2 == e and other != c]
                    if clash:
                        raise ArgumentError(
                            f"save: columns {c!r} and {clash[0]!r} would both be written as the member extension "
                            f"{e!r}. Found: extensions {[e2 for _, e2 in written]}. Rename one of them (Dataset.rename)."
                        )
            key = _key_of(row[key_column], i) if key_column is not None else f"{i:09d}"
            members = sorted((e, encode_member(c, e, value, i)) for c, e, value in zip(columns, exts, row) if c != KEY)
            yield key, members

    return write_samples(samples(), file_name, num_files, overwrite=overwrite)


def write_samples(
    samples: Iterator[tuple[str, list[tuple[str, bytes]]]], file_name: str, num_files: int, *, overwrite: bool = False
) -> list[str]:
    """Write ``(key, [(extension, bytes), ...])`` samples into shards (see :func:`write_webdataset`)."""
    from minddata.dataset.base import local_destination

    targets = shard_names(os.fspath(local_destination("save", "file_name", file_name)), num_files)
    for path in targets:
        if os.path.exists(path) and not overwrite:
            raise ArgumentError(f"save: {path} exists. Remove it or choose another file_name. Pass overwrite=True to replace it.")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ArgumentError(f"save: the folder {folder} of {path} does not exist. Create it first.")
    token = f".tmp-{os.getpid()}-{os.urandom(4).hex()}"
    temps = [path + token for path in targets]
    tars: list[tarfile.TarFile] = []
    last_keys: list[str | None] = [None] * num_files
    try:
        for temp in temps:
            tars.append(tarfile.open(temp, "w", format=tarfile.PAX_FORMAT))
        count = 0
        for i, (key, members) in enumerate(samples):
            k = i % num_files
            if key == last_keys[k]:
                raise ArgumentError(
                    f"save: rows {i - num_files} and {i} have the same key {key!r}; adjacent samples of a shard "
                    "need different keys (readers would merge them)."
                )
            last_keys[k] = key
            for ext, data in members:
                _add_member(tars[k], f"{key}.{ext}", data)
            count += 1
        for tar in tars:
            tar.close()
        if count == 0:
            raise DataFormatError(f"save: the dataset produced no rows, so there is nothing to write to {file_name}.")
        for temp, path in zip(temps, targets):
            _put_index_first(temp, temp + ".indexed")
            os.replace(temp + ".indexed", path)
            os.remove(temp)
    except BaseException:
        for tar in tars:
            try:
                tar.close()
            except Exception:  # already failed while writing: the file goes anyway
                pass
        for temp in temps:
            for leftover in (temp, temp + ".indexed"):
                if os.path.exists(leftover):
                    os.remove(leftover)
        raise
    return targets


def _put_index_first(archive: str, out: str) -> None:
    """Write ``out``: the shard ``archive`` with its index as a first member (see ``_EMBEDDED_NAME``),
    so that a reader indexes the shard from its first kilobytes."""
    index = index_shard("save", archive)
    payload = _encode_index(index, _EMBEDDED_FORMAT, archive_bytes=os.path.getsize(archive))
    info = tarfile.TarInfo(_EMBEDDED_NAME.decode())
    info.size = len(payload)
    info.mode = 0o444
    info.mtime = 0
    with open(out, "wb") as target, open(archive, "rb") as source:
        target.write(info.tobuf(tarfile.USTAR_FORMAT))
        target.write(payload + b"\0" * (-len(payload) % _BLOCK))
        target.flush()
        _append(source, target)


def _append(source: Any, target: Any) -> None:
    """The rest of file ``source`` written at ``target``'s position: by the kernel where it can
    (``copy_file_range``: no copy through this process, extents shared on filesystems that can)."""
    import shutil

    left = os.fstat(source.fileno()).st_size - source.tell()
    try:
        while left > 0:
            done = os.copy_file_range(source.fileno(), target.fileno(), left)
            if done == 0:
                break
            left -= done
    except (AttributeError, OSError):  # not Linux, or a filesystem pair it can't copy between: by reads
        pass
    shutil.copyfileobj(source, target, 1 << 20)  # what is left (nothing, where the kernel copied it all)


def image_folder_samples(folder: str, extensions: Sequence[str] | None = None) -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    """The images of ``folder/<class>/<image>`` as samples: key ``<class>/<file name without its
    extension>`` (dots in it made ``_``), the image under its own extension (lower-cased, ``jpeg``
    written as ``jpg``), and its label as ``cls`` (classes numbered in name order)."""
    from minddata.dataset.sources import IMAGE_EXTENSIONS, _FolderListing

    wanted = tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in extensions) if extensions else IMAGE_EXTENSIONS
    listing = _FolderListing(os.fspath(folder), wanted, None)
    for i in range(listing.count()):
        path = listing.paths_of([i])[0]
        data, label = listing.read(i)
        cls = os.path.basename(os.path.dirname(path))
        stem, ext = os.path.splitext(os.path.basename(path))
        ext = ext[1:].lower()
        yield f"{cls}/{stem.replace('.', '_')}", [("cls", str(int(label)).encode("ascii")), ("jpg" if ext == "jpeg" else ext, data.tobytes())]


def save_dataset(dataset: Any, file_name: str, num_files: int) -> list[str]:
    """``Dataset.save(file_type="webdataset")``: one epoch of ``dataset`` as WebDataset shards."""
    names = dataset.get_col_names()
    iterator = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
    try:
        return write_webdataset(iter(iterator), names, file_name, num_files)
    finally:
        iterator.close()

