"""Resuming on a different number of ranks (docs/data.md): the states of N ranks, passed as a list to
M new ranks, give exactly the samples of the epoch the N ranks had not consumed, each once (or, with
``config.set_elastic_equal_shares``, padded to equal shares), each equal bit for bit to the same sample of an uninterrupted single-rank run; the next epoch
is an uninterrupted M-rank run's. Pipelines that lose a row's global position refuse it by name."""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import minddata as md
from minddata import vision
from minddata.errors import GraphError

ROWS = 17
SEED = 7


def build(num_shards=None, shard_id=None, workers=1, batch=None, rows=ROWS, shuffle=True):
    """Rows ``(id, x)``: ``x`` a small image through random ops, so a sample's augmentation shows."""
    shard = {} if num_shards is None else {"num_shards": num_shards, "shard_id": shard_id}
    images = (np.arange(rows * 12, dtype=np.int64).reshape(rows, 2, 2, 3) % 251).astype(np.uint8)
    ds = md.NumpySlicesDataset({"id": np.arange(rows, dtype=np.int64), "x": images}, shuffle=shuffle, **shard)
    ds = ds.map([vision.RandomCrop(2, padding=1), vision.RandomHorizontalFlip()], input_columns="x",
                num_parallel_workers=workers)
    return ds.batch(batch) if batch else ds


def samples(item):
    """The (id, x bytes) samples of one iterator item (a row or a batch)."""
    ids, xs = (np.asarray(c) for c in item)
    if ids.ndim == 0:
        return [(int(ids), xs.tobytes())]
    return [(int(i), x.tobytes()) for i, x in zip(ids, xs)]


def read(it, items=None):
    """Samples of the next ``items`` items of the current epoch (all of it when None)."""
    out = []
    while items is None or items > 0:
        try:
            out += samples(next(it))
        except StopIteration:
            break
        items = None if items is None else items - 1
    return out


@functools.cache
def reference(epochs=2):
    """Per epoch: the uninterrupted single-rank run's samples, in order (id, x bytes)."""
    md.config.set_seed(SEED)
    it = build().create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    runs = [read(it) for _ in range(epochs)]
    it.close()
    return runs


def iterator(num_shards, shard_id, epochs=2, state=None, equal=False, **kw):
    md.config.set_seed(SEED)
    md.config.set_elastic_equal_shares(equal)
    if num_shards == 1 and shard_id is None:
        ds = build(**kw)
    else:
        ds = build(num_shards, shard_id, **kw)
    return ds.create_tuple_iterator(num_epochs=epochs, output_numpy=True, state=state)


def interrupted(num_shards, stops, epoch=0, **kw):
    """Each rank of a ``num_shards``-rank run reads ``stops[k]`` items of epoch ``epoch``: (samples
    read in that epoch, states)."""
    seen, states = [], []
    for k in range(num_shards):
        it = iterator(num_shards, k, **kw)
        for _ in range(epoch):
            read(it)
        seen += read(it, stops[k])
        states.append(json.loads(json.dumps(it.get_state())))
        it.close()
    return seen, states


def check_epoch(before, after, epoch=0):
    """``after`` holds every sample of ``epoch`` not in ``before``, and every sample read equals the
    single-rank run's bit for bit; returns how many samples ``after`` holds twice (padding)."""
    truth = dict(reference()[epoch])
    for sample_id, x in before + after:
        assert x == truth[sample_id], f"sample {sample_id} differs from the single-rank run's"
    left = set(truth) - {i for i, _ in before}
    got = [i for i, _ in after]
    assert set(got) == left, "the resumed ranks skipped or repeated a consumed sample"
    return len(got) - len(left)  # padded duplicates


def test_a_sharded_run_reads_the_single_rank_order_and_augmentations():
    truth = reference()[0]
    for num_shards in (2, 3, 4):
        for k in range(num_shards):
            it = iterator(num_shards, k, epochs=1, workers=2)
            got = read(it)
            it.close()
            want = [truth[(k + num_shards * i) % ROWS] for i in range(math.ceil(ROWS / num_shards))]
            assert got == want


def padding(left, new, equal):
    """The duplicates a resumed epoch of ``left`` samples holds on ``new`` ranks."""
    return new * math.ceil(left / new) - left if equal else 0


