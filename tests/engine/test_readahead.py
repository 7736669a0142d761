"""engine/readahead.py on its own: chunks leave in order with their reads started ahead, a read's
error reaches the chunk's taker, the requests of all reads share one bounded pool, and closing a pass
leaves no thread behind."""

from __future__ import annotations

import threading
from contextlib import closing

import pytest

from minddata.engine.readahead import Prefetched, ReadAheadStage, request_pool
from minddata.engine.stages import IterableSourceStage

# How long a test waits for another thread before failing instead of hanging; never a measured time.
PATIENCE_S = 30


def _source(rt, count, chunk_rows=2):
    return IterableSourceStage(rt, lambda pass_index: iter(range(count)), lambda item, position: (item,), chunk_rows,
                               None, "Source")


def _ids(chunk) -> list[int]:
    return [row[0] for row in chunk.rows]


def _readahead_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("minddata-readahead") and t.is_alive()]


def test_chunks_leave_in_order_each_with_its_own_read(rt):
    stage = ReadAheadStage(rt, _source(rt, 11), lambda chunk: [10 * i for i in _ids(chunk)], 3, 2, "Read")
    got = [(type(c), _ids(c), c.pending.result()) for c in stage.run()]
    assert [ids for _, ids, _ in got] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]
    assert all(kind is Prefetched and result == [10 * i for i in ids] for kind, ids, result in got)
    assert not _readahead_threads()


def test_reads_start_ahead_of_the_chunk_taken(rt):
    started: list[list[int]] = []
    enough = threading.Event()
    release = threading.Event()

    def read(chunk):
        started.append(_ids(chunk))
        if len(started) == 4:
            enough.set()
        assert release.wait(PATIENCE_S)
        return _ids(chunk)

    stage = ReadAheadStage(rt, _source(rt, 20), read, 3, 1, "Read")
    with closing(stage.run()) as chunks:
        first = next(chunks)
        # the first chunk is handed out with its read and the next three's under way, none finished
        assert enough.wait(PATIENCE_S), f"reads started: {started}"
        assert sorted(started) == [[0, 1], [2, 3], [4, 5], [6, 7]] and not first.pending.done()
        release.set()
        assert first.pending.result() == [0, 1]
    assert not _readahead_threads()


def test_a_failed_read_raises_where_its_chunk_is_taken(rt):
    def read(chunk):
        if 4 in _ids(chunk):
            raise OSError("object 4 is gone")
        return _ids(chunk)

    stage = ReadAheadStage(rt, _source(rt, 8), read, 2, 1, "Read")
    chunks = list(stage.run())
    assert [c.pending.result() for c in chunks[:2]] == [[0, 1], [2, 3]]
    with pytest.raises(OSError, match="object 4 is gone"):
        chunks[2].pending.result()
    assert chunks[3].pending.result() == [6, 7]


def test_requests_of_every_read_share_one_bounded_pool(rt):
    lock = threading.Lock()
    in_flight = most = 0
    gate = threading.Barrier(3, timeout=PATIENCE_S)  # the pool's 3 threads, all busy at once

    def request(i):
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        if i < 3:
            gate.wait()  # the first requests wait until the pool is full
        with lock:
            in_flight -= 1
        return i

    def read(chunk):
        pool = request_pool()
        assert pool is not None
        return list(pool.map(request, _ids(chunk)))

    stage = ReadAheadStage(rt, _source(rt, 12, chunk_rows=4), read, 3, 3, "Read")
    assert [c.pending.result() for c in stage.run()] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert most == 3  # three chunks of four requests read at once, never more than the pool's three
    assert request_pool() is None  # outside the stage's threads


def test_closing_a_pass_cancels_the_reads_not_started_and_ends_its_threads(rt):
    started: list[list[int]] = []

    def read(chunk):
        started.append(_ids(chunk))
        return _ids(chunk)

    stage = ReadAheadStage(rt, _source(rt, 1000), read, 4, 2, "Read")
    with closing(stage.run()) as chunks:
        assert next(chunks).pending.result() == [0, 1]
    assert not _readahead_threads()
    assert len(started) <= 5  # the chunk taken and the four ahead of it, not the pass


@pytest.mark.parametrize(("chunks_ahead", "requests"), [(0, 1), (1, 0)])
def test_sizes_below_one_are_refused(rt, chunks_ahead, requests):
    with pytest.raises(ValueError, match="must be at least 1. Found: 0"):
        ReadAheadStage(rt, _source(rt, 2), lambda chunk: None, chunks_ahead, requests, "Read")
