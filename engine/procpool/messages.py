"""What crosses the pipe between a process worker and its parent, and how.

Arguments and results are pickled with protocol 5: NumPy buffers of at least :data:`OOB_THRESHOLD`
bytes travel out-of-band, written into a shared-memory arena (:mod:`.shm`) at the offsets
:func:`layout` gives, and only the small payload plus ``(offset, length)`` pairs cross the pipe.
With ``config.set_enable_shared_mem(False)`` there are no arenas: every buffer travels in the
payload, through the pipe, and ``spans`` is always empty.

Messages (tuples, first item the kind):

- parent → child: ``("call", seq, payload, spans, new_request_arena)``, ``("arena", seq, path, size)``
  (the answer to "grow"; ``path`` ``None`` with an error text instead of the size), ``("exit",)``;
- child → parent: ``("ready",)`` once started, ``("grow", seq, bytes)`` when a result needs a bigger
  arena, ``("ok", seq, payload, spans)`` and ``("err", seq, exception, type name, text, traceback, note)``
  (:func:`error_reply`).
"""

from __future__ import annotations

import io
import pickle
import traceback
from typing import Any, Literal

import cloudpickle
import numpy as np

from minddata.engine.procpool.shm import Arena, page_round

__all__ = [
    "WorkerStopped",
    "RemoteTraceback",
    "OOB_THRESHOLD",
    "dumps",
    "layout",
    "write",
    "grown_size",
    "error_reply",
]

# Below this a buffer is cheaper to copy through the pipe than to place in the arena.
OOB_THRESHOLD = 64 << 10
# Offsets of out-of-band buffers in an arena: cache-line aligned, so every dtype is aligned.
_ALIGN = 64


class WorkerStopped(Exception):
    """Private control flow: ``call()`` gave up because ``stop_event`` was set or the worker was closed.

    The engine catches it in the dispatcher thread; it never reaches the user.
    """


class RemoteTraceback(Exception):
    """Carries the child's formatted traceback as the ``__cause__`` of a re-raised exception."""

    def __init__(self, tb: str):
        super().__init__(tb)
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


def _rebuild_ndarray(buf: Any, dtype: np.dtype, shape: tuple[int, ...], order: Literal["C", "F"]) -> np.ndarray:
    if isinstance(buf, memoryview) and buf.readonly and isinstance(buf.obj, np.ndarray):
        # pickle wraps the buffer of a read-only source array in a read-only view; the buffer we
        # supplied is a private copy (parent) or the arena (child), both fine to write.
        if buf.obj.nbytes == buf.nbytes:
            buf = buf.obj
    array = np.frombuffer(buf, dtype=dtype).reshape(shape, order=order)
    # In-band (config.set_enable_shared_mem(False)) a read-only source comes back as bytes.
    return array if array.flags.writeable else array.copy()


class _Pickler(pickle.Pickler):
    """Sends every large plain ndarray out-of-band, including non-contiguous and read-only ones.

    NumPy's own reduction pickles non-contiguous arrays in-band (the whole array would go through
    the pipe) and keeps read-only arrays read-only on the other side; the caller should get
    ordinary writable arrays.
    """

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            return NotImplemented
        if obj.nbytes < OOB_THRESHOLD:
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


def dumps(obj: Any, out_of_band: bool = True) -> tuple[bytes, list[memoryview]]:
    """Pickle ``obj``; return the payload and the raw views of its out-of-band buffers.

    ``out_of_band=False`` keeps every buffer in the payload (no shared memory: the whole pickle
    crosses the pipe); the list of views is then empty."""
    oob: list[memoryview] = []

    def callback(pb: pickle.PickleBuffer) -> bool:
        if not out_of_band:
            return True
        try:
            raw = pb.raw()
        except BufferError:
            return True  # not contiguous: let pickle decide in-band
        if raw.nbytes < OOB_THRESHOLD:
            return True
        oob.append(raw)
        return False

    f = io.BytesIO()
    _Pickler(f, protocol=5, buffer_callback=callback).dump(obj)
    return f.getvalue(), oob


def layout(views: list[memoryview]) -> tuple[list[tuple[int, int]], int]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for v in views:
        pos = -(-pos // _ALIGN) * _ALIGN
        spans.append((pos, v.nbytes))
        pos += v.nbytes
    return spans, pos


def write(arena: Arena, views: list[memoryview], spans: list[tuple[int, int]], total: int) -> None:
    if not views:
        return
    arena.reserve(total)
    with memoryview(arena.mm) as dst:
        for v, (off, n) in zip(views, spans, strict=True):
            dst[off : off + n] = v


def grown_size(need: int, current: int) -> int:
    # Doubling keeps the number of regrowths logarithmic when chunks get steadily bigger.
    return page_round(max(need, 2 * current))


def error_reply(seq: int, exc: BaseException, note: str | None = None, *, from_fn: bool = False) -> tuple:
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
