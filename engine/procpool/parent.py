"""The parent's side of a process worker: :class:`ProcessWorker` and the choice of start method."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import secrets
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np

from minddata import config
from minddata.config import RunOptions
from minddata.engine.procpool.messages import RemoteTraceback, WorkerStopped, dumps, grown_size, layout, write
from minddata.engine.procpool.shm import (
    LOCKED_SUFFIX,
    PREFIX,
    Arena,
    install_sigterm_cleanup,
    page_round,
    shm_dir,
    sigterm_held,
    sweep_once,
    unlink,
)
from minddata.engine.procpool.worker import child_main
from minddata.errors import ArgumentError, PipelineError, WorkerDiedError, warn

__all__ = ["ProcessWorker", "effective_start_method"]

# How often a waiting parent looks at stop_event and at the child's liveness (bounds stop latency).
_POLL_S = 0.05
# Grace period for a child busy in fn before close() terminates it (it cannot read "exit" until fn returns).
_BUSY_GRACE_S = 0.1


class _State:
    """Everything close() needs, kept apart from ProcessWorker so the finalizer holds no reference to it."""

    def __init__(self, name: str, fn: Any, fn_bytes: bytes | None, shm_size: int, start_method: str,
                 shared_memory: bool = True, timeout_interval: float = 300.0, watchdog: bool = True,
                 options: Any = None):
        self.name = name
        self.options = options  # the run's settings, which the child's calls run in (config.running)
        self.watchdog = watchdog  # the child exits when this process dies (config.set_enable_watchdog)
        # Seconds without an answer between two warnings (config.set_multiprocessing_timeout_interval).
        self.timeout_interval = timeout_interval
        self.shared_memory = shared_memory  # False: arrays travel in-band through the pipe, no arenas
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
        self.req: Arena | None = None
        self.resp: Arena | None = None
        self.paths: set[str] = set()
        self.lock = threading.Lock()  # start/close transitions
        self.call_lock = threading.Lock()  # held by call(); close() takes it before unmapping
        self.send_lock = threading.Lock()
        self.closed = False
        self.dead: str | None = None  # WorkerDiedError message once the child died
        self.seq = 0
        self.inflight: int | None = None  # seq of a call abandoned by stop_event, reply not yet read

    def new_arena(self, kind: str, size: int) -> Arena:
        self.generation += 1
        name = f"{PREFIX}{self.owner_pid}_{self.token}_{kind}{self.generation}{LOCKED_SUFFIX}"
        path = os.path.join(shm_dir(), name)
        arena = Arena.create(path, size)
        self.paths.add(path)
        return arena

    def drop_arena(self, arena: Arena) -> None:
        arena.close()
        unlink(arena.path)
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
        unlink(path)
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

    ``start_method`` (the engine passes its run's; default: ``config.get_multiprocessing_start_method()``
    now, for a worker used on its own): with ``"fork"`` the
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
        shared_memory: False sends every array through the pipe, inside the pickle, and creates no
            shared-memory segment (``config.set_enable_shared_mem``): slower for large arrays, but
            needs no ``/dev/shm``.
        timeout_interval: While a call waits, a warning on the ``minddata`` logger every this many
            seconds without an answer, naming the worker, its pid and the time waited
            (``config.set_multiprocessing_timeout_interval``); the call keeps waiting.
        watchdog: The child checks every second that this process is alive and exits when it is not,
            even in the middle of ``fn`` (``config.set_enable_watchdog``). Without it a child whose
            parent was killed finishes the call in progress, then exits when it finds the pipe closed.
        options: The run's settings (a :class:`~minddata.config.RunOptions`, which the engine passes):
            the child runs ``fn`` inside ``config.running(options)``, so code in ``fn`` that reads
            ``minddata.config`` sees the iterator's settings, not a fresh process's defaults.

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
        self,
        fn: Callable[[Any], Any],
        *,
        name: str,
        shm_size: int = 16 << 20,
        start_method: str | None = None,
        shared_memory: bool = True,
        timeout_interval: float = 300.0,
        watchdog: bool = True,
        options: RunOptions | None = None,
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
        self._s = _State(name, fn if method == "fork" else None, fn_bytes, page_round(shm_size), method,
                         shared_memory=shared_memory, timeout_interval=timeout_interval,
                         watchdog=watchdog, options=options)
        if shared_memory:
            # Here too, not only in start(): a spawned worker starts on its first call, in a pipeline
            # thread, where no signal handler can be set.
            install_sigterm_cleanup()
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
            req = resp = None
            if s.shared_memory:
                sweep_once()
                install_sigterm_cleanup()
                try:
                    req = s.new_arena("req", s.shm_size)
                except OSError as e:
                    raise _in_stage(s, e) from None
                try:
                    resp = s.new_arena("resp", s.shm_size)
                except OSError as e:
                    s.drop_arena(req)
                    raise _in_stage(s, e) from None
                except BaseException:
                    s.drop_arena(req)
                    raise
            ctx = multiprocessing.get_context(s.start_method)
            parent_conn, child_conn = ctx.Pipe(duplex=True)
            proc = ctx.Process(  # type: ignore[attr-defined]  # every start method's context has Process
                target=child_main,
                args=(
                    child_conn,
                    s.fn_bytes,
                    (req.path, req.size) if req is not None else None,
                    (resp.path, resp.size) if resp is not None else None,
                    s.owner_pid,
                    s.name,
                    (s.fn, parent_conn) if s.start_method == "fork" else None,
                    s.watchdog,
                    s.options,
                ),
                name=s.name,
                daemon=True,
            )
            try:
                with sigterm_held(s.start_method):
                    proc.start()
            except BaseException:
                parent_conn.close()
                for arena in (req, resp):
                    if arena is not None:
                        s.drop_arena(arena)
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
                payload, views = dumps(arg, out_of_band=s.shared_memory)
            except Exception as e:
                _add_note(e, f"while pickling the argument for {s.name}")
                raise
            spans, total = layout(views)
            new_req = None
            try:
                if views and total > s.req.size:  # type: ignore[union-attr]  # views come only with shared memory, which keeps s.req
                    old = s.req
                    s.req = s.new_arena("req", grown_size(total, old.size))  # type: ignore[union-attr]  # as above
                    s.drop_arena(old)  # type: ignore[arg-type]  # as above; the child's mapping stays valid until it attaches the new one
                    new_req = (s.req.path, s.req.size)
                if views:
                    write(s.req, views, spans, total)  # type: ignore[arg-type]  # views come only with shared memory, which keeps s.req
            except OSError as e:
                raise _in_stage(s, e) from None
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
        started = time.monotonic()
        warn_at = started + s.timeout_interval
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
                now = time.monotonic()
                if now >= warn_at:
                    warn_at = now + s.timeout_interval
                    # As MindSpore: say so, and keep waiting (the call may just be slow).
                    warn(
                        "%s (pid %s) has not answered for %.1f s (warned every %g s: "
                        "config.set_multiprocessing_timeout_interval); still waiting",
                        s.name, s.pid, now - started, s.timeout_interval,
                    )
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
            new = s.new_arena("resp", grown_size(need, s.resp.size))
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
        remote = RemoteTraceback(f'\n"""\n{tb}"""')
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
            s.dead = (
                f"{s.name} (pid {proc.pid}) {how} while starting, before it ran any of the pipeline. "
                + _startup_advice(s.start_method)
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
        'Fix: put the script\'s top-level code under `if __name__ == "__main__":`, or start workers by '
        'fork (minddata.config.set_multiprocessing_start_method("fork"), the default on Linux).'
    )
    if script:
        return (
            f"A {method} worker first re-imports the main script {script}, and that import failed (its "
            f'traceback is on stderr above). Most often the script has no `if __name__ == "__main__":` '
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
    method = requested or config.snapshot().multiprocessing_start_method
    if method not in ("fork", "spawn", "forkserver"):
        raise ArgumentError(f"start_method must be 'fork', 'spawn' or 'forkserver'. Found: {method!r}")
    if method == "fork":
        hazard = _fork_hazard()
        if hazard is not None:
            if hazard not in _warned_fork:
                _warned_fork.add(hazard)
                warn(
                    "%s in this process, so worker processes are spawned, not forked (a forked "
                    'child cannot use it); the main script then needs an `if __name__ == "__main__":` guard',
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
