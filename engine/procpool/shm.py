"""Shared-memory segments of the process workers: the arenas, and the sweep of abandoned ones.

Segments are plain files under ``/dev/shm`` (Linux) or the temp directory elsewhere, named
``minddata_<parentpid>_<token>_<req|resp><generation>.flock``; the parent creates and owns them and
holds an ``flock`` on each for as long as it lives, the child only attaches.

Removal: ``close()`` (also at exit), SIGTERM (:func:`install_sigterm_cleanup`), and for a parent killed
otherwise, the sweep by the next process that starts workers.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import mmap
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

__all__ = [
    "Arena",
    "sweep_stale_segments",
    "sweep_once",
    "install_sigterm_cleanup",
    "default_sigterm_in_worker",
    "sigterm_held",
    "shm_dir",
    "unlink",
    "page_round",
    "PREFIX",
    "LOCKED_SUFFIX",
]

PREFIX = "minddata_"
# Segments whose owner holds an flock on them for life end so; only those are ever swept (a segment
# of an older minddata, which did not lock, can't be proven abandoned and is left alone).
LOCKED_SUFFIX = ".flock"


_SHM_FIX = (
    "free space there, enlarge it (docker run --shm-size=...), lower "
    "minddata.config.set_worker_shm_size(n), or use fewer process workers (num_parallel_workers)"
)


def _shm_error(e: OSError, what: str, directory: str) -> OSError:
    """The OSError of a failed shared-memory allocation, saying where, why and the fix."""
    reason = os.strerror(e.errno) if e.errno else str(e)
    return OSError(e.errno, f"cannot {what} in {directory} ({reason}); {_SHM_FIX}")


def shm_dir() -> str:
    if sys.platform.startswith("linux") and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return tempfile.gettempdir()


# The segments this process created and has not unlinked: path -> the creating process's pid (a forked
# copy of the registry names its parent's segments, which are not its own to remove).
_created: dict[str, int] = {}


def unlink(path: str) -> None:
    _created.pop(path, None)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        pass  # best effort: close() must not raise from a finalizer


def page_round(n: int) -> int:
    page = mmap.PAGESIZE
    return max(page, -(-n // page) * page)


class Arena:
    """One mmap'd segment file. Written by exactly one side, which tracks how much is backed."""

    __slots__ = ("path", "size", "fd", "mm", "committed")

    def __init__(self, path: str, size: int, fd: int, mm: mmap.mmap):
        self.path = path
        self.size = size
        self.fd = fd
        self.mm = mm
        self.committed = 0

    @classmethod
    def create(cls, path: str, size: int) -> Arena:
        """A new segment at ``path``, already locked by this process (see :func:`sweep_stale_segments`)."""
        directory = os.path.dirname(path)
        try:
            fd = _create_locked(path)
        except OSError as e:
            raise _shm_error(e, f"create a shared-memory segment ({size} bytes)", directory) from None
        try:
            # ftruncate makes a sparse file: tmpfs charges memory only for pages actually written.
            os.ftruncate(fd, size)
            mm = mmap.mmap(fd, size)
        except OSError as e:
            os.close(fd)
            unlink(path)
            raise _shm_error(e, f"size a shared-memory segment to {size} bytes", directory) from None
        except BaseException:
            os.close(fd)
            unlink(path)
            raise
        _created[path] = os.getpid()
        return cls(path, size, fd, mm)

    @classmethod
    def attach(cls, path: str, size: int) -> Arena:
        fd = os.open(path, os.O_RDWR)
        try:
            mm = mmap.mmap(fd, size)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, size, fd, mm)

    def reserve(self, end: int) -> None:
        """Back ``[0, end)`` with real pages before writing to it.

        A store into a sparse tmpfs page when /dev/shm is full (Docker's default is 64 MB) raises
        SIGBUS and kills the process outright; posix_fallocate turns that into a catchable ENOSPC.
        """
        if end <= self.committed:
            return
        if hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(self.fd, self.committed, end - self.committed)
            except OSError as e:
                raise _shm_error(
                    e, f"reserve {end} bytes of shared memory", os.path.dirname(self.path)
                ) from None
        self.committed = end

    def close(self) -> None:
        try:
            self.mm.close()
        except BufferError:
            # Arrays still view it (fn kept an input array): the mapping goes away when they do.
            pass
        try:
            os.close(self.fd)
        except OSError:
            pass


