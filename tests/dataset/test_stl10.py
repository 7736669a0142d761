"""STL10Dataset over binary files in STL-10's layout: images channel by channel, column-major."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError


def _write(folder, split, n, seed, labelled=True):
    rng = np.random.default_rng(seed)
    hwc = rng.integers(0, 256, size=(n, 96, 96, 3), dtype=np.uint8)
    # on disk: per image, channel planes, each stored column by column (Fortran order of H x W)
    (folder / f"{split}_X.bin").write_bytes(np.ascontiguousarray(hwc.transpose(0, 3, 2, 1)).tobytes())
    labels = rng.integers(1, 11, size=n, dtype=np.uint8)
    if labelled:
        (folder / f"{split}_y.bin").write_bytes(labels.tobytes())
    return hwc, labels


@pytest.fixture
def stl10(tmp_path):
    return tmp_path, {"train": _write(tmp_path, "train", 3, 0), "test": _write(tmp_path, "test", 2, 1),
                      "unlabeled": _write(tmp_path, "unlabeled", 3, 2, labelled=False)}


def test_images_and_labels(stl10):
    folder, data = stl10
    got = rows(md.STL10Dataset(str(folder), usage="train", shuffle=False))
    hwc, labels = data["train"]
    assert got[0]["image"].shape == (96, 96, 3) and got[0]["image"].dtype == np.uint8
    assert np.array_equal(np.stack([r["image"] for r in got]), hwc)
    assert got[0]["label"].dtype == np.int32 and [int(r["label"]) for r in got] == (labels.astype(int) - 1).tolist()


def test_unlabeled_rows_have_label_minus_one(stl10):
    folder, _ = stl10
    assert [int(r["label"]) for r in rows(md.STL10Dataset(str(folder), usage="unlabeled"))] == [-1] * 3


def test_usages(stl10):
    folder, _ = stl10
    sizes = {u: md.STL10Dataset(str(folder), usage=u).get_dataset_size()
             for u in ("train", "test", "unlabeled", "train+unlabeled", "all")}
    assert sizes == {"train": 3, "test": 2, "unlabeled": 3, "train+unlabeled": 6, "all": 8}
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.STL10Dataset(str(folder), usage="valid")


def test_shards_and_resume(stl10):
    folder, _ = stl10
    assert_shards_partition(lambda **kw: md.STL10Dataset(str(folder), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.STL10Dataset(str(folder), usage="train+unlabeled", num_parallel_workers=w))


def test_missing_and_truncated_files_are_named(stl10):
    folder, _ = stl10
    (folder / "test_X.bin").write_bytes((folder / "test_X.bin").read_bytes()[:-5])
    with pytest.raises(DataFormatError, match="test_X.bin is truncated"):
        md.STL10Dataset(str(folder), usage="test").get_dataset_size()
    (folder / "train_y.bin").unlink()
    with pytest.raises(DataFormatError, match=r"train_y.bin is missing.*stl10_binary"):
        md.STL10Dataset(str(folder), usage="train").get_dataset_size()
    with pytest.raises(ArgumentError, match="`dataset_dir` must be an existing folder"):
        md.STL10Dataset(str(folder / "nowhere"))