@pytest.mark.parametrize("equal", [False, True])
@pytest.mark.parametrize("old,new", [(3, 2), (2, 5), (4, 1), (1, 3)])
def test_states_of_n_ranks_resume_on_m_ranks(old, new, equal):
    before, states = interrupted(old, [2 + k % 2 for k in range(old)], batch=2, workers=2)
    after, nexts = [], []
    for m in range(new):
        it = iterator(new, m, state=states, equal=equal, batch=2, workers=1 + m % 2)
        after += read(it)
        nexts.append(read(it))
        it.close()
    pads = check_epoch(before, after)
    left = ROWS - len({i for i, _ in before})
    assert pads == padding(left, new, equal)
    # The next epoch is an uninterrupted new-rank run's.
    for m in range(new):
        it = iterator(new, m, batch=2)
        read(it)
        assert read(it) == nexts[m]
        it.close()


def test_a_state_without_shards_resumes_on_several_ranks():
    it = iterator(1, None)
    before = read(it, 5)
    state = it.get_state()
    it.close()
    after = []
    for m in range(3):
        it = iterator(3, m, epochs=1, state=state)
        after += read(it)
        it.close()
    check_epoch(before, after)


@pytest.mark.parametrize("first,second", [(False, False), (True, False), (False, True)])
def test_resumed_ranks_can_be_interrupted_and_resumed_again(first, second):
    before, states = interrupted(3, [1, 2, 1])
    middle, saved = [], []
    for m in range(2):  # 2 ranks resume, read a little, save
        it = iterator(2, m, state=states, equal=first)
        middle += read(it, 3 + m)
        saved.append(json.loads(json.dumps(it.get_state())))
        it.close()
    after = []
    for m in range(4):
        it = iterator(4, m, state=saved, equal=second)
        after += read(it)
        it.close()
    left = ROWS - len({i for i, _ in before + middle})
    assert check_epoch(before + middle, after) == padding(left, 4, second)


def test_a_resumed_epoch_without_padding_deals_shares_one_row_apart():
    _, states = interrupted(2, [3, 3])  # 17 rows, 9 a share: 11 left
    sizes = []
    for m in range(3):
        it = iterator(3, m, state=states)
        sizes.append(len(read(it)))
        it.close()
    assert sizes == [4, 4, 3]


def test_a_resumed_rank_continues_its_own_share_from_its_own_state():
    _, states = interrupted(3, [2, 2, 2])
    it = iterator(2, 1, state=states)
    full = read(it)
    it.close()
    it = iterator(2, 1, state=states)
    first = read(it, 3)
    mine = it.get_state()
    it.close()
    it = iterator(2, 1, state=mine)  # the same rank of the same world: its own state
    assert first + read(it) == full
    it.close()


def test_states_at_the_end_of_an_epoch_start_the_next():
    share = math.ceil(ROWS / 2)
    _, states = interrupted(2, [share, share])
    it = iterator(3, 0, state=states)
    assert it.get_state()["epoch"] == 1
    it.close()
    with pytest.raises(ValueError, match="num_epochs=1"):
        iterator(3, 0, epochs=1, state=states)


def epoch_one_resumed_on_three_ranks(equal):
    """Each of 3 ranks' samples of epoch 1, resumed from 2 ranks' states at the end of epoch 0."""
    share = math.ceil(ROWS / 2)
    _, states = interrupted(2, [share, share])
    resumed = []
    for m in range(3):
        it = iterator(3, m, state=states, equal=equal)
        resumed.append(read(it))
        it.close()
    return resumed


def test_an_epoch_resumed_from_its_start_gives_each_sample_once():
    resumed = epoch_one_resumed_on_three_ranks(equal=False)
    assert sorted(i for r in resumed for i, _ in r) == list(range(ROWS))
    assert check_epoch([], [x for r in resumed for x in r], epoch=1) == 0


def test_an_epoch_resumed_from_its_start_in_equal_shares_is_a_three_rank_runs():
    resumed = epoch_one_resumed_on_three_ranks(equal=True)
    for m in range(3):
        it = iterator(3, m)
        read(it)
        assert read(it) == resumed[m]
        it.close()


# The elastic property's cases: world sizes before and after, batch, workers, where each old rank
# stopped (a share of its items) and the epoch (tests/dataset/test_elastic_file_orders.py uses them too).
ELASTIC_CASES = {
    "old": st.integers(1, 4),
    "new": st.integers(1, 4),
    "batch": st.sampled_from([None, 3]),
    "workers": st.integers(1, 2),
    "stops": st.lists(st.floats(0, 1), min_size=4, max_size=4),
    "epoch": st.integers(0, 1),
    "equal": st.booleans(),
}


