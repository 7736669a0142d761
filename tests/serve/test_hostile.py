"""Hostile and careless clients (issue 32), against a real ``minddata serve`` process on 127.0.0.1:
each request gets its status with a JSON ``{"error": ...}`` body, ``/v2/health/live`` still answers
within a second, and the server's memory stays bounded."""

from __future__ import annotations

import base64
import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest
from serve_testing import (
    HOSTILE_REQUESTS,
    assert_still_healthy,
    bomb_png,
    huge_jpeg,
    make_jpeg,
    metric,
    rss,
    truncated_jpeg,
)

from minddata.bench.serve_process import ServerProcess

NAME = "infer224"
INFER = f"/v2/models/{NAME}/infer"
JPEG = make_jpeg(40, 30, seed=11)


@pytest.fixture(scope="module")
def server():
    args = [NAME, "--max-batch", "8", "--max-delay-ms", "2", "--header-timeout-s", "1", "--body-timeout-s", "2",
            "--max-body-memory-mb", "24", "--max-connections", "48"]
    with ServerProcess(args) as proc:
        yield proc


@pytest.fixture
def guard(server):
    """The test's server, checked after the test: health within a second, memory bounded."""
    before = rss(server.pid)
    yield server
    assert_still_healthy(server.url, server.pid, before)


def _address(url: str) -> tuple[str, int]:
    where = urlsplit(url)
    return where.hostname, where.port


def _raw(url: str, data: bytes, timeout_s: float = 10.0) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it (or ``timeout_s``)."""
    with socket.create_connection(_address(url), timeout=timeout_s) as sock:
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before reading all of it
        return _read_all(sock, timeout_s)


def _read_all(sock: socket.socket, timeout_s: float) -> bytes:
    received, deadline = b"", time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, ConnectionResetError):
            break
        if not chunk:
            break
        received += chunk
    return received


def _status_and_error(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), answer[:200]
    return int(head.split()[1]), json.loads(body)["error"]


@pytest.mark.parametrize("case", sorted(HOSTILE_REQUESTS))
def test_hostile_infer_request_is_refused_as_json(guard, case):
    body, headers, statuses = HOSTILE_REQUESTS[case]
    answer = httpx.post(f"{guard.url}{INFER}", content=body, headers=headers, timeout=30)
    assert answer.status_code in statuses, answer.text[:300]
    assert answer.json()["error"]


def test_many_images_with_json_output_is_413_before_any_work(guard):
    # 256 images of 3x224x224 floats would be close to a gigabyte of JSON.
    raw = b"".join(len(JPEG).to_bytes(4, "little") + JPEG for _ in range(256))
    header = json.dumps({"inputs": [{"name": "image", "shape": [256], "datatype": "BYTES",
                                     "parameters": {"binary_data_size": len(raw)}}]}).encode()
    before = metric(guard.url, "minddata_serve_images_total")
    start = time.monotonic()
    answer = httpx.post(f"{guard.url}{INFER}", content=header + raw, timeout=30,
                        headers={"Inference-Header-Content-Length": str(len(header))})
    assert answer.status_code == 413 and "binary_data_output" in answer.json()["error"]
    assert time.monotonic() - start < 5
    assert metric(guard.url, "minddata_serve_images_total") == before  # refused before preprocessing


def test_many_images_with_binary_output_are_answered(guard):
    raw = b"".join(len(JPEG).to_bytes(4, "little") + JPEG for _ in range(64))
    header = json.dumps({"inputs": [{"name": "image", "shape": [64], "datatype": "BYTES",
                                     "parameters": {"binary_data_size": len(raw)}}],
                         "parameters": {"binary_data_output": True}}).encode()
    answer = httpx.post(f"{guard.url}{INFER}", content=header + raw, timeout=60,
                        headers={"Inference-Header-Content-Length": str(len(header))})
    assert answer.status_code == 200, answer.text[:300]
    assert len(answer.content) > 64 * 3 * 224 * 224 * 4


def test_header_over_the_cap_is_431(guard):
    answer = _raw(guard.url, b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (2 << 20))
    status, error = _status_and_error(answer)
    assert status == 431 and "--max-header-kb" in error


def test_connection_that_sends_nothing_is_closed_after_the_header_deadline(guard):
    start = time.monotonic()
    with socket.create_connection(_address(guard.url), timeout=10) as sock:
        answer = _read_all(sock, 10)
    assert _status_and_error(answer)[0] == 408
    assert time.monotonic() - start < 6


def test_half_sent_headers_are_closed_after_the_header_deadline(guard):
    answer = _raw(guard.url, b"POST /v1/preprocess HTTP/1.1\r\nHost: x\r\nContent-Ty")
    assert _status_and_error(answer)[0] == 408


def test_half_sent_body_is_closed_after_the_body_deadline(guard):
    before = metric(guard.url, "minddata_serve_requests_total", route="/v1/preprocess", status="408")
    answer = _raw(guard.url, b"POST /v1/preprocess HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
                             b"Content-Length: 100000\r\n\r\n" + JPEG[:100])
    status, error = _status_and_error(answer)
    assert status == 408 and "body" in error
    assert metric(guard.url, "minddata_serve_requests_total", route="/v1/preprocess", status="408") == before + 1


@pytest.fixture(scope="module")
def patient_server():
    """A server whose deadlines are far away, so that only the memory and connection caps refuse (on a
    loaded machine, sending 32 MB or opening 60 connections can outlast the other server's deadlines)."""
    args = [NAME, "--max-batch", "8", "--max-delay-ms", "2", "--header-timeout-s", "120", "--body-timeout-s", "120",
            "--max-body-memory-mb", "24", "--max-connections", "48"]
    with ServerProcess(args) as proc:
        yield proc


def test_bodies_held_at_once_are_bounded(patient_server):
    # Eight connections each send 4 MB of a 15 MB body and stop: past --max-body-memory-mb 24, the
    # next chunks are refused with 503 instead of being held; the bodies under the cap wait, unanswered.
    before = rss(patient_server.pid)
    head = (b"POST /v1/preprocess HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
            b"Content-Length: %d\r\n\r\n" % (15 << 20))
    socks = [socket.create_connection(_address(patient_server.url), timeout=30) for _ in range(8)]
    try:
        for sock in socks:
            try:
                sock.sendall(head + JPEG[:4] + bytes(4 << 20))
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused and closed while this client was still sending
        for sock in socks:
            sock.settimeout(3)  # a held body is never answered: its read ends here
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda s: _read_all(s, 3), socks))
    finally:
        for sock in socks:
            sock.close()
    statuses = [_status_and_error(a)[0] for a in answers if a]
    assert statuses and set(statuses) == {503}, statuses
    assert_still_healthy(patient_server.url, patient_server.pid, before)


