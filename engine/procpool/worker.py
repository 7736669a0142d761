"""The worker process: its entry point, :func:`child_main`, and its loop over the parent's calls.

It runs nothing but this loop: a forked child never touches the engine's threads, queues, locks or
device state it inherited.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np

from minddata.engine.procpool.messages import dumps, error_reply, layout, write
from minddata.engine.procpool.shm import Arena, default_sigterm_in_worker
from minddata.ops import kernel_threads

__all__ = ["child_main"]


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
    # The watchdog (config.set_enable_watchdog): a worker must not outlive its parent. fn may run
    # for long after the parent was killed, and a fork of the parent may keep the pipe open.
    # Reparenting changes getppid(). (Not PR_SET_PDEATHSIG: it fires when the forking *thread*
    # ends, and the thread that created an iterator may well end before the pipeline.)
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

    def __init__(self, spec: tuple[str, int] | None):
        self.spec = spec
        self.arena: Arena | None = None

    @property
    def size(self) -> int:
        return self.spec[1]  # type: ignore[index]  # used only with shared memory, which gives a spec

    def get(self) -> Arena:
        if self.arena is None:
            self.arena = Arena.attach(*self.spec)  # type: ignore[misc]  # as size: shared memory gives a spec
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
        return error_reply(seq, e, "while unpickling the argument in the worker")
    try:
        result = fn(arg)
    except Exception as e:
        return error_reply(seq, e, from_fn=True)
    finally:
        del arg
    try:
        out_payload, views = dumps(result, out_of_band=resp.spec is not None)
    except Exception as e:
        return error_reply(seq, e, "fn's result could not be pickled")
    del result
    out_spans, total = layout(views)
    if views and total > resp.size:
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
            return error_reply(seq, OSError(size_or_error), "while growing the result arena")
        resp.replace((path, size_or_error))
    try:
        if views:
            write(resp.get(), views, out_spans, total)
    except OSError as e:
        return error_reply(seq, e, "while writing the result to shared memory")
    return ("ok", seq, out_payload, out_spans)


def child_main(
    conn: Any,
    fn_bytes: bytes | None,
    req_spec: tuple[str, int] | None,
    resp_spec: tuple[str, int] | None,
    parent_pid: int,
    name: str,
    forked: tuple[Callable[[Any], Any], Any] | None = None,
    watchdog: bool = True,
    options: Any = None,
) -> None:
    """Entry point of a worker process. ``forked``: (fn, the parent's end of our pipe) when forked.
    ``req_spec``/``resp_spec`` None: no shared memory, every array travels in the pickle.
    ``watchdog``: exit within a second of the parent's death, even in the middle of ``fn``.
    ``options``: the run's settings (``RunOptions``); ``fn`` runs inside ``config.running(options)``."""
    if options is not None:
        from minddata import config

        # For the life of this process, which serves that one run (never left: the process ends; the
        # reference keeps the context manager from being collected, which would leave it).
        scope = config.running(options)
        scope.__enter__()
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
    default_sigterm_in_worker()
    if forked is None:
        # This process serves one pipeline's stage for its life: OpenCV's pool at one thread, as in the
        # parent while a pipeline runs. A spawned worker starts with OpenCV's default; a forked one
        # has the parent's setting and its holds already.
        kernel_threads.hold()
    if watchdog:
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
            fn = cloudpickle.loads(fn_bytes)
        except Exception as e:
            fn_error = error_reply(0, e, f"while unpickling fn in {name}")
        kernel_threads.apply_if_held()  # unpickling fn may have imported OpenCV
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
