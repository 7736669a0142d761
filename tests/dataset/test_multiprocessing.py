"""``python_multiprocessing=True``: Python ops in worker processes, arrays through shared memory."""

from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest
from conftest import column, shm_segments

import minddata as md
from minddata.errors import RowError


def big_rows():
    return md.NumpySlicesDataset({"img": np.arange(8 * 200_000, dtype=np.uint8).reshape(8, 200_000)}, shuffle=False)


def test_process_workers_compute_the_same_as_threads():
    by_threads = column(big_rows().map(lambda x: x[::-1] + 1, num_parallel_workers=2))
    by_processes = column(big_rows().map(lambda x: x[::-1] + 1, num_parallel_workers=2, python_multiprocessing=True))
    assert by_threads == by_processes


def test_ops_run_in_other_processes():
    ds = md.NumpySlicesDataset([0, 1, 2, 3], column_names=["x"], shuffle=False)
    pids = set(column(ds.map(lambda x: np.int64(os.getpid()), num_parallel_workers=2, python_multiprocessing=True)))
    assert os.getpid() not in pids


def test_error_in_a_process_keeps_op_row_and_remote_traceback():
    def explode(x):
        if int(x) == 2:
            raise ValueError("bad two")
        return x

    ds = md.NumpySlicesDataset([0, 1, 2, 3], column_names=["x"], shuffle=False)
    with pytest.raises(RowError, match="failed on row 2.*bad two") as info:
        column(ds.map(explode, python_multiprocessing=True, num_parallel_workers=2))
    assert isinstance(info.value.__cause__, ValueError)
    assert "explode" in str(info.value.__cause__.__cause__)


def test_break_leaves_no_process_or_shared_memory():
    before = shm_segments()

    def slow(x):
        time.sleep(0.01)
        return x

    it = big_rows().repeat(50).map(slow, num_parallel_workers=2, python_multiprocessing=True).create_tuple_iterator()
    next(it)
    assert multiprocessing.active_children()
    it.close()
    deadline = time.monotonic() + 15.0  # an upper bound for a loaded machine, not a speed check
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()
    assert shm_segments() <= before


def test_random_access_generator_in_processes():
    class Source:
        def __getitem__(self, i):
            return (np.full(100_000, i, dtype=np.int32),)

        def __len__(self):
            return 6

    ds = md.GeneratorDataset(Source(), column_names=["v"], shuffle=False, num_parallel_workers=2,
                             python_multiprocessing=True)
    assert [int(v[0]) for v in column(ds)] == list(range(6))
