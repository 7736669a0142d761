"""Sharding for data-parallel training, as a property over sizes, shard counts and seeds.

For every source and every epoch: each shard reads ceil(N / S) rows; read in position order
(position p = shard p % S, entry p // S) the first N positions are one permutation of the rows, the
same for every shard (the shards agree without talking), so every row lands in exactly one shard;
the padding positions p >= N repeat the permutation's first rows, MindSpore's padding.
Streamed sources shard as MindSpore: shard k reads rows [k * per, (k + 1) * per) of the stream
(wrapping to pad), interleaved across file readers; unshuffled, that range is checked as a set;
shuffled, the property is checked on counts: every row at least once, and exactly
S * ceil(N / S) - N padding repeats in all.

Without ``config.set_seed`` the same must hold with every rank in a process of its own (as in a
real job): the ranks agree on the shared order through the default seed, not through shared memory.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shard_ranks import rank_rows

import minddata as md
from minddata.record import ArrowRecordWriter

SOURCE_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_dealt(shards: list[list[int]], n: int, shuffle: bool) -> None:
    s = len(shards)
    per = math.ceil(n / s) if n else 0
    assert [len(x) for x in shards] == [per] * s
    if n == 0:
        return
    order = [shards[p % s][p // s] for p in range(n)]
    assert sorted(order) == list(range(n)), "every row in exactly one shard"
    for k in range(s):
        for j in range(per):
            p = k + s * j
            if p >= n:
                assert shards[k][j] == order[p % n], "padding repeats the start of the shared order"
    if not shuffle:
        assert order == list(range(n))


def _check_ranges(shards: list[list[int]], n: int) -> None:
    s = len(shards)
    per = math.ceil(n / s) if n else 0
    for k, rows in enumerate(shards):
        assert sorted(rows) == sorted((k * per + j) % n for j in range(per)), f"shard {k}: its row range"


def _check_counts(shards: list[list[int]], n: int) -> None:
    s = len(shards)
    per = math.ceil(n / s) if n else 0
    assert [len(x) for x in shards] == [per] * s
    counts = Counter(v for x in shards for v in x)
    assert set(counts) == set(range(n))
    assert sum(c - 1 for c in counts.values()) == s * per - n
    if n:
        assert max(counts.values()) <= math.ceil(s * per / n)


def _epochs(make, shards: int, epochs: int) -> list[list[list[int]]]:
    """``out[epoch][shard]``: the rows (as ints) each shard reads per epoch."""
    out: list[list[list[int]]] = [[] for _ in range(epochs)]
    for k in range(shards):
        ds = make(k)
        it = ds.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
        for e in range(epochs):
            out[e].append([int(str(row[0])) for row in it])
    return out


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 60), s=st.integers(1, 8), seed=st.integers(0, 2**32 - 1), shuffle=st.booleans(),
       epoch=st.integers(0, 3))
def test_distributed_sampler(n, s, seed, shuffle, epoch):
    shards = [md.DistributedSampler(s, k, shuffle=shuffle)._indices(n, seed, epoch).tolist() for k in range(s)]
    _check_dealt(shards, n, shuffle)


@SOURCE_SETTINGS
@given(n=st.integers(0, 30), s=st.integers(1, 5), seed=st.integers(0, 2**31), shuffle=st.booleans())
def test_random_access_sources(n, s, seed, shuffle):
    md.config.set_seed(seed)
    numpy_epochs = _epochs(
        lambda k: md.NumpySlicesDataset({"x": np.arange(n)}, shuffle=shuffle, num_shards=s, shard_id=k), s, 2
    ) if n else [[[]] * s] * 2
    for epoch in numpy_epochs:
        _check_dealt(epoch, n, shuffle)
    if shuffle and n >= 10:
        assert numpy_epochs[0] != numpy_epochs[1]  # a new permutation per epoch (all but surely)
    if n == 0:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "p.mindrecord")
        with ArrowRecordWriter(path, shard_num=min(3, n)) as writer:
            writer.add_schema({"x": {"type": "int64"}})
            writer.write_raw_data([{"x": i} for i in range(n)])
        first = path if n == 1 else path + "0"
        record_epochs = _epochs(lambda k: md.MindDataset(first, shuffle=shuffle, num_shards=s, shard_id=k), s, 2)
        # The set's row space is its files in order (rows were dealt round-robin to the files).
        unsharded = md.MindDataset(first, shuffle=False).create_tuple_iterator(num_epochs=1, output_numpy=True)
        rank = {int(row[0]): i for i, row in enumerate(unsharded)}
    for epoch in record_epochs:
        _check_dealt([[rank[v] for v in x] for x in epoch], n, shuffle)
    with tempfile.TemporaryDirectory() as folder:
        pattern = _write_source_files(folder, "webdataset", n)["files"]
        wds_epochs = _epochs(lambda k: md.WebDataset(pattern, columns_list=["cls"], shuffle=shuffle, num_shards=s,
                                                     shard_id=k), s, 2)
    for epoch in wds_epochs:  # the rows were written in order, so the row space is the cls values
        _check_dealt(epoch, n, shuffle)


@SOURCE_SETTINGS
@given(sizes=st.lists(st.integers(0, 8), min_size=1, max_size=3), s=st.integers(1, 5), seed=st.integers(0, 2**31),
       shuffle=st.booleans())
def test_streamed_sources(sizes, s, seed, shuffle):
    md.config.set_seed(seed)
    n = sum(sizes)
    with tempfile.TemporaryDirectory() as folder:
        files = []
        start = 0
        for f, size in enumerate(sizes):
            path = os.path.join(folder, f"part{f}.txt")
            with open(path, "w") as out:
                out.writelines(f"{start + i}\n" for i in range(size))
            start += size
            files.append(path)
        epochs = _epochs(lambda k: md.TextFileDataset(files, shuffle=shuffle, num_shards=s, shard_id=k), s, 2)
        csv = os.path.join(folder, "all.csv")
        with open(csv, "w") as out:
            out.write("x\n" + "".join(f"{i}\n" for i in range(n)))
        csv_epochs = _epochs(lambda k: md.CSVDataset(csv, shuffle=shuffle, num_shards=s, shard_id=k), s, 1)
    for epoch in epochs + csv_epochs:
        _check_counts(epoch, n)
        if not shuffle:
            _check_ranges(epoch, n)


MAX_RANKS = 3


@pytest.fixture(scope="module")
def rank_processes():
    """One spawned process per rank, kept for the whole module (starting one costs an import)."""
    context = multiprocessing.get_context("spawn")
    pools = [ProcessPoolExecutor(max_workers=1, mp_context=context) for _ in range(MAX_RANKS)]
    yield pools
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def _write_source_files(folder: str, source: str, n: int) -> dict:
    if source == "image_folder":
        for i in range(n):
            cls = os.path.join(folder, f"class{i % 2}")
            os.makedirs(cls, exist_ok=True)
            with open(os.path.join(cls, f"{i:03d}.jpg"), "w") as out:
                out.write(str(i))  # the row number as the "image" bytes: never decoded here
        return {"folder": folder}
    if source == "mindrecord":
        path = os.path.join(folder, "rows.mindrecord")
        with ArrowRecordWriter(path, shard_num=1) as writer:
            writer.add_schema({"x": {"type": "int64"}})
            writer.write_raw_data([{"x": i} for i in range(n)])
        return {"files": [path]}
    if source == "webdataset":
        import webdataset as wds

        with wds.TarWriter(os.path.join(folder, "w-0.tar")) as first, wds.TarWriter(os.path.join(folder, "w-1.tar")) as second:
            for i in range(n):
                (first if i < n // 2 else second).write({"__key__": f"{i:04d}", "cls": i})
        return {"files": os.path.join(folder, "w-{0..1}.tar")}
    if source in ("text", "csv"):
        half = n // 2
        files = []
        for f, rows in enumerate((range(half), range(half, n))):
            path = os.path.join(folder, f"part{f}.{source}")
            with open(path, "w") as out:
                out.write("x\n" if source == "csv" else "")
                out.writelines(f"{i}\n" for i in rows)
            files.append(path)
        return {"files": files}
    return {}


RANDOM_ACCESS = ["numpy", "generator", "image_folder", "mindrecord", "webdataset"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                              HealthCheck.function_scoped_fixture])
@given(
    source=st.sampled_from(RANDOM_ACCESS + ["text", "csv"]),
    sampler=st.sampled_from(["args", "distributed", "distributed_over_random"]),
    n=st.integers(1, 12),
    shards=st.integers(2, MAX_RANKS),
    shuffle=st.booleans(),
)
def test_unseeded_ranks_in_separate_processes_get_disjoint_covering_shards(
    rank_processes, source, sampler, n, shards, shuffle
):
    if source not in RANDOM_ACCESS or source == "webdataset":
        sampler = "args"  # streamed sources and WebDataset shard through their arguments only
    with tempfile.TemporaryDirectory() as folder:
        spec = {"source": source, "sampler": sampler, "rows": n, "shards": shards, "shuffle": shuffle,
                "epochs": 2, **_write_source_files(folder, source, n)}
        futures = [rank_processes[k].submit(rank_rows, spec, k) for k in range(shards)]
        results = [future.result(timeout=120) for future in futures]
    assert {seed for seed, _ in results} == {md.config.DEFAULT_SEED}, "get_seed() reports the seed in use"
    for epoch in range(2):
        _check_counts([rows[epoch] for _, rows in results], n)
