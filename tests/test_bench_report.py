"""``minddata bench`` reports what a user can act on: medians over rounds, agreed verdicts, bad files
named and skipped, advice in the command's terms, a warning when other work disturbs the run."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from testkit import make_jpeg

from minddata.bench import images
from minddata.bench.command import LoadMonitor, _in_command_terms, aggregate_rounds
from minddata.bench.runner import BenchResult
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
    assert _in_command_terms(advice) == "rerun with --workers 3 or make Resize (40% of its time) cheaper"


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
