"""Overload, deadlines, clients that leave, and SIGTERM, against a real ``minddata serve`` process whose
pipeline is slow on purpose (a Python op that sleeps for images of chosen widths)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
import textwrap
import threading
import time
from urllib.parse import urlsplit

import httpx
import psutil
import pytest
from serve_testing import make_jpeg, metric

from minddata.bench.serve_process import ServerProcess

SLOW_PIPELINE = textwrap.dedent('''
    """Decode, then sleep: 0.2 s for images 50 pixels wide, 3 s for 51, 1 s for 52."""
    import time

    from minddata import vision

    def wait(image):
        time.sleep({50: 0.2, 51: 3.0, 52: 1.0}.get(image.shape[1], 0.0))
        return image

    def ops():
        return [vision.Decode(), wait, vision.Resize((8, 8))]
''')
QUICK = make_jpeg(40, 30, seed=1)
SLOW = make_jpeg(50, 30, seed=2)
STUCK = make_jpeg(51, 30, seed=3)
SECOND = make_jpeg(52, 30, seed=4)
JPEG = {"Content-Type": "image/jpeg"}


@pytest.fixture(scope="module")
def pipeline_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("serve") / "slow.py"
    path.write_text(SLOW_PIPELINE)
    return str(path)


def slow_server(pipeline_file, *extra):
    return ServerProcess([pipeline_file, "--workers", "1", "--max-batch", "2", "--max-delay-ms", "1", *extra])


@pytest.fixture(scope="module")
def started(pipeline_file):
    with slow_server(pipeline_file, "--max-queue", "4", "--timeout-s", "1") as proc:
        yield proc


def wait_until_idle(url, timeout_s=15.0):
    """Until no batch is in flight: a request of an earlier test may still sleep in the pipeline."""
    deadline = time.monotonic() + timeout_s
    while metric(url, "minddata_serve_batches_in_flight") or metric(url, "minddata_serve_queue_depth"):
        assert time.monotonic() < deadline, "the server stayed busy"
        time.sleep(0.05)


@pytest.fixture
def server(started):
    wait_until_idle(started.url)
    return started


async def _post_many(url, bodies, timeout=30.0):
    async with httpx.AsyncClient(timeout=timeout) as client:
        return await asyncio.gather(*(client.post(f"{url}/v1/preprocess", content=b, headers=JPEG) for b in bodies))


def test_full_queue_answers_503_with_retry_after(server):
    answers = asyncio.run(_post_many(server.url, [SLOW] * 16))
    codes = sorted(a.status_code for a in answers)
    assert set(codes) <= {200, 503, 504}, codes
    rejected = [a for a in answers if a.status_code == 503]
    assert rejected, f"16 slow requests against a queue of 4 were all accepted: {codes}"
    assert all(a.headers.get("retry-after") == "1" and "queue is full" in a.json()["error"] for a in rejected)
    assert codes.count(200) >= 1


def test_every_503_is_timed_from_the_requests_arrival(server):
    count = metric(server.url, "minddata_serve_refusal_seconds_count")
    total = metric(server.url, "minddata_serve_refusal_seconds_sum")
    answers = asyncio.run(_post_many(server.url, [SLOW] * 16))
    refused = sum(a.status_code == 503 for a in answers)
    assert refused, "16 slow requests against a queue of 4 were all accepted"
    assert metric(server.url, "minddata_serve_refusal_seconds_count") - count == refused
    # From arrival to answer: more than nothing, and not the time of the requests that were served.
    spent = metric(server.url, "minddata_serve_refusal_seconds_sum") - total
    assert 0 < spent < refused * 0.2


@contextlib.contextmanager
def _queue_kept_full(server):
    """The queue kept full by STUCK requests (3 s each against a 1 s deadline) from another thread."""
    stop = threading.Event()

    def fill() -> None:
        for _ in range(10):
            if stop.is_set():
                return
            asyncio.run(_post_many(server.url, [STUCK] * 8))

    filler = threading.Thread(target=fill)
    filler.start()
    try:
        yield
    finally:
        stop.set()
        filler.join(timeout=60)


def _first_answer(sock: socket.socket) -> str:
    """The next whole answer read from ``sock`` (status line, headers and a body of its content-length)."""
    received = b""
    while True:
        head, _, body = received.partition(b"\r\n\r\n")
        if _:
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            if len(body) >= length:
                return received.decode("latin-1")
        chunk = sock.recv(4096)
        if not chunk:
            return received.decode("latin-1")
        received += chunk


def _refused_on_a_connection(server, content_length: int) -> tuple[socket.socket, str]:
    """A connection whose inference request (headers only, announcing ``content_length`` body bytes)
    got its 503 while the queue is full, and that answer. (A probe that lands while the queue has room
    waits for its body: it times out and is retried.)"""
    where = urlsplit(server.url)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        sock = socket.create_connection((where.hostname, where.port), timeout=0.5)
        sock.sendall(b"POST /v1/preprocess HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
                     b"Content-Length: %d\r\n\r\n" % content_length)
        try:
            answer = _first_answer(sock)
        except TimeoutError:
            sock.close()
            continue
        if answer.startswith("HTTP/1.1 503"):
            return sock, answer
        sock.close()
    raise AssertionError("no 503 without the body within 20 s")


def test_full_queue_refuses_before_reading_the_body(server):
    # A request announcing a 10 MB body gets its 503 without the body ever being sent.
    with _queue_kept_full(server):
        sock, answer = _refused_on_a_connection(server, 10_000_000)
        sock.close()
    assert "retry-after: 1" in answer.lower() and "queue is full" in answer


def test_a_refused_requests_connection_takes_the_next_request(server):
    # The body sent after the 503 is read and dropped; the connection then answers the next request.
    with _queue_kept_full(server):
        sock, answer = _refused_on_a_connection(server, 100)
    with sock:
        assert "connection: close" not in answer.lower()
        sock.settimeout(10)
        sock.sendall(b"x" * 100 + b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        after = _first_answer(sock)
    assert after.startswith("HTTP/1.1 200"), after


def test_past_deadline_is_504(server):
    (answer,) = asyncio.run(_post_many(server.url, [STUCK]))
    assert answer.status_code == 504
    assert "deadline" in answer.json()["error"]


def test_client_that_leaves_is_cancelled(server):
    before = metric(server.url, "minddata_serve_cancelled_total", reason="client left")
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/v1/preprocess", content=STUCK, headers=JPEG, timeout=0.3)
    deadline = time.monotonic() + 10
    while metric(server.url, "minddata_serve_cancelled_total", reason="client left") == before:
        assert time.monotonic() < deadline, "the server never noticed that the client left"
        time.sleep(0.05)
    wait_until_idle(server.url)  # the row already in the pipeline finishes; its result is dropped
    assert httpx.post(f"{server.url}/v1/preprocess", content=QUICK, headers=JPEG, timeout=30).status_code == 200


def test_every_place_in_the_queue_is_given_back(server):
    # A request takes a place once its body is in; it must give it back on every way out: served,
    # refused at the door or by the batcher, 415 and 422 before it is queued, its client gone.
    post = functools.partial(httpx.post, f"{server.url}/v1/preprocess", timeout=30)
    # with the queue empty (a burst would refuse them at the door, before they take a place)
    assert post(content=b"GIF89a", headers={"Content-Type": "image/gif"}).status_code == 415
    assert post(content=b"not an image", headers=JPEG).status_code == 422
    codes = {a.status_code for a in asyncio.run(_post_many(server.url, [SLOW] * 16))}
    assert codes <= {200, 503, 504} and 503 in codes
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/v1/preprocess", content=STUCK, headers=JPEG, timeout=0.3)
    deadline = time.monotonic() + 10
    while metric(server.url, "minddata_serve_queue_places_held"):
        assert time.monotonic() < deadline, "places in the queue were never given back"
        time.sleep(0.05)
    wait_until_idle(server.url)
    assert httpx.post(f"{server.url}/v1/preprocess", content=QUICK, headers=JPEG, timeout=30).status_code == 200


def test_a_pipelined_request_left_behind_gives_its_place_back(server):
    # The second request, pipelined behind a slow first one, has its body in (a place taken) but never
    # starts once the client closes the connection: its place must come back, or every such client
    # would shrink the queue for good.
    where = urlsplit(server.url)
    request = (b"POST /v1/preprocess HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
               b"Content-Length: %d\r\n\r\n" % len(STUCK)) + STUCK
    with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
        sock.sendall(request + request)
        deadline = time.monotonic() + 10
        while metric(server.url, "minddata_serve_queue_places_held") < 1:
            assert time.monotonic() < deadline, "the pipelined request never took its place"
            time.sleep(0.05)
    deadline = time.monotonic() + 10
    while metric(server.url, "minddata_serve_queue_places_held"):
        assert time.monotonic() < deadline, "the place of a request that never started was not given back"
        time.sleep(0.05)
    wait_until_idle(server.url)


def test_sigterm_drains_in_flight_requests_and_leaves_nothing(pipeline_file):
    proc = slow_server(pipeline_file, "--timeout-s", "20").start()
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
        sent = asyncio.run(_sigterm_while_busy(proc))
        code = proc.stop(timeout_s=30)
    finally:
        proc.kill()
    assert code == 0, "".join(proc.stderr)
    assert [a.status_code for a in sent] == [200, 200, 200]
    assert "stopped (drained)" in "".join(proc.stdout)
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    if os.path.isdir("/dev/shm"):
        assert not [n for n in os.listdir("/dev/shm") if n.startswith(f"minddata_{proc.pid}_")]


async def _sigterm_while_busy(proc):
    async with httpx.AsyncClient(timeout=30) as client:
        tasks = [asyncio.ensure_future(client.post(f"{proc.url}/v1/preprocess", content=SECOND, headers=JPEG))
                 for _ in range(3)]
        deadline = time.monotonic() + 20
        # SIGTERM only once all three are accepted (each then sleeps 1 s in the pipeline).
        while metric(proc.url, "minddata_serve_requests_in_progress") < 3:
            assert time.monotonic() < deadline, "the three requests never reached the server"
            await asyncio.sleep(0.02)
        proc.proc.terminate()
        return await asyncio.gather(*tasks)
