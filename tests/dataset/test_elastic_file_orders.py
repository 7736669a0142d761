"""Resuming on a different number of ranks with a file source's own orders (``Shuffle.FILES``: the
files in a drawn order, each file's rows in order; ``Shuffle.INFILE``: the files in order, each file's
rows drawn): the global order of an epoch is the same alone and sharded, so the states of N ranks
continue on M ranks exactly as with a globally shuffled source (tests/dataset/test_elastic_resume.py)."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
import webdataset as wds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_elastic_resume import ELASTIC_CASES, read

import minddata as md
from minddata import vision
from minddata.errors import GraphError

SEED = 11
SHARD_ROWS = (5, 4, 6, 2)
ROWS = sum(SHARD_ROWS)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Four WebDataset shards of 5, 4, 6 and 2 samples: ``cls`` the sample's id, ``bin`` 12 bytes."""
    folder = tmp_path_factory.mktemp("elastic-shards")
    sample = 0
    for k, count in enumerate(SHARD_ROWS):
        with wds.TarWriter(str(folder / f"part-{k}.tar")) as writer:
            for _ in range(count):
                pixels = (np.arange(12, dtype=np.int64) * 7 + sample * 13) % 251
                writer.write({"__key__": f"s{sample:03d}", "cls": sample, "bin": pixels.astype(np.uint8).tobytes()})
                sample += 1
    return str(folder / "part-*.tar")


def build(pattern, order, num_shards=None, shard_id=None, workers=1, batch=None):
    shard = {} if num_shards is None else {"num_shards": num_shards, "shard_id": shard_id}
    ds = md.WebDataset(pattern, columns_list=["cls", "bin"], shuffle=order, **shard)
    ds = ds.map(lambda b: b.reshape(2, 2, 3), input_columns="bin")
    ds = ds.map([vision.RandomCrop(2, padding=1), vision.RandomHorizontalFlip()], input_columns="bin",
                num_parallel_workers=workers)
    return ds.batch(batch) if batch else ds


def iterator(pattern, order, num_shards, shard_id, state=None, epochs=3, **kw):
    md.config.set_seed(SEED)
    ds = build(pattern, order, **kw) if num_shards == 1 and shard_id is None else build(pattern, order, num_shards, shard_id, **kw)
    return ds.create_tuple_iterator(num_epochs=epochs, output_numpy=True, state=state)


@functools.cache
def _reference(pattern, order):
    it = iterator(pattern, order, 1, None)
    runs = [read(it), read(it)]
    it.close()
    return runs


ORDERS = [md.Shuffle.FILES, md.Shuffle.INFILE]


@pytest.mark.parametrize("order", ORDERS)
def test_the_unsharded_order_keeps_the_file_orders_rule(shards, order):
    ids = [i for i, _ in _reference(shards, order)[0]]
    starts = np.cumsum([0, *SHARD_ROWS])
    files = [int(np.searchsorted(starts, i, side="right") - 1) for i in ids]
    runs = [files[0]] + [f for a, f in zip(files, files[1:]) if f != a]
    assert sorted(runs) == list(range(len(SHARD_ROWS)))  # each file's rows together
    if order == md.Shuffle.INFILE:
        assert runs == list(range(len(SHARD_ROWS)))
    else:
        assert all(ids[k] < ids[k + 1] for k in range(ROWS - 1) if files[k] == files[k + 1])


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("num_shards", [2, 3])
def test_shards_read_the_unsharded_order_dealt_and_augmented_alike(shards, order, num_shards):
    truth = _reference(shards, order)[0]
    for k in range(num_shards):
        it = iterator(shards, order, num_shards, k)
        got = read(it)
        it.close()
        positions = [(k + num_shards * j) % ROWS for j in range(math.ceil(ROWS / num_shards))]
        assert got == [truth[p] for p in positions]


@given(order=st.sampled_from(ORDERS), **ELASTIC_CASES)
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_any_world_sizes_workers_and_stopping_points_give_each_sample_once(shards, order, old, new, batch, workers,
                                                                           stops, epoch, equal):
    items = math.ceil(math.ceil(ROWS / old) / (batch or 1))
    stops = [round(f * items) for f in stops[:old]]
    before, states = [], []
    for k in range(old):
        it = iterator(shards, order, old, k, batch=batch, workers=workers)
        for _ in range(epoch):
            read(it)
        before += read(it, stops[k])
        states.append(json.loads(json.dumps(it.get_state())))
        it.close()
    after = []
    for m in range(new):
        md.config.set_elastic_equal_shares(equal)
        it = iterator(shards, order, new, m, state=states, batch=batch, workers=3 - workers)
        if all(s == items for s in stops):
            assert it.get_state()["epoch"] == epoch + 1
            it.close()
            return
        after += read(it)
        it.close()
    truth = dict(_reference(shards, order)[epoch])
    for sample_id, x in before + after:
        assert x == truth[sample_id], f"sample {sample_id} differs from the single-rank run's"
    left = set(truth) - {i for i, _ in before}
    assert {i for i, _ in after} == left
    assert len(after) - len(left) == (new * math.ceil(len(left) / new) - len(left) if equal else 0)


def test_a_state_of_one_file_order_is_refused_by_another(shards):
    it = iterator(shards, md.Shuffle.FILES, 2, 0)
    read(it, 2)
    state = it.get_state()
    it.close()
    with pytest.raises(ValueError, match="elastic resume"):
        iterator(shards, md.Shuffle.INFILE, 3, 0, state=[state, state])


def test_a_file_order_cut_by_num_samples_refuses(shards):
    states = []
    for k in range(2):
        it = iterator(shards, md.Shuffle.FILES, 2, k)
        read(it, 1)
        states.append(it.get_state())
        it.close()
    md.config.set_seed(SEED)
    ds = md.WebDataset(shards, columns_list=["cls", "bin"], shuffle=md.Shuffle.FILES, num_samples=5, num_shards=3, shard_id=0)
    with pytest.raises(GraphError, match="sampler"):
        ds.create_tuple_iterator(num_epochs=3, state=states)