def test_connections_over_the_cap_get_503(patient_server):
    socks = [socket.create_connection(_address(patient_server.url), timeout=10) for _ in range(60)]
    try:
        refused = []
        for sock in socks[48:]:
            sock.settimeout(5)
            answer = _read_all(sock, 5)
            if answer:
                refused.append(_status_and_error(answer)[0])
    finally:
        for sock in socks:
            sock.close()
    assert refused and set(refused) == {503}, refused
    assert metric(patient_server.url, "minddata_serve_connections_closed_total", reason="too many connections") >= 1


def test_large_json_body_is_413_under_its_own_cap(guard):
    body = json.dumps({"inputs": [{"name": "image", "shape": [3_000_000], "datatype": "UINT8",
                                   "data": [7] * 3_000_000}]}).encode()
    assert len(body) > 4 << 20
    answer = httpx.post(f"{guard.url}{INFER}", content=body, timeout=30)
    assert answer.status_code == 413 and "--max-json-mb" in answer.json()["error"]


def test_json_bodies_are_parsed_off_the_event_loop(guard):
    # Six 3.5 MB JSON arrays of numbers at once (not an image: 422 after parsing), while health is asked.
    body = json.dumps({"inputs": [{"name": "image", "shape": [700_000], "datatype": "UINT8",
                                   "data": [255] * 700_000}]}).encode()
    assert len(body) < 4 << 20

    def post(_):
        return httpx.post(f"{guard.url}{INFER}", content=body, timeout=60).status_code

    with ThreadPoolExecutor(6) as pool:
        posted = [pool.submit(post, i) for i in range(6)]
        time.sleep(0.3)
        slowest = 0.0
        for _ in range(5):
            start = time.monotonic()
            assert httpx.get(f"{guard.url}/v2/health/live", timeout=10).status_code == 200
            slowest = max(slowest, time.monotonic() - start)
        assert [p.result() for p in posted] == [422] * 6
    assert slowest < 1.0, f"health took {slowest:.2f} s while JSON bodies were parsed"


