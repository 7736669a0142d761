"""bench/trainer.py runs end to end on tiny inputs (a smoke test: no figure is checked)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="torch is not installed: the trainer needs it")

from minddata.bench import trainer as bench_trainer  # noqa: E402


def test_overhead_smoke(tmp_path, capsys):
    out = tmp_path / "o.json"
    assert bench_trainer.main(["overhead", "--rows", "256", "--batch", "32", "--epochs", "2", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert [r["steps"] for r in report["results"]] == [16, 16] and report["ratio"] > 0
    assert "ratio (minddata / peer steps/s)" in capsys.readouterr().out


def test_stall_smoke(tmp_path):
    out = tmp_path / "s.json"
    args = ["stall", "--images", "12", "--classes", "2", "--image-size", "48x40", "--cache", str(tmp_path / "c"),
            "--steps", "2", "--batch", "4", "--crop", "32", "--workers", "1", "--loader-workers", "0",
            "--width", "8", "--json", str(out)]
    assert bench_trainer.main(args) == 0
    report = json.loads(out.read_text())
    assert report["settings"]["width"] == 8
    assert [r["steps"] for r in report["results"]] == [2, 2]
    assert all(0 <= r["stall"] <= 1 for r in report["results"])
