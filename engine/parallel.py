"""Stages whose work runs in worker threads (or worker processes), with ordered output.

Each worker loops: take a free slot, pull the next chunk from the child under a lock (so the child
runs in the workers, serially), do the work outside the lock, and file the result under the
chunk's sequence number. The consumer takes results strictly in sequence, so output order never
depends on the number of workers or their timing. Slots bound the chunks in flight: memory is
bounded by ``slots * chunk size`` whatever the dataset size.

Workers and slots can change while a pass runs (:meth:`ParallelApplyStage.resize`, used by autotune):
a new worker joins the same pull loop, a retiring worker leaves at the top of its loop, and since
sequence numbers and row indices are assigned under the pull lock, output never depends on how many
workers there were or when they changed.

When the stage is profiled (``self.prof`` set), each worker times, per chunk, its wait for a slot, its
wait for input and its work, into its own record (:mod:`minddata.engine.profiling`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from minddata.engine.autotune import is_autotune
from minddata.engine.chunk import Chunk, Chunks
from minddata.engine.profiling import DONE, WAIT_INPUT, WAIT_SLOT, WORKING
from minddata.engine.runtime import POLL_SECONDS, PipelineStopped, Runtime
from minddata.engine.stages import Stage

__all__ = ["ParallelApplyStage", "reading_first"]

# Work: (chunk, pass_index, row_start) -> result. It runs in a worker thread, or, through a
# remote(...) callable, in a worker process. Finish: (chunk, result, pass_index, row_start) -> chunk,
# always in a worker thread of this process. Ordered: (chunk, pass_state) -> chunk, run by the
# consumer in sequence order (for decisions that must not depend on timing, e.g. error replacement).
Work = Callable[[Chunk, int, int], Any]
Finish = Callable[[Chunk, Any, int, int], Chunk | None]
Ordered = Callable[[Chunk | None, dict], Chunk | None]  # None: the pass ended (the tail, if any)

_END = object()


def reading_first(
    read: Work, finish_read: Callable[[Chunk, Any, int, int], Chunk], work: Work, finish: Finish
) -> tuple[Work, Finish]:
    """The ``work`` and ``finish`` of a stage whose workers first read their chunk's rows: ``read``
    and ``finish_read`` (a source's) turn a chunk of row ids into a chunk of rows, which ``work`` and
    ``finish`` then take as they would from a reader stage."""

    def read_then_work(chunk: Chunk, pass_index: int, row_start: int) -> Any:
        rows = finish_read(chunk, read(chunk, pass_index, row_start), pass_index, row_start)
        return rows, work(rows, pass_index, row_start)

    def finish_work(chunk: Chunk, result: Any, pass_index: int, row_start: int) -> Chunk | None:
        return finish(result[0], result[1], pass_index, row_start)

    return read_then_work, finish_work


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class _PassState:
    def __init__(self, slots: int, source: Chunks, pass_index: int):
        self.lock = threading.Lock()  # guards pulling from the child
        self.cond = threading.Condition()  # guards results, retire and slot_debt
        self.results: dict[int, Any] = {}
        self.slots = threading.Semaphore(slots)
        self.capacity = slots
        # Slots to withhold instead of releasing (after the capacity was lowered mid-pass).
        self.slot_debt = 0
        # Workers asked to leave (after the worker count was lowered mid-pass).
        self.retire = 0
        self.threads: list[threading.Thread] = []
        self.started = 0
        self.source = source
        self.pass_index = pass_index
        self.next_seq = 0
        self.rows_pulled = 0
        self.exhausted = False
        self.stop = False


class ParallelApplyStage(Stage):
    """Runs ``work`` over the child's chunks on ``num_workers`` threads, emitting results in order.

    ``remotes``: optional per-worker callables ``remote(arg, stop_event)``; worker ``i`` then runs its
    work as ``remotes[i]((rows, pass_index, row_start), stop_event)`` (a worker process) instead of
    calling ``work`` in the thread.

    ``num_workers`` may be :data:`~minddata.engine.autotune.AUTOTUNE` (starts at 1, autotune adjusts).
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
        one_to_one: bool = False,
        map_function: Any = None,
        op_names: list[str] | None = None,
    ):
        super().__init__(rt, [child], label)
        # A map's stage: its map function and op labels, for the profiler's per-op times.
        self.map_function = map_function
        self.op_names = op_names
        # One output row per input row: a resume can skip in the child instead of replaying.
        self.fast_skip = one_to_one and ordered is None
        self.work = work
        self.finish = finish
        self.ordered = ordered
        self.autotune = is_autotune(num_workers)
        self.num_workers = int(num_workers)
        self.slots = slots if slots is not None else 2 * self.num_workers + 2
        self.remotes = remotes
        self._live: _PassState | None = None
        self._resize_lock = threading.Lock()

    @property
    def resizable(self) -> bool:
        """Whether :meth:`resize` may change the worker count (not for worker processes)."""
        return self.remotes is None

    def resize(self, workers: int | None = None, slots: int | None = None) -> None:
        """Change the worker count and/or slots, for this pass (if running) and the next ones."""
        with self._resize_lock:
            state = self._live
            live = state is not None and not state.stop
            if workers is not None and workers != self.num_workers:
                if workers < 1:
                    raise ValueError(f"{self.label}: workers must be at least 1. Found: {workers}")
                if not self.resizable:
                    raise ValueError(f"{self.label}: worker processes can't be added or removed while running")
                delta = workers - self.num_workers
                self.num_workers = workers
                if live:
                    assert state is not None
                    start = 0
                    with state.cond:
                        if delta > 0:
                            cancelled = min(state.retire, delta)
                            state.retire -= cancelled
                            start = delta - cancelled
                        else:
                            state.retire += -delta
                    for _ in range(start):
                        self._start_worker(state)
            if slots is not None and slots != self.slots:
                if slots < 1:
                    raise ValueError(f"{self.label}: slots must be at least 1. Found: {slots}")
                delta = slots - self.slots
                self.slots = slots
                if live:
                    assert state is not None
                    with state.cond:
                        state.capacity = slots
                        if delta > 0:
                            paid = min(state.slot_debt, delta)
                            state.slot_debt -= paid
                            if delta > paid:
                                state.slots.release(delta - paid)
                        else:
                            state.slot_debt += -delta

    def _start_worker(self, state: _PassState) -> None:
        index = state.started
        state.started += 1
        thread = self.rt.start_thread(
            self._worker, f"minddata-{self.label}-{index}", index, state, state.source, state.pass_index
        )
        state.threads.append(thread)

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        source = self.children[0].run(skip)
        state = _PassState(self.slots, source, pass_index)
        # Row indices (which key random ops) continue from where the resumed pass starts.
        state.rows_pulled = skip
        with self._resize_lock:
            self._live = state
            for _ in range(self.num_workers):
                self._start_worker(state)
        ordered_state: dict = {}
        try:
            seq = 0
            while True:
                result = self._take(state, seq)
                seq += 1
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
            with self._resize_lock:
                state.stop = True
                if self._live is state:
                    self._live = None
                threads = list(state.threads)
            # Free every slot so no worker stays blocked on one.
            state.slots.release(len(threads))
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

    def _take(self, state: _PassState, seq: int) -> Any:
        """Result ``seq``, once filed; frees its slot (or keeps it, to lower the capacity)."""
        with state.cond:
            while seq not in state.results:
                if self.rt.stopped:
                    raise PipelineStopped("pipeline stopped")
                state.cond.wait(POLL_SECONDS)
            if state.slot_debt:
                state.slot_debt -= 1
            else:
                state.slots.release()
            return state.results.pop(seq)

    def _post(self, state: _PassState, seq: int, value: Any) -> None:
        with state.cond:
            state.results[seq] = value
            state.cond.notify_all()

    def _retiring(self, state: _PassState) -> bool:
        with state.cond:
            if state.retire > 0:
                state.retire -= 1
                return True
            return False

    def _worker(self, index: int, state: _PassState, source: Chunks, pass_index: int) -> None:
        prof = self.prof
        if prof is None:
            self._work_loop(index, state, source, pass_index)
            return
        record = prof.new_worker(threading.current_thread().name)
        try:
            self._work_loop_profiled(index, state, source, pass_index, record)
        finally:
            record.end = time.perf_counter()
            record.state = DONE

    def _acquire_slot(self, state: _PassState) -> bool:
        """Wait for a free slot; False when the pass stops or this worker is retired meanwhile."""
        rt = self.rt
        if state.retire and self._retiring(state):
            return False
        while not state.slots.acquire(timeout=POLL_SECONDS):
            if state.stop or rt.stopped:
                return False
            if state.retire and self._retiring(state):
                return False
        return not (state.stop or rt.stopped)

    def _pull(self, state: _PassState, source: Chunks) -> tuple[int, Chunk, int] | None:
        """(sequence number, chunk, row index of its first row), or None at the end of the pass (the
        end, or the child's error, is filed for the consumer under the next sequence number)."""
        with state.lock:
            if state.exhausted:
                return None
            seq = state.next_seq
            state.next_seq += 1
            try:
                chunk = next(source)
            except StopIteration:
                state.exhausted = True
                self._post(state, seq, _END)
                return None
            except BaseException as error:  # noqa: BLE001 - handed to the consumer in order
                state.exhausted = True
                self._post(state, seq, _Failure(error))
                return None
            row_start = state.rows_pulled
            state.rows_pulled += len(chunk)
        return seq, chunk, row_start

    def _compute(self, remote: Any, chunk: Chunk, pass_index: int, row_start: int) -> Any:
        try:
            if remote is not None:
                result = remote((chunk.rows, pass_index, row_start, chunk.keys), self.rt.stop_event)
            else:
                result = self.work(chunk, pass_index, row_start)
            return self.finish(chunk, result, pass_index, row_start) if self.finish else result
        except BaseException as error:  # noqa: BLE001 - handed to the consumer in order
            return _Failure(error)

    def _work_loop(self, index: int, state: _PassState, source: Chunks, pass_index: int) -> None:
        remote = self.remotes[index] if self.remotes is not None else None
        while self._acquire_slot(state):
            pulled = self._pull(state, source)
            if pulled is None:
                return
            seq, chunk, row_start = pulled
            out = self._compute(remote, chunk, pass_index, row_start)
            self._post(state, seq, out)
            if type(out) is _Failure:
                return

    def _work_loop_profiled(
        self, index: int, state: _PassState, source: Chunks, pass_index: int, record: Any
    ) -> None:
        # _work_loop with a clock at each hand-off; kept separate so the unprofiled loop pays nothing.
        remote = self.remotes[index] if self.remotes is not None else None
        perf = time.perf_counter
        thread_time = time.thread_time
        while True:
            t_slot = perf()
            record.state = WAIT_SLOT
            if not self._acquire_slot(state):
                return
            t_pull = perf()
            record.state = WAIT_INPUT
            pulled = self._pull(state, source)
            if pulled is None:
                return
            seq, chunk, row_start = pulled
            t_work = perf()
            cpu0 = thread_time() if record.chunks & 7 == 0 else None
            record.state = WORKING
            out = self._compute(remote, chunk, pass_index, row_start)
            record.add(t_slot, t_pull, t_work, perf(), None if cpu0 is None else thread_time() - cpu0, len(chunk))
            record.state = WAIT_SLOT
            self._post(state, seq, out)
            if type(out) is _Failure:
                return