@pytest.mark.parametrize("image, reason", [
    (huge_jpeg(), "exceeds the limit"),
    (None, "exceeds the limit"),  # the 13000x13000 1-bit PNG, built in the test
    (truncated_jpeg(), "truncated image"),
])
def test_image_the_pipeline_refuses_is_422_with_a_short_reason(guard, image, reason):
    image = bomb_png() if image is None else image
    kind = "image/png" if image.startswith(b"\x89PNG") else "image/jpeg"
    answer = httpx.post(f"{guard.url}/v1/preprocess", content=image, headers={"Content-Type": kind}, timeout=30)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert reason in error
    # No pipeline, row counter or operator advice for the client: those go to the server's log.
    assert "Decode" not in error and "row" not in error and "set_error_samples_mode" not in error


def test_422_detail_goes_to_the_server_log(guard):
    httpx.post(f"{guard.url}/v1/preprocess", content=truncated_jpeg(3), headers={"Content-Type": "image/jpeg"},
               timeout=30)
    deadline = time.monotonic() + 5
    while "422 truncated image; pipeline:" not in "".join(guard.stderr):
        assert time.monotonic() < deadline, "".join(guard.stderr)[-2000:]
        time.sleep(0.05)


def test_image_of_13000_squared_under_the_old_limit_is_422(guard):
    # A valid small JPEG whose frame header claims 13000x13000: refused by the serving pixel limit
    # before anything is decoded.
    data = bytearray(make_jpeg(64, 48, seed=5))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = (13000).to_bytes(2, "big") * 2
    answer = httpx.post(f"{guard.url}/v1/preprocess", content=bytes(data), headers={"Content-Type": "image/jpeg"},
                        timeout=30)
    assert answer.status_code == 422 and "13000x13000" in answer.json()["error"]


def test_base64_without_content_type_names_the_fix(guard):
    body = {"inputs": [{"name": "image", "shape": [1], "datatype": "BYTES", "data": [base64.b64encode(JPEG).decode()]}]}
    answer = httpx.post(f"{guard.url}{INFER}", json=body, timeout=30)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert "base64" in error and '"content_type": "base64"' in error and "binary" in error


@pytest.mark.parametrize("method, path, status", [("GET", "/no/such/route", 404), ("PUT", "/v2/health/live", 405)])
def test_unknown_routes_and_methods_answer_json(guard, method, path, status):
    answer = httpx.request(method, f"{guard.url}{path}", timeout=10)
    assert answer.status_code == status and answer.json()["error"]


def test_unparseable_http_is_400_json(guard):
    status, error = _status_and_error(_raw(guard.url, b"GARBAGE\x01 / HTTP/1.1\r\n\r\n"))
    assert status == 400 and "invalid HTTP" in error


def test_client_that_closes_mid_body_counts_as_499_without_a_traceback(guard):
    before = metric(guard.url, "minddata_serve_requests_total", route="/v1/preprocess", status="499")
    with socket.create_connection(_address(guard.url), timeout=10) as sock:
        sock.sendall(b"POST /v1/preprocess HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
                     b"Content-Length: 100000\r\n\r\n" + JPEG[:100])
        time.sleep(0.2)
    deadline = time.monotonic() + 5
    while metric(guard.url, "minddata_serve_requests_total", route="/v1/preprocess", status="499") == before:
        assert time.monotonic() < deadline, "the request was not counted as 499"
        time.sleep(0.05)
    assert metric(guard.url, "minddata_serve_requests_total", route="/v1/preprocess", status="500") == 0
    assert "Traceback" not in "".join(guard.stderr)
