"""BufferPool: large arrays handed out again only once nothing outside the pool refers to them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from minddata.engine.batchfn import BufferPool

MB = 1 << 20


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def test_an_array_is_handed_out_again_only_once_nothing_refers_to_it():
    pool = BufferPool(size=4)
    first = pool.empty((MB,), np.uint8)
    start = _address(first)
    held = memoryview(first[10:20])  # as an Arrow buffer or a row view holds its piece
    del first
    assert _address(pool.empty((MB,), np.uint8)) != start
    del held
    assert _address(pool.empty((MB,), np.uint8)) == start


def test_the_pool_keeps_at_most_its_size():
    pool = BufferPool(size=2)
    taken = [pool.empty((MB,), np.uint8) for _ in range(3)]
    assert len({_address(a) for a in taken}) == 3
    del taken
    assert len(pool._arrays) == 2


def test_small_arrays_and_other_shapes_are_not_handed_out_for_each_other():
    pool = BufferPool(size=4)
    small = pool.empty((10,), np.uint8)
    assert not pool._arrays and small.nbytes == 10
    pool.empty((MB,), np.uint8)
    assert pool.empty((2 * MB,), np.uint8).nbytes == 2 * MB


def test_a_partial_batch_takes_the_leading_rows_of_a_free_full_batch_buffer():
    pool = BufferPool(size=4)
    full = pool.empty((4, 1024, 512), np.float32)
    start = _address(full)
    del full
    partial = pool.empty((3, 1024, 512), np.float32)
    assert partial.shape == (3, 1024, 512) and partial.flags.c_contiguous
    assert _address(partial) == start
    # while the partial batch is held, its buffer is not handed out again, whole or in part
    assert _address(pool.empty((4, 1024, 512), np.float32)) != start
    assert _address(pool.empty((2, 1024, 512), np.float32)) != start


def test_rows_of_another_shape_or_dtype_never_share_a_buffer():
    pool = BufferPool(size=4)
    start = _address(pool.empty((4, 1024, 512), np.float32))
    assert _address(pool.empty((3, 1024, 256), np.float32)) != start
    assert _address(pool.empty((3, 1024, 512), np.int32)) != start
    assert _address(pool.empty((1024 * 512 * 3,), np.float32)) != start


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of this process's mapping that holds ``address`` (/proc/self/smaps)."""
    flags: list[str] = []
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                low, high = (int(part, 16) for part in head.split("-"))
                inside = low <= address < high
            elif inside and head == "VmFlags:":
                flags = line.split()[1:]
    return flags


@pytest.mark.skipif(not os.path.isdir("/sys/kernel/mm/transparent_hugepage"),
                    reason="this kernel has no transparent huge pages (Linux's), so there is no advice to give")
def test_a_large_pooled_array_is_advised_onto_ordinary_pages():
    # numpy advises huge pages for large arrays; a batch buffer is advised off them (the first
    # touch of a huge page may wait for the kernel to compact memory).
    pool = BufferPool(size=2)
    array = pool.empty((16, 1024, 1024), np.uint8)
    assert "nh" in _vm_flags(array.ctypes.data + array.nbytes // 2)