@given(**ELASTIC_CASES)
@example(old=2, new=3, batch=None, workers=1, stops=[1.0] * 4, epoch=1, equal=False)  # the last epoch consumed whole
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_any_world_sizes_workers_and_stopping_points_give_each_sample_once(old, new, batch, workers, stops, epoch,
                                                                           equal):
    items = math.ceil(math.ceil(ROWS / old) / (batch or 1))
    stops = [round(f * items) for f in stops[:old]]
    before, states = interrupted(old, stops, epoch=epoch, batch=batch, workers=workers)
    after = []
    for m in range(new):
        # (an epoch after the resumed one: a state at the end of the run's last epoch has nothing to give)
        it = iterator(new, m, epochs=epoch + 2, state=states, equal=equal, batch=batch, workers=3 - workers)
        if all(s == items for s in stops):
            assert it.get_state()["epoch"] == epoch + 1  # the epoch was consumed whole
            it.close()
            return
        after += read(it)
        it.close()
    left = ROWS - len({i for i, _ in before})
    assert check_epoch(before, after, epoch) == padding(left, new, equal)


# Refusals ---------------------------------------------------------------------------------------


def states_of(ds_of, num_shards=2):
    states = []
    for k in range(num_shards):
        md.config.set_seed(SEED)
        it = ds_of(num_shards, k).create_tuple_iterator(num_epochs=1, output_numpy=True)
        next(it)
        states.append(it.get_state())
        it.close()
    return states


def test_a_state_of_another_dataset_seed_or_a_corrupted_state_is_refused():
    _, states = interrupted(2, [1, 1])
    md.config.set_seed(SEED)
    with pytest.raises(ValueError, match="another pipeline"):
        build(3, 0, rows=ROWS + 1).create_tuple_iterator(num_epochs=1, state=states)
    other = [{**s, "seed": 8} for s in states]
    with pytest.raises(ValueError, match="checksum"):
        iterator(3, 0, state=other)
    broken = json.loads(json.dumps(states))
    broken[0]["elastic"]["taken"] = 5
    with pytest.raises(ValueError, match="checksum"):
        iterator(3, 0, state=broken)
    with pytest.raises(ValueError, match=r"ranks \[0\] of a run of 2"):
        iterator(3, 0, state=states[:1])
    with pytest.raises(ValueError, match="pass the list of every rank"):
        iterator(3, 0, state=states[1])
    with pytest.raises(ValueError, match="another pipeline"):
        iterator(3, 0, state=states, batch=2)


def test_a_run_without_set_seed_is_refused():
    states = []
    for k in range(2):
        it = build(2, k).create_tuple_iterator(num_epochs=1, output_numpy=True)  # no set_seed: seeds differ
        next(it)
        states.append(it.get_state())
        it.close()
    with pytest.raises(ValueError, match="set_seed"):
        build(3, 0).create_tuple_iterator(num_epochs=1, state=states)


@pytest.mark.parametrize(
    "extend,name",
    [
        (lambda ds: ds.shuffle(4), "Shuffle"),
        (lambda ds: ds.filter(lambda i, x: True, input_columns=["id", "x"]), "Filter"),
        (lambda ds: ds.take(3), "Take"),
        (lambda ds: ds.batch(2).map(vision.RandomHorizontalFlip(), input_columns="x"), "RandomHorizontalFlip"),
    ],
)
def test_pipelines_that_lose_row_positions_refuse_naming_the_op(extend, name):
    _, states = interrupted(2, [1, 1])
    with pytest.raises(GraphError, match=name):
        md.config.set_seed(SEED)
        extend(build(3, 0)).create_tuple_iterator(num_epochs=1, state=states)


def test_a_streamed_source_refuses(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(6)))

    def ds_of(n, k):
        return md.TextFileDataset(str(path), shuffle=False, num_shards=n, shard_id=k)

    states = states_of(ds_of)
    assert "elastic" not in states[0]
    with pytest.raises(GraphError, match="streamed source"):
        ds_of(3, 0).create_tuple_iterator(num_epochs=1, state=states)
    # The same world size resumes as before.
    it = ds_of(2, 1).create_tuple_iterator(num_epochs=1, output_numpy=True, state=states[1])
    assert [str(r[0]) for r in it] == ["line 4", "line 5"]  # shard 1 holds lines 3-5
    it.close()


