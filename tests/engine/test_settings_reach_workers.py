"""Settings through one door (issue 27 §1): every setting changed in the driver reaches every kind of
worker through the iterator's snapshot, and every field of that snapshot is read where it is used.

The worker side reports what it saw two ways: a test op whose kernel returns its ``KernelContext``'s
options (how kernels learn settings), and a map's Python function returning ``md.config.snapshot()``
(how user code reads them, in worker threads and in worker processes alike). The Ray workers' half
of this test is in tests/ray/, over the same helpers (testkit.every_setting_changed and
testkit.assert_sees_settings).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from testkit import (
    EchoOptions,
    assert_sees_settings,
    echo_config,
    echo_options,
    every_setting_changed,
    options_in,
)

import minddata as md
from minddata.config import RunOptions

ROOT = Path(__file__).resolve().parents[2]

WORKERS = {
    "threads": {"python_multiprocessing": False},
    "fork processes": {"python_multiprocessing": True, "start_method": "fork"},
    "spawn processes": {"python_multiprocessing": True, "start_method": "spawn"},
}


def _seen(kind: str, tmp_path: Path) -> tuple[dict, list[RunOptions], list[RunOptions]]:
    """Change every setting (debug mode aside: it allows no worker), create the iterator, restore the
    defaults, then read: what the kernel and the Python function saw in each row."""
    how = WORKERS[kind]
    expected = every_setting_changed(tmp_path, start_method=how.get("start_method", "spawn"), debug_mode=False)
    ds = md.NumpySlicesDataset({"x": list(range(6)), "y": list(range(6))}, shuffle=False)
    ds = ds.map([EchoOptions()], input_columns="x", output_columns="kernel", num_parallel_workers=2,
                python_multiprocessing=how["python_multiprocessing"])
    ds = ds.map(echo_config, input_columns="y", output_columns="function", num_parallel_workers=2,
                python_multiprocessing=how["python_multiprocessing"])
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    md.config.load_defaults()  # after the iterator was created: must not reach it (spawned workers start later)
    rows = list(it)
    assert len(rows) == 6
    return expected, [options_in(r["kernel"]) for r in rows], [options_in(r["function"]) for r in rows]


@pytest.mark.parametrize("kind", list(WORKERS))
def test_every_setting_reaches_kernels_and_python_functions_in_workers(kind: str, tmp_path: Path) -> None:
    with echo_options():
        expected, kernels, functions = _seen(kind, tmp_path)
    assert_sees_settings(kernels, expected, where=f"a kernel in {kind}")
    assert_sees_settings(functions, expected, where=f"a Python function in {kind}")


def test_debug_mode_runs_in_one_thread_of_this_process_with_every_other_setting(tmp_path: Path) -> None:
    expected = every_setting_changed(tmp_path, debug_mode=True)
    ds = md.NumpySlicesDataset({"x": [0, 1]}, shuffle=False)
    ds = ds.map([EchoOptions()], input_columns="x", num_parallel_workers=2, python_multiprocessing=True)
    with echo_options():
        it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
        md.config.load_defaults()
        seen = [options_in(row[0]) for row in it]
    # As MindSpore's debug mode: every bad row raises, and nothing changes the plan while it runs.
    debug = {"autotune": False, "auto_num_workers": False, "auto_offload": False,
             "error_samples_mode": md.config.ErrorSamplesMode.RAISE}
    assert_sees_settings(seen, {**expected, **debug}, where="a kernel in debug mode")


def test_a_user_function_reads_the_runs_settings_not_the_globals_changed_since() -> None:
    md.config.set_max_image_pixels(77)
    ds = md.NumpySlicesDataset({"x": [0]}, shuffle=False).map(
        lambda x: md.config.get_max_image_pixels(), input_columns="x", num_parallel_workers=2)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    md.config.set_max_image_pixels(88)
    assert [int(row[0]) for row in it] == [77]
    assert md.config.get_max_image_pixels() == 88  # the driver's own reads are the live settings


# -- every field of the snapshot has a reader --------------------------------------------------------

# Fields no run-time code reads from the snapshot, each with the reason. A field added to RunOptions
# must be read where it takes effect (``options.<field>``: rt.options, ctx.options, a parameter) or be
# listed here.
NO_RUN_TIME_READER = {
    # Resolved when a map or a source is created (minddata/dataset/_validate.py reads
    # config.get_num_parallel_workers()), as MindSpore's dataset nodes take it at construction; the
    # plan carries the resolved count.
    "num_parallel_workers": "read when the graph is built",
    # MindSpore's settings kept so that its scripts run unchanged; minddata has nothing they would change.
    "fast_recovery": "MindSpore compatibility: read back only (minddata's resume is exact and fast)",
    "numa_enable": "MindSpore compatibility: read back only (the OS places threads and processes)",
    "video_backend": "MindSpore compatibility: read back only (video decodes on the CPU)",
}
# Fields the code they govern reads through minddata.config, answered inside a run from its snapshot
# (config.running: every pipeline thread and worker process runs in it): the file that reads each.
READ_THROUGH_THE_RUN = {
    # The object-storage layer (another module's: only its default comes from config) picks it at each read.
    "storage_requests_in_flight": "minddata/dataset/_storage.py",
}
_SCANNED = ("engine", "ops", "trainer", "minddata")


def _snapshot_reads() -> set[str]:
    read: set[str] = set()
    for folder in _SCANNED:
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "minddata" / "config.py":
                continue
            read.update(re.findall(r"options\.([a-z_]+)\b", path.read_text(encoding="utf-8")))
    return read


def test_every_run_options_field_is_read_from_the_snapshot_or_listed_with_its_reason() -> None:
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    read = _snapshot_reads()
    unread = sorted(fields - read - set(NO_RUN_TIME_READER) - set(READ_THROUGH_THE_RUN))
    assert not unread, (
        f"RunOptions fields nothing reads from the run's snapshot: {unread}. Read each where it takes effect "
        "(rt.options, ctx.options or an options parameter), or list it in NO_RUN_TIME_READER with the reason"
    )
    stale = sorted(set(NO_RUN_TIME_READER) & read)
    assert not stale, f"{stale} are read from the snapshot now: take them off NO_RUN_TIME_READER"
    assert set(NO_RUN_TIME_READER) | set(READ_THROUGH_THE_RUN) <= fields, "a listed field is no RunOptions field"
    for name, where in READ_THROUGH_THE_RUN.items():
        assert f"get_{name}()" in (ROOT / where).read_text(encoding="utf-8"), f"{where} no longer reads {name}"
