"""engine/stages.py on its own: each inline stage over a source stage, one pass at a time."""

from __future__ import annotations

import pytest

from minddata.engine.runtime import Runtime
from minddata.engine.stages import (
    ConcatStage,
    GroupStage,
    InlineApplyStage,
    IterableSourceStage,
    ProjectStage,
    RepeatStage,
    ShuffleStage,
    SkipStage,
    TakeStage,
    ZipStage,
)
from minddata.errors import PipelineError


@pytest.fixture
def rt():
    runtime = Runtime(seed=7, error_mode="raise")
    yield runtime
    runtime.close()


def _source(rt, values, chunk_rows=4, make=lambda v: (v,)):
    return IterableSourceStage(rt, lambda pass_index: iter(values), lambda item, position: make(item),
                               chunk_rows, None, "Source")


def _rows(stage, skip=0):
    return [row for chunk in stage.run(skip) for row in chunk.rows]


def test_a_source_stage_chunks_its_rows_and_numbers_them(rt):
    chunks = list(_source(rt, range(10), chunk_rows=4).run())
    assert [len(c) for c in chunks] == [4, 4, 2]
    assert [c.ids for c in chunks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_take_stops_inside_a_chunk(rt):
    assert _rows(TakeStage(rt, _source(rt, range(10)), 6, "Take")) == [(k,) for k in range(6)]


def test_skip_starts_its_child_that_many_rows_in(rt):
    assert _rows(SkipStage(rt, _source(rt, range(10)), 7, "Skip")) == [(7,), (8,), (9,)]


def test_repeat_runs_its_child_once_per_count_and_counts_the_passes(rt):
    source = _source(rt, range(3))
    assert _rows(RepeatStage(rt, source, 2, "Repeat")) == [(0,), (1,), (2,)] * 2
    assert source.passes == 2


def test_run_with_skip_drops_rows_of_a_stage_that_cannot_skip_fast(rt):
    doubled = InlineApplyStage(rt, _source(rt, range(10)), lambda c, p, r: type(c)([(2 * v,) for (v,) in c.rows]),
                               "Double")
    assert not doubled.fast_skip
    assert _rows(doubled, skip=5) == [(2 * k,) for k in range(5, 10)]


def test_inline_apply_passes_the_row_index_of_each_chunks_first_row(rt):
    starts = []

    def record(chunk, pass_index, row_start):
        starts.append(row_start)
        return chunk

    _rows(InlineApplyStage(rt, _source(rt, range(10)), record, "Record"))
    assert starts == [0, 4, 8]


def test_project_reorders_columns(rt):
    source = _source(rt, range(3), make=lambda v: (v, -v, str(v)))
    assert _rows(ProjectStage(rt, source, [2, 0], "Project")) == [("0", 0), ("1", 1), ("2", 2)]


def test_zip_joins_rows_and_ends_with_the_shortest_child(rt):
    zipped = ZipStage(rt, [_source(rt, range(5)), _source(rt, "abc", chunk_rows=2)])
    assert _rows(zipped) == [(0, "a"), (1, "b"), (2, "c")]


def test_concat_refuses_children_whose_column_types_differ(rt):
    import numpy as np

    ints = _source(rt, [np.int32(1)])
    floats = _source(rt, [np.float64(1.0)])
    with pytest.raises(PipelineError, match="column 'x' is int32 in dataset 0 of the concat but float64 in dataset 1"):
        _rows(ConcatStage(rt, [ints, floats], "Concat", columns=["x"]))


def test_group_makes_batches_and_drops_the_remainder_when_asked(rt):
    kept = GroupStage(rt, _source(rt, range(5)), 2, False, lambda n, p: None, "Batch")
    assert [len(row) for row in _rows(kept)] == [2, 2, 1]
    dropped = GroupStage(rt, _source(rt, range(5)), 2, True, lambda n, p: None, "Batch")
    assert [len(row) for row in _rows(dropped)] == [2, 2]


def test_group_refuses_a_batch_size_callable_returning_zero(rt):
    stage = GroupStage(rt, _source(rt, range(5)), lambda info: 0, False, lambda n, p: None, "Batch")
    with pytest.raises(PipelineError, match="Batch: the batch_size callable must return an int greater than 0"):
        _rows(stage)


def test_shuffle_emits_a_permutation_that_depends_on_seed_and_pass():
    def shuffled_passes(seed):
        runtime = Runtime(seed=seed, error_mode="raise")
        stage = ShuffleStage(runtime, _source(runtime, range(50)), 8, 1, 16, "Shuffle")
        passes = [_rows(stage), _rows(stage)]
        runtime.close()
        return passes

    first, second = shuffled_passes(3)
    assert sorted(first) == sorted(second) == [(k,) for k in range(50)]
    assert first != second  # each pass (epoch) reshuffles
    assert shuffled_passes(3) == [first, second]  # the same seed gives the same order
    assert shuffled_passes(4)[0] != first
