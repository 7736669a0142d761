"""The timeline export (Chrome trace / Perfetto JSON), save/load, and the step hooks."""

from __future__ import annotations

import json
import time
from collections import defaultdict

import numpy as np
import pytest

import minddata as md
from minddata.engine.profile_report import chrome_trace


def _profiled(epochs=1, consumer_nap=0.0, n=48):
    ds = md.NumpySlicesDataset({"x": np.arange(n)}, shuffle=False)
    ds = ds.map(lambda x: (time.sleep(0.0005), x)[1], input_columns="x", num_parallel_workers=2).batch(8)
    prof = md.Profiler(sample_interval=0.005)
    with prof:
        it = ds.create_dict_iterator(num_epochs=epochs, output_numpy=True)
        for _ in range(epochs):
            for _ in it:
                time.sleep(consumer_nap)
    return prof


def test_chrome_trace_has_a_track_per_worker_and_queue_counters(tmp_path):
    prof = _profiled()
    path = prof.export_chrome_trace(tmp_path / "trace.json")
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    threads = {e["args"]["name"]: e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    workers = [name for name in threads if name.startswith("minddata-Map[<lambda>]-")]
    assert len(workers) == 2 and "consumer" in threads and "minddata-prefetch" in threads
    work = [e for e in events if e["ph"] == "X" and e["cat"] == "work"]
    assert {e["tid"] for e in work} == {threads[w] for w in workers}
    assert sum(e["args"]["rows"] for e in work) == 48
    waits = [e for e in events if e["ph"] == "X" and e["name"] == "wait for data"]
    assert len(waits) == 6 and all(e["tid"] == threads["consumer"] for e in waits)
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert {"queue Map[<lambda>]", "workers Map[<lambda>]", "prefetch queue"} <= counters
    assert all(e["ts"] >= 0 and e.get("dur", 0) >= 0 for e in events if e["ph"] in "XC")


def test_spans_on_one_track_nest_or_follow():
    # Perfetto draws spans of one track as a stack: a span must end before the next starts or hold it.
    events = chrome_trace(_profiled().runs)["traceEvents"]
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for spans in tracks.values():
        stack: list[float] = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start + 1e-3:
                stack.pop()
            assert not stack or end <= stack[-1] + 1e-3, "overlapping spans on one track"
            stack.append(end)


def test_export_into_a_missing_folder_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist; create it first"):
        _profiled().export_chrome_trace(tmp_path / "nope" / "t.json")


def test_save_and_load_round_trip(tmp_path):
    prof = _profiled(epochs=2)
    folder = prof.save(tmp_path / "p")
    assert {p.name for p in folder.iterdir()} == {"profile.json", "trace.json", "summary.txt"}
    loaded = md.Profiler.load(folder)
    assert loaded.summary().to_dict() == prof.summary().to_dict()
    assert str(loaded) == str(prof)
    assert loaded.summary().epochs == 2


def test_load_of_a_folder_without_a_profile(tmp_path):
    with pytest.raises(FileNotFoundError, match="profile.json not found; pass a folder written by Profiler.save"):
        md.Profiler.load(tmp_path)


def test_load_of_something_else(tmp_path):
    (tmp_path / "profile.json").write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(ValueError, match="is not a minddata profile"):
        md.Profiler.load(tmp_path)


def test_hooks_see_epochs_and_steps_in_order():
    events = []
    prof = md.Profiler()
    for name in ("epoch_begin", "step_begin", "step_end", "epoch_end"):
        prof.on(name, lambda info, name=name: events.append((name, info.get("epoch"), info.get("step"))))
    ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).batch(2)
    with prof:
        it = ds.create_dict_iterator(num_epochs=2, output_numpy=True)
        for _ in range(2):
            for _ in it:
                pass
    one_epoch = lambda e: [("epoch_begin", e, None), ("step_begin", e, 0), ("step_end", e, 0),  # noqa: E731
                           ("step_begin", e, 1), ("step_end", e, 1), ("epoch_end", e, None)]
    assert events == one_epoch(0) + one_epoch(1)


def test_step_trace_splits_data_wait_from_compute():
    steps = []
    prof = md.Profiler()
    prof.on("step_end", steps.append)
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False).batch(2)
    with prof:
        for _ in ds.create_dict_iterator(num_epochs=1, output_numpy=True):
            time.sleep(0.01)
    assert len(steps) == 3
    assert all(s["compute"] >= 0.009 and s["data_wait"] >= 0 for s in steps)
    assert all(s["end"] == pytest.approx(s["begin"] + s["data_wait"] + s["compute"]) for s in steps)


def test_hook_registration_checks_its_arguments():
    prof = md.Profiler()
    with pytest.raises(ValueError, match="event must be one of epoch_begin, epoch_end, step_begin, step_end"):
        prof.on("batch_end", print)
    with pytest.raises(TypeError, match="fn must be callable"):
        prof.on("step_end", None)


def test_step_trace_is_kept_per_run():
    ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).batch(2)
    with md.Profiler() as prof:
        it = ds.create_dict_iterator(num_epochs=2, output_numpy=True)
        for _ in range(2):
            for _ in it:
                time.sleep(0.005)
    trace = prof.step_trace()
    assert [(s["epoch"], s["step"]) for s in trace] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(s["compute"] >= 0.004 for s in trace)
