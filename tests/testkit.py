"""Helpers shared by the test modules (import them as ``from testkit import ...``): real JPEG bytes,
a column of a dataset, and this process's shared-memory segments. Fixtures stay in conftest.py."""

from __future__ import annotations

import io
import os
import socket

import numpy as np
from PIL import Image


def make_jpeg(width: int, height: int, seed: int, quality: int = 90) -> bytes:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 255 // max(width - 1, 1)), (y * 255 // max(height - 1, 1)), (x + y) % 256], axis=-1)
    noise = rng.integers(0, 40, size=(height, width, 3))
    pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def column(dataset, name=None, epochs=1):
    """All values of one column (the first by default) as Python scalars/lists, one epoch."""
    out = []
    it = dataset.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    key = name or dataset.get_col_names()[0]
    for _ in range(epochs):
        out.extend(row[key].tolist() for row in it)
    return out


def shm_segments() -> set[str]:
    """Shared-memory segments this test process owns (``minddata_<our pid>_...``).

    Only our own: other processes on the machine (another test run, a pipeline in a container sharing
    /dev/shm) have segments of their own that no test here may count.
    """
    if not os.path.isdir("/dev/shm"):
        return set()
    own = f"minddata_{os.getpid()}_"
    return {n for n in os.listdir("/dev/shm") if n.startswith(own)}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server the test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gpu_required() -> bool:
    """``MINDDATA_REQUIRE_GPU`` set to anything but "" or "0" (bench/device_check.sh sets it): a GPU test
    that finds no GPU fails instead of skipping (the same rule as bench/require_gpu.py)."""
    return os.environ.get("MINDDATA_REQUIRE_GPU", "") not in ("", "0")
