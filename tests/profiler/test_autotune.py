"""Autotune: AUTOTUNE worker counts, live resizing, determinism, budgets and the decision log."""

from __future__ import annotations

import json
import pickle
import time

import numpy as np
import pytest

import minddata as md
from minddata import vision
from minddata.engine import autotune


@pytest.fixture(autouse=True)
def _fast_autotune(monkeypatch):
    # Decide every 50 ms so that short test pipelines see several decisions.
    monkeypatch.setattr(autotune, "INTERVAL", 0.05)
    md.config.set_rows_per_chunk(4)


def nap(x):
    time.sleep(0.002)
    return x


def _images(n=240, seed=0):
    rng = np.random.default_rng(seed)
    return md.NumpySlicesDataset({"image": rng.integers(0, 255, (n, 12, 10, 3), dtype=np.uint8)}, shuffle=True)


def _collect(ds):
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    return [next(iter(b.values())) for b in it], it


def test_autotune_value():
    assert md.AUTOTUNE == 1 and repr(md.AUTOTUNE) == "AUTOTUNE" and f"{md.AUTOTUNE}" == "AUTOTUNE"
    assert autotune.is_autotune(pickle.loads(pickle.dumps(md.AUTOTUNE)))
    assert not autotune.is_autotune(1)


def test_explain_shows_autotune():
    ds = md.NumpySlicesDataset({"x": [1, 2]}).map(nap, input_columns="x", num_parallel_workers=md.AUTOTUNE)
    assert "workers=AUTOTUNE" in ds.explain()


def test_merged_maps_keep_autotune():
    ds = md.NumpySlicesDataset({"x": [1, 2]}).map(nap, input_columns="x", num_parallel_workers=4)
    ds = ds.map(nap, input_columns="x", num_parallel_workers=md.AUTOTUNE)
    assert "Map[nap, nap]  columns=['x']  workers=AUTOTUNE" in ds.explain()


def test_autotuned_output_equals_fixed_worker_output():
    md.config.set_seed(7)
    ops = [nap, vision.RandomHorizontalFlip(0.5), vision.RandomResizedCrop((6, 5))]
    fixed, _ = _collect(_images().map(ops, input_columns="image", num_parallel_workers=2).batch(8))
    tuned, it = _collect(_images().map(ops, input_columns="image", num_parallel_workers=md.AUTOTUNE).batch(8))
    resizes = [d for d in it.profiler.summary().autotune if d["action"] == "resize"]
    assert resizes, "autotune changed nothing: the test would not show that changes keep the output"
    assert len(fixed) == len(tuned) == 30
    for a, b in zip(fixed, tuned, strict=True):
        np.testing.assert_array_equal(a, b)


def test_autotune_adds_workers_to_the_slow_stage_and_logs_it(caplog):
    caplog.set_level("INFO", logger="minddata.autotune")
    ds = md.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False)
    ds = ds.map(nap, input_columns="x", num_parallel_workers=md.AUTOTUNE).batch(8)
    _, it = _collect(ds)
    stage = it._run.stage.children[0].children[0]
    assert stage.label == "Map[nap]" and stage.num_workers >= 2
    assert "Map[nap] workers 1 → 2" in caplog.text
    text = str(it.profiler)
    assert "autotune: budget" in text and "Map[nap]: workers 1 → 2" in text


def test_config_autotune_tunes_stages_without_autotune_workers():
    md.config.set_autotune(True)
    ds = md.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False).map(nap, input_columns="x", num_parallel_workers=1)
    _, it = _collect(ds.batch(8))
    assert it.profiler.summary().autotune_settings["tunable"] == ["Map[nap]"]
    assert any(d["action"] == "resize" for d in it.profiler.summary().autotune)


