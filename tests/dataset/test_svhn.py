"""SVHNDataset over MATLAB v5 files written as the real ones are: X (32, 32, 3, N) uint8, y (N, 1)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io as scipy_io
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError


def _write(folder, split, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(32, 32, 3, n), dtype=np.uint8)
    y = rng.integers(1, 11, size=(n, 1)).astype(np.uint8)
    y[0, 0] = 10  # the digit 0
    scipy_io.savemat(str(folder / f"{split}_32x32.mat"), {"X": x, "y": y})
    return x, y


@pytest.fixture
def svhn(tmp_path):
    return tmp_path, {"train": _write(tmp_path, "train", 4, 0), "test": _write(tmp_path, "test", 2, 1),
                      "extra": _write(tmp_path, "extra", 2, 2)}


def test_images_are_hwc_and_ten_means_zero(svhn):
    folder, data = svhn
    got = rows(md.SVHNDataset(str(folder), usage="train", shuffle=False))
    x, y = data["train"]
    assert [r["image"].shape for r in got] == [(32, 32, 3)] * 4 and got[0]["image"].dtype == np.uint8
    assert np.array_equal(got[2]["image"], x[..., 2])
    assert got[0]["label"].dtype == np.uint32
    assert [int(r["label"]) for r in got] == [0] + [int(v) % 10 for v in y[1:, 0]]


def test_usages(svhn):
    folder, _ = svhn
    sizes = {u: md.SVHNDataset(str(folder), usage=u).get_dataset_size() for u in ("train", "test", "extra", "all")}
    assert sizes == {"train": 4, "test": 2, "extra": 2, "all": 8}
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.SVHNDataset(str(folder), usage="valid")


def test_shards_and_resume(svhn):
    folder, _ = svhn
    assert_shards_partition(lambda **kw: md.SVHNDataset(str(folder), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.SVHNDataset(str(folder), num_parallel_workers=w))


def test_missing_and_garbled_files_are_named(svhn):
    folder, _ = svhn
    (folder / "test_32x32.mat").write_bytes(b"MATLAB 5.0 MAT-file, garbled" + bytes(20))
    with pytest.raises(DataFormatError, match="test_32x32.mat is not a readable MATLAB v5 file"):
        md.SVHNDataset(str(folder), usage="test").get_dataset_size()
    (folder / "extra_32x32.mat").unlink()
    with pytest.raises(DataFormatError, match=r"extra_32x32.mat is missing.*cropped digits"):
        md.SVHNDataset(str(folder), usage="extra").get_dataset_size()
    scipy_io.savemat(str(folder / "extra_32x32.mat"), {"images": np.zeros(3)})
    with pytest.raises(DataFormatError, match=r"has no \['X', 'y'\] variable\(s\) \(found \['images'\]\)"):
        md.SVHNDataset(str(folder), usage="extra").get_dataset_size()
