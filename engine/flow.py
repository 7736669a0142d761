"""Stages of MindSpore's flow-control operations: concat sharding (``use_sampler``), ``flat_map``,
``sync_wait`` / ``sync_update`` and the dataset callbacks of a map.

All run inline in the pulling thread. Every wait polls the runtime's stop event, so a pipeline
blocked on a condition or a waited callback still shuts down promptly.
"""

from __future__ import annotations

import threading
import time
from contextlib import closing
from typing import Any

from minddata.engine.chunk import Chunk, Chunks
from minddata.engine.runtime import POLL_SECONDS, PipelineStopped, Runtime
from minddata.engine.stages import Stage
from minddata.errors import warn

__all__ = ["ShardRowsStage", "FlatMapStage", "SyncGate", "SyncWaitStage", "CallbackStage", "CALLBACK_TIMEOUT"]

# MindSpore's default callback timeout (config.get_callback_timeout): after it a sync_wait stops
# blocking, with a warning, instead of hanging a pipeline whose loop never calls sync_update.
CALLBACK_TIMEOUT = 60.0


class ShardRowsStage(Stage):
    """Keeps row ``k`` of each pass when ``k % num_shards == shard_id``."""

    fast_skip = True

    def __init__(self, rt: Runtime, child: Stage, num_shards: int, shard_id: int, label: str):
        super().__init__(rt, [child], label)
        self.num_shards = num_shards
        self.shard_id = shard_id

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        n, mine = self.num_shards, self.shard_id
        position = skip * n  # output row `skip` is input row skip * n + shard_id
        with closing(self.children[0].run(position)) as source:
            for chunk in source:
                first = (mine - position) % n
                keep = list(range(first, len(chunk), n))
                position += len(chunk)
                if keep:
                    yield chunk.take(keep)


class FlatMapStage(Stage):
    """Replaces each row by the rows ``rows_of(*row)`` gives, in chunks of ``chunk_rows``."""

    def __init__(self, rt: Runtime, child: Stage, rows_of: Any, chunk_rows: int, label: str):
        super().__init__(rt, [child], label)
        self.rows_of = rows_of
        self.chunk_rows = chunk_rows

    def _run(self, pass_index: int) -> Chunks:
        out: list[Any] = []
        with closing(self.children[0].run()) as source:
            for chunk in source:
                for row in chunk.rows:
                    for produced in self.rows_of(*row):
                        self.rt.check()
                        out.append(tuple(produced))
                        if len(out) >= self.chunk_rows:
                            yield Chunk(out)
                            out = []
        if out:
            yield Chunk(out)


class SyncGate:
    """MindSpore's BlockReleasePair: ``init_rows`` rows pass at the start of each pass; each
    :meth:`release` lets more through and calls ``callback(data)``.

    ``rows_per_batch`` is set by a batch above the ``sync_wait`` (counts are in batches there).
    """

    def __init__(self, num_batch: int, callback: Any = None):
        self.num_batch = num_batch
        self.callback = callback
        self.rows_per_batch = 1
        self._cond = threading.Condition()
        self._allowed = 0
        self._disabled = False

    def reset(self) -> None:
        with self._cond:
            self._allowed = self.num_batch * self.rows_per_batch
            self._disabled = False
            self._cond.notify_all()

    def release(self, num_batch: int | None, data: Any) -> None:
        with self._cond:
            self._allowed += (self.num_batch if num_batch is None else num_batch) * self.rows_per_batch
            if self.callback is not None:
                self.callback(data)
            self._cond.notify_all()

    def disable(self) -> None:
        with self._cond:
            self._disabled = True
            self._cond.notify_all()

    def acquire(self, wanted: int, rt: Runtime, label: str) -> int:
        """Wait until at least one row may pass; take up to ``wanted`` of the allowance."""
        deadline = time.monotonic() + CALLBACK_TIMEOUT
        with self._cond:
            while not self._disabled and self._allowed <= 0:
                if rt.stopped:
                    raise PipelineStopped("pipeline stopped")
                if time.monotonic() >= deadline:
                    warn(
                        "%s waited %.0f s for dataset.sync_update(condition_name=...); is it called in "
                        "the loop over the iterator? Disabling the condition so the pipeline does not hang.",
                        label, CALLBACK_TIMEOUT,
                    )
                    self._disabled = True
                    break
                self._cond.wait(POLL_SECONDS)
            if self._disabled:
                return wanted
            taken = min(wanted, self._allowed)
            self._allowed -= taken
            return taken


class SyncWaitStage(Stage):
    # One row out per row in: a resume skips below, so skipped rows never count against the gate.
    fast_skip = True

    def __init__(self, rt: Runtime, child: Stage, gate: SyncGate, label: str):
        super().__init__(rt, [child], label)
        self.gate = gate

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        self.gate.reset()
        with closing(self.children[0].run(skip)) as source:
            for chunk in source:
                start = 0
                while start < len(chunk):
                    taken = self.gate.acquire(len(chunk) - start, self.rt, self.label)
                    yield chunk.slice(start, start + taken)
                    start += taken


class CallbackStage(Stage):
    """Calls the runner's hooks around the rows passing through (see ``ir.CallbackNode``)."""

    fast_skip = True

    def __init__(self, rt: Runtime, child: Stage, runner: Any, where: str, label: str):
        super().__init__(rt, [child], label)
        self.runner = runner
        self.where = where

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        runner, begin = self.runner, self.where == "begin"
        if begin:
            runner.epoch_begin(pass_index, skip, self.rt)
        with closing(self.children[0].run(skip)) as source:
            for chunk in source:
                if begin and runner.waits:
                    # A waited callback holds each step until training has taken the last one.
                    for k in range(len(chunk)):
                        runner.step_begin(1, self.rt)
                        yield chunk.slice(k, k + 1)
                    continue
                if begin:
                    runner.step_begin(len(chunk), self.rt)
                else:
                    runner.step_end(len(chunk), self.rt)
                yield chunk
        if not begin:
            runner.epoch_end(self.rt)
