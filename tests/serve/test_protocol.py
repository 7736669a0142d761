"""The Open Inference Protocol and /v1/preprocess, against a real ``minddata serve`` process (one per
module), with tritonclient.http and httpx over 127.0.0.1."""

from __future__ import annotations

import base64
import io
import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
import tritonclient.http as triton
from serve_testing import huge_jpeg, make_jpeg, metric, truncated_jpeg
from tritonclient.utils import InferenceServerException

from minddata.bench.pipelines import make_ops
from minddata.bench.serve_process import ServerProcess
from minddata.serve import ServePipeline

NAME = "infer224"
IMAGES = [make_jpeg(120 + 10 * i, 90 + 7 * i, seed=i) for i in range(4)]


@pytest.fixture(scope="module")
def server():
    args = [NAME, "--max-batch", "8", "--max-delay-ms", "50", "--workers", "2", "--max-body-mb", "1"]
    with ServerProcess(args) as proc:
        yield proc


@pytest.fixture(scope="module")
def url(server):
    return server.url


@pytest.fixture
def client(url):
    c = triton.InferenceServerClient(url.removeprefix("http://"), network_timeout=60.0, connection_timeout=10.0)
    yield c
    c.close()


def offline(images):
    return ServePipeline(NAME, make_ops(NAME)).run_offline(images)["image"]


def test_startup_print_names_url_ops_devices_and_batching(server):
    text = "".join(server.stdout)
    assert f"listening on {server.url}" in text
    assert "Decode [CPU] → Resize [CPU] → CenterCrop [CPU] → Normalize [CPU] → HWC2CHW [CPU]" in text
    assert "output:   image FP32 [-1, 3, 224, 224]" in text
    assert "max-batch 8, max-delay 50 ms, max-queue 256 images" in text


def test_health_and_readiness(client):
    assert client.is_server_live()
    assert client.is_server_ready()
    assert client.is_model_ready(NAME)
    assert not client.is_model_ready("no-such-model")


def test_model_metadata(client):
    meta = client.get_model_metadata(NAME)
    assert meta["name"] == NAME
    assert meta["inputs"] == [{"name": "image", "datatype": "BYTES", "shape": [-1]}]
    assert meta["outputs"] == [{"name": "image", "datatype": "FP32", "shape": [-1, 3, 224, 224]}]


def test_unknown_model_is_404(url):
    r = httpx.get(f"{url}/v2/models/nope", timeout=10)
    assert r.status_code == 404
    assert "nope" in r.json()["error"]


def test_binary_infer_with_tritonclient_equals_offline_pipeline(client):
    batch = np.array(IMAGES, dtype=np.object_)
    inp = triton.InferInput("image", [len(IMAGES)], "BYTES")
    inp.set_data_from_numpy(batch, binary_data=True)
    result = client.infer(NAME, [inp], outputs=[triton.InferRequestedOutput("image", binary_data=True)])
    got = result.as_numpy("image")
    assert got.dtype == np.float32 and got.shape == (4, 3, 224, 224)
    np.testing.assert_array_equal(got, offline(IMAGES))  # bit-identical on the CPU


def test_json_infer_with_tritonclient_uint8_input(client):
    data = np.frombuffer(IMAGES[1], dtype=np.uint8)
    inp = triton.InferInput("image", [data.size], "UINT8")
    inp.set_data_from_numpy(data, binary_data=False)
    result = client.infer(NAME, [inp], outputs=[triton.InferRequestedOutput("image", binary_data=False)])
    np.testing.assert_array_equal(result.as_numpy("image"), offline([IMAGES[1]]))


def test_json_infer_with_base64_bytes(url):
    body = {"id": "r1", "inputs": [{"name": "image", "shape": [1], "datatype": "BYTES",
                                    "parameters": {"content_type": "base64"},
                                    "data": [base64.b64encode(IMAGES[2]).decode()]}]}
    r = httpx.post(f"{url}/v2/models/{NAME}/infer", json=body, timeout=60)
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["id"] == "r1" and doc["model_name"] == NAME
    (out,) = doc["outputs"]
    assert out["datatype"] == "FP32" and out["shape"] == [1, 3, 224, 224]
    got = np.array(out["data"], dtype=np.float32).reshape(out["shape"])
    np.testing.assert_array_equal(got, offline([IMAGES[2]]))


def test_v1_preprocess_returns_npy(url):
    r = httpx.post(f"{url}/v1/preprocess", content=IMAGES[3], headers={"Content-Type": "image/jpeg"}, timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/x-npy"
    np.testing.assert_array_equal(np.load(io.BytesIO(r.content)), offline([IMAGES[3]])[0])


def test_v1_preprocess_png_as_json(url):
    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(IMAGES[0])).save(buf, format="PNG")
    png = buf.getvalue()
    r = httpx.post(f"{url}/v1/preprocess", content=png,
                   headers={"Content-Type": "image/png", "Accept": "application/json"}, timeout=60)
    assert r.status_code == 200, r.text
    (out,) = r.json()["outputs"]
    got = np.array(out["data"], dtype=out["dtype"]).reshape(out["shape"])
    np.testing.assert_array_equal(got, offline([png])[0])


