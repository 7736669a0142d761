"""``minddata serve model.onnx``: a model exported with its pipeline is served with it, a different
PIPELINE is refused, an edited card is caught by its digest, and the start-up golden check names an
op whose pixels moved; against real ``minddata serve`` processes on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import tritonclient.http as triton  # noqa: E402
from paritykit import eval_dataset, files, image_folder, set_metadata, trained_model  # noqa: E402
from serve_testing import metric  # noqa: E402

from minddata._parity import CARD_KEY, digest_ops  # noqa: E402
from minddata.bench.serve_process import ServerProcess  # noqa: E402
from minddata.trainer import OnnxModel  # noqa: E402

PIPELINE = """
from minddata import vision

def ops():
    return [vision.Decode(), vision.Resize((20, 20)), vision.CenterCrop(16), vision.Normalize([{red}, 110.0, 100.0],
            [60.0, 60.0, 60.0]), vision.HWC2CHW()]
"""


def serve_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minddata.cli", "serve", *args, "--port", "0"],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = image_folder(str(tmp_path_factory.mktemp("images")))
    model = trained_model(root)
    path = str(tmp_path_factory.mktemp("model") / "net.onnx")
    model.export_onnx(path, eval_dataset(root), pipeline=eval_dataset(root))
    return model, root, path


@pytest.fixture(scope="module")
def server(exported):
    with ServerProcess([exported[2], "--max-delay-ms", "200"]) as proc:
        yield proc


def pipeline_file(tmp_path, red: float) -> str:
    path = tmp_path / f"red{red:g}.py"
    path.write_text(PIPELINE.format(red=red))
    return str(path)


def edited_copy(path: str, tmp_path, edit, redigest: bool) -> str:
    """A copy of the model whose embedded ops went through ``edit`` (with the digest recomputed, as a
    consistent re-export with other pixels would have it, or left as it was: a tampered file)."""
    import onnx

    proto = onnx.load(path)
    card = json.loads(next(p.value for p in proto.metadata_props if p.key == CARD_KEY))
    edit(card["ops"])
    if redigest:
        card["digest"] = digest_ops(card["ops"])
    copy = str(tmp_path / "edited.onnx")
    onnx.save(proto, copy)
    set_metadata(copy, CARD_KEY, json.dumps(card))
    return copy


def nearest_resize(ops) -> None:
    ops[1]["tensor_op_params"]["interpolation"]["name"] = "NEAREST"


def infer(url: str, name: str, images: list[bytes]) -> np.ndarray:
    client = triton.InferenceServerClient(url.removeprefix("http://"))
    tensor = triton.InferInput("image", [len(images)], "BYTES")
    tensor.set_data_from_numpy(np.array(images, dtype=np.object_))
    return client.infer(name, [tensor]).as_numpy("output")


def test_served_predictions_equal_offline_predictions_on_the_same_files(server, exported):
    model, root, path = exported
    images = files(root)
    served = infer(server.url, "net", images)
    (offline,) = list(OnnxModel(path).predict(eval_dataset(root, batch=len(images))))
    np.testing.assert_array_equal(served, offline)  # the same engine and runtime, on the CPU
    torch_outputs = np.concatenate([o.numpy() for o in model.predict(eval_dataset(root, batch=len(images)))])
    np.testing.assert_allclose(served, torch_outputs, rtol=1e-5, atol=1e-5)  # ONNX Runtime vs torch kernels
    assert (served.argmax(1) == torch_outputs.argmax(1)).all()


def test_metadata_route_reports_the_embedded_pipeline_and_an_exact_golden_check(server):
    meta = httpx.get(f"{server.url}/v2/models/net", timeout=10).json()["pipeline"]
    assert meta["embedded"] and meta["served"] == "embedded" and meta["matches_embedded"]
    assert meta["ops"] == ["Decode", "Resize", "CenterCrop", "Normalize", "HWC2CHW"]
    assert meta["golden_check"]["status"] == "exact"
    assert meta["golden_check"]["pipeline_digests_reproduced"] == 3 and meta["golden_check"]["model"]["ok"]


def test_metrics_report_the_golden_check(server):
    assert metric(server.url, "minddata_serve_pipeline_embedded") == 1
    assert metric(server.url, "minddata_serve_pipeline_mismatch") == 0
    assert metric(server.url, "minddata_serve_golden_check", status="exact") == 1
    assert metric(server.url, "minddata_serve_golden_op_within_tolerance", op="Resize") == 1


def test_a_different_pipeline_is_refused_with_the_ops_side_by_side(exported, tmp_path):
    result = serve_cli(pipeline_file(tmp_path, 128.0), "--model", exported[2])
    assert result.returncode == 2 and "listening" not in result.stdout
    assert "differs from the pipeline embedded" in result.stderr
    assert "Normalize(mean=[120.0, 110.0, 100.0]" in result.stderr and "≠ Normalize(mean=[128.0" in result.stderr
    assert "= Decode(to_pil=False)" in result.stderr


def test_the_same_pipeline_given_as_a_file_is_accepted(exported, tmp_path):
    with ServerProcess([pipeline_file(tmp_path, 120.0), "--model", exported[2], "--name", "net"]) as proc:
        meta = httpx.get(f"{proc.url}/v2/models/net", timeout=10).json()["pipeline"]
    assert meta["matches_embedded"] and meta["served"] == "PIPELINE argument"
    assert meta["golden_check"]["status"] == "exact"


def test_an_allowed_mismatch_warns_and_the_metadata_says_so(exported, tmp_path):
    with ServerProcess([pipeline_file(tmp_path, 128.0), "--model", exported[2], "--name", "net",
                        "--allow-pipeline-mismatch"]) as proc:
        meta = httpx.get(f"{proc.url}/v2/models/net", timeout=10).json()["pipeline"]
        mismatch = metric(proc.url, "minddata_serve_pipeline_mismatch")
    assert not meta["matches_embedded"] and meta["mismatch_allowed"] and meta["differing_ops"] == [3]
    assert meta["golden_check"]["status"] == "skipped"
    assert mismatch == 1
    assert any("WARNING" in line and "differs from the pipeline embedded" in line for line in proc.stderr)


def test_an_edited_embedded_pipeline_is_caught_by_its_digest(exported, tmp_path):
    def crop_18(ops):
        ops[2]["tensor_op_params"]["size"] = 18

    result = serve_cli(edited_copy(exported[2], tmp_path, crop_18, redigest=False))
    assert result.returncode == 2 and "does not match its digest" in result.stderr


def test_a_changed_resize_interpolation_makes_the_golden_check_name_the_op(exported, tmp_path):
    result = serve_cli(edited_copy(exported[2], tmp_path, nearest_resize, redigest=True))
    assert result.returncode == 2, result.stderr
    assert "golden check failed: op 1 Resize differs from its exported outputs by up to" in result.stderr
    assert "Decode differs" not in result.stderr and "CenterCrop differs" not in result.stderr


def test_an_allowed_drift_serves_and_reports_the_op(exported, tmp_path):
    path = edited_copy(exported[2], tmp_path, nearest_resize, redigest=True)
    with ServerProcess([path, "--name", "net", "--allow-pipeline-mismatch"]) as proc:
        meta = httpx.get(f"{proc.url}/v2/models/net", timeout=10).json()["pipeline"]
        within = metric(proc.url, "minddata_serve_golden_op_within_tolerance", op="Resize")
        drift = metric(proc.url, "minddata_serve_golden_check", status="drift")
    check = meta["golden_check"]
    assert check["status"] == "drift"
    assert [c["op"] for c in check["ops"] if not c["ok"]] == ["Resize"]
    assert within == 0 and drift == 1


def test_a_model_without_a_pipeline_needs_one(exported, tmp_path):
    model, root, _ = exported
    path = model.export_onnx(tmp_path / "bare.onnx", eval_dataset(root))
    result = serve_cli(path)
    assert result.returncode == 2 and "carries no pipeline" in result.stderr


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_a_torchscript_export_is_served_with_its_pipeline_and_equals_model_predict(exported, tmp_path):
    model, root, _ = exported
    path = model.export_torchscript(tmp_path / "net.pt", eval_dataset(root), pipeline=eval_dataset(root))
    images = files(root)
    with ServerProcess([path, "--name", "net", "--max-delay-ms", "200"]) as proc:
        meta = httpx.get(f"{proc.url}/v2/models/net", timeout=10).json()
        client = triton.InferenceServerClient(proc.url.removeprefix("http://"))
        tensor = triton.InferInput("image", [len(images)], "BYTES")
        tensor.set_data_from_numpy(np.array(images, dtype=np.object_))
        served = client.infer("net", [tensor]).as_numpy(meta["outputs"][0]["name"])
    assert meta["platform"] == "minddata_torchscript" and meta["pipeline"]["golden_check"]["status"] == "exact"
    (offline,) = [o.numpy() for o in model.predict(eval_dataset(root, batch=len(images)))]
    np.testing.assert_array_equal(served, offline)  # the same torch kernels on the CPU, the same batch
