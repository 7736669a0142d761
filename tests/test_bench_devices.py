"""``python -m minddata.bench.devices``: a placement that fails is reported and the others still run."""

from __future__ import annotations

import json

import pytest

from minddata.bench import devices, images


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("devices")
    images.generate(root, num_images=6, num_classes=2, seed=1, size=(64, 48))
    return root


def test_a_failing_run_is_recorded_and_the_results_file_is_still_written(small_set, tmp_path, capsys):
    out = tmp_path / "r.json"
    md_out = tmp_path / "r.md"
    rc = devices.main(["--data", str(small_set), "--pipelines", "yolov3,no-such-pipeline,yolov3", "--devices", "CPU",
                       "--workers", "1", "--batch-size", "4", "--json", str(out), "--markdown", str(md_out)])
    assert rc == 1
    results = json.loads(out.read_text())["results"]
    assert [r["pipeline"] for r in results] == ["yolov3", "no-such-pipeline", "yolov3"]
    assert results[0]["images"] == 6 and results[2]["images"] == 6  # the run after the failure ran too
    assert results[1]["failed"] and not results[0]["failed"]
    assert "FAILED:" in md_out.read_text()


def test_an_absent_device_is_skipped_with_its_reason(small_set, tmp_path, monkeypatch):
    from minddata.ops import probe

    monkeypatch.setattr(probe, "gpu_backend", lambda: (None, "no NVIDIA GPU visible"))
    out = tmp_path / "r.json"
    assert devices.main(["--data", str(small_set), "--devices", "GPU", "--json", str(out)]) == 0
    (result,) = json.loads(out.read_text())["results"]
    assert result["skipped"] == "no NVIDIA GPU visible"


def test_devices_lists_only_ops_a_user_can_write(capsys):
    from minddata.cli import main
    from minddata.ops import fused

    assert main(["devices", "-v"]) == 0
    out = capsys.readouterr().out
    assert "Decode" in out and "RandomResizedCrop" in out
    for name in fused.__all__:  # the optimizer's substitutes (FusedDecodeRandomResizedCrop, NormalizeInputCheck...)
        assert name not in out, name
