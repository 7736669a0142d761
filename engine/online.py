"""Online pipelines: rows pushed in while the pipeline runs, one result (or error) per request.

The inference service submits each request's row and waits on its future. Rows move through the
same stages as in batch iteration (worker threads, chunks), but a row whose op fails resolves its own
future with the error instead of stopping the pipeline.
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import Future
from contextlib import closing
from typing import Any

import numpy as np

from minddata.config import RunOptions
from minddata.engine import ir
from minddata.engine.chunk import Chunk, Chunks, FailedRow
from minddata.engine.compiler import compile_plan
from minddata.engine.iterator import new_runtime
from minddata.engine.runtime import POLL_SECONDS
from minddata.engine.stages import Stage
from minddata.errors import ArgumentError, GraphError, PipelineError

__all__ = ["OnlineSession"]

_ALLOWED = (ir.MapNode, ir.ProjectNode, ir.RenameNode)


def _online_source(root: ir.Node) -> ir.OnlineSourceNode:
    node = root
    while not isinstance(node, ir.OnlineSourceNode):
        if not isinstance(node, _ALLOWED):
            raise GraphError(
                f"serve: an online pipeline may hold only map, project and rename between OnlineDataset and "
                f"its end, since each request gets exactly one result row; found {node.label}. Batch requests "
                "in the caller (the inference service batches dynamically)."
            )
        node = node.children[0]
    return node


def _parallelism(root: ir.Node) -> int:
    """The most workers any map of the online pipeline has (1 without maps)."""
    workers = [n.num_workers for n in root.walk() if isinstance(n, ir.MapNode) and isinstance(n.num_workers, int)]
    return max([1, *workers])


class _OnlineSourceStage(Stage):
    def __init__(self, session: OnlineSession, rt: Any, chunk_rows: int, parallelism: int = 1):
        super().__init__(rt, [], "OnlineDataset")
        self.session = session
        self.chunk_rows = chunk_rows
        self.parallelism = max(1, parallelism)

    def _run(self, pass_index: int) -> Chunks:
        pending, cond = self.session._pending, self.session._cond
        while True:
            with cond:
                while not pending:
                    if self.rt.stopped:
                        return
                    cond.wait(POLL_SECONDS)
                # Take what is there, without waiting to fill a chunk: latency matters more here. What
                # arrived together (a dynamic batch) is cut into about two chunks per worker: a chunk
                # runs on one worker, and one 32-row chunk left the other workers idle.
                take = min(len(pending), self.chunk_rows, max(1, -(-len(pending) // (2 * self.parallelism))))
                items = [pending.popleft() for _ in range(take)]
            yield Chunk([row for _, row in items], [request for request, _ in items])


class OnlineSession:
    """A running online pipeline. ``submit(row)`` returns a :class:`concurrent.futures.Future` whose
    result is the output row as ``{column: array}``; a row whose op failed gets that error instead.
    Results resolve in submission order. Close it (or use ``with``) to stop its workers.

    ``thread_nice`` (Linux) runs the session's threads that many steps nicer than the caller: a
    server that shares its cores with its pipeline keeps answering (and refusing) requests at once
    while preprocessing saturates them. ``options``: the settings the session runs with (a
    :class:`~minddata.config.RunOptions`; default: a snapshot taken now)."""

    def __init__(self, root: ir.Node, thread_nice: int = 0, options: RunOptions | None = None):
        if isinstance(thread_nice, bool) or not isinstance(thread_nice, int) or not 0 <= thread_nice <= 19:
            raise ArgumentError(f"serve: `thread_nice` must be an int from 0 to 19. Found: {thread_nice!r}")
        source = _online_source(root)
        self._input_columns = source.columns
        self._output_columns = root.columns
        self._pending: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._futures: dict[int, Future] = {}
        self._next_id = 0
        self._broken: BaseException | None = None
        self.rt = new_runtime(error_mode="deliver", options=options)
        self.rt.lower_thread_priority(thread_nice)
        chunk_rows = self.rt.options.rows_per_chunk
        parallelism = _parallelism(root)
        self._stage = compile_plan(
            root, self.rt, online_source=lambda node: _OnlineSourceStage(self, self.rt, chunk_rows, parallelism)
        )
        self._thread = self.rt.start_thread(self._deliver, "minddata-online")

    def submit(self, row: dict[str, Any] | tuple | list) -> Future:
        """Push one row (a dict by column name, or a tuple in column order) into the pipeline."""
        values = self._row_tuple(row)
        future: Future = Future()
        with self._cond:
            if self._broken is not None:
                raise PipelineError("the online session failed earlier; start a new one") from self._broken
            if self.rt.closed:
                raise PipelineError("the online session is closed; start a new one with .serve()")
            request = self._next_id
            self._next_id += 1
            self._futures[request] = future
            self._pending.append((request, values))
            self._cond.notify_all()
        return future

    def _row_tuple(self, row: Any) -> tuple:
        names = self._input_columns
        if isinstance(row, dict):
            missing = [c for c in names if c not in row]
            extra = [c for c in row if c not in names]
            if missing or extra:
                raise ArgumentError(
                    f"submit: the row must have exactly the columns {names}. Missing: {missing}; unexpected: {extra}"
                )
            values = tuple(row[c] for c in names)
        elif isinstance(row, (tuple, list)):
            if len(row) != len(names):
                raise ArgumentError(f"submit: the row must have {len(names)} value(s) for {names}. Found: {len(row)}")
            values = tuple(row)
        else:
            raise ArgumentError(f"submit: the row must be a dict or a tuple. Found: {type(row).__name__}")
        return tuple(v if type(v) is np.ndarray else np.asarray(v) for v in values)

    def _deliver(self) -> None:
        names = self._output_columns
        try:
            with closing(self._stage.run()) as chunks:
                for chunk in chunks:
                    for request, row in zip(chunk.ids, chunk.rows):  # type: ignore[arg-type]  # rows keep the request ids _OnlineSourceStage gave them
                        with self._cond:
                            future = self._futures.pop(request)
                        if type(row) is FailedRow:
                            future.set_exception(row.error)
                        else:
                            future.set_result({n: v if type(v) is np.ndarray else np.asarray(v) for n, v in zip(names, row)})
        except BaseException as error:  # noqa: BLE001 - every waiting request must hear of it
            if not self.rt.stopped:
                with self._cond:
                    self._broken = error
            self._fail_all(error if not self.rt.stopped else None)

    def _fail_all(self, error: BaseException | None) -> None:
        with self._cond:
            futures, self._futures = self._futures, {}
            self._pending.clear()
        for future in futures.values():
            if not future.done():
                exc = PipelineError("the online session was closed before this request finished")
                if error is not None:
                    exc.__cause__ = error
                future.set_exception(exc)

    def close(self) -> None:
        """Stop the pipeline; requests still in flight fail with a PipelineError."""
        self.rt.close()
        self._fail_all(None)

    def __enter__(self) -> OnlineSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
