"""The dataset cache's storage: rows kept in shared memory, spilled to Arrow IPC files on disk.

There is no server process. A cache is a directory per session plus named shared-memory segments:

- ``<root>/<session>/<key>/`` holds one cached node's rows (``key`` fingerprints the cached subtree, so
  different pipelines of one session keep different rows); ``index.npz`` maps each row id (the source
  row index) to where its record lies, and is replaced atomically when a fill commits;
- segments are files under ``/dev/shm`` (POSIX shared memory on Linux; the temp folder elsewhere) named
  ``mdcache-<session>-<key>-<token>``: the rows a fill keeps in memory, appended with ``write()`` so a
  full ``/dev/shm`` answers ENOSPC instead of a SIGBUS;
- ``spill-<token>.arrow`` files (Arrow IPC, one record batch per few rows) hold the rows past the
  session's memory ``size`` when spilling is on.

One filler per key at a time: a fill holds an exclusive ``flock`` on ``fill.lock``. A pipeline that
finds it taken reads the rows it misses from its source without storing them, so concurrent
pipelines never wait on each other. Readers see only committed rows. A fill killed before its
commit leaves files no index lists; the next fill of the node removes them. :func:`destroy_session` removes
every segment and file of a session; a pipeline still holding a segment open keeps reading it (Linux
frees the memory when the last reader lets go).

``<root>`` is ``$MINDDATA_CACHE_DIR``, else ``$MINDDATA_CACHE/dataset-cache``, else
``~/.cache/minddata/dataset-cache``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import json
import os
import pickle
import secrets
import shutil
import struct
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CacheStore",
    "SessionInfo",
    "cache_root",
    "private_dirs",
    "shm_dir",
    "session_segments",
    "list_sessions",
    "new_session_id",
    "create_session",
    "destroy_session",
    "destroy_all",
]

_SEGMENT_PREFIX = "mdcache-"
_INDEX = "index.npz"
_FILL_LOCK = "fill.lock"
# Spilled rows per Arrow record batch: small enough that a row lookup decodes little.
_SPILL_BATCH_ROWS = 64
# Index entries: the row id, the file it lies in, and two numbers whose meaning depends on the file's
# kind (a segment: byte offset and length; a spill file: record batch and row in that batch).
_ENTRY = np.dtype([("id", "<i8"), ("file", "<i4"), ("a", "<i8"), ("b", "<i8")])
_HEADER = struct.Struct("<II")


def user_cache_folder() -> str:
    """Where minddata keeps what it makes or derives from data between runs (the dataset cache's
    sessions, kept shard indexes, the bench's images): ``$MINDDATA_CACHE``, else ``~/.cache/minddata``."""
    return os.path.abspath(os.path.expanduser(os.environ.get("MINDDATA_CACHE") or os.path.join("~", ".cache", "minddata")))


def cache_root() -> str:
    """Where sessions live: ``$MINDDATA_CACHE_DIR``, else ``$MINDDATA_CACHE/dataset-cache``, else
    ``~/.cache/minddata/dataset-cache``."""
    explicit = os.environ.get("MINDDATA_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    return os.path.join(user_cache_folder(), "dataset-cache")


def shm_dir() -> str:
    """The folder of shared-memory segments: ``/dev/shm`` on Linux, else the temp folder."""
    if sys.platform.startswith("linux") and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return tempfile.gettempdir()


def _segment_prefix(session_id: int) -> str:
    return os.path.join(shm_dir(), f"{_SEGMENT_PREFIX}{session_id}-")


def session_segments(session_id: int) -> list[str]:
    """Paths of every shared-memory segment of ``session_id``."""
    return sorted(glob.glob(glob.escape(_segment_prefix(session_id)) + "*"))


def _session_dir(root: str, session_id: int) -> str:
    return os.path.join(root, str(session_id))


def private_dirs(path: str) -> None:
    # Records are unpickled when read: only this user may write where they come from.
    os.makedirs(path, mode=0o700, exist_ok=True)


# -- records -----------------------------------------------------------------------------------------


def encode_record(row: tuple, origin: str | None) -> list[Any]:
    """A row (and its source file) as a list of byte buffers: a header, a pickle, and the row's arrays
    out of band (copied once, not through the pickle)."""
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps((row, origin), protocol=5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    lengths = struct.pack(f"<{len(raws)}Q", *(raw.nbytes for raw in raws))
    return [_HEADER.pack(len(payload), len(raws)), lengths, payload, *raws]


def decode_record(record: bytearray) -> tuple[tuple, str | None]:
    """The row and origin of :func:`encode_record`'s bytes. Arrays view ``record`` (writable, no copy)."""
    view = memoryview(record)
    payload_size, count = _HEADER.unpack_from(view, 0)
    at = _HEADER.size
    lengths = struct.unpack_from(f"<{count}Q", view, at)
    at += 8 * count
    payload = view[at : at + payload_size]
    at += payload_size
    buffers = []
    for length in lengths:
        buffers.append(view[at : at + length])
        at += length
    row, origin = pickle.loads(payload, buffers=buffers)
    return row, origin


# -- sessions ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionInfo:
    """One session: its cached nodes (keys), rows kept in memory and on disk, and bytes of each."""

    session_id: int
    keys: int
    memory_rows: int
    disk_rows: int
    memory_bytes: int
    disk_bytes: int


def new_session_id() -> int:
    """A fresh session id (a random 31-bit number, as MindSpore's ``cache_admin -g``)."""
    return secrets.randbelow(2**31 - 1) + 1


def create_session(root: str | None = None) -> int:
    """Make a new, empty session and return its id."""
    root = root or cache_root()
    while True:
        session_id = new_session_id()
        path = _session_dir(root, session_id)
        if not os.path.exists(path):
            private_dirs(path)
            return session_id


def list_sessions(root: str | None = None) -> list[SessionInfo]:
    """Every session under ``root``, with what it holds."""
    root = root or cache_root()
    if not os.path.isdir(root):
        return []
    infos = []
    for name in sorted(os.listdir(root)):
        if not name.isdigit() or not os.path.isdir(os.path.join(root, name)):
            continue
        session_id = int(name)
        keys = memory_rows = disk_rows = disk_bytes = 0
        for key in os.listdir(os.path.join(root, name)):
            folder = os.path.join(root, name, key)
            if not os.path.isdir(folder):
                continue
            keys += 1
            index = _read_index(folder)
            if index is not None:
                files, entries, _ = index
                kinds = np.array([f["kind"] for f in files] or [""])[entries["file"]] if len(entries) else []
                memory_rows += int(np.count_nonzero(np.asarray(kinds) == "shm"))
                disk_rows += int(np.count_nonzero(np.asarray(kinds) == "arrow"))
            disk_bytes += sum(
                os.path.getsize(p) for p in glob.glob(os.path.join(glob.escape(folder), "spill-*.arrow"))
            )
        memory_bytes = sum(_size_of(p) for p in session_segments(session_id))
        infos.append(SessionInfo(session_id, keys, memory_rows, disk_rows, memory_bytes, disk_bytes))
    return infos


def _size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def destroy_session(session_id: int, root: str | None = None) -> bool:
    """Remove every segment and file of ``session_id``; ``False`` when it held nothing."""
    root = root or cache_root()
    found = False
    for path in session_segments(session_id):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        found = True
    folder = _session_dir(root, session_id)
    if os.path.isdir(folder):
        shutil.rmtree(folder, ignore_errors=True)
        found = True
    return found


def destroy_all(root: str | None = None) -> list[int]:
    """Destroy every session under ``root``; returns their ids."""
    root = root or cache_root()
    ids = [info.session_id for info in list_sessions(root)]
    for session_id in ids:
        destroy_session(session_id, root)
    return ids


# -- the index ---------------------------------------------------------------------------------------


def _read_index(folder: str) -> tuple[list[dict], np.ndarray, dict] | None:
    """``(files, entries sorted by id, meta)`` of a committed index, or ``None``."""
    try:
        with np.load(os.path.join(folder, _INDEX), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            entries = np.array(data["entries"], dtype=_ENTRY)
    except (FileNotFoundError, OSError, KeyError, ValueError):
        return None
    return meta.pop("files"), entries, meta


def _write_index(folder: str, files: list[dict], entries: np.ndarray, meta: dict) -> None:
    private_dirs(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".index-", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, entries=entries, meta=np.array(json.dumps({**meta, "files": files})))
        os.replace(tmp, os.path.join(folder, _INDEX))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class CacheStore:
    """One cached node's rows in one session, as seen by one pipeline: look-ups, reads and fills.

    ``size_bytes`` bounds the memory the whole session keeps (0: until shared memory runs out);
    rows past it go to Arrow files when ``spilling``, else are not kept (later passes read them
    from the source again).
    """

    def __init__(self, session_id: int, key: str, size_bytes: int, spilling: bool, root: str | None = None):
        self.session_id = session_id
        self.key = key
        self.size_bytes = size_bytes
        self.spilling = spilling
        self.folder = os.path.join(root or cache_root(), str(session_id), key)
        self._stamp: tuple | None = None
        self._files: list[dict] = []
        self._entries = np.zeros(0, _ENTRY)
        self._meta: dict = {}
        self._fds: dict[int, int] = {}
        self._arrow: dict[int, Any] = {}

    # Reading ------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Load the index again if a fill committed since it was loaded."""
        try:
            st = os.stat(os.path.join(self.folder, _INDEX))
            stamp: tuple | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp == self._stamp:
            return
        index = _read_index(self.folder) if stamp is not None else None
        self._close_files()
        if index is None:
            self._files, self._entries, self._meta = [], np.zeros(0, _ENTRY), {}
        else:
            self._files, self._entries, self._meta = index
        self._stamp = stamp

    @property
    def complete_length(self) -> int | None:
        """Rows of a full pass, once a fill has stored every row of one (sources read front to back)."""
        return self._meta.get("complete_length")

    def __len__(self) -> int:
        return len(self._entries)

    def contains(self, ids: np.ndarray) -> np.ndarray:
        """For each id, whether its row is stored."""
        have = self._entries["id"]
        if not len(have):
            return np.zeros(len(ids), bool)
        at = np.minimum(np.searchsorted(have, ids), len(have) - 1)
        return have[at] == ids

    def get(self, ids: list[int]) -> list[tuple[tuple, str | None]]:
        """The stored rows (and origins) of ``ids``, which must all be stored."""
        have = self._entries
        at = np.searchsorted(have["id"], ids)
        return [self._read(have[k]) for k in at]

    def _read(self, entry: np.void) -> tuple[tuple, str | None]:
        file = int(entry["file"])
        spec = self._files[file]
        if spec["kind"] == "shm":
            fd = self._fds.get(file)
            if fd is None:
                fd = self._fds[file] = os.open(spec["path"], os.O_RDONLY)
            record = bytearray(int(entry["b"]))
            got = os.preadv(fd, [record], int(entry["a"]))
            if got != len(record):
                raise OSError(errno.EIO, f"cache segment {spec['path']} is shorter than its index says")
            return decode_record(record)
        reader = self._arrow.get(file)
        if reader is None:
            import pyarrow as pa

            reader = self._arrow[file] = pa.ipc.open_file(pa.memory_map(spec["path"], "r"))
        value = reader.get_batch(int(entry["a"])).column(1)[int(entry["b"])]
        return decode_record(bytearray(value.as_buffer()))

    def _close_files(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        self._arrow.clear()

    def close(self) -> None:
        self._close_files()

    # Filling ------------------------------------------------------------------------------------

    def begin_fill(self) -> Filler | None:
        """A :class:`Filler` when no other pipeline is filling this node, else ``None``."""
        private_dirs(self.folder)
        fd = os.open(os.path.join(self.folder, _FILL_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return None
            raise
        # Numbering of the files this fill writes continues the newest committed index.
        self._stamp = None
        self.refresh()
        self._sweep_orphans()
        return Filler(self, fd)

    def _sweep_orphans(self) -> None:
        """Remove this node's files that no committed index lists: a fill killed before its commit
        left them, and only a fill (which holds the lock, as the caller does) could still own them."""
        listed = {spec["path"] for spec in self._files}
        prefix = f"{_segment_prefix(self.session_id)}{self.key}-"
        spills = glob.glob(os.path.join(glob.escape(self.folder), "spill-*.arrow"))
        for path in glob.glob(glob.escape(prefix) + "*") + spills:
            if path not in listed:
                with contextlib.suppress(OSError):
                    os.unlink(path)


class Filler:
    """Stores new rows of one pass for a :class:`CacheStore`; :meth:`commit` publishes them."""

    def __init__(self, store: CacheStore, lock_fd: int):
        self.store = store
        self.lock_fd = lock_fd
        self.token = secrets.token_hex(4)
        self.entries: list[tuple[int, int, int, int]] = []
        self.files: list[dict] = []
        self.stored: set[int] = set()
        self.memory_full = False
        self.segment_fd: int | None = None
        self.segment_used = 0
        self.session_memory = sum(_size_of(p) for p in session_segments(store.session_id))
        self.spill_writer: Any = None
        self.spill_rows: list[tuple[int, str | None, bytes]] = []
        self.spill_batches = 0

    def put(self, row_id: int, row: tuple, origin: str | None) -> bool:
        """Keep ``row`` under ``row_id``; ``False`` when there is no room for it."""
        if row_id in self.stored or self.store.contains(np.array([row_id], np.int64))[0]:
            return True
        parts = encode_record(row, origin)
        size = sum(memoryview(p).nbytes for p in parts)
        if not self.memory_full and (
            not self.store.size_bytes or self.session_memory + size <= self.store.size_bytes
        ):
            if self._append_segment(row_id, parts, size):
                return True
        if not self.store.spilling:
            return False
        self._spill(row_id, parts)
        return True

    def _append_segment(self, row_id: int, parts: list[Any], size: int) -> bool:
        if self.segment_fd is None:
            path = f"{_segment_prefix(self.store.session_id)}{self.store.key}-{self.token}"
            self.segment_fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            self.files.append({"kind": "shm", "path": path})
            self.segment_file = len(self.store._files) + len(self.files) - 1
        try:
            written = os.pwritev(self.segment_fd, parts, self.segment_used)
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
                raise
            written = -1
        if written != size:
            # Shared memory is full: keep what fits, and no more rows in memory for this pass.
            os.ftruncate(self.segment_fd, self.segment_used)
            self.memory_full = True
            return False
        self.entries.append((row_id, self.segment_file, self.segment_used, size))
        self.segment_used += size
        self.session_memory += size
        self.stored.add(row_id)
        return True

    def _spill(self, row_id: int, parts: list[Any]) -> None:
        record = b"".join(parts)
        self.spill_rows.append((row_id, None, record))
        self.stored.add(row_id)
        if len(self.spill_rows) >= _SPILL_BATCH_ROWS:
            self._flush_spill()

    def _flush_spill(self) -> None:
        if not self.spill_rows:
            return
        import pyarrow as pa

        if self.spill_writer is None:
            path = os.path.join(self.store.folder, f"spill-{self.token}.arrow")
            schema = pa.schema([("id", pa.int64()), ("record", pa.large_binary())])
            self.spill_writer = pa.ipc.new_file(path, schema)
            self.files.append({"kind": "arrow", "path": path})
            self.spill_file = len(self.store._files) + len(self.files) - 1
        ids = [r[0] for r in self.spill_rows]
        batch = pa.record_batch(
            [pa.array(ids, pa.int64()), pa.array([r[2] for r in self.spill_rows], pa.large_binary())],
            names=["id", "record"],
        )
        self.spill_writer.write_batch(batch)
        for k, row_id in enumerate(ids):
            self.entries.append((row_id, self.spill_file, self.spill_batches, k))
        self.spill_batches += 1
        self.spill_rows = []

    def commit(self, complete_length: int | None = None) -> None:
        """Publish the rows stored so far (and, for a full pass of a front-to-back source, its length),
        then let another fill start. Called once; a filler is done after it."""
        try:
            self._flush_spill()
            if self.spill_writer is not None:
                self.spill_writer.close()
            if self.segment_fd is not None:
                os.close(self.segment_fd)
            store = self.store
            # The files this fill wrote were numbered after the index it started from, which only a fill
            # (this one, holding the lock) can change since.
            base = _read_index(store.folder)
            files, entries, meta = base if base is not None else ([], np.zeros(0, _ENTRY), {})
            if len(files) != len(store._files):
                # The session was destroyed (or replaced) during this pass: what this fill wrote is lost.
                self._discard()
                return
            if not self.entries and complete_length is None:
                self._discard()
                return
            new = np.array(self.entries, dtype=_ENTRY)
            merged = np.concatenate([entries, new])
            merged = merged[np.argsort(merged["id"], kind="stable")]
            if complete_length is not None:
                meta["complete_length"] = int(complete_length)
            _write_index(store.folder, files + self.files, merged, meta)
        finally:
            os.close(self.lock_fd)

    def _discard(self) -> None:
        for spec in self.files:
            with contextlib.suppress(OSError):
                os.unlink(spec["path"])
