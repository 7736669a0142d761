"""SemeionDataset over semeion.data written as distributed: 256 pixels as 0.0000/1.0000, then 10 label digits."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import DataFormatError


@pytest.fixture
def semeion(tmp_path):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 2, (6, 256))
    labels = [3, 0, 9, 3, 5, 7]
    lines = [" ".join(f"{p:.4f}" for p in row) + " " + " ".join("1" if d == y else "0" for d in range(10)) + " \n"
             for row, y in zip(pixels, labels)]
    (tmp_path / "semeion.data").write_text("".join(lines))
    return tmp_path, pixels, labels


def test_pixels_and_labels(semeion):
    folder, pixels, labels = semeion
    got = rows(md.SemeionDataset(str(folder), shuffle=False))
    assert got[0]["image"].shape == (16, 16) and got[0]["image"].dtype == np.uint8
    assert np.array_equal(np.stack([r["image"] for r in got]), pixels.reshape(-1, 16, 16))
    assert [int(r["label"]) for r in got] == labels and got[0]["label"].dtype == np.uint32


def test_shards_and_resume(semeion):
    folder, _, _ = semeion
    assert_shards_partition(lambda **kw: md.SemeionDataset(str(folder), shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.SemeionDataset(str(folder), num_parallel_workers=w))


def test_errors_name_the_file_and_line(semeion, tmp_path):
    folder, _, _ = semeion
    (folder / "semeion.data").write_text("1.0000 0.0000 1 0\n")
    with pytest.raises(DataFormatError, match=r"semeion.data line 1: 4 values, expected 256 pixels"):
        md.SemeionDataset(str(folder)).get_dataset_size()
    (folder / "semeion.data").unlink()
    with pytest.raises(DataFormatError, match=r"semeion.data is missing"):
        md.SemeionDataset(str(folder)).get_dataset_size()
