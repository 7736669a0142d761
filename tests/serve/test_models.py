"""``--model``: an ONNX file (through minddata.trainer.OnnxModel) or a TorchScript file runs once per
batch behind the pipeline, against a real ``minddata serve`` process."""

from __future__ import annotations

import textwrap
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
import tritonclient.http as triton
from serve_testing import make_jpeg, metric

from minddata.bench.serve_process import ServerProcess
from minddata.serve import load_pipeline_file

IMAGES = [make_jpeg(60 + 9 * i, 40 + 5 * i, seed=20 + i) for i in range(8)]

PIPELINE = textwrap.dedent('''
    """Small images for a small model; postprocess adds each row's strongest channel."""
    import numpy as np

    from minddata import vision

    def ops():
        return [vision.Decode(), vision.Resize((32, 32)), vision.Rescale(1 / 255, 0), vision.HWC2CHW()]

    def postprocess(outputs):
        pooled = outputs["pooled"]
        return {"pooled": pooled, "channel": np.argmax(pooled, axis=1).astype(np.int64)}
''')


@pytest.fixture(scope="module")
def pipeline_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("serve_models") / "small.py"
    path.write_text(PIPELINE)
    return str(path)


def channel_means_onnx(path) -> str:
    """``pooled = mean over H, W of x``: FP32 [batch, 3, H, W] → [batch, 3]."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["x"], ["pooled"], axes=[2, 3], keepdims=0)],
        "channel_means",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def channel_means_torchscript(path) -> str:
    torch = pytest.importorskip("torch")

    class ChannelMeans(torch.nn.Module):
        def forward(self, x):
            return x.mean(dim=(2, 3))

    torch.jit.save(torch.jit.script(ChannelMeans()), str(path))
    return str(path)


def post_concurrently(url, images):
    def post(data):
        return httpx.post(f"{url}/v1/preprocess", content=data, headers={"Content-Type": "image/jpeg",
                                                                         "Accept": "application/json"}, timeout=60)

    with ThreadPoolExecutor(len(images)) as pool:
        return list(pool.map(post, images))


@pytest.fixture(scope="module")
def onnx_server(pipeline_file, tmp_path_factory):
    pytest.importorskip("onnxruntime")
    model = channel_means_onnx(tmp_path_factory.mktemp("onnx") / "means.onnx")
    with ServerProcess([pipeline_file, "--model", model, "--name", "means", "--max-batch", "4",
                        "--max-delay-ms", "300"]) as proc:
        yield proc


def test_onnx_model_metadata_and_startup_print(onnx_server):
    text = "".join(onnx_server.stdout)
    assert "model:    onnx" in text and "model input  x FP32 [-1, 3, -1, -1]" in text
    client = triton.InferenceServerClient(onnx_server.url.removeprefix("http://"))
    meta = client.get_model_metadata("means")
    assert meta["platform"] == "minddata_onnx"
    assert meta["outputs"] == [{"name": "pooled", "datatype": "FP32", "shape": [-1, 3]},
                               {"name": "channel", "datatype": "INT64", "shape": [-1]}]


def test_onnx_model_runs_once_per_batch_and_matches_offline(onnx_server, pipeline_file):
    url = onnx_server.url
    runs, batches = metric(url, "minddata_serve_model_runs_total"), metric(url, "minddata_serve_batch_size_count")
    answers = post_concurrently(url, IMAGES)
    assert [a.status_code for a in answers] == [200] * len(IMAGES)
    new_runs = metric(url, "minddata_serve_model_runs_total") - runs
    assert new_runs == metric(url, "minddata_serve_batch_size_count") - batches
    assert new_runs < len(IMAGES), "eight requests within 300 ms were not batched"
    offline = load_pipeline_file(pipeline_file).run_offline(IMAGES)["image"]
    expected = offline.mean(axis=(2, 3))
    pooled = np.stack([np.array(next(o for o in a.json()["outputs"] if o["name"] == "pooled")["data"],
                                dtype=np.float32) for a in answers])
    np.testing.assert_allclose(pooled, expected, rtol=1e-5, atol=1e-6)
    channels = [next(o for o in a.json()["outputs"] if o["name"] == "channel")["data"] for a in answers]
    assert channels == [[int(c)] for c in np.argmax(pooled, axis=1)]


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_torchscript_model_with_tritonclient(pipeline_file, tmp_path):
    model = channel_means_torchscript(tmp_path / "means.pt")
    # The same pipeline without postprocess: the TorchScript module's one output is output0.
    plain = tmp_path / "plain.py"
    plain.write_text(PIPELINE.split("def postprocess")[0])
    with ServerProcess([str(plain), "--model", model, "--name", "means"]) as server:
        client = triton.InferenceServerClient(server.url.removeprefix("http://"), network_timeout=60.0)
        assert "model:    torchscript" in "".join(server.stdout)
        inp = triton.InferInput("image", [3], "BYTES")
        inp.set_data_from_numpy(np.array(IMAGES[:3], dtype=np.object_), binary_data=True)
        got = client.infer("means", [inp]).as_numpy("output0")
    expected = load_pipeline_file(str(plain)).run_offline(IMAGES[:3])["image"].mean(axis=(2, 3))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
