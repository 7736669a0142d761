"""``minddata bench`` reports what a user can act on: medians over rounds, agreed verdicts, bad files
named and skipped, advice in the command's terms that agrees with the load check, a warning when other
work disturbs the run, and each run's peak memory measured in a process of its own."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest
from testkit import make_jpeg

from minddata.bench import compare, images, pipelines, runner
from minddata.bench.command import LoadMonitor, aggregate_rounds
from minddata.bench.runner import BenchResult
from minddata.bench.verdict import in_command_terms, plain_fusion_notes, verdict
from minddata.cli import main


def _result(rate: float, stage: str | None, verdict: str = "busy") -> BenchResult:
    return BenchResult("train", 100, 100 / rate, rate, 1.0, 100.0, 10.0, 0.1, 2, 8, 1,
                       bottleneck_stage=stage, bottleneck=f"{stage} {verdict}")


def test_rounds_report_the_median_round_and_every_rate():
    r = aggregate_rounds([_result(300, "Map"), _result(100, "Map"), _result(200, "Map")])
    assert r.images_per_s == 200 and r.rounds_images_per_s == [300, 100, 200]
    assert r.bottleneck_stage == "Map" and r.bottleneck_agreed


def test_an_even_number_of_rounds_reports_the_true_median():
    r = aggregate_rounds([_result(100, "Map"), _result(400, "Map"), _result(300, "Map"), _result(200, "Map")])
    assert r.images_per_s == 250 and r.rounds_images_per_s == [100, 400, 300, 200]


def test_rounds_that_disagree_name_no_bottleneck():
    r = aggregate_rounds([_result(300, "Map"), _result(100, "Batch(64)")])
    assert r.bottleneck_stage is None and not r.bottleneck_agreed
    assert r.bottleneck.startswith("unclear: the rounds disagree") and "Batch(64)" in r.bottleneck


def test_worker_advice_becomes_the_flag_to_pass():
    advice = "add workers (num_parallel_workers=2 → 3) or make Resize (40% of its time) cheaper"
    assert in_command_terms(advice) == "rerun with --workers 3 or make Resize (40% of its time) cheaper"


def test_load_monitor_sees_another_busy_process():
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass\n"
    monitor = LoadMonitor(cores=2).start()
    subprocess.run([sys.executable, "-c", spin], check=True, timeout=120)
    monitor.stop(own_cpu_seconds=0.0)  # the spinner is not the benchmark's own work
    assert monitor.busy and monitor.other_cores > LoadMonitor.WARN_CORES
    assert monitor.warning().startswith("warning: other processes used")


@pytest.fixture
def folder_with_bad_images(tmp_path):
    root = tmp_path / "data"
    images.generate(root, num_images=8, num_classes=2, seed=3, size=(64, 48))
    (root / images._class_name(0, 2) / "truncated.jpg").write_bytes(make_jpeg(64, 48, seed=1)[:300])
    (root / images._class_name(1, 2) / "empty.jpg").write_bytes(b"")
    return root


def test_bench_skips_and_names_bad_images(capsys, folder_with_bad_images):
    rc = main(["bench", "--data", str(folder_with_bad_images), "--pipeline", "infer224", "--batch-size", "4",
               "--rounds", "2"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "bad images (skipped and counted" in out
    assert "decode-only: 2 file(s) could not be decoded" in out
    assert "infer224: 2 row(s) skipped per round" in out
    assert "truncated.jpg" in out and "empty.jpg" in out
    row = next(line for line in out.splitlines() if line.startswith("infer224 "))
    assert row.split()[2] == "8"  # the 8 good images, in every round
    assert "Traceback" not in err


def test_bench_table_shows_spread_over_rounds(capsys, folder_with_bad_images):
    rc = main(["bench", "--data", str(folder_with_bad_images), "--pipeline", "yolo416", "--batch-size", "4",
               "--rounds", "2"])
    out, _ = capsys.readouterr()
    assert rc == 0
    header = next(line for line in out.splitlines() if line.startswith("pipeline "))
    assert "spread" in header
    assert "figures: the median of 2 rounds (the mean of the middle two)" in out
    assert "NormalizeInputCheck" not in out and "FusedDecode" not in out


def test_convert_names_a_bad_image_and_the_flag(capsys, folder_with_bad_images, tmp_path):
    rc = main(["convert", str(folder_with_bad_images), str(tmp_path / "out.mindrecord"), "-q"])
    _, err = capsys.readouterr()
    assert rc == 2
    assert "empty.jpg" in err or "truncated.jpg" in err
    assert "--skip-bad" in err and "skip_bad=True" not in err
    assert not list(tmp_path.glob("out.mindrecord*"))  # nothing written on failure


def test_convert_skip_bad_lists_what_it_left_out(capsys, folder_with_bad_images, tmp_path):
    rc = main(["convert", str(folder_with_bad_images), str(tmp_path / "out.mindrecord"), "-q", "--skip-bad"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "wrote 8 images" in out
    assert "skipped 2 file(s) that failed the header check" in out
    import minddata as md

    assert md.MindDataset(str(tmp_path / "out.mindrecord")).get_dataset_size() == 8


def test_convert_overwrite_message_names_the_flag(capsys, folder_with_bad_images, tmp_path):
    dest = str(tmp_path / "out.mindrecord")
    assert main(["convert", str(folder_with_bad_images), dest, "-q", "--skip-bad"]) == 0
    capsys.readouterr()
    assert main(["convert", str(folder_with_bad_images), dest, "-q", "--skip-bad"]) == 2
    _, err = capsys.readouterr()
    assert "--overwrite" in err and "overwrite=True" not in err


def test_generated_images_show_progress_with_time_left(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MINDDATA_CACHE", str(tmp_path / "cache"))
    rc = main(["bench", "--num-images", "20", "--pipeline", "infer224", "--batch-size", "4", "--rounds", "1"])
    _, err = capsys.readouterr()
    assert rc == 0
    assert "preparing 20 generated images" in err and "20/20 images" in err
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)


# --- verdicts: one line, in the user's words, agreeing with the load check ------------------------


def _profiled(cpu: float, workers: int = 2, cpu_seconds: float = 1.0, seconds: float = 1.0) -> BenchResult:
    """A pipeline whose map's Decode limits it, its workers on a CPU ``cpu`` of their busy time, the
    whole run using ``cpu_seconds / seconds`` cores."""
    return BenchResult(
        "train", 100, seconds, 100 / seconds, cpu_seconds, 100 / cpu_seconds, 300.0, 0.1, workers, 8, 1,
        bottleneck_stage="Decode in Map[Decode, Resize] reading ImageFolderDataset", bottleneck="...",
        neck={"pipeline_bound": True, "stage": "Map[Decode, Resize] reading ImageFolderDataset", "op": "Decode",
              "kind": "parallel", "busy": 0.99, "cpu": cpu, "workers": workers, "op_share": 0.9,
              "reason": "is busy 99%, waiting for input only 0% of the time",
              "advice": f"add workers (num_parallel_workers={workers} → {workers + 1}): its workers are on the CPU only "
                        f"{cpu:.0%} of their busy time (waiting on I/O or sleeping)"})


def test_a_busy_machine_gets_no_worker_advice():
    v = verdict(_profiled(cpu=0.43), cores=2, other_cores=1.0, busy=True)
    text = "\n".join([v.line, *v.details])
    assert "--workers" not in text and "I/O" not in text
    assert "other processes used 1.0 of the 2 cores" in v.line and "rerun on an idle machine" in v.line


def test_a_low_cpu_share_on_a_saturated_machine_is_cpu_bound_not_io():
    # Idle by the load check, but the pipeline itself used 1.8 of the 2 cores: its workers queued for a CPU.
    v = verdict(_profiled(cpu=0.5, cpu_seconds=1.8), cores=2, other_cores=0.2, busy=False)
    assert v.label == "CPU-bound" and "--workers" not in v.line and "more workers would not help" in v.line


def test_a_low_cpu_share_with_spare_cores_suggests_one_more_worker():
    v = verdict(_profiled(cpu=0.4, cpu_seconds=0.8), cores=8, other_cores=0.0, busy=False)
    assert v.label == "waiting" and v.line.endswith("try --workers 3")


def test_rows_a_device_op_ran_on_the_cpu_are_named_in_the_details():
    result = _profiled(cpu=0.9, cpu_seconds=1.8)
    result.neck["cpu_fallback_rows"] = {"Decode": 12}
    v = verdict(result, cores=2, other_cores=0.0, busy=False)
    assert "ran on the CPU instead of their device: Decode 12 rows" in v.details
    assert not any("instead of their device" in d for d in verdict(_profiled(cpu=0.9), cores=2, other_cores=0.0,
                                                                    busy=False).details)


def test_rounds_that_disagree_give_an_unclear_verdict():
    batch = _profiled(0.9)
    batch.bottleneck_stage, batch.neck = "Batch(8)", {**batch.neck, "stage": "Batch(8)", "op": None}
    r = aggregate_rounds([_profiled(0.9), batch])
    v = verdict(r, cores=2, other_cores=0.0, busy=False)
    assert v.label == "unclear" and v.line.startswith("unclear: the rounds disagree")


def test_the_verdict_names_a_fused_op_by_the_users_ops():
    r = _profiled(cpu=0.95, cpu_seconds=1.9)
    r.neck["op"] = "Decode+RandomResizedCrop"
    line = verdict(r, cores=2, other_cores=0.0, busy=False).line
    assert "Decode and RandomResizedCrop (done as one step)" in line and "Fused" not in line


# The notes Dataset.explain() gives for the train pipeline: the map and the batch both note the move
# of Normalize → HWC2CHW into the batch.
_TRAIN_NOTES = [
    "Normalize → HWC2CHW on 'image' moved into the batch: each image is normalized straight into its slot of the "
    "batch buffer, by the map's workers where the map keeps every row on threads of this process under a batch "
    "of a fixed size; bound: bit-exact",
    "Decode+RandomResizedCrop: crop drawn from the JPEG header, only that region decoded at a reduced DCT scale; "
    "bound: same crop as unfused; pixels differ by 3-7.5 grey levels on average (per image at most 11), a random "
    "augmentation",
    "Normalize → HWC2CHW moved into the following batch; a row check stays here; bound: bit-exact",
    "reads ImageFolderDataset's rows in its own workers (no separate reader stage); bound: bit-exact (same rows, "
    "same order)",
]


def test_fusion_is_told_once_per_rewrite_in_plain_words():
    lines = plain_fusion_notes(_TRAIN_NOTES)
    assert len(lines) == 3
    assert sum("Normalize" in line for line in lines) == 1
    assert all("Normalize → HWC2CHW" not in line for line in lines)
    for jargon in ("bound:", "row check", "DCT", "reader stage", "unfused"):
        assert not any(jargon in line for line in lines), jargon


def test_the_report_gives_each_pipeline_a_whole_verdict_line(capsys, folder_with_bad_images):
    rc = main(["bench", "--data", str(folder_with_bad_images), "--pipeline", "yolo416", "--batch-size", "4",
               "--rounds", "1"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "verdicts (what limits each pipeline" in out
    assert any(line.startswith("  yolo416: ") and len(line) > 20 for line in out.splitlines())
    assert "…" not in out


# --- peak RSS: each run's own, in a process of its own ---------------------------------------------


_ALLOCATING_PIPELINE = """
import numpy as np
import minddata as md
from minddata import vision

