"""Global settings: validation, defaults and their effect on pipelines created afterwards."""

from __future__ import annotations

import json
import logging
import os
import sys

import numpy as np
import pytest
from testkit import shm_segments

import minddata as md


def test_seed_round_trip_and_default():
    assert md.config.get_seed() == 5489
    md.config.set_seed(123)
    assert md.config.get_seed() == 123


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "1", True])
def test_bad_seed(bad):
    with pytest.raises(ValueError, match="seed must be an int"):
        md.config.set_seed(bad)


def test_unseeded_pipelines_differ_between_iterators():
    ds = md.NumpySlicesDataset(np.arange(64), column_names=["x"])
    a = [int(r[0]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    b = [int(r[0]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert sorted(a) == sorted(b) and a != b


def test_workers_setting_is_the_map_default():
    md.config.set_num_parallel_workers(3)
    ds = md.NumpySlicesDataset([1], shuffle=False).map(lambda x: x)
    assert ds._node.num_workers == 3


def test_more_workers_than_cores_warns_once(caplog):
    import minddata.config as cfg

    cfg._warned_workers = False
    with caplog.at_level(logging.WARNING, logger="minddata"):
        md.config.set_num_parallel_workers((os.cpu_count() or 1) + 1)
        md.config.set_num_parallel_workers((os.cpu_count() or 1) + 2)
    assert caplog.text.count("more than this machine") == 1


@pytest.mark.parametrize(
    "setter", ["set_num_parallel_workers", "set_prefetch_size", "set_rows_per_chunk", "set_worker_shm_size"]
)
def test_positive_settings_reject_zero(setter):
    with pytest.raises(ValueError, match="greater than 0. Found: 0"):
        getattr(md.config, setter)(0)


def test_prefetch_size_bounds_the_output_queue():
    md.config.set_prefetch_size(64)
    md.config.set_rows_per_chunk(8)
    from minddata.engine.iterator import PipelineRun

    run = PipelineRun(md.NumpySlicesDataset([1])._node, 1, lambda row: row)
    assert run.max_chunks == 8
    run.close()


def test_error_mode_accepts_mindspore_names():
    md.config.set_error_samples_mode(md.config.ErrorSamplesMode.RETURN)
    assert md.config.get_error_samples_mode() == "raise"


def test_framework_setting():
    with pytest.raises(ValueError, match="numpy"):
        md.config.set_framework("tensorflow")
    md.config.set_framework("numpy")
    row = next(iter(md.NumpySlicesDataset([1], shuffle=False).create_dict_iterator()))
    assert isinstance(row["column_0"], np.ndarray)


# -- MindSpore's remaining config names: each has its effect ----------------------------------


def test_callback_timeout_bounds_a_waited_callbacks_wait():
    from minddata.dataset.callback import WaitedDSCallback
    from minddata.errors import PipelineError

    class Follow(WaitedDSCallback):
        def sync_step_begin(self, train_ctx, ds_ctx):
            pass

    md.config.set_callback_timeout(1)
    data = md.NumpySlicesDataset({"x": list(range(10))}, shuffle=False).map(lambda x: x, callbacks=[Follow()])
    it = data.create_tuple_iterator(num_epochs=1)
    next(it)  # training never ends step 1, so step 2 waits, for 1 s
    with pytest.raises(PipelineError, match=r"within 1 s \(config.set_callback_timeout"):
        next(it)
    it.close()


def test_monitor_sampling_interval_sets_the_profilers_default():
    md.config.set_monitor_sampling_interval(40)
    md.config.set_profiling(True)
    it = md.NumpySlicesDataset({"x": list(range(10))}).create_tuple_iterator(num_epochs=1)
    next(it)
    assert it._run.profile.sample_interval == pytest.approx(0.04)
    it.close()
    with md.Profiler(sample_interval=0.02):
        it = md.NumpySlicesDataset({"x": list(range(10))}).create_tuple_iterator(num_epochs=1)
        next(it)
        assert it._run.profile.sample_interval == pytest.approx(0.02)  # the profiler's own wins
        it.close()


def test_iterator_mode_do_copy_gives_tensors_of_their_own():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    source = np.arange(6, dtype=np.float32)
    md.config.set_framework("torch")
    for do_copy, shared in ((False, True), (True, False)):
        md.config.set_iterator_mode(do_copy=do_copy)
        data = md.GeneratorDataset(lambda: iter([(source,)]), column_names=["x"])
        (tensor,) = next(data.create_tuple_iterator(num_epochs=1))
        assert isinstance(tensor, torch.Tensor) and tensor.tolist() == source.tolist()
        assert np.shares_memory(tensor.numpy(), source) is shared, do_copy


def test_iterator_mode_serial_convert_gives_the_same_rows():
    data = md.NumpySlicesDataset({"x": list(range(20))}, shuffle=False).map(lambda x: x * 2, input_columns="x")
    parallel = [int(r["x"]) for r in data.create_dict_iterator(num_epochs=1, output_numpy=True)]
    md.config.set_iterator_mode(parallel_convert=False)
    serial = [int(r["x"]) for r in data.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert serial == parallel == [2 * i for i in range(20)]


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="segments are counted in /dev/shm")
@pytest.mark.parametrize("enable", [True, False])
def test_shared_mem_setting_decides_how_process_workers_pass_arrays(enable):
    md.config.set_enable_shared_mem(enable)
    images = [np.full((128, 256, 3), i, np.uint8) for i in range(4)]  # 96 KiB: over the out-of-band threshold
    data = md.GeneratorDataset(lambda: ((im,) for im in images), column_names=["x"], shuffle=False)
    data = data.map(lambda x: x + 1, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)
    it = data.create_tuple_iterator(num_epochs=1, output_numpy=True)
    rows = [next(it)[0]]
    segments = shm_segments()  # while the workers live
    rows += [row[0] for row in it]
    assert all(np.array_equal(row, im + 1) for row, im in zip(rows, images, strict=True))
    assert bool(segments) is enable, segments


def _slow_identity(x):
    __import__("time").sleep(2.5)
    return x


def test_a_process_worker_silent_past_the_timeout_interval_is_warned_about_and_awaited(caplog):
    md.config.set_multiprocessing_timeout_interval(1)
    data = md.NumpySlicesDataset({"x": [7]}, shuffle=False)
    data = data.map(_slow_identity, input_columns="x", num_parallel_workers=1, python_multiprocessing=True)
    with caplog.at_level(logging.WARNING, logger="minddata"):
        rows = [int(row[0]) for row in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert rows == [7]  # kept waiting: the row arrived
    warnings = [r.getMessage() for r in caplog.records if "has not answered" in r.getMessage()]
    assert warnings, caplog.text
    assert "Map[_slow_identity] worker 0 (pid " in warnings[0] and "set_multiprocessing_timeout_interval" in warnings[0]


# A pipeline whose process worker sends back its pid (row 0), then sleeps in the map's function
# (row 1, after creating the file argv[2]) while the parent prints that pid and waits to be killed.
_WATCHED_PARENT = """
import os, sys, time
import numpy as np
import minddata as md

def work(x):
    if int(x) == 0:
        return np.int64(os.getpid())
    open(sys.argv[2], "w").close()
    time.sleep(60)
    return x

if __name__ == "__main__":
    md.config.set_enable_watchdog(sys.argv[1] == "on")
    md.config.set_multiprocessing_start_method("fork")
    md.config.set_rows_per_chunk(1)
    data = md.NumpySlicesDataset({"x": [0, 1]}, shuffle=False)
    data = data.map(work, input_columns="x", num_parallel_workers=1, python_multiprocessing=True)
    it = data.create_tuple_iterator(num_epochs=1, output_numpy=True)
    print(int(next(it)[0]), flush=True)
    time.sleep(60)
"""


def _gone(pid: int) -> bool:
    psutil = pytest.importorskip("psutil")
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _killed_parents_worker(watchdog: str, busy) -> int:
    """Start the pipeline script, SIGKILL it once its worker is busy in the map's function (the file
    ``busy`` exists); return the worker's pid."""
    import signal
    import subprocess
    import time

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parent = subprocess.Popen([sys.executable, "-c", _WATCHED_PARENT, watchdog, str(busy)], cwd=root,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        worker = int(parent.stdout.readline())
        deadline = time.monotonic() + 10
        while not busy.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert busy.exists(), "the worker never started row 1"
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        parent.stdout.close()
    return worker


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers and SIGKILL")
def test_with_the_watchdog_a_busy_worker_exits_when_its_parent_is_killed(tmp_path):
    worker = _killed_parents_worker("on", tmp_path / "busy")
    import time

    deadline = time.monotonic() + 10
    while not _gone(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not _gone(worker):
        os.kill(worker, 9)
        pytest.fail("the worker outlived its killed parent by 10 s")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork workers and SIGKILL")
def test_without_the_watchdog_a_busy_worker_finishes_its_call_first(tmp_path):
    worker = _killed_parents_worker("off", tmp_path / "busy")
    import time

    try:
        time.sleep(2.5)  # the watchdog looks every second: on, the worker would be gone by now
        assert not _gone(worker)
    finally:
        if not _gone(worker):
            os.kill(worker, 9)


def test_auto_offload_places_the_ops_nobody_placed_and_explain_says_why():
    from minddata import vision

    images = [np.arange(8 * 8 * 3, dtype=np.uint8).reshape(8, 8, 3) + i for i in range(3)]
    data = md.NumpySlicesDataset({"x": images}, shuffle=False)
    data = data.map([vision.HorizontalFlip(), vision.Resize(4).device("CPU")], input_columns="x")
    plain = [row[0] for row in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert "auto offload" not in data.explain()
    md.config.set_auto_offload(True)
    explained = data.explain()
    offloaded = [row[0] for row in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    (note,) = [line for line in explained.splitlines() if "auto offload:" in line]
    assert "HorizontalFlip on " in note and "Resize" not in note, note  # Resize was placed by hand
    if "GPU" not in note:  # no accelerator here: the CPU keeps it, and the note says why
        assert "HorizontalFlip on CPU (no accelerator on this machine; GPU: " in note, note
    assert all(np.array_equal(a, b) for a, b in zip(offloaded, plain, strict=True))


@pytest.mark.parametrize(
    "setter, getter, field, value",
    [("set_fast_recovery", "get_fast_recovery", "fast_recovery", False),
     ("set_numa_enable", "get_numa_enable", "numa_enable", True),
     ("set_video_backend", "get_video_backend", "video_backend", "Ascend"),
     ("set_autotune_interval", "get_autotune_interval", "autotune_interval", 7),
     ("set_auto_num_workers", "get_auto_num_workers", "auto_num_workers", True),
     ("set_callback_timeout", "get_callback_timeout", "callback_timeout", 9),
     ("set_monitor_sampling_interval", "get_monitor_sampling_interval", "monitor_sampling_interval", 25)],
)
def test_setting_reads_back_and_reaches_the_run_options(setter, getter, field, value):
    assert getattr(md.config.snapshot(), field) != value  # the default differs, so the check below can fail
    getattr(md.config, setter)(value)
    assert getattr(md.config, getter)() == value
    assert getattr(md.config.snapshot(), field) == value


@pytest.mark.parametrize(
    "setter, bad, message",
    [("set_callback_timeout", 0, "greater than 0"), ("set_autotune_interval", -1, r"\[0, 2147483647\]"),
     ("set_monitor_sampling_interval", 0, "greater than 0 ms"), ("set_fast_recovery", 1, "must be a bool"),
     ("set_video_backend", "GPU", "one of"), ("set_auto_num_workers", "yes", "must be a bool"),
     ("set_enable_shared_mem", 1, "set_enable_shared_mem: the value must be a bool"),
     ("set_multiprocessing_timeout_interval", 0, "greater than 0 s"),
     ("set_enable_watchdog", "yes", "set_enable_watchdog: the value must be a bool"),
     ("set_auto_offload", 1, "set_auto_offload: the value must be a bool"),
     ("set_sending_batches", -1, r"set_sending_batches: the value must be in \[0, 2147483647\]"),
     ("set_sending_batches", 1.5, "set_sending_batches: the value must be an int"),
     ("set_dynamic_shape", 0, "set_dynamic_shape: the value must be a bool"),
     ("set_multiprocessing_timeout_interval", 2**31, r"\[0, 2147483647\]")],
)
def test_bad_setting_values_name_the_setting_and_the_value(setter, bad, message):
    with pytest.raises((TypeError, ValueError), match=message):
        getattr(md.config, setter)(bad)


def test_load_reads_a_mindspore_config_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"numParallelWorkers": 3, "seed": 7, "opConnectorSize": 8, "monitorSamplingInterval": 15,
                                "callbackTimeout": 20, "logFilePath": "/tmp", "rowsPerBuffer": 1}))
    md.config.load(str(path))
    assert (md.config.get_num_parallel_workers(), md.config.get_seed(), md.config.get_prefetch_size(),
            md.config.get_monitor_sampling_interval(), md.config.get_callback_timeout()) == (3, 7, 8, 15, 20)


def test_load_sets_nothing_from_an_invalid_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"numParallelWorkers": 3, "callbackTimeout": -5}))
    md.config.set_num_parallel_workers(1)
    with pytest.raises(ValueError, match=r"config.json: .*set_callback_timeout"):
        md.config.load(str(path))
    assert (md.config.get_num_parallel_workers(), md.config.get_callback_timeout()) == (1, 60)


def test_load_names_an_unknown_key(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"numParallelWorker": 3}))
    with pytest.raises(ValueError, match=r"unknown keys \['numParallelWorker'\]"):
        md.config.load(str(path))
