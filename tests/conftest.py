"""Shared fixtures: settings reset per test, and real image files made with Pillow."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from PIL import Image

import minddata as md


@pytest.fixture(autouse=True)
def _fresh_config():
    md.config.load_defaults()
    yield
    md.config.load_defaults()


def make_jpeg(width: int, height: int, seed: int, quality: int = 90) -> bytes:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 255 // max(width - 1, 1)), (y * 255 // max(height - 1, 1)), (x + y) % 256], axis=-1)
    noise = rng.integers(0, 40, size=(height, width, 3))
    pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


@pytest.fixture
def image_folder(tmp_path):
    """``<tmp>/images/{cat,dog,emu}/NN.jpg``: 3 classes, 4 real JPEGs each (12 rows)."""
    root = tmp_path / "images"
    for c, name in enumerate(["cat", "dog", "emu"]):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(4):
            (folder / f"{i:02d}.jpg").write_bytes(make_jpeg(24 + 4 * i, 16 + 2 * c, seed=10 * c + i))
    (root / "README.txt").write_text("not an image folder entry")
    return root


def column(dataset, name=None, epochs=1):
    """All values of one column (the first by default) as Python scalars/lists, one epoch."""
    out = []
    it = dataset.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    key = name or dataset.get_col_names()[0]
    for _ in range(epochs):
        out.extend(row[key].tolist() for row in it)
    return out


def shm_segments() -> set[str]:
    """This process's shared-memory segments (the parent owns its workers' segments): other processes
    on the machine, other test runs included, have their own."""
    if not os.path.isdir("/dev/shm"):
        return set()
    mine = f"minddata_{os.getpid()}_"
    return {n for n in os.listdir("/dev/shm") if n.startswith(mine)}