def test_memory_budget_stops_adding_workers():
    # Rows of 1 MB and a 6 MB budget: one worker's 4 slots of 4-row chunks already take more.
    md.config.set_autotune(True, memory_budget=6 << 20)
    big = md.NumpySlicesDataset({"x": np.zeros((200, 1 << 17))}, shuffle=False)
    _, it = _collect(big.map(nap, input_columns="x", num_parallel_workers=1))
    decisions = it.profiler.summary().autotune
    assert not [d for d in decisions if d["action"] == "resize" and d["workers_to"] > 1]
    assert any(d["action"] == "resize" and d["slots"] == 2 and "over the memory budget" in d["why"] for d in decisions)
    assert any("would not fit the memory budget" in d["why"] for d in decisions)


def test_process_workers_are_left_alone():
    md.config.set_autotune(True)
    ds = md.NumpySlicesDataset({"x": np.arange(20)}, shuffle=False)
    _, it = _collect(ds.map(nap, input_columns="x", num_parallel_workers=1, python_multiprocessing=True))
    notes = [d for d in it.profiler.summary().autotune if d["action"] == "note"]
    assert any("worker processes" in d["why"] for d in notes)


def test_resize_during_a_pass_keeps_order_and_leaks_no_thread():
    ds = md.NumpySlicesDataset({"x": np.arange(300)}, shuffle=False).map(nap, input_columns="x", num_parallel_workers=1)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    stage = it._run.stage
    out = []
    for i, row in enumerate(it):
        out.append(int(row["x"]))
        if i == 20:
            stage.resize(workers=4, slots=3)
        if i == 120:
            stage.resize(workers=1, slots=8)
    assert out == list(range(300))
    it.close()
    assert not it._run.rt.alive_threads()


def test_resize_rejects_nonsense():
    ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).map(nap, input_columns="x", num_parallel_workers=1)
    stage = ds.create_dict_iterator(num_epochs=1)._run.stage
    with pytest.raises(ValueError, match="workers must be at least 1"):
        stage.resize(workers=0)


@pytest.mark.parametrize("kwargs, match", [({"cpu_budget": 0}, "cpu_budget must be a number of cores"),
                                           ({"memory_budget": -5}, "greater than 0"),
                                           ({"cpu_budget": "two"}, "cpu_budget must be a number of cores")])
def test_bad_budgets(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        md.config.set_autotune(True, **kwargs)


def test_auto_num_workers_tunes_worker_counts():
    md.config.set_auto_num_workers(True)
    ds = md.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False).map(nap, input_columns="x", num_parallel_workers=1)
    _, it = _collect(ds.batch(8))
    assert it.profiler.summary().autotune_settings["tunable"] == ["Map[nap]"]
    assert any(d["action"] == "resize" for d in it.profiler.summary().autotune)


def test_autotune_interval_in_steps_limits_the_looks():
    # One look per 10,000 steps: a 50-step run never reaches the second look, so nothing is decided,
    # where the same run with looks every 50 ms resizes (test_config_autotune_tunes_...).
    md.config.set_autotune(True)
    md.config.set_autotune_interval(10_000)
    ds = md.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False).map(nap, input_columns="x", num_parallel_workers=1)
    _, it = _collect(ds.batch(8))
    assert it.profiler.summary().autotune == []


def test_enable_autotune_with_a_prefix_saves_the_settled_counts(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK_ID", "3")
    md.config.set_enable_autotune(True, filepath_prefix=str(tmp_path / "tuned"))
    ds = md.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False).map(nap, input_columns="x", num_parallel_workers=1)
    _, it = _collect(ds.batch(8))
    it.close()
    saved = json.loads((tmp_path / "tuned_3.json").read_text())
    stage = it._run.stage.children[0].children[0]
    assert saved["stages"] == [{"name": "Map[nap]", "num_parallel_workers": stage.num_workers, "slots": stage.slots,
                                "tuned": True}]
    assert [d["action"] for d in saved["decisions"]] == [d["action"] for d in it.profiler.summary().autotune]


def test_enable_autotune_refuses_a_prefix_in_a_missing_folder(tmp_path):
    with pytest.raises(ValueError, match="folder of filepath_prefix does not exist"):
        md.config.set_enable_autotune(True, filepath_prefix=str(tmp_path / "nowhere" / "tuned"))
