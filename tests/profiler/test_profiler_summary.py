"""What the profiler records and reports: counts, per-op time, queues, the table, and its cost when off."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

import minddata as md
from minddata import vision


def _numbers(n=64):
    return md.NumpySlicesDataset({"x": np.arange(n)}, shuffle=False)


def _drain(ds, epochs=1):
    it = ds.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    for _ in range(epochs):
        for _ in it:
            pass
    return it


def test_rows_in_and_out_per_stage():
    ds = _numbers(100).filter(lambda x: x % 2 == 0, num_parallel_workers=2).batch(10)
    with md.Profiler() as prof:
        _drain(ds)
    summary = prof.summary()
    flt = summary.stage("Filter")
    assert (flt.rows_in, flt.rows_out) == (100, 50)
    assert summary.stage("Batch(10)").rows_out == 5
    assert summary.rows == 5 and summary.epochs == 1


def test_per_op_time_finds_the_slow_op():
    def nap(x):
        time.sleep(0.002)
        return x

    ds = _numbers(40).map([lambda x: x + 1, nap, lambda x: x * 2], input_columns="x", num_parallel_workers=2)
    with md.Profiler() as prof:
        _drain(ds)
    ops = prof.summary().stage("Map").ops
    assert [o.name for o in ops] == ["<lambda>", "nap", "<lambda>"]
    assert max(ops, key=lambda o: o.share).name == "nap"
    assert ops[1].seconds_per_row == pytest.approx(0.002, rel=0.5)


def _normalizing_folder_summary(image_folder, resize):
    """The profile of decode → ``resize`` → Normalize → HWC2CHW over ``image_folder``, batched by 4."""
    ds = md.ImageFolderDataset(str(image_folder), shuffle=False, num_parallel_workers=2)
    ds = ds.map([vision.Decode(), resize, vision.Normalize([0, 0, 0], [1, 1, 1]), vision.HWC2CHW()],
                input_columns="image", num_parallel_workers=2).batch(4)
    with md.Profiler() as prof:
        _drain(ds)
    return prof.summary()


def test_names_are_the_users_ops_not_the_fused_plan(image_folder):
    summary = _normalizing_folder_summary(image_folder, vision.RandomResizedCrop(8))
    names = [s.name for s in summary.stages]
    # The map's workers normalize each image into its batch slot: the map runs every op the user gave it.
    assert "Map[Decode, RandomResizedCrop, Normalize, HWC2CHW] reading ImageFolderDataset" in names
    assert "Batch(4)" in names
    (m,) = [s for s in summary.stages if s.name.startswith("Map")]
    assert [o.name for o in m.ops][:2] == ["Decode+RandomResizedCrop", "Normalize+HWC2CHW into the batch"]
    assert m.ops[1].seconds_per_row > 0
    assert m.ops[-1].name == "read ImageFolderDataset"


def test_a_batch_that_normalizes_says_so_in_its_name(image_folder):
    # A map that may skip rows does not know its rows' batch slots: the batch normalizes what it stacks.
    md.config.set_error_samples_mode("skip")
    names = [s.name for s in _normalizing_folder_summary(image_folder, vision.Resize((8, 8))).stages]
    assert "Batch(4) (with Normalize, HWC2CHW from the map)" in names
    assert "Map[Decode, Resize] reading ImageFolderDataset" in names


def test_queue_occupancy_is_sampled():
    ds = _numbers(200).map(lambda x: (time.sleep(0.001), x)[1], input_columns="x", num_parallel_workers=2).batch(8)
    with md.Profiler(sample_interval=0.005) as prof:
        _drain(ds)
    run = prof.runs[0]
    assert len(run["samples"]["t"]) >= 10
    q = prof.summary().stage("Map").output_queue
    assert q is not None and q.capacity == 6 and 0 <= q.empty <= 1


def test_cpu_fraction_tells_computing_from_sleeping():
    def burn(x):
        t = time.thread_time()
        while time.thread_time() - t < 0.001:
            pass
        return x

    def doze(x):
        time.sleep(0.001)
        return x

    ds = md.NumpySlicesDataset({"x": np.arange(200), "y": np.arange(200)}, shuffle=False)
    ds = ds.map(burn, input_columns="x", num_parallel_workers=1).map(doze, input_columns="y", num_parallel_workers=1)
    with md.Profiler() as prof:
        _drain(ds)
    summary = prof.summary()
    burning, dozing = summary.stage("Map[burn]"), summary.stage("Map[doze]")
    # A loaded machine takes the CPU away from the burning thread (its fraction falls with the load),
    # while sleeping uses next to none of it whatever the load: compare the two, not a fixed bar.
    assert dozing.cpu < 0.2
    assert burning.cpu > 3 * dozing.cpu


def test_summary_is_plain_data():
    with md.Profiler() as prof:
        _drain(_numbers().map(lambda x: x, input_columns="x").batch(4))
    data = prof.summary().to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["bottleneck"]["pipeline_bound"] in (True, False)


def test_table_shows_stages_and_the_verdict():
    with md.Profiler() as prof:
        _drain(_numbers().map(lambda x: x, input_columns="x", num_parallel_workers=2).batch(4))
    text = str(prof)
    assert text.startswith("minddata profile of Batch(4)")
    assert "Map[<lambda>]" in text and "busy" in text and "\nbottleneck: " in text


def test_iterator_started_inside_is_recorded_even_if_created_before():
    it = _numbers(8).create_dict_iterator(num_epochs=1, output_numpy=True)
    with md.Profiler() as prof:
        rows = list(it)
    assert len(rows) == 8 and prof.summary().rows == 8


def test_runs_started_outside_are_not_recorded():
    prof = md.Profiler()
    _drain(_numbers(8))
    with prof:
        pass
    assert prof.runs == []
    with pytest.raises(LookupError, match="no pipeline run was recorded"):
        prof.summary()


def test_not_profiled_means_no_collection():
    it = _drain(_numbers(8).map(lambda x: x, input_columns="x", num_parallel_workers=2))
    assert it.profiler is None
    assert it._run.profile is None
    assert all(s.prof is None for s in it._run._stages())


def test_config_profiling_gives_each_iterator_its_profile():
    md.config.set_profiling(True)
    it = _drain(_numbers(16).batch(4))
    assert isinstance(it.profiler, md.Profiler)
    assert it.profiler.summary().rows == 4


def test_profiler_threads_end_with_the_iterator():
    ds = _numbers(64).map(lambda x: x, input_columns="x", num_parallel_workers=2)
    with md.Profiler():
        it = ds.create_dict_iterator(num_epochs=-1, output_numpy=True)
        next(it)
        assert any(t.name == "minddata-profiler-sampler" for t in threading.enumerate())
        it.close()
    assert not it._run.rt.alive_threads()


@pytest.mark.parametrize("bad", [0, -1, "fast", True, 100])
def test_bad_sample_interval(bad):
    with pytest.raises(ValueError, match="sample_interval must be a number of seconds"):
        md.Profiler(sample_interval=bad)


def test_set_profiling_needs_a_bool():
    with pytest.raises(TypeError, match="enable must be a bool"):
        md.config.set_profiling("yes")


def test_timeline_spans_are_bounded_but_counts_are_not(monkeypatch):
    from minddata.engine import profiling

    monkeypatch.setattr(profiling, "MAX_SPANS", 50)
    ds = _numbers(2000).map(lambda x: x, input_columns="x", num_parallel_workers=2).batch(4)
    with md.Profiler() as prof:
        _drain(ds)
    run = prof.runs[0]
    spans = run["spans"]
    held = sum(len(v) for v in spans["stages"].values()) + len(spans["prefetch"]) + sum(
        len(c) for w in spans["workers"].values() for c in w.values())
    assert held <= 50 + 2 and run["spans_dropped"]  # two workers may race for the last place
    assert prof.summary().rows == 500 and prof.summary().stage("Map").rows_in == 2000


def test_queue_samples_are_thinned_not_grown_without_end(monkeypatch):
    from minddata.engine import profiling

    monkeypatch.setattr(profiling, "MAX_SAMPLES", 8)
    ds = _numbers(100).map(lambda x: (time.sleep(0.002), x)[1], input_columns="x", num_parallel_workers=1)
    with md.Profiler(sample_interval=0.002) as prof:
        _drain(ds)
    run = prof.runs[0]
    assert 2 <= len(run["samples"]["t"]) <= 8
    assert run["sample_interval"] > 0.002
