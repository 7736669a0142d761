"""engine/iterator.py on its own: PipelineRun over a small graph of plan nodes, its epochs, its state
and its shutdown; check_state and new_runtime."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from minddata import config
from minddata.engine import ir
from minddata.engine.iterator import EPOCH_END, PipelineRun, check_state, new_runtime


def _range(n=10):
    return ir.IterableSourceNode(name="Range", column_names=["x"], open_iter=lambda pass_index: iter(range(n)),
                                 to_row=lambda item, position: (np.int64(item),), size=lambda: n)


def _first(row):
    return int(row[0])


def _items(run, count):
    return [run.next_item() for _ in range(count)]


@pytest.fixture
def opened():
    runs = []

    def make(*args, **kwargs):
        run = PipelineRun(*args, **kwargs)
        runs.append(run)
        return run

    yield make
    for run in runs:
        run.close()


def test_each_epoch_ends_with_one_epoch_end(opened):
    run = opened(_range(3), 2, _first)
    assert _items(run, 8) == [0, 1, 2, EPOCH_END, 0, 1, 2, EPOCH_END]


def test_reading_past_the_last_epoch_says_so(opened):
    from minddata.errors import EpochsExhaustedError

    run = opened(_range(2), 1, _first)
    _items(run, 3)
    with pytest.raises(EpochsExhaustedError, match="num_epochs=1"):
        run.next_item()


def test_convert_shapes_what_the_consumer_gets(opened):
    run = opened(_range(2), 1, lambda row: {"x": int(row[0]) * 2})
    assert _items(run, 3) == [{"x": 0}, {"x": 2}, EPOCH_END]


def test_a_run_from_a_state_gives_the_rows_the_first_would_have_given_next(opened):
    first = opened(ir.ShuffleNode(_range(20), 8), 2, _first)
    read = _items(first, 27)  # 20 rows, the epoch's end, and 6 rows into the second epoch
    state = first.get_state()
    assert (state["epoch"], state["row"]) == (1, 6)
    rest = _items(first, 15)
    resumed = opened(ir.ShuffleNode(_range(20), 8), 2, _first, state=state)
    assert _items(resumed, 15) == rest
    assert sorted(read[:20]) == list(range(20))


def test_close_stops_every_thread_of_the_run(opened):
    run = opened(_range(10_000), -1, _first)
    run.next_item()
    run.close()
    assert run.rt.alive_threads() == []
    assert not [t for t in threading.enumerate() if t.is_alive() and t.name.startswith("minddata-")]


def test_zero_epochs_is_refused():
    with pytest.raises(ValueError, match="num_epochs must be -1 .* Found: 0"):
        PipelineRun(_range(), 0, _first)


@pytest.mark.parametrize(
    "state, match",
    [
        ({"version": 1, "epoch": 0, "row": -1, "seed": 3}, r"state\['row'\] must be an int of 0 or more"),
        ({"version": 1, "epoch": 0, "row": 0, "seed": 2**32}, r"state\['seed'\] must be below 2\*\*32"),
        ({"version": 1, "epoch": 5, "row": 0, "seed": 3}, "state is at epoch 5, but the iterator runs only num_epochs=2"),
        ([1, 2], "state must be a dict returned by iterator.get_state"),
    ],
)
def test_check_state_names_what_is_wrong(state, match):
    with pytest.raises(ValueError, match=match):
        check_state(state, 2)


def test_check_state_reads_a_good_state():
    assert check_state({"version": 1, "epoch": 1, "row": 4, "seed": 9}, 2) == (1, 4, 9, 9)


def test_new_runtime_takes_the_seed_of_its_settings():
    rt = new_runtime(options=dataclasses.replace(config.snapshot(), seed=123))
    try:
        assert (rt.seed, rt.shard_seed) == (123, 123)
    finally:
        rt.close()


def test_new_runtime_in_debug_mode_is_seeded_and_raises_on_a_bad_row():
    settings = dataclasses.replace(config.snapshot(), seed=None, debug_mode=True,
                                   error_samples_mode=config.ErrorSamplesMode.SKIP)
    rt = new_runtime(options=settings)
    try:
        assert (rt.seed, rt.error_mode) == (1, "raise")
    finally:
        rt.close()
