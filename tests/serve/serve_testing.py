"""Helpers shared by the service's tests: images the service must accept or reject, and metric reads."""

from __future__ import annotations

import json
import re
import time

import httpx
import psutil
from testkit import make_jpeg

__all__ = ["HOSTILE_REQUESTS", "assert_still_healthy", "bomb_png", "huge_jpeg", "make_jpeg", "metric", "rss",
           "truncated_jpeg"]


def truncated_jpeg(seed: int = 99) -> bytes:
    """A real JPEG cut in half: its header is fine, its scan data ends early."""
    data = make_jpeg(64, 48, seed=seed)
    return data[: len(data) // 2]


def huge_jpeg() -> bytes:
    """A small JPEG whose frame header claims 40000x40000 pixels: a decompression bomb's header,
    without the memory."""
    data = bytearray(make_jpeg(32, 32, seed=5))
    sof = data.index(b"\xff\xc0")  # baseline frame header: marker, length(2), precision(1), height(2), width(2)
    data[sof + 5 : sof + 9] = (40000).to_bytes(2, "big") * 2
    return bytes(data)


def metric(url: str, name: str, **labels: str) -> float:
    """One sample of ``GET /metrics`` (0 when absent), e.g. ``metric(url, "minddata_serve_model_runs_total")``.
    Asked again for up to 5 s while the server answers 503 (its connection cap still counts connections
    the test has just closed)."""
    deadline = time.monotonic() + 5
    while True:
        answer = httpx.get(f"{url}/metrics", timeout=10)
        if answer.status_code != 503 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert answer.status_code == 200, f"GET /metrics answered {answer.status_code}: {answer.text[:200]}"
    text = answer.text
    want = {k: v for k, v in labels.items()}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        found = re.match(r"([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$", line)
        if not found or found.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', found.group(3) or ""))
        if all(have.get(k) == v for k, v in want.items()):
            return float(found.group(4))
    return 0.0


def bomb_png(side: int = 13000) -> bytes:
    """A 1-bit PNG of side x side pixels, all black: about 20 KB, and over half a gigabyte once
    decoded to RGB."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("1", (side, side)).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def rss(pid: int) -> int:
    """The resident memory of the process ``pid``, in bytes."""
    return psutil.Process(pid).memory_info().rss


def assert_still_healthy(url: str, pid: int, rss_before: int, max_growth_mb: float = 300.0) -> None:
    """``/v2/health/live`` answers within a second and the server's memory grew by less than
    ``max_growth_mb`` since ``rss_before``."""
    start = time.monotonic()
    answer = httpx.get(f"{url}/v2/health/live", timeout=10)
    took = time.monotonic() - start
    assert answer.status_code == 200 and took < 1.0, f"health answered {answer.status_code} in {took:.2f} s"
    grown = (rss(pid) - rss_before) / (1 << 20)
    assert grown < max_growth_mb, f"the server's memory grew by {grown:.0f} MB"


def _uint8(shape: list, data: list) -> bytes:
    return json.dumps({"inputs": [{"name": "image", "shape": shape, "datatype": "UINT8", "data": data}]}).encode()


def _bytes_json(shape: list, data: object) -> bytes:
    return json.dumps({"inputs": [{"name": "image", "shape": shape, "datatype": "BYTES", "data": data}]}).encode()


def _deep_data(depth: int) -> bytes:
    """A BYTES request whose one element sits ``depth`` lists deep (written as text: too deep for
    ``json.dumps`` under a test runner's stack)."""
    data = "[" * depth + '"aGk="' + "]" * depth
    return ('{"inputs":[{"name":"image","shape":[1],"datatype":"BYTES","data":' + data + "}]}").encode()


def _binary(images: list[bytes], declared: int | None = None) -> tuple[bytes, dict[str, str]]:
    """A binary BYTES request for ``images`` whose shape and binary_data_size cover the first
    ``declared`` of them (all by default)."""
    elements = [len(b).to_bytes(4, "little") + b for b in images]
    declared = len(images) if declared is None else declared
    header = json.dumps({"inputs": [{"name": "image", "shape": [declared], "datatype": "BYTES",
                                     "parameters": {"binary_data_size": len(b"".join(elements[:declared]))}}]}).encode()
    return header + b"".join(elements), {"Inference-Header-Content-Length": str(len(header)),
                                         "Content-Type": "application/octet-stream"}


def _hostile() -> dict[str, tuple[bytes, dict[str, str], tuple[int, ...]]]:
    """name: (infer request body, headers, the statuses it may get) for requests that once took the
    server down or got a wrong answer (issue 32). Every answer is JSON ``{"error": ...}``."""
    jpeg = make_jpeg(40, 30, seed=7)
    one, one_headers = _binary([jpeg])
    short, short_headers = _binary([jpeg, jpeg], declared=1)
    cases = {
        "rows of empty images": (_uint8([100000000000, 0], []), {}, (413,)),
        "rows whose product wraps to 0": (_uint8([2**62, 4], []), {}, (413,)),
        "BYTES shape whose product wraps to 1": (_bytes_json([274177, 67280421310721], ["aGk="]), {}, (413,)),
        "100000-deep JSON": (b"[" * 100000 + b"]" * 100000, {}, (400,)),
        "980-deep data": (_deep_data(980), {}, (400,)),
        "200-deep data": (_deep_data(200), {}, (400,)),
        "5000-digit shape": (b'{"inputs":[{"name":"image","shape":[' + b"9" * 5000
                             + b'],"datatype":"BYTES","data":[]}]}', {}, (400,)),
        "bytes after the binary tensors": (one + b"junk", one_headers, (400,)),
        "binary_data_size short of the elements sent": (short, short_headers, (400,)),
        "header length 1_08": (one, {**one_headers, "Inference-Header-Content-Length": "1_08"}, (400,)),
        "header length +N": (
            one, {**one_headers, "Inference-Header-Content-Length": "+" + one_headers["Inference-Header-Content-Length"]},
            (400,)),
    }
    return cases


HOSTILE_REQUESTS = _hostile()