def test_error_modes_that_drop_rows_refuse():
    _, states = interrupted(2, [1, 1])
    md.config.set_error_samples_mode("skip")
    with pytest.raises(GraphError, match="error_samples_mode"):
        iterator(3, 0, state=states)


def test_on_the_same_number_of_ranks_a_rank_resumes_from_any_rank_state_as_before():
    # Ranks step together, so a checkpoint that kept one rank's position resumes every rank.
    _, states = interrupted(2, [3, 3])
    it = iterator(2, 1)
    want = read(it)[3:]
    it.close()
    it = iterator(2, 1, state=states[0])
    assert read(it) == want
    it.close()


@pytest.mark.parametrize("world", [1, 2], ids=["one rank", "two ranks"])
def test_on_the_same_number_of_ranks_a_state_of_another_pipeline_is_refused(world):
    # Not only on another number of ranks: a state of other rows, another batch size or shuffle would
    # silently skip or repeat rows.
    _, states = interrupted(world, [3] * world)
    for kw, match in (({"rows": ROWS + 1}, "another pipeline"), ({"batch": 2}, "another pipeline"),
                      ({"shuffle": False}, "shuffle")):
        md.config.set_seed(SEED)
        with pytest.raises(ValueError, match=match):
            build(world, 0, **kw).create_tuple_iterator(num_epochs=2, state=states[0])


def test_a_sampler_that_does_not_deal_the_whole_epoch_refuses():
    _, states = interrupted(2, [1, 1])
    md.config.set_seed(SEED)
    ds = md.NumpySlicesDataset({"id": np.arange(ROWS, dtype=np.int64)}, num_samples=5)
    with pytest.raises(GraphError, match="sampler"):
        ds.create_tuple_iterator(num_epochs=1, state=states)


def test_the_ray_executor_steps_key_a_shard_rows_as_the_local_engine():
    # A Ray map step runs the local stage over a block; it is given the shard's key rule (Ray itself
    # is not needed to run a step).
    from minddata.engine.compiler import plan_tree
    from minddata.engine.ray_executor.actors import Step

    md.config.set_seed(SEED)
    mapped = build(3, 1)
    local = list(mapped.create_tuple_iterator(num_epochs=1, output_numpy=True))
    raw = mapped._node.children[0]
    it = md.NumpySlicesDataset(
        {"id": np.arange(ROWS, dtype=np.int64),
         "x": (np.arange(ROWS * 12, dtype=np.int64).reshape(ROWS, 2, 2, 3) % 251).astype(np.uint8)},
        shuffle=True, num_shards=3, shard_id=1).create_tuple_iterator(num_epochs=1, output_numpy=True)
    rows = [tuple(r) for r in it]
    planned = plan_tree(mapped._node)  # the op positions are the plan's
    planned = dataclasses.replace(planned, reads_source=False) if hasattr(planned, "reads_source") else planned
    step = Step(planned, SEED, "raise", 0, md.config.snapshot(), keys=raw.sampler._global_key_rule(ROWS))
    pos = np.arange(len(rows), dtype=np.int64)
    _, _, out, _ = step.apply(pos, np.array([int(r[0]) for r in rows]), rows, [None] * len(rows))
    step.close()
    assert [o[1].tobytes() for o in out] == [r[1].tobytes() for r in local]


def test_a_shard_draws_alike_on_the_gpu_driver(monkeypatch):
    pytest.importorskip("torch", reason="the emulated GPU driver runs on torch")
    md.config.set_gpu_driver("torch")
    md.config.set_gpu_emulation(True)
    from minddata.ops.gpu import kernels

    monkeypatch.setattr(kernels, "_backends", {})
    images = (np.arange(ROWS * 12, dtype=np.int64).reshape(ROWS, 2, 2, 3) % 251).astype(np.uint8)
    out = {}
    for device in ("CPU", "GPU"):
        md.config.set_seed(SEED)
        ds = md.NumpySlicesDataset({"x": images}, shuffle=True, num_shards=3, shard_id=2)
        ds = ds.map([vision.RandomHorizontalFlip().device(device)], input_columns="x")
        out[device] = [r[0].tobytes() for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert out["GPU"] == out["CPU"]
