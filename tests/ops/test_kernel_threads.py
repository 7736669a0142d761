"""OpenCV's own thread pool is held at one thread while a pipeline runs, and given back after."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import cv2
import numpy as np
import pytest

import minddata as md
from minddata.ops import kernel_threads
from minddata.ops.kernel_threads import OpenCVThreads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def opencv_at_three(monkeypatch):
    monkeypatch.delenv("OPENCV_FOR_THREADS_NUM", raising=False)
    # Pipelines of other tests may still hold the shared count (a module-scoped fixture's iterator on
    # the same test worker, a runtime waiting for the collector): pipelines built here take their
    # holds from a fresh instance, so that these tests start with no hold.
    fresh = OpenCVThreads()
    monkeypatch.setattr(kernel_threads, "hold", fresh.hold)
    monkeypatch.setattr(kernel_threads, "apply_if_held", fresh.apply_if_held)
    before = cv2.getNumThreads()
    cv2.setNumThreads(3)
    yield
    cv2.setNumThreads(before)


def test_a_hold_sets_one_thread_and_its_release_gives_the_count_back(opencv_at_three):
    threads = OpenCVThreads()
    release = threads.hold()
    assert cv2.getNumThreads() == 1
    release()
    assert cv2.getNumThreads() == 3


def test_holds_nest_and_the_last_release_restores(opencv_at_three):
    threads = OpenCVThreads()
    first, second = threads.hold(), threads.hold()
    first()
    first()  # a second call of the same release counts once
    assert cv2.getNumThreads() == 1
    second()
    assert cv2.getNumThreads() == 3


def test_a_count_changed_during_the_hold_is_left_as_it_was_set(opencv_at_three):
    threads = OpenCVThreads()
    release = threads.hold()
    cv2.setNumThreads(2)  # the application's own choice, made while a pipeline ran
    release()
    assert cv2.getNumThreads() == 2


def test_opencv_for_threads_num_is_the_users_choice(opencv_at_three, monkeypatch):
    monkeypatch.setenv("OPENCV_FOR_THREADS_NUM", "3")
    threads = OpenCVThreads()
    release = threads.hold()
    assert cv2.getNumThreads() == 3
    release()


def _threads_seen(x: np.ndarray) -> np.ndarray:
    return np.int64(cv2.getNumThreads())


@pytest.mark.parametrize("python_multiprocessing", [False, True])
def test_map_workers_run_with_opencv_at_one_thread(opencv_at_three, python_multiprocessing):
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False)
    ds = ds.map(_threads_seen, input_columns="x", num_parallel_workers=2,
                python_multiprocessing=python_multiprocessing)
    seen = {int(row[0]) for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)}
    assert seen == {1}


_SPAWNED = """
import cv2, sys
import numpy as np
import minddata as md
if __name__ == "__main__":
    md.config.set_multiprocessing_start_method("spawn")
    ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False)
    ds = ds.map(lambda x: np.int64(cv2.getNumThreads()), input_columns="x",
                num_parallel_workers=2, python_multiprocessing=True)
    print(sorted({int(r[0]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)}))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: OpenCV's own default is one thread already, "
                    "so a spawned worker's count would say nothing of the hold")
def test_spawned_process_workers_hold_opencv_at_one_thread():
    env = {k: v for k, v in os.environ.items() if k != "OPENCV_FOR_THREADS_NUM"}
    proc = subprocess.run([sys.executable, "-c", _SPAWNED], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[1]", proc.stdout


def test_a_release_run_by_the_garbage_collector_inside_a_hold_does_not_deadlock(opencv_at_three, monkeypatch):
    from minddata.ops import kernel_threads

    threads = OpenCVThreads()
    dropped = threads.hold()
    real = kernel_threads._opencv

    def collected_meanwhile():  # as when a dropped runtime's finalizer runs inside the next hold()
        dropped()
        return real()

    monkeypatch.setattr(kernel_threads, "_opencv", collected_meanwhile)
    done = []
    worker = threading.Thread(target=lambda: done.append(threads.hold()), daemon=True)
    worker.start()
    worker.join(10)
    assert done, "hold() deadlocked on a release from inside it"
    monkeypatch.setattr(kernel_threads, "_opencv", real)
    assert cv2.getNumThreads() == 1
    done[0]()
    assert cv2.getNumThreads() == 3


_FORKED_WHILE_HELD = """
import os, signal, threading
from minddata.ops import kernel_threads
if __name__ == "__main__":
    taken, done = threading.Event(), threading.Event()
    def keep_the_lock():  # another pipeline's hold or release, mid-way, when a worker forks
        with kernel_threads._SHARED._lock:
            taken.set()
            done.wait(30)
    threading.Thread(target=keep_the_lock, daemon=True).start()
    taken.wait(10)
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)  # a deadlocked child dies of SIGALRM instead of hanging the test
        kernel_threads.hold()()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    done.set()
    print("child", os.waitstatus_to_exitcode(status))
"""


def test_a_child_forked_while_another_thread_holds_the_lock_can_hold():
    proc = subprocess.run([sys.executable, "-c", _FORKED_WHILE_HELD], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "child 0", proc.stdout
