"""Stages whose work runs in worker threads (or worker processes), with ordered output.

Each worker loops: take a free slot, pull the next chunk from the child under a lock (so the child
runs in the workers, serially), do the work outside the lock, and file the result under the
chunk's sequence number. The consumer takes results strictly in sequence, so output order never
depends on the number of workers or their timing. Slots bound the chunks in flight: memory is
bounded by ``slots * chunk size`` whatever the dataset size.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator

from minddata.engine.chunk import Chunk
from minddata.engine.runtime import POLL_SECONDS, PipelineStopped, Runtime
from minddata.engine.stages import Stage

__all__ = ["ParallelApplyStage"]

# Work: (chunk, pass_index, row_start) -> result. It runs in a worker thread, or, through a
# remote(...) callable, in a worker process. Finish: (chunk, result, pass_index, row_start) -> chunk,
# always in a worker thread of this process. Ordered: (chunk, pass_state) -> chunk, run by the
# consumer in sequence order (for decisions that must not depend on timing, e.g. error replacement).
Work = Callable[[Chunk, int, int], Any]
Finish = Callable[[Chunk, Any, int, int], Chunk | None]
Ordered = Callable[[Chunk, dict], Chunk | None]

_END = object()


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class _PassState:
    def __init__(self, slots: int):
        self.lock = threading.Lock()  # guards pulling from the child
        self.cond = threading.Condition()  # guards results
        self.results: dict[int, Any] = {}
        self.slots = threading.Semaphore(slots)
        self.next_seq = 0
        self.rows_pulled = 0
        self.exhausted = False
        self.stop = False


class ParallelApplyStage(Stage):
    """Runs ``work`` over the child's chunks on ``num_workers`` threads, emitting results in order.

    ``remotes``: optional per-worker callables ``remote(arg, stop_event)``; worker ``i`` then runs its
    work as ``remotes[i]((rows, pass_index, row_start), stop_event)`` (a worker process) instead of
    calling ``work`` in the thread.
    """

    def __init__(
        self,
        rt: Runtime,
        child: Stage,
        work: Work,
        num_workers: int,
        label: str,
        *,
        finish: Finish | None = None,
        ordered: Ordered | None = None,
        slots: int | None = None,
        remotes: list[Callable[[Any, threading.Event], Any]] | None = None,
    ):
        super().__init__(rt, [child], label)
        self.work = work
        self.finish = finish
        self.ordered = ordered
        self.num_workers = num_workers
        self.slots = slots if slots is not None else 2 * num_workers + 2
        self.remotes = remotes

    def _run(self, pass_index: int) -> Iterator[Chunk]:
        state = _PassState(self.slots)
        source = self.children[0].run()
        threads = [
            self.rt.start_thread(self._worker, f"minddata-{self.label}-{i}", i, state, source, pass_index)
            for i in range(self.num_workers)
        ]
        ordered_state: dict = {}
        try:
            seq = 0
            while True:
                result = self._wait_for(state, seq)
                seq += 1
                state.slots.release()
                if result is _END:
                    break
                if type(result) is _Failure:
                    raise result.error
                if self.ordered is not None:
                    result = self.ordered(result, ordered_state)
                if result is not None and len(result):
                    yield result
            if self.ordered is not None:
                tail = self.ordered(None, ordered_state)
                if tail is not None and len(tail):
                    yield tail
        finally:
            state.stop = True
            # Free every slot so no worker stays blocked on one.
            for _ in range(self.num_workers):
                state.slots.release()
            deadline = time.monotonic() + 2.0
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join(max(0.0, deadline - time.monotonic()))
            # A worker stuck inside the child (a user generator that never returns) holds the lock;
            # give up on closing the child rather than hang the consumer.
            if state.lock.acquire(timeout=2.0):
                try:
                    source.close()
                except ValueError:
                    pass
                finally:
                    state.lock.release()

    def _wait_for(self, state: _PassState, seq: int) -> Any:
        with state.cond:
            while seq not in state.results:
                if self.rt.stopped:
                    raise PipelineStopped("pipeline stopped")
                state.cond.wait(POLL_SECONDS)
            return state.results.pop(seq)

    def _post(self, state: _PassState, seq: int, value: Any) -> None:
        with state.cond:
            state.results[seq] = value
            state.cond.notify_all()

    def _worker(self, index: int, state: _PassState, source: Iterator[Chunk], pass_index: int) -> None:
        rt = self.rt
        remote = self.remotes[index] if self.remotes is not None else None
        while True:
            while not state.slots.acquire(timeout=POLL_SECONDS):
                if state.stop or rt.stopped:
                    return
            if state.stop or rt.stopped:
                return
            with state.lock:
                if state.exhausted:
                    return
                seq = state.next_seq
                state.next_seq += 1
                try:
                    chunk = next(source)
                except StopIteration:
                    state.exhausted = True
                    self._post(state, seq, _END)
                    return
                except BaseException as error:  # noqa: BLE001 - handed to the consumer in order
                    state.exhausted = True
                    self._post(state, seq, _Failure(error))
                    return
                row_start = state.rows_pulled
                state.rows_pulled += len(chunk)
            try:
                if remote is not None:
                    result = remote((chunk.rows, pass_index, row_start), rt.stop_event)
                else:
                    result = self.work(chunk, pass_index, row_start)
                out = self.finish(chunk, result, pass_index, row_start) if self.finish else result
            except BaseException as error:  # noqa: BLE001 - handed to the consumer in order
                out = _Failure(error)
            self._post(state, seq, out)
            if type(out) is _Failure:
                return

