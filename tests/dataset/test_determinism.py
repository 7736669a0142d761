"""With a seed, output is bit-identical whatever the worker counts, chunking and runs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minddata as md
from minddata import vision


def images(n):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(n, 12, 10, 3), dtype=np.uint8)


def pipeline(n, workers, batch):
    ds = md.NumpySlicesDataset({"img": images(n), "idx": np.arange(n)}, num_parallel_workers=1)  # shuffled
    ds = ds.map([vision.RandomResizedCrop(6), vision.RandomHorizontalFlip()], input_columns="img",
                num_parallel_workers=workers)
    ds = ds.shuffle(7)
    ds = ds.map(lambda i: i * 3, input_columns="idx", num_parallel_workers=workers)
    return ds.batch(batch)


def run(n, workers, batch, chunk, seed, epochs=2):
    md.config.set_seed(seed)
    md.config.set_rows_per_chunk(chunk)
    it = pipeline(n, workers, batch).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    out = []
    for _ in range(epochs):
        out.append([tuple(col.tobytes() for col in row) for row in it])
    it.close()
    return out


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(1, 40),
    workers=st.integers(2, 4),
    batch=st.integers(1, 5),
    chunk=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
)
def test_same_output_for_any_worker_count_and_chunk_size(n, workers, batch, chunk, seed):
    reference = run(n, 1, batch, 4, seed)
    assert run(n, workers, batch, chunk, seed) == reference


def test_epochs_differ_but_runs_repeat():
    first = run(30, 2, 4, 5, seed=5)
    assert first == run(30, 3, 4, 8, seed=5)
    assert first[0] != first[1]


def test_different_seeds_differ():
    assert run(20, 2, 4, 4, seed=1) != run(20, 2, 4, 4, seed=2)
