"""``minddata parity``: each installed peer's own implementation of the pipeline's deterministic steps,
per op and for the whole chain, and the change in the model's outputs; peers that are absent are
reported as such."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from paritykit import eval_dataset, image_folder, trained_model  # noqa: E402

from minddata.bench.parity import MINDSPORE_PYTHON, measure  # noqa: E402

OPS = ["Decode", "Resize", "CenterCrop", "Normalize", "HWC2CHW"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = image_folder(str(tmp_path_factory.mktemp("images")))
    path = str(tmp_path_factory.mktemp("model") / "net.onnx")
    trained_model(root).export_onnx(path, eval_dataset(root), pipeline=eval_dataset(root))
    return path, root


def parity_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minddata.cli", "parity", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_each_op_of_the_embedded_pipeline_is_measured_per_peer(exported):
    result = measure(exported[0], ["pil", "opencv"])
    assert result.ops == OPS and result.images == 3
    for peer in result.peers:
        assert peer.available and [row.op for row in peer.ops] == OPS
        assert all(row.mean is not None and 0 <= row.mean <= row.max for row in peer.ops)
        assert peer.ops[0].units == "grey levels" and peer.ops[3].units == "output units"
        layout = peer.ops[4]
        assert layout.max == 0, "HWC2CHW is a transpose in every framework"


def test_the_model_line_gives_top1_agreement_and_the_largest_output_change(exported):
    (pil,) = measure(exported[0], ["pil"]).peers
    assert pil.model["images"] == 3 and 0 <= pil.model["top1_agree"] <= 3
    assert pil.model["max_output_difference"] >= 0
    assert pil.chain.op == "whole pipeline" and pil.chain.max >= 0


def test_dali_cpu_backend_is_a_peer(exported):
    pytest.importorskip("nvidia.dali")
    (dali,) = measure(exported[0], ["dali"]).peers
    assert dali.available and [row.op for row in dali.ops] == OPS
    assert dali.ops[0].max == 0, "DALI's CPU decoder is libjpeg-turbo too"


def test_a_peer_that_is_not_installed_is_reported_not_an_error(exported):
    try:
        import torchvision  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("torchvision is installed here")
    result = parity_cli(exported[0], "--against", "torchvision,opencv")
    assert result.returncode == 0, result.stderr
    assert "torchvision  not installed" in result.stdout and "opencv " in result.stdout


def test_mindspore_without_its_interpreter_is_reported_not_an_error(exported):
    env = dict(os.environ, MINDDATA_MINDSPORE_PYTHON="/nonexistent/python")
    result = parity_cli(exported[0], "--against", "mindspore", env=env)
    assert result.returncode == 0, result.stderr
    assert "mindspore" in result.stdout and "not installed" in result.stdout


def test_mindspore_runs_the_ops_in_its_own_interpreter(exported):
    if not os.path.exists(MINDSPORE_PYTHON):
        pytest.skip(f"no MindSpore interpreter at {MINDSPORE_PYTHON}")
    (ms,) = measure(exported[0], ["mindspore"]).peers
    assert ms.available, ms.reason
    assert [row.op for row in ms.ops] == OPS and all(row.max is not None for row in ms.ops)
    assert ms.model is not None and ms.model["images"] == 3


def test_images_from_a_folder_and_json_output(exported):
    path, root = exported
    result = parity_cli(path, "--against", "opencv", "--images", root, "--max-images", "5", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["images"] == 5 and report["ops"] == OPS
    assert report["peers"][0]["peer"] == "opencv" and len(report["peers"][0]["ops"]) == 5


def test_a_pipeline_without_a_model_has_no_model_line():
    result = parity_cli("infer224", "--against", "pil")
    assert result.returncode == 0, result.stderr
    assert "Resize" in result.stdout and "top-1" not in result.stdout


def test_an_unknown_peer_is_a_one_line_usage_error(exported):
    result = parity_cli(exported[0], "--against", "caffe")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "unknown peer" in result.stderr
