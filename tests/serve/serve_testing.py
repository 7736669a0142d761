"""Helpers shared by the service's tests: images the service must accept or reject, and metric reads."""

from __future__ import annotations

import re

import httpx
from testkit import make_jpeg

__all__ = ["huge_jpeg", "make_jpeg", "metric", "truncated_jpeg"]


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
    """One sample of ``GET /metrics`` (0 when absent), e.g. ``metric(url, "minddata_serve_model_runs_total")``."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
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
