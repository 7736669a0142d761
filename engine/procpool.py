"""Process workers for ``map(..., python_multiprocessing=True)``.

A map stage that runs Python code which holds the GIL gets N dispatcher threads in the parent;
dispatcher thread *i* owns :class:`ProcessWorker` *i* and calls it synchronously, one chunk at a time.
The worker runs the user's callable in a process started with the configured method
(``config.set_multiprocessing_start_method``: fork on Linux, else spawn; forkserver on request).
Arguments and results are pickled with protocol 5: large buffers (NumPy arrays of at least ``_OOB_THRESHOLD`` bytes) travel out-of-band
through two shared-memory arenas per worker (parent→child and child→parent), and only the small pickle
payload plus ``(offset, length)`` pairs cross the pipe.

Ownership: the parent creates and owns both arenas (so it can unlink them even when the child is
killed); the child only attaches. Segments are plain files under ``/dev/shm`` (Linux) or the temp
directory elsewhere, named ``minddata_<parentpid>_<token>_<req|resp><generation>.flock``. We do not use
``multiprocessing.shared_memory``: on Python 3.11 every attach registers the segment with the resource
tracker, which then unlinks it under the owner's feet or warns about "leaked shared_memory objects".

Start methods: a forked worker inherits ``fn`` as it is (nothing is pickled, ``__main__`` is not run
again); the engine forks a map's workers while compiling the plan, before the pipeline starts its
threads. The child then runs only :func:`_child_main`: it never touches the engine's threads, queues,
locks or device state it inherited. When torch has initialized CUDA here, forking would hand the
children a CUDA context they cannot use (JAX's started runtime likewise), so such workers are spawned
instead. A spawned (or forkserver) worker first re-imports the main script; a child that dies before
its first message ("ready") is reported as failing there, with the fix, since that is by far the
likeliest cause.

Lifetime: :meth:`ProcessWorker.close` is idempotent and also runs from a ``weakref.finalize`` (on
garbage collection and at interpreter exit). Segments left behind by a parent that was killed are
removed by :func:`sweep_stale_segments`, which runs once per process when the first worker starts.
The owner holds an ``flock`` on each segment for as long as it lives (the kernel drops it when the
owner dies, however it dies), and the sweep removes only segments nobody holds: the PID in the name
says nothing about another PID namespace sharing ``/dev/shm``, where that PID may be alive and
unrelated, or dead while its pipeline runs under another number.
"""

from __future__ import annotations

import errno
import glob
import io
import logging
import mmap
import multiprocessing
import os
import pickle
import secrets
import signal
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np

from minddata import config
from minddata.errors import ArgumentError, PipelineError, WorkerDiedError

__all__ = ["ProcessWorker", "WorkerStopped", "sweep_stale_segments", "effective_start_method"]

_logger = logging.getLogger("minddata")

# Below this a buffer is cheaper to copy through the pipe than to place in the arena.
_OOB_THRESHOLD = 64 << 10
# Offsets of out-of-band buffers in an arena: cache-line aligned, so every dtype is aligned.
_ALIGN = 64
# How often a waiting parent looks at stop_event and at the child's liveness (bounds stop latency).
_POLL_S = 0.05
# Grace period for a child busy in fn before close() terminates it (it cannot read "exit" until fn returns).
_BUSY_GRACE_S = 0.1
_PREFIX = "minddata_"
# Segments whose owner holds an flock on them for life end so; only those are ever swept (a segment
# of an older minddata, which did not lock, can't be proven abandoned and is left alone).
_LOCKED_SUFFIX = ".flock"


_SHM_FIX = (
    "free space there, enlarge it (docker run --shm-size=...), lower "
    "minddata.config.set_worker_shm_size(n), or use fewer process workers (num_parallel_workers)"
)


def _shm_error(e: OSError, what: str, directory: str) -> OSError:
    """The OSError of a failed shared-memory allocation, saying where, why and the fix."""
    reason = os.strerror(e.errno) if e.errno else str(e)
    return OSError(e.errno, f"cannot {what} in {directory} ({reason}); {_SHM_FIX}")


class WorkerStopped(Exception):
    """Private control flow: ``call()`` gave up because ``stop_event`` was set or the worker was closed.

    The engine catches it in the dispatcher thread; it never reaches the user.
    """


