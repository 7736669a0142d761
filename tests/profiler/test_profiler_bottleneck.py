"""The profiler names the stage that limits the pipeline, wherever the slow op sits.

Each pipeline has one op that sleeps per row (the known bottleneck) among fast ones; sleeping costs no
CPU, so these verdicts hold on a loaded 2-core machine. Chunks of 8 rows give the queues between
stages many chunks to hold, as image pipelines do.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import minddata as md

ROWS = 192
NAP = 0.003


@pytest.fixture(autouse=True)
def _small_chunks():
    md.config.set_rows_per_chunk(8)


def slow(x):
    time.sleep(NAP)
    return x


def fast(x):
    return x


def _profile(ds, consumer_nap: float = 0.0):
    with md.Profiler() as prof:
        for _ in ds.create_dict_iterator(num_epochs=1, output_numpy=True):
            if consumer_nap:
                time.sleep(consumer_nap)
    return prof.summary()


def _two_columns():
    return md.NumpySlicesDataset({"x": np.arange(ROWS), "y": np.arange(ROWS)}, shuffle=False)


def test_slow_first_map_is_named():
    ds = _two_columns().map(slow, input_columns="x", num_parallel_workers=2)
    ds = ds.map(fast, input_columns="y", num_parallel_workers=2).batch(8)
    verdict = _profile(ds).bottleneck
    assert verdict.pipeline_bound and verdict.stage == "Map[slow]", str(verdict)


def test_slow_second_map_is_named_with_its_input_queue_full():
    ds = _two_columns().map(fast, input_columns="x", num_parallel_workers=2)
    ds = ds.map(slow, input_columns="y", num_parallel_workers=2).batch(8)
    summary = _profile(ds)
    assert summary.bottleneck.stage == "Map[slow]", str(summary.bottleneck)
    # The fast map ahead of it fills every slot, and the message says so.
    assert summary.stage("Map[slow]").input_queue.full > 0.5
    assert "input queue full" in summary.bottleneck.reason


def test_map_saturated_before_a_cheap_batch_is_blamed_not_the_batch():
    # MindSpore's analyzer blamed Batch for exactly this profile (Map input full, output empty).
    ds = md.NumpySlicesDataset({"x": np.arange(ROWS)}, shuffle=False).map(slow, input_columns="x", num_parallel_workers=1)
    summary = _profile(ds.batch(4))
    assert summary.bottleneck.stage == "Map[slow]", str(summary.bottleneck)
    assert summary.stage("Map[slow]").output_queue.empty > 0.5
    assert "add workers" in summary.bottleneck.advice


def test_slow_generator_source_is_named():
    def rows():
        for i in range(ROWS):
            time.sleep(NAP)
            yield (np.int64(i),)

    ds = md.GeneratorDataset(rows, column_names=["x"]).map(fast, input_columns="x", num_parallel_workers=2).batch(8)
    verdict = _profile(ds).bottleneck
    assert verdict.stage == "GeneratorDataset", str(verdict)
    assert "serially" in verdict.reason and "random access" in verdict.advice


def test_slow_batch_is_named():
    def per_batch(xs, info):
        time.sleep(NAP * 4)
        return (xs,)

    ds = md.NumpySlicesDataset({"x": np.arange(ROWS)}, shuffle=False).map(fast, input_columns="x", num_parallel_workers=2)
    verdict = _profile(ds.batch(4, per_batch_map=per_batch, input_columns=["x"])).bottleneck
    assert verdict.stage == "Batch(4)", str(verdict)
    assert "num_parallel_workers" in verdict.advice


def test_slow_consumer_means_the_pipeline_is_not_the_bottleneck():
    ds = md.NumpySlicesDataset({"x": np.arange(ROWS)}, shuffle=False).map(fast, input_columns="x").batch(8)
    verdict = _profile(ds, consumer_nap=0.02).bottleneck
    assert verdict.stage is None and not verdict.pipeline_bound
    assert "the pipeline is not the bottleneck" in str(verdict)


def test_advice_never_names_a_device_this_machine_lacks(tmp_path):
    import os

    from testkit import make_jpeg

    from minddata import vision
    from minddata.engine.profile_report import _offload_targets

    data = make_jpeg(1280, 960, seed=1)
    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(40):
            (tmp_path / c / f"{i}.jpg").write_bytes(data)
    workers = os.cpu_count() or 1
    ds = md.ImageFolderDataset(tmp_path, shuffle=False)
    # No batch: collating 1280x960 images into fresh memory could outweigh the decode on a busy machine.
    ds = ds.map(vision.Decode(), "image", num_parallel_workers=workers)
    verdict = _profile(ds).bottleneck
    assert verdict.pipeline_bound and "Decode" in verdict.stage, str(verdict)
    # Whatever the heuristics conclude on a busy machine, they never send work to an absent device.
    for target in (".device('GPU')", ".device('Dvpp')"):
        assert target not in verdict.advice or target in _offload_targets(), verdict.advice


def fast_add_one(x):
    return x + 1


def slow_identity(x):
    time.sleep(NAP)
    return x


def fast_double(x):
    return x * 2


def test_merged_maps_name_the_slow_op_inside_the_stage():
    ds = md.NumpySlicesDataset({"x": np.arange(ROWS)}, shuffle=False)
    for fn in (fast_add_one, slow_identity, fast_double):  # adjacent maps over one column: merged
        ds = ds.map(fn, input_columns="x", num_parallel_workers=2)
    verdict = _profile(ds.batch(8)).bottleneck
    assert verdict.stage == "Map[fast_add_one, slow_identity, fast_double]", str(verdict)
    assert verdict.op == "slow_identity"
    assert str(verdict).startswith("slow_identity in Map[fast_add_one, slow_identity, fast_double]")


def test_single_op_stage_names_no_op_inside():
    ds = _two_columns().map(slow, input_columns="x", num_parallel_workers=2).batch(8)
    verdict = _profile(ds).bottleneck
    assert verdict.stage == "Map[slow]" and verdict.op is None