def _create_locked(path: str) -> int:
    """Create ``path`` (exclusively) and return its fd, holding an exclusive ``flock`` on it from
    before the name exists: a sweep can never see the segment unlocked while its owner lives.

    On Linux the file is made unnamed (``O_TMPFILE``), locked, then linked in; elsewhere it is
    created and locked at once (a sweep in between would need another process racing on a name
    it can't predict). Without ``fcntl`` (Windows) the file is only created: nothing is swept there."""
    try:
        import fcntl
    except ImportError:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)

    directory = os.path.dirname(path)
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        try:
            fd = os.open(directory, os.O_RDWR | tmpfile, 0o600)
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N names the unnamed file (open(2),
                # O_TMPFILE); a dst_dir_fd makes Python call linkat rather than link.
                dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.link(
                        f"/proc/self/fd/{fd}", os.path.basename(path), dst_dir_fd=dir_fd, follow_symlinks=True
                    )
                finally:
                    os.close(dir_fd)
            except BaseException:
                os.close(fd)
                raise
            return fd
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        unlink(path)
        raise
    return fd


def sweep_stale_segments(directory: str | None = None) -> list[str]:
    """Remove segment files ``minddata_*.flock`` whose owner is provably gone: nobody holds their lock.

    A parent killed with SIGKILL never runs ``close()``, so its segments would stay in ``/dev/shm``
    (i.e. in RAM) until reboot. Each owner holds an ``flock`` on its segments while it lives and the
    kernel releases it when the owner dies, so a segment whose lock can be taken is stale. The PID in
    the name is not used: in another PID namespace sharing ``/dev/shm`` it means nothing here.
    Returns the paths removed.

    Examples:
        >>> import os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> open(os.path.join(d, "minddata_1_x_req0.flock"), "wb").close()  # nobody holds it
        >>> [os.path.basename(p) for p in sweep_stale_segments(d)]
        ['minddata_1_x_req0.flock']
    """
    if os.name == "nt":
        return []  # no flock on Windows; segments live in the temp folder there
    import fcntl

    d = directory if directory is not None else shm_dir()
    removed: list[str] = []
    for path in glob.glob(os.path.join(glob.escape(d), PREFIX + "*_*" + LOCKED_SUFFIX)):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue  # gone already, or not a file we may open
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # held: its owner is alive, whatever its PID says
            try:
                # Still the same file under that name (not replaced since we opened it)?
                if os.stat(path, follow_symlinks=False).st_ino != os.fstat(fd).st_ino:
                    continue
                os.unlink(path)
            except OSError:
                continue  # swept concurrently by another process, or not ours to remove
            removed.append(path)
        finally:
            os.close(fd)
    return removed


_sweep_lock = threading.Lock()
_swept = False


def sweep_once() -> None:
    global _swept
    with _sweep_lock:
        if _swept:
            return
        _swept = True
    try:
        sweep_stale_segments()
    except OSError:
        pass


# -- SIGTERM --------------------------------------------------------------------------------------


def _unlink_created() -> None:
    pid = os.getpid()
    for path, owner in list(_created.items()):
        if owner == pid:
            unlink(path)


def _sigterm_cleanup(signum: int, frame: Any) -> None:
    """SIGTERM's default disposition (the process dies of it), once this process's segments are gone."""
    _unlink_created()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def install_sigterm_cleanup() -> bool:
    """Make SIGTERM remove this process's segments before it kills the process; True when it does.

    SIGTERM's default disposition kills the process without running ``close()`` or anything at exit,
    so its segments would stay in ``/dev/shm`` (in RAM) until the next process that starts workers
    sweeps them. The handler removes them, then restores the default and sends SIGTERM again: the
    process still dies of SIGTERM, with that exit status. Installed only where the process has no
    SIGTERM handler of its own (an application's handler, e.g. one that exits cleanly, is left alone:
    ``close()`` then runs as the process exits), and only from the main thread, the one Python lets
    set handlers (started elsewhere, the segments are left to the sweep). Python runs the handler in
    the main thread between bytecodes, so a main thread stuck inside one long C call delays the
    process's death until that call returns.
    """
    if os.name == "nt" or threading.current_thread() is not threading.main_thread():
        return False
    try:
        current = signal.getsignal(signal.SIGTERM)
        if current is _sigterm_cleanup:
            return True
        if current is not signal.SIG_DFL:
            return False  # the application's own handler (or SIG_IGN): it decides
        signal.signal(signal.SIGTERM, _sigterm_cleanup)
    except (ValueError, OSError):
        return False
    return True


def default_sigterm_in_worker() -> None:
    """In a worker: SIGTERM kills it at once, then SIGTERM is unblocked (see :func:`sigterm_held`).

    Whatever handler the worker inherited belongs to the parent: the parent's clean-up removes
    segments that are not the worker's, and an application's own handler (one that prints and calls
    ``sys.exit``, say) would run inside the worker's loop, where ``terminate()`` must end the process.
    """
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):
        pass
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


@contextlib.contextmanager
def sigterm_held(start_method: str) -> Iterator[None]:
    """Block SIGTERM in the calling thread while a worker is started by ``fork``.

    A forked child inherits the parent's handlers and runs Python code (the at-fork hooks,
    multiprocessing's bootstrap) before it can reset them. A SIGTERM from ``terminate()`` in that
    window would run the parent's handler in the child; where that handler raises ``SystemExit``
    inside an at-fork hook, Python ignores it and the child lives on, so a ``join()`` waits forever.
    The child inherits the blocked mask, so the signal stays pending until
    :func:`default_sigterm_in_worker` has restored the default and unblocks it. The parent's other
    threads keep SIGTERM unblocked, so the parent itself still receives it. A spawned or forkserver
    child starts by ``exec``, which drops every handler, so nothing is blocked for those (a forkserver
    would keep the mask for good).
    """
    if start_method != "fork" or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        if signal.SIGTERM not in old:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
