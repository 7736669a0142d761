"""Bounded memory over long pipelines; online sessions (rows pushed in, one result per request)."""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

import minddata as md
from minddata.errors import ArgumentError, GraphError, PipelineError, RowError


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_peak_rss_stays_flat_over_100k_rows():
    def rows():
        block = np.ones(16_384, dtype=np.uint8)  # 16 KiB per row: 1.6 GB if anything kept them all
        for i in range(100_000):
            yield (block + (i % 7),)

    ds = md.GeneratorDataset(rows, column_names=["x"]).map(lambda x: x * 2, num_parallel_workers=2).batch(16)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    samples = []
    for i, _ in enumerate(it):
        if i in (500, 6_249):
            samples.append(rss_bytes())
    assert i == 6_249
    growth = samples[1] - samples[0]
    assert growth < 64 << 20, f"RSS grew {growth >> 20} MiB between 8k and 100k rows"


def test_online_session_returns_results_in_order():
    pipe = md.OnlineDataset(["x"]).map(lambda x: x * 2, input_columns="x", num_parallel_workers=2)
    with pipe.serve() as session:
        futures = [session.submit({"x": i}) for i in range(200)]
        assert [int(f.result(timeout=10)["x"]) for f in futures] == [2 * i for i in range(200)]


def test_online_rows_submitted_together_run_on_every_worker():
    seen = set()

    def slow(x):
        seen.add(threading.get_ident())
        threading.Event().wait(0.01)  # a kernel's time, without holding the GIL
        return x

    with md.OnlineDataset(["x"]).map(slow, num_parallel_workers=2).serve() as session:
        futures = [session.submit((i,)) for i in range(32)]  # one dynamic batch
        assert [int(f.result(timeout=30)["x"]) for f in futures] == list(range(32))
    assert len(seen) == 2


def test_online_session_errors_are_per_request():
    def check(x):
        if int(x) == 3:
            raise ValueError("three is bad")
        return x

    with md.OnlineDataset(["x"]).map(check).serve() as session:
        futures = [session.submit((i,)) for i in range(6)]
        with pytest.raises(RowError, match="three is bad"):
            futures[3].result(timeout=10)
        assert [int(futures[i].result(timeout=10)["x"]) for i in (0, 1, 2, 4, 5)] == [0, 1, 2, 4, 5]


def test_online_session_from_many_threads():
    pipe = md.OnlineDataset(["a", "b"]).map(lambda a, b: a + b, input_columns=["a", "b"], output_columns="s")
    results = {}
    with pipe.serve() as session:
        def client(k):
            results[k] = [int(session.submit({"a": k, "b": i}).result(timeout=10)["s"]) for i in range(20)]

        threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {k: [k + i for i in range(20)] for k in range(4)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice values are per thread only on Linux")
def test_online_session_threads_run_at_the_lower_priority_asked_for():
    caller = os.getpriority(os.PRIO_PROCESS, 0)
    pipe = md.OnlineDataset(["x"]).map(lambda x: np.int64(os.getpriority(os.PRIO_PROCESS, 0)), input_columns="x")
    with pipe.serve(thread_nice=3) as session:
        nice_in_pipeline = int(session.submit({"x": 0}).result(timeout=10)["x"])
    assert nice_in_pipeline == min(19, caller + 3)
    assert os.getpriority(os.PRIO_PROCESS, 0) == caller  # the caller's own thread is untouched


@pytest.mark.parametrize("nice", [-1, 20, 2.5, True])
def test_online_session_thread_nice_must_be_0_to_19(nice):
    with pytest.raises(ArgumentError, match="`thread_nice` must be an int from 0 to 19"):
        md.OnlineDataset(["x"]).map(lambda x: x, input_columns="x").serve(thread_nice=nice)


def test_online_session_rejects_batch():
    with pytest.raises(GraphError, match="Batch"):
        md.OnlineDataset(["x"]).batch(2).serve()


def test_online_submit_checks_columns():
    with md.OnlineDataset(["x"]).serve() as session:
        with pytest.raises(ArgumentError, match="Missing: \\['x'\\]"):
            session.submit({"y": 1})


def test_online_closed_session_fails_pending_and_new_requests():
    session = md.OnlineDataset(["x"]).serve()
    session.close()
    with pytest.raises(PipelineError, match="closed"):
        session.submit({"x": 1})


def test_online_dataset_cannot_be_iterated():
    with pytest.raises(GraphError, match="serve"):
        next(iter(md.OnlineDataset(["x"])))
