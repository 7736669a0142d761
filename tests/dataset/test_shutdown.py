"""Stopping a pipeline early (break, garbage collection, exceptions, Ctrl-C) leaks nothing."""

from __future__ import annotations

import _thread
import gc
import signal
import threading
import time

import numpy as np
import pytest
from testkit import shm_segments

import minddata as md


def minddata_threads():
    return [t for t in threading.enumerate() if t.name.startswith("minddata-")]


# Waits are upper bounds for a loaded machine, not speed checks: a pipeline that really stopped is
# clean well within them, one that keeps running never is.
CLEAN_WITHIN_S = 15.0


def wait_until_clean(timeout=CLEAN_WITHIN_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not minddata_threads():
            return True
        time.sleep(0.02)
    return False


def busy_pipeline(workers=2):
    ds = md.NumpySlicesDataset(np.arange(100_000), column_names=["x"], shuffle=False)
    return ds.map(lambda x: x + 1, input_columns="x", num_parallel_workers=workers).batch(8)


@pytest.fixture(autouse=True)
def _no_threads_left_before():
    assert wait_until_clean(), f"threads left by an earlier test: {minddata_threads()}"
    yield


def test_break_then_close_stops_every_thread():
    def slow(x):
        time.sleep(0.05)
        return x

    # 100,000 rows at 50 ms each: a close that waited for the work to finish would take over an hour,
    # so being clean within the generous bound shows the workers stopped instead of finishing.
    ds = md.NumpySlicesDataset(np.arange(100_000), column_names=["x"], shuffle=False)
    it = ds.map(slow, input_columns="x", num_parallel_workers=2).create_tuple_iterator(num_epochs=1)
    for i, _ in enumerate(it):
        if i == 3:
            break
    assert minddata_threads()
    it.close()
    assert wait_until_clean()


def test_garbage_collected_iterator_stops_its_threads():
    it = busy_pipeline().create_tuple_iterator(num_epochs=1)
    next(it)
    del it
    gc.collect()
    assert wait_until_clean(), minddata_threads()


def test_with_block_closes():
    with busy_pipeline().create_dict_iterator(num_epochs=1) as it:
        next(it)
    assert wait_until_clean()


def test_exception_in_consumer_loop_and_close():
    it = busy_pipeline().create_tuple_iterator(num_epochs=1)
    with pytest.raises(ZeroDivisionError):
        for _ in it:
            raise ZeroDivisionError("the consumer failed")
    it.close()
    assert wait_until_clean()


def test_failing_op_stops_the_pipeline():
    def boom(x):
        raise ValueError("no")

    it = md.NumpySlicesDataset(np.arange(1000), shuffle=False).map(boom, num_parallel_workers=3).create_tuple_iterator()
    with pytest.raises(md.errors.RowError):
        next(it)
    assert wait_until_clean()


def test_keyboard_interrupt_while_waiting_stops_everything():
    def slow(x):
        time.sleep(0.2)
        return x

    ds = md.NumpySlicesDataset(np.arange(1000), shuffle=False).map(slow, num_parallel_workers=2)
    it = ds.create_tuple_iterator(num_epochs=1)
    # Python's own Ctrl-C handler, whatever an earlier test in this process left installed (a library
    # that sets its own SIGINT handler would turn the interrupt into something else).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in it:
                pass
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert wait_until_clean()
    assert time.monotonic() - start < 60  # finishing 1,000 rows x 0.2 s takes 100 s: it stopped


def test_completed_epochs_leave_no_threads():
    it = busy_pipeline().take(5).create_tuple_iterator(num_epochs=2)
    list(it)
    list(it)
    it.close()
    assert wait_until_clean()
    assert not shm_segments()


def test_take_closes_upstream_workers_each_pass():
    ds = busy_pipeline(workers=3).take(2).repeat(5)
    it = ds.create_tuple_iterator(num_epochs=1)
    assert len(list(it)) == 10
    it.close()
    assert wait_until_clean()