class _RemoteTraceback(Exception):
    """Carries the child's formatted traceback as the ``__cause__`` of a re-raised exception."""

    def __init__(self, tb: str):
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


# --------------------------------------------------------------------------------------------------
# Shared-memory segments
# --------------------------------------------------------------------------------------------------


def _shm_dir() -> str:
    if sys.platform.startswith("linux") and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return tempfile.gettempdir()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        pass  # best effort: close() must not raise from a finalizer


def _page_round(n: int) -> int:
    page = mmap.PAGESIZE
    return max(page, -(-n // page) * page)


class _Arena:
    """One mmap'd segment file. Written by exactly one side, which tracks how much is backed."""

    __slots__ = ("path", "size", "fd", "mm", "committed")

    def __init__(self, path: str, size: int, fd: int, mm: mmap.mmap):
        self.path = path
        self.size = size
        self.fd = fd
        self.mm = mm
        self.committed = 0

    @classmethod
    def create(cls, path: str, size: int) -> _Arena:
        """A new segment at ``path``, already locked by this process (see :func:`sweep_stale_segments`)."""
        directory = os.path.dirname(path)
        try:
            fd = _create_locked(path)
        except OSError as e:
            raise _shm_error(e, f"create a shared-memory segment ({size} bytes)", directory) from e
        try:
            # ftruncate makes a sparse file: tmpfs charges memory only for pages actually written.
            os.ftruncate(fd, size)
            mm = mmap.mmap(fd, size)
        except OSError as e:
            os.close(fd)
            _unlink(path)
            raise _shm_error(e, f"size a shared-memory segment to {size} bytes", directory) from e
        except BaseException:
            os.close(fd)
            _unlink(path)
            raise
        return cls(path, size, fd, mm)

    @classmethod
    def attach(cls, path: str, size: int) -> _Arena:
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
                raise _shm_error(e, f"reserve {end} bytes of shared memory", os.path.dirname(self.path)) from e
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
                    os.link(f"/proc/self/fd/{fd}", os.path.basename(path), dst_dir_fd=dir_fd, follow_symlinks=True)
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
        _unlink(path)
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

    d = directory if directory is not None else _shm_dir()
    removed: list[str] = []
    for path in glob.glob(os.path.join(glob.escape(d), _PREFIX + "*_*" + _LOCKED_SUFFIX)):
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


def _sweep_once() -> None:
    global _swept
    with _sweep_lock:
        if _swept:
            return
        _swept = True
    try:
        sweep_stale_segments()
    except OSError:
        pass


# --------------------------------------------------------------------------------------------------
# Serialization: pickle protocol 5 with out-of-band buffers
# --------------------------------------------------------------------------------------------------


def _rebuild_ndarray(buf: Any, dtype: np.dtype, shape: tuple[int, ...], order: str) -> np.ndarray:
    if isinstance(buf, memoryview) and buf.readonly and isinstance(buf.obj, np.ndarray):
        # pickle wraps the buffer of a read-only source array in a read-only view; the buffer we
        # supplied is a private copy (parent) or the arena (child), both fine to write.
        if buf.obj.nbytes == buf.nbytes:
            buf = buf.obj
    return np.frombuffer(buf, dtype=dtype).reshape(shape, order=order)


class _Pickler(pickle.Pickler):
    """Sends every large plain ndarray out-of-band, including non-contiguous and read-only ones.

    NumPy's own reduction pickles non-contiguous arrays in-band (the whole array would go through
    the pipe) and keeps read-only arrays read-only on the other side; the caller should get
    ordinary writable arrays.
    """

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            return NotImplemented
        if obj.nbytes < _OOB_THRESHOLD:
            if obj.flags.writeable:
                return NotImplemented
            return obj.copy().__reduce_ex__(5)
        if obj.flags.c_contiguous:
            order = "C"
        elif obj.flags.f_contiguous:
            order = "F"
        else:
            obj = np.ascontiguousarray(obj)
            order = "C"
        return _rebuild_ndarray, (pickle.PickleBuffer(obj), obj.dtype, obj.shape, order)


def _dumps(obj: Any) -> tuple[bytes, list[memoryview]]:
    """Pickle ``obj``; return the payload and the raw views of its out-of-band buffers."""
    oob: list[memoryview] = []

    def callback(pb: pickle.PickleBuffer) -> bool:
        try:
            raw = pb.raw()
        except BufferError:
            return True  # not contiguous: let pickle decide in-band
        if raw.nbytes < _OOB_THRESHOLD:
            return True
        oob.append(raw)
        return False

    f = io.BytesIO()
    _Pickler(f, protocol=5, buffer_callback=callback).dump(obj)
    return f.getvalue(), oob


def _layout(views: list[memoryview]) -> tuple[list[tuple[int, int]], int]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for v in views:
        pos = -(-pos // _ALIGN) * _ALIGN
        spans.append((pos, v.nbytes))
        pos += v.nbytes
    return spans, pos


def _write(arena: _Arena, views: list[memoryview], spans: list[tuple[int, int]], total: int) -> None:
    if not views:
        return
    arena.reserve(total)
    with memoryview(arena.mm) as dst:
        for v, (off, n) in zip(views, spans, strict=True):
            dst[off : off + n] = v


def _grown_size(need: int, current: int) -> int:
    # Doubling keeps the number of regrowths logarithmic when chunks get steadily bigger.
    return _page_round(max(need, 2 * current))


# --------------------------------------------------------------------------------------------------
# Child process
# --------------------------------------------------------------------------------------------------


def _err_reply(seq: int, exc: BaseException, note: str | None = None, *, from_fn: bool = False) -> tuple:
    tb_obj = exc.__traceback__
    if from_fn and tb_obj is not None and tb_obj.tb_next is not None:
        tb_obj = tb_obj.tb_next  # start at fn's frame: the worker's own frame is noise to the user
    tb = "".join(traceback.format_exception(type(exc), exc, tb_obj))
    data: bytes | None = None
    try:
        # By reference first: an importable class, and in a forked child also a class of the parent's
        # __main__, comes back as the parent's own class.
        data = pickle.dumps(exc)
    except Exception:
        try:
            # By value: a class defined inside a function travels with cloudpickle and, thanks to its
            # class tracking, comes back as the class the parent pickled with fn (spawn/forkserver).
            data = cloudpickle.dumps(exc)
        except Exception:
            data = None
    try:
        text = str(exc)
    except Exception:
        text = "<str() failed>"
    tname = f"{type(exc).__module__}.{type(exc).__qualname__}"
    return ("err", seq, data, tname, text, tb, note)


def _child_recv(conn: Any) -> Any:
    """Next message from the parent, or None when the parent is gone.

    A plain blocking recv: the kernel closes the parent's end when it exits, so recv sees EOF, and
    the watchdog thread covers a parent whose end is kept open by a forked copy.
    """
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


def _watch_parent(parent_pid: int) -> None:
    # A worker must not outlive its parent: fn may run for long after the parent was killed, and a
    # fork of the parent may keep the pipe open. Reparenting changes getppid().
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(1)


class _Attachment:
    """The child's handle on a parent-owned arena, attached on first use.

    Lazy because the parent may replace (and unlink) a segment before the child ever needed it, e.g.
    when the very first argument is bigger than the initial arena.
    """

    __slots__ = ("spec", "arena")

    def __init__(self, spec: tuple[str, int]):
        self.spec = spec
        self.arena: _Arena | None = None

    @property
    def size(self) -> int:
        return self.spec[1]

    def get(self) -> _Arena:
        if self.arena is None:
            self.arena = _Arena.attach(*self.spec)
        return self.arena

    def replace(self, spec: tuple[str, int]) -> None:
        self.close()
        self.spec = spec

    def close(self) -> None:
        if self.arena is not None:
            self.arena.close()
            self.arena = None


def _child_call(
    conn: Any,
    fn: Callable[[Any], Any] | None,
    fn_error: tuple | None,
    seq: int,
    payload: bytes,
    spans: list[tuple[int, int]],
    req: _Attachment,
    resp: _Attachment,
) -> tuple | None:
    """Run one call; return the reply, or None when the parent is gone."""
    if fn_error is not None:
        return ("err", seq, *fn_error[2:])
    assert fn is not None
    try:
        # Views, not copies: fn reads its input straight from the arena.
        bufs = [np.frombuffer(req.get().mm, np.uint8, n, off) for off, n in spans]
        arg = pickle.loads(payload, buffers=bufs)
        del bufs
    except Exception as e:
        return _err_reply(seq, e, "while unpickling the argument in the worker")
    try:
        result = fn(arg)
    except Exception as e:
        return _err_reply(seq, e, from_fn=True)
    finally:
        del arg
    try:
        out_payload, views = _dumps(result)
    except Exception as e:
        return _err_reply(seq, e, "fn's result could not be pickled")
    del result
    out_spans, total = _layout(views)
    if total > resp.size:
        # The parent owns the arenas: ask it for a bigger one and wait for its name.
        try:
            conn.send(("grow", seq, total))
        except OSError:
            return None
        msg = _child_recv(conn)
        if msg is None or msg[0] != "arena":
            return None
        _, _, path, size_or_error = msg
        if path is None:
            return _err_reply(seq, OSError(size_or_error), "while growing the result arena")
        resp.replace((path, size_or_error))
    try:
        if views:
            _write(resp.get(), views, out_spans, total)
    except OSError as e:
        return _err_reply(seq, e, "while writing the result to shared memory")
    return ("ok", seq, out_payload, out_spans)


def _child_main(
    conn: Any,
    fn_bytes: bytes | None,
    req_spec: tuple[str, int],
    resp_spec: tuple[str, int],
    parent_pid: int,
    name: str,
    forked: tuple[Callable[[Any], Any], Any] | None = None,
) -> None:
    """Entry point of a worker process. ``forked``: (fn, the parent's end of our pipe) when forked."""
    if forked is not None:
        # Our copy of the parent's end would keep the pipe open after the parent died (no EOF).
        try:
            forked[1].close()
        except OSError:
            pass
    try:
        # Ctrl-C goes to the whole process group; the parent handles it and closes the workers.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):
        pass
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="parent-watch", daemon=True).start()
    try:
        conn.send(("ready",))  # tells the parent the start (importing __main__ when spawned) went well
    except OSError:
        return
    fn = None
    fn_error = None
    if forked is not None:
        fn = forked[0]
    else:
        try:
            fn = cloudpickle.loads(fn_bytes)  # type: ignore[arg-type]
        except Exception as e:
            fn_error = _err_reply(0, e, f"while unpickling fn in {name}")
    del fn_bytes, forked
    req = _Attachment(req_spec)
    resp = _Attachment(resp_spec)
    try:
        while True:
            msg = _child_recv(conn)
            if msg is None or msg[0] == "exit":
                return
            if msg[0] != "call":
                continue
            _, seq, payload, spans, new_req = msg
            if new_req is not None:
                req.replace(new_req)
            reply = _child_call(conn, fn, fn_error, seq, payload, spans, req, resp)
            if reply is None:
                return
            try:
                conn.send(reply)
            except OSError:
                return
            del reply, msg, payload
    finally:
        req.close()
        resp.close()
        try:
            conn.close()
        except OSError:
            pass


# --------------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------------


class _State:
    """Everything close() needs, kept apart from ProcessWorker so the finalizer holds no reference to it."""

    def __init__(self, name: str, fn: Any, fn_bytes: bytes | None, shm_size: int, start_method: str):
        self.name = name
        self.fn: Any = fn  # kept only for fork, which hands it to the child as it is
        self.fn_bytes: bytes | None = fn_bytes
        self.start_method = start_method
        self.ready = False  # the child sent "ready": it got past starting (and importing __main__)
        self.shm_size = shm_size
        self.owner_pid = os.getpid()
        self.token = secrets.token_hex(4)
        self.generation = 0
        self.proc: Any = None
        self.pid: int | None = None  # kept after close(): Process.pid raises once the Process is closed
        self.conn: Any = None
        self.req: _Arena | None = None
        self.resp: _Arena | None = None
        self.paths: set[str] = set()
        self.lock = threading.Lock()  # start/close transitions
        self.call_lock = threading.Lock()  # held by call(); close() takes it before unmapping
        self.send_lock = threading.Lock()
        self.closed = False
        self.dead: str | None = None  # WorkerDiedError message once the child died
        self.seq = 0
        self.inflight: int | None = None  # seq of a call abandoned by stop_event, reply not yet read

    def new_arena(self, kind: str, size: int) -> _Arena:
        self.generation += 1
        name = f"{_PREFIX}{self.owner_pid}_{self.token}_{kind}{self.generation}{_LOCKED_SUFFIX}"
        path = os.path.join(_shm_dir(), name)
        arena = _Arena.create(path, size)
        self.paths.add(path)
        return arena

    def drop_arena(self, arena: _Arena) -> None:
        arena.close()
        _unlink(arena.path)
        self.paths.discard(arena.path)


def _close_state(s: _State, timeout: float) -> None:
    if os.getpid() != s.owner_pid:
        return  # a forked copy of the parent: the segments and the child belong to the original
    with s.lock:
        if s.closed:
            return
        s.closed = True
    proc = s.proc
    if proc is not None:
        if s.send_lock.acquire(timeout=0.1):
            try:
                s.conn.send(("exit",))
            except (OSError, ValueError):
                pass
            finally:
                s.send_lock.release()
        busy = s.call_lock.locked() or s.inflight is not None
        try:
            proc.join(min(timeout, _BUSY_GRACE_S) if busy else timeout)
            if proc.is_alive():
                proc.terminate()
                proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
        except (OSError, ValueError, AssertionError):
            pass
    # Unlinking is safe while mappings exist, so do it even if a call still holds them.
    for path in list(s.paths):
        _unlink(path)
    s.paths.clear()
    # A call in flight notices `closed` within _POLL_S; only then is unmapping safe.
    got = s.call_lock.acquire(timeout=0.5)
    try:
        if got:
            for arena in (s.req, s.resp):
                if arena is not None:
                    arena.close()
            s.req = s.resp = None
            if s.conn is not None:
                try:
                    s.conn.close()
                except OSError:
                    pass
            if proc is not None and proc.exitcode is not None:
                try:
                    proc.close()
                except ValueError:
                    pass
    finally:
        if got:
            s.call_lock.release()


def _in_stage(s: _State, e: OSError) -> PipelineError:
    """A shared-memory failure as an error naming the map stage's worker (``s.name``)."""
    return PipelineError(f"{s.name}: passing rows through shared memory failed: {e.strerror or e}")


def _add_note(exc: BaseException, note: str) -> None:
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(note)


class ProcessWorker:
    """Runs ``fn`` in a spawned worker process; NumPy buffers travel through shared memory.

    Each call pickles ``arg`` with protocol 5; arrays of 64 KiB or more are copied into a
    parent→child shared-memory arena instead of the pipe, and the result comes back the same way
    through a child→parent arena. Arrays returned by :meth:`call` are private, writable copies.
    Inside the child, ``fn`` sees its input arrays as views into the arena: they are valid while
    ``fn`` runs and are overwritten by the next call, so ``fn`` must not keep them (copy if needed).

    ``start_method`` (default: ``config.get_multiprocessing_start_method()``): with ``"fork"`` the
    child inherits ``fn`` as it is, and :meth:`start` should be called before the caller starts
    threads that the child could inherit mid-operation (the engine does it while compiling). With
    ``"spawn"`` / ``"forkserver"``, ``fn`` is serialized with cloudpickle, so lambdas and closures
    work; anything they reference by module (e.g. a module-level function) must be importable in a
    fresh interpreter, and the main script needs an ``if __name__ == "__main__":`` guard.

    Errors: an exception raised by ``fn`` is re-raised with the same type (or as
    :class:`~minddata.errors.PipelineError` when it cannot be rebuilt), its ``__cause__`` holding the
    worker's traceback; a process that dies raises :class:`~minddata.errors.WorkerDiedError`.

    Args:
        fn: The callable to run, ``fn(arg) -> result``.
        name: Used in errors, e.g. ``"Map[decode_fn] worker 1"``.
        shm_size: Initial size in bytes of each of the two arenas; they grow on demand.
        start_method: ``"fork"``, ``"spawn"``, ``"forkserver"`` or None for the configured one.

    Examples:
        >>> import threading
        >>> import numpy as np
        >>> from minddata.engine.procpool import ProcessWorker
        >>> worker = ProcessWorker(lambda x: x * 2, name="Map[double] worker 0")
        >>> worker.call(np.arange(3), threading.Event()).tolist()
        [0, 2, 4]
        >>> worker.call(np.ones((512, 512)), threading.Event()).sum()  # 2 MiB: via shared memory
        np.float64(524288.0)
        >>> worker.close()
        >>> isinstance(worker.pid, int)  # the last process's id, also after close()
        True
    """

    def __init__(
        self, fn: Callable[[Any], Any], *, name: str, shm_size: int = 16 << 20, start_method: str | None = None
    ):
        if not callable(fn):
            raise ArgumentError(f"{name}: fn must be callable, got {type(fn).__name__}")
        if not isinstance(shm_size, int) or shm_size <= 0:
            raise ArgumentError(f"{name}: shm_size must be a positive int (bytes), got {shm_size!r}")
        method = effective_start_method(start_method)
        fn_bytes = None
        if method != "fork":
            try:
                fn_bytes = cloudpickle.dumps(fn)
            except Exception as e:
                raise ArgumentError(
                    f"{name}: fn cannot be sent to a worker process started by {method} (cloudpickle failed: {e!r}); make "
                    f"it a module-level function or a closure over picklable values, use fork workers "
                    f"(minddata.config.set_multiprocessing_start_method('fork')), or python_multiprocessing=False"
                ) from e
        self._s = _State(name, fn if method == "fork" else None, fn_bytes, _page_round(shm_size), method)
        self._finalizer = weakref.finalize(self, _close_state, self._s, 2.0)

    def __repr__(self) -> str:
        s = self._s
        state = "closed" if s.closed else "dead" if s.dead else "running" if s.proc else "not started"
        return f"<ProcessWorker {s.name!r} pid={self.pid} {state}>"

    def __enter__(self) -> ProcessWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return self._s.name

    @property
    def start_method(self) -> str:
        """How the process is (or will be) started: ``"fork"``, ``"spawn"`` or ``"forkserver"``."""
        return self._s.start_method

    @property
    def pid(self) -> int | None:
        """The worker process's id, or None before it is started (still set after close())."""
        return self._s.pid

    def start(self) -> None:
        """Start the process (``call()`` does it on first use). Idempotent."""
        s = self._s
        with s.lock:
            if s.closed:
                raise WorkerStopped(f"{s.name} is closed")
            if s.proc is not None:
                return
            if os.getpid() != s.owner_pid:
                raise PipelineError(f"{s.name} was created in process {s.owner_pid}; it cannot run in a fork")
            _sweep_once()
            try:
                req = s.new_arena("req", s.shm_size)
            except OSError as e:
                raise _in_stage(s, e) from e
            try:
                resp = s.new_arena("resp", s.shm_size)
            except OSError as e:
                s.drop_arena(req)
                raise _in_stage(s, e) from e
            except BaseException:
                s.drop_arena(req)
                raise
            ctx = multiprocessing.get_context(s.start_method)
            parent_conn, child_conn = ctx.Pipe(duplex=True)
            proc = ctx.Process(
                target=_child_main,
                args=(
                    child_conn,
                    s.fn_bytes,
                    (req.path, req.size),
                    (resp.path, resp.size),
                    s.owner_pid,
                    s.name,
                    (s.fn, parent_conn) if s.start_method == "fork" else None,
                ),
                name=s.name,
                daemon=True,
            )
            try:
                proc.start()
            except BaseException:
                parent_conn.close()
                s.drop_arena(req)
                s.drop_arena(resp)
                raise
            finally:
                # The child has its own copy now; keeping ours would hide the child's death (no EOF).
                child_conn.close()
            s.proc, s.conn, s.req, s.resp = proc, parent_conn, req, resp
            s.pid = proc.pid
            s.fn_bytes = s.fn = None

    def call(self, arg: Any, stop_event: threading.Event | None) -> Any:
        """Run ``fn(arg)`` in the worker process and return its result.

        Raises:
            WorkerStopped: ``stop_event`` was set (or the worker closed) while waiting.
            WorkerDiedError: the process ended without answering.
            Exception: whatever ``fn`` raised, same type when it can be rebuilt, else PipelineError.
        """
        s = self._s
        if os.getpid() != s.owner_pid:
            raise PipelineError(f"{s.name} was created in process {s.owner_pid}; it cannot run in a fork")
        with s.call_lock:
            self._check_usable(stop_event)
            if s.proc is None:
                self.start()
            if s.inflight is not None:
                # A previous call was abandoned by stop_event: the child still uses the request
                # arena, so wait for its (discarded) reply before overwriting it.
                self._await(s.inflight, stop_event)
                s.inflight = None
            try:
                payload, views = _dumps(arg)
            except Exception as e:
                _add_note(e, f"while pickling the argument for {s.name}")
                raise
            spans, total = _layout(views)
            new_req = None
            assert s.req is not None
            try:
                if total > s.req.size:
                    old = s.req
                    s.req = s.new_arena("req", _grown_size(total, old.size))
                    s.drop_arena(old)  # the child's mapping stays valid until it attaches the new one
                    new_req = (s.req.path, s.req.size)
                _write(s.req, views, spans, total)
            except OSError as e:
                raise _in_stage(s, e) from e
            del views
            s.seq += 1
            seq = s.seq
            self._send(("call", seq, payload, spans, new_req))
            s.inflight = seq
            reply = self._await(seq, stop_event)
            s.inflight = None
            return self._finish(reply)

    def close(self, timeout: float = 2.0) -> None:
        """Stop the process and unlink every shared-memory segment. Idempotent.

        Asks the child to exit, waits up to ``timeout`` seconds (a child busy in ``fn`` only briefly),
        then terminates and finally kills it.
        """
        _close_state(self._s, timeout)
        self._finalizer.detach()

    # ---------------------------------------------------------------------------------------------

    def _check_usable(self, stop_event: threading.Event | None) -> None:
        s = self._s
        if s.closed:
            raise WorkerStopped(f"{s.name} is closed")
        if s.dead is not None:
            raise WorkerDiedError(s.dead)
        if stop_event is not None and stop_event.is_set():
            raise WorkerStopped(f"{s.name}: stop requested")

    def _send(self, msg: tuple) -> None:
        s = self._s
        try:
            with s.send_lock:
                s.conn.send(msg)
        except (OSError, ValueError):
            if s.closed:
                raise WorkerStopped(f"{s.name} is closed") from None
            raise self._died() from None
        except BaseException:
            # E.g. KeyboardInterrupt mid-write: the child may hold half a message, so the pipe can
            # never be trusted again.
            s.dead = f"{s.name}: a call was interrupted while sending its message; the worker is unusable"
            raise

    def _await(self, seq: int, stop_event: threading.Event | None) -> tuple:
        """Wait for the reply to call ``seq``, serving arena requests; never blocks without checks."""
        s = self._s
        while True:
            if s.closed:
                raise WorkerStopped(f"{s.name} is closed")
            if stop_event is not None and stop_event.is_set():
                raise WorkerStopped(f"{s.name}: stop requested")
            try:
                ready = s.conn.poll(_POLL_S)
                msg = s.conn.recv() if ready else None
            except (EOFError, OSError, ValueError):
                if s.closed:
                    raise WorkerStopped(f"{s.name} is closed") from None
                raise self._died() from None
            if msg is None:
                if not s.proc.is_alive():
                    try:
                        if s.conn.poll(0):
                            continue  # it answered just before exiting: read that first
                    except (OSError, ValueError):
                        pass
                    raise self._died()
                continue
            if msg[0] == "ready":
                s.ready = True
                continue
            if msg[0] == "grow":
                self._grow_resp(msg[1], msg[2])
                continue
            if msg[1] != seq:
                continue  # reply to a call abandoned earlier
            return msg

    def _grow_resp(self, seq: int, need: int) -> None:
        s = self._s
        assert s.resp is not None
        try:
            new = s.new_arena("resp", _grown_size(need, s.resp.size))
        except OSError as e:
            self._send(("arena", seq, None, f"cannot create a {need}-byte result arena: {e.strerror or e}"))
            return
        s.drop_arena(s.resp)  # the child is waiting for us and no longer touches the old one
        s.resp = new
        self._send(("arena", seq, new.path, new.size))

    def _finish(self, reply: tuple) -> Any:
        s = self._s
        if reply[0] == "ok":
            _, _, payload, spans = reply
            bufs = []
            if spans:
                assert s.resp is not None
                # Copy out: the arena is reused by the next call, and the caller owns the result.
                src = np.frombuffer(s.resp.mm, np.uint8)
                for off, n in spans:
                    dst = np.empty(n, np.uint8)
                    dst[...] = src[off : off + n]
                    bufs.append(dst)
                del src
            try:
                return pickle.loads(payload, buffers=bufs)
            except Exception as e:
                raise PipelineError(
                    f"{s.name}: the result of fn could not be unpickled in the parent: {e!r}"
                ) from e
        _, _, data, tname, text, tb, note = reply
        remote = _RemoteTraceback(f'\n"""\n{tb}"""')
        exc: BaseException | None = None
        why = "it could not be pickled in the worker"
        if data is not None:
            try:
                exc = pickle.loads(data)
            except Exception as e:
                why = f"unpickling it in the parent failed: {e!r}"
            if exc is not None and not isinstance(exc, BaseException):
                exc, why = None, "it did not unpickle to an exception"
        if exc is None:
            exc = PipelineError(f"{s.name}: {tname}: {text} (re-raised as PipelineError because {why})")
        elif isinstance(exc, OSError) and note and ("shared memory" in note or "result arena" in note):
            exc = _in_stage(s, exc)
        where = f"raised in {s.name} (pid {self.pid})"
        _add_note(exc, f"{where} {note}" if note else where)
        raise exc from remote

    def _died(self) -> WorkerDiedError:
        s = self._s
        proc = s.proc
        try:
            proc.join(1.0)
        except (OSError, ValueError, AssertionError):
            pass
        code = proc.exitcode
        if code is None:
            how = "closed its pipe but has not exited"
        elif code < 0:
            try:
                signame = signal.Signals(-code).name
            except ValueError:
                signame = f"signal {-code}"
            how = f"was killed by {signame} (exit code {code})"
        else:
            how = f"exited with code {code}"
        if not s.ready and code is not None and code > 0 and s.start_method != "fork":
            s.dead = f"{s.name} (pid {proc.pid}) {how} while starting, before it ran any of the pipeline. " + _startup_advice(
                s.start_method
            )
        else:
            s.dead = (
                f"{s.name} (pid {proc.pid}) {how} without answering. Likely causes: the machine ran out of "
                f"memory (the kernel's OOM killer sends SIGKILL; use fewer workers or smaller chunks), a crash "
                f"in native code called by fn (SIGSEGV, SIGABRT), or fn called os._exit()/sys.exit(). Its "
                f"stderr (above) says more."
            )
        return WorkerDiedError(s.dead, worker=s.name, exitcode=code)


def _startup_advice(method: str) -> str:
    """Why a spawned/forkserver child that never said "ready" died, most likely, and the fix."""
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None)
    fix = (
        "Fix: put the script's top-level code under `if __name__ == \"__main__\":`, or start workers by "
        "fork (minddata.config.set_multiprocessing_start_method(\"fork\"), the default on Linux)."
    )
    if script:
        return (
            f"A {method} worker first re-imports the main script {script}, and that import failed (its "
            f"traceback is on stderr above). Most often the script has no `if __name__ == \"__main__\":` "
            f"guard, so every worker runs its top level again and tries to start the pipeline itself. " + fix
        )
    return (
        f"A {method} worker starts a fresh interpreter that imports what fn needs; that failed (its "
        f"traceback is on stderr above): a module fn uses may not be importable there. " + fix
    )


_warned_fork: set[str] = set()


def effective_start_method(requested: str | None = None) -> str:
    """The start method a worker will use: ``requested`` (or the configured one), except that fork
    becomes spawn once this process holds state a forked child can't use: a CUDA context made by
    torch, or JAX's initialized backends (multithreaded runtimes that deadlock or fail in a fork).

    Examples:
        >>> effective_start_method("spawn")
        'spawn'
    """
    method = requested or config.get_multiprocessing_start_method()
    if method not in ("fork", "spawn", "forkserver"):
        raise ArgumentError(f"start_method must be 'fork', 'spawn' or 'forkserver'. Found: {method!r}")
    if method == "fork":
        hazard = _fork_hazard()
        if hazard is not None:
            if hazard not in _warned_fork:
                _warned_fork.add(hazard)
                _logger.warning(
                    "minddata: %s in this process, so worker processes are spawned, not forked (a forked "
                    "child cannot use it); the main script then needs an `if __name__ == \"__main__\":` guard",
                    hazard,
                )
            return "spawn"
    return method


def _fork_hazard() -> str | None:
    """What in this process makes forking unsafe, or None. Only looks at modules already imported."""
    try:
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        if cuda is not None and cuda.is_initialized():
            return "torch has initialized CUDA"
        bridge = sys.modules.get("jax._src.xla_bridge")
        if bridge is not None and bridge.backends_are_initialized():
            return "JAX has started its runtime"
    except Exception:  # noqa: BLE001 - a half-imported framework must not break worker start
        return None
    return None