@pytest.mark.parametrize("route, content_type", [("/v1/preprocess", "text/plain"),
                                                 (f"/v2/models/{NAME}/infer", "text/plain")])
def test_unsupported_content_type_is_415(url, route, content_type):
    r = httpx.post(f"{url}{route}", content=IMAGES[0], headers={"Content-Type": content_type}, timeout=30)
    assert r.status_code == 415
    assert "text/plain" in r.json()["error"]


def test_body_over_the_limit_is_413(url):
    r = httpx.post(f"{url}/v1/preprocess", content=b"\xff\xd8\xff" + bytes(2 << 20),
                   headers={"Content-Type": "image/jpeg"}, timeout=30)
    assert r.status_code == 413
    assert "limit" in r.json()["error"]


@pytest.mark.parametrize("data, reason", [
    (b"hello, not an image", "not a JPEG or PNG"),
    (truncated_jpeg(), "truncated"),
    (huge_jpeg(), "image of 40000x40000 pixels exceeds the limit"),
])
def test_bad_image_is_422_with_the_reason(url, data, reason):
    r = httpx.post(f"{url}/v1/preprocess", content=data, headers={"Content-Type": "image/jpeg"}, timeout=60)
    assert r.status_code == 422
    assert reason in r.json()["error"]


def test_protocol_error_is_400(client):
    inp = triton.InferInput("wrong_name", [1], "BYTES")
    inp.set_data_from_numpy(np.array([IMAGES[0]], dtype=np.object_), binary_data=True)
    with pytest.raises(InferenceServerException, match="must be named 'image'"):
        client.infer(NAME, [inp])


def test_corrupt_image_fails_only_its_own_request_in_a_batch(url):
    runs_before = metric(url, "minddata_serve_batch_size_count")
    bodies = [IMAGES[0], IMAGES[1], truncated_jpeg(), IMAGES[2], IMAGES[3], IMAGES[0]]

    def post(data):
        return httpx.post(f"{url}/v1/preprocess", content=data, headers={"Content-Type": "image/jpeg"}, timeout=60)

    with ThreadPoolExecutor(len(bodies)) as pool:
        answers = list(pool.map(post, bodies))
    assert [a.status_code for a in answers] == [200, 200, 422, 200, 200, 200]
    assert "truncated" in answers[2].json()["error"]
    expected = offline([b for i, b in enumerate(bodies) if i != 2])
    good = [np.load(io.BytesIO(a.content)) for i, a in enumerate(answers) if i != 2]
    np.testing.assert_array_equal(np.stack(good), expected)
    # Six requests within 50 ms of each other share batches: fewer batches than requests.
    assert metric(url, "minddata_serve_batch_size_count") - runs_before < len(bodies)


def test_metrics_count_requests_batches_and_latency(url):
    before = metric(url, "minddata_serve_requests_total", route="/v1/preprocess", status="200")
    httpx.post(f"{url}/v1/preprocess", content=IMAGES[0], headers={"Content-Type": "image/jpeg"}, timeout=60)
    assert metric(url, "minddata_serve_requests_total", route="/v1/preprocess", status="200") == before + 1
    text = httpx.get(f"{url}/metrics", timeout=10).text
    for name in ("minddata_serve_latency_seconds_bucket{", 'stage="queued"', 'stage="preprocess"', 'stage="model"',
                 'stage="total"', "minddata_serve_batch_size_bucket", "minddata_serve_queue_depth",
                 "minddata_serve_images_per_second"):
        assert name in text


def test_openapi_document_lists_every_route(url):
    doc = httpx.get(f"{url}/openapi.json", timeout=10).json()
    assert {"/v2/health/live", "/v2/health/ready", "/v2", "/v2/models/{model_name}", "/v2/models/{model_name}/ready",
            "/v2/models/{model_name}/infer", "/v1/preprocess", "/metrics"} <= set(doc["paths"])
    json.dumps(doc)


def test_versioned_routes(client, url):
    assert client.is_model_ready(NAME, model_version="1")
    assert client.get_model_metadata(NAME, model_version="1")["name"] == NAME
    inp = triton.InferInput("image", [1], "BYTES")
    inp.set_data_from_numpy(np.array([IMAGES[0]], dtype=np.object_))
    np.testing.assert_array_equal(client.infer(NAME, [inp], model_version="1").as_numpy("image"), offline([IMAGES[0]]))
    assert httpx.get(f"{url}/v2/models/{NAME}/versions/7", timeout=10).status_code == 404
