"""engine/parallel.py on its own: ParallelApplyStage's ordered output, its bound on chunks in flight,
errors in order, and a stop that leaves no worker thread behind."""

from __future__ import annotations

import threading

import pytest

from minddata.engine.chunk import Chunk
from minddata.engine.parallel import ParallelApplyStage, reading_first
from minddata.engine.stages import IterableSourceStage

# How long a test waits for another thread before failing instead of hanging; never a measured time.
PATIENCE_S = 30


def _source(rt, count, chunk_rows=1, on_pull=None):
    def values(pass_index):
        for k in range(count):
            if on_pull is not None:
                on_pull(k)
            yield k

    return IterableSourceStage(rt, values, lambda item, position: (item,), chunk_rows, None, "Source")


def _values(stage):
    return [row[0] for chunk in stage.run() for row in chunk.rows]


def _same(chunk, pass_index, row_start):
    return chunk


def test_output_keeps_the_input_order_when_a_later_chunk_finishes_first(rt):
    second_done = threading.Event()
    finished = []

    def work(chunk, pass_index, row_start):
        if row_start == 0:
            assert second_done.wait(PATIENCE_S), "the second chunk never finished"
        finished.append(row_start)
        if row_start == 1:
            second_done.set()
        return chunk

    stage = ParallelApplyStage(rt, _source(rt, 6), work, 2, "Work")
    assert _values(stage) == list(range(6))
    assert finished.index(1) < finished.index(0)  # chunk 1 really finished before chunk 0


def test_row_indices_continue_across_chunks_whatever_the_worker_count(rt):
    for workers in (1, 3):
        starts = []

        def work(chunk, pass_index, row_start, starts=starts):
            starts.append(row_start)
            return chunk

        _values(ParallelApplyStage(rt, _source(rt, 10, chunk_rows=3), work, workers, "Work"))
        assert sorted(starts) == [0, 3, 6, 9]


def test_chunks_in_flight_never_exceed_the_slots(rt):
    slots = 3
    taken = [0]
    ahead = []  # for each pull: how far the source ran ahead of what the consumer took

    stage = ParallelApplyStage(rt, _source(rt, 40, on_pull=lambda k: ahead.append(k - taken[0])), _same, 2, "Work",
                               slots=slots)
    for chunk in stage.run():
        taken[0] += len(chunk)
    assert taken[0] == 40
    # A slot frees when the consumer takes a result, just before it counts it: hence slots, not slots - 1.
    assert max(ahead) <= slots


def test_a_work_error_reaches_the_consumer_after_the_rows_before_it(rt):
    def work(chunk, pass_index, row_start):
        if row_start == 4:
            raise ValueError("chunk at row 4 is bad")
        return chunk

    got = []
    with pytest.raises(ValueError, match="chunk at row 4 is bad"):
        for chunk in ParallelApplyStage(rt, _source(rt, 10), work, 3, "Work").run():
            got.extend(row[0] for row in chunk.rows)
    assert got == [0, 1, 2, 3]


def test_closing_a_pass_early_stops_its_workers(rt):
    stage = ParallelApplyStage(rt, _source(rt, 1000), _same, 3, "Work")
    chunks = stage.run()
    assert next(chunks).rows == [(0,)]
    chunks.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("minddata-Work-") and t.is_alive()]


def test_stopping_the_runtime_ends_a_worker_waiting_for_a_slot(rt):
    stage = ParallelApplyStage(rt, _source(rt, 1000), _same, 2, "Work", slots=2)
    chunks = stage.run()
    next(chunks)
    rt.close()  # the fixture then checks that no thread is alive
    chunks.close()


def test_resize_mid_pass_keeps_the_order(rt):
    stage = ParallelApplyStage(rt, _source(rt, 50), _same, 1, "Work")
    out = []
    for k, chunk in enumerate(stage.run()):
        if k == 5:
            stage.resize(workers=3, slots=4)
        if k == 20:
            stage.resize(workers=1)
        out.extend(row[0] for row in chunk.rows)
    assert out == list(range(50))
    assert (stage.num_workers, stage.slots) == (1, 4)


def test_resize_refuses_zero_workers(rt):
    stage = ParallelApplyStage(rt, _source(rt, 3), _same, 1, "Work")
    with pytest.raises(ValueError, match="Work: workers must be at least 1. Found: 0"):
        stage.resize(workers=0)


def test_reading_first_reads_a_chunk_then_works_on_its_rows():
    def read(chunk, pass_index, row_start):
        return [("row", i) for i in chunk.rows]

    def finish_read(chunk, rows, pass_index, row_start):
        return Chunk(rows)

    def work(rows, pass_index, row_start):
        return len(rows)

    def finish(rows, result, pass_index, row_start):
        return Chunk([(result, *row) for row in rows.rows])

    run, done = reading_first(read, finish_read, work, finish)
    ids = Chunk([7, 8])
    assert done(ids, run(ids, 0, 0), 0, 0).rows == [(2, "row", 7), (2, "row", 8)]
