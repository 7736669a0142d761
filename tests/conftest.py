"""Shared fixtures: settings reset per test, and real image files made with Pillow."""

from __future__ import annotations

import pytest
from peers import mindspore_python
from testkit import make_jpeg

import minddata as md


@pytest.fixture(autouse=True)
def _fresh_config():
    md.config.load_defaults()
    yield
    md.config.load_defaults()


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




@pytest.fixture(scope="session")
def mindspore_python_path() -> str:
    """A Python with MindSpore 2.10 for the differential suites (tests/peers.py finds or makes it)."""
    python, why = mindspore_python()
    if python is None:
        pytest.skip(why)
    return python
