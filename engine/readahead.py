"""Reads started ahead of the workers, for sources whose reads wait on the network.

A map's workers read their chunk's rows and then compute on them. From local files the read is a
page-cache copy; from object storage it is a wait of milliseconds per request, during which the
worker's core has nothing to do (two workers reading an image folder from a local S3 server kept 0.8
of 2 cores busy). :class:`ReadAheadStage` sits between a source's sampler stage and the stage that
reads: as each chunk of row ids is taken from the sampler it starts that chunk's read on a thread of
its own, ``chunks_ahead`` chunks before a worker asks for it, and hands the chunk on as
:class:`Prefetched`; the worker then takes the rows from the read already under way.

Order and content are unchanged: chunks leave in the sampler's order, and each chunk's rows are read
by the same function, with the same error handling, as without it. Memory is bounded by
``chunks_ahead`` chunks of encoded rows. The threads live for one pass: the pass's end, or its
consumer closing it, cancels the reads not yet started and waits for those under way (each bounded
by the store's timeouts and retry budget).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from typing import Any

from minddata.engine.chunk import Chunk, Chunks
from minddata.engine.runtime import Runtime
from minddata.engine.stages import Stage

__all__ = ["Prefetched", "ReadAheadStage", "request_pool"]

_thread = threading.local()


def request_pool() -> ThreadPoolExecutor | None:
    """In a :class:`ReadAheadStage`'s thread, the pass's pool for the requests of its reads (its size
    bounds the requests in flight of all the chunks read ahead together); else None."""
    return getattr(_thread, "requests", None)


def _serve_requests_from(pool: ThreadPoolExecutor) -> None:
    _thread.requests = pool


class Prefetched(Chunk):
    """A chunk of row ids whose read was started ahead: ``pending`` gives what the read returns."""

    __slots__ = ("pending",)

    def __init__(self, chunk: Chunk, pending: Future):
        super().__init__(chunk.rows, chunk.ids, chunk.origins, chunk.keys)
        self.pending = pending


class ReadAheadStage(Stage):
    """Passes its child's chunks on in order, each with ``read(chunk)`` started ``chunks_ahead`` chunks
    before it is taken (see the module's notes); the reads' requests share ``requests`` threads
    (:func:`request_pool`), so that at most that many are in flight together."""

    fast_skip = True  # a resume's skip goes to the sampler below

    def __init__(self, rt: Runtime, child: Stage, read: Callable[[Chunk], Any], chunks_ahead: int, requests: int,
                 label: str):
        if chunks_ahead < 1:
            raise ValueError(f"{label}: chunks_ahead must be at least 1. Found: {chunks_ahead}")
        if requests < 1:
            raise ValueError(f"{label}: requests must be at least 1. Found: {requests}")
        super().__init__(rt, [child], label)
        self.read = read
        self.chunks_ahead = chunks_ahead
        self.requests = requests

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        return self._ahead(self.children[0].run(skip))  # the child counts its own passes, as this stage

    def run_at(self, pass_index: int, skip: int) -> Chunks:
        return self._ahead(self.children[0].run_at(pass_index, skip))

    def _ahead(self, source: Chunks) -> Chunks:
        requests = ThreadPoolExecutor(self.requests, thread_name_prefix="minddata-readahead-request")
        # A thread for each chunk read ahead and one for the chunk handed out last (its read may be
        # under way still): every read kept pending is under way.
        pool = ThreadPoolExecutor(self.chunks_ahead + 1, thread_name_prefix="minddata-readahead",
                                  initializer=_serve_requests_from, initargs=(requests,))
        pending: deque[Prefetched] = deque()
        try:
            with closing(source):
                for chunk in source:
                    pending.append(Prefetched(chunk, pool.submit(self.read, chunk)))
                    if len(pending) > self.chunks_ahead:
                        yield pending.popleft()
            while pending:
                yield pending.popleft()
        finally:
            for chunk in pending:
                chunk.pending.cancel()
            pool.shutdown(wait=True)  # the reads under way end first: they wait on the requests below
            requests.shutdown(wait=True)