HELD = np.ones({mb} << 20, np.uint8)  # touched: resident until the process ends


def build(data_dir, workers, batch_size):
    ds = md.ImageFolderDataset(data_dir, shuffle=False, num_parallel_workers=workers)
    ds = ds.map([vision.Decode(), vision.Resize((8, 8))], input_columns="image", num_parallel_workers=workers)
    return ds.batch(batch_size)
"""


def _pipeline_file(tmp_path, name: str, mb: int) -> pipelines.CustomPipeline:
    path = tmp_path / f"{name}.py"
    path.write_text(_ALLOCATING_PIPELINE.format(mb=mb))
    return pipelines.CustomPipeline(name, str(path), name, lambda *a: None)  # build() runs in the child


def test_a_run_in_its_own_process_holds_neither_the_previous_runs_nor_the_callers_memory(
        tmp_path, folder_with_bad_images):
    data = folder_with_bad_images
    big = runner.run_in_own_process(_pipeline_file(tmp_path, "big", 300), data, workers=1, batch_size=4,
                                    skip_bad_images=True)
    held_here = bytearray(300 << 20)
    held_here[::4096] = b"\1" * len(held_here[::4096])  # resident in the caller while the next run goes
    small = runner.run_in_own_process(_pipeline_file(tmp_path, "small", 0), data, workers=1, batch_size=4,
                                      skip_bad_images=True)
    del held_here
    assert big.images == small.images == 8
    assert big.peak_rss_mb >= 300
    assert small.peak_rss_mb < big.peak_rss_mb - 200


def test_a_failing_run_in_its_own_process_is_raised_here_and_leaves_no_process(tmp_path, folder_with_bad_images):
    path = tmp_path / "broken.py"
    path.write_text("def build(data_dir, workers, batch_size):\n    raise ValueError('no such column: pixels')\n")
    broken = pipelines.CustomPipeline("broken", str(path), "broken", lambda *a: None)
    with pytest.raises(runner.OwnProcessError, match="no such column: pixels") as caught:
        runner.run_in_own_process(broken, folder_with_bad_images, workers=1, batch_size=4)
    assert caught.value.kind == "ValueError" and "Traceback" in caught.value.trace
    assert multiprocessing.active_children() == []


def test_a_peer_reports_its_own_peak_not_the_benchs(tmp_path):
    # The peers' scripts start with compare's measuring code; started from a process holding 400 MB, a
    # peer that holds 64 MB must report about 64 MB (ru_maxrss would say 400: it survives exec).
    held_here = bytearray(400 << 20)
    held_here[::4096] = b"\1" * len(held_here[::4096])
    script = compare._MEASURE + textwrap.dedent("""
        t0, c0 = time.perf_counter(), _cpu()
        data = bytearray(64 << 20)
        data[::4096] = b"\\1" * len(data[::4096])
        _report(1, t0, c0)
    """)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path), "train", "2", "8", "1"], capture_output=True,
                          text=True, timeout=120, check=True)
    del held_here
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    peak = compare.Run("peer", "train", **json.loads(line[len("RESULT "):])).peak_rss_mb
    assert 64 <= peak < 250


def test_the_verdict_modules_examples_hold():
    import doctest

    from minddata.bench import verdict as module

    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_rounds_that_name_the_same_stage_agree_even_when_only_some_name_its_op():
    named, unnamed = _profiled(0.9), _profiled(0.9)
    unnamed.neck = {**unnamed.neck, "op": None}
    r = aggregate_rounds([named, unnamed, replace(named, images_per_s=90.0)])
    assert r.bottleneck_agreed and r.neck["op"] is None
    assert r.bottleneck_stage == "Map[Decode, Resize] reading ImageFolderDataset"
    assert "the map (Decode, Resize)" in verdict(r, cores=2, other_cores=0.0, busy=False).line
