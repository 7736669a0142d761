"""LSUNDataset over LSUN's exported layout: <class>_train/, <class>_val/ and test/ folders of JPEGs."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

FOLDERS = {"bedroom_train": 2, "bedroom_val": 1, "tower_train": 2, "tower_val": 1, "kitchen_val": 2, "test": 2}


@pytest.fixture
def lsun(tmp_path):
    for f, (name, count) in enumerate(FOLDERS.items()):
        (tmp_path / name).mkdir()
        for k in range(count):
            (tmp_path / name / f"{k:040x}.webp.jpg").write_bytes(make_jpeg(18, 12 + f, seed=10 * f + k))
    return tmp_path


def test_train_labels_follow_the_sorted_classes(lsun):
    got = rows(md.LSUNDataset(str(lsun), usage="train", shuffle=False))
    assert [int(r["label"]) for r in got] == [0, 0, 1, 1] and got[0]["label"].dtype == np.uint32
    assert got[2]["image"].tobytes() == (lsun / "tower_train" / f"{0:040x}.webp.jpg").read_bytes()


def test_a_class_keeps_its_label_in_both_splits(lsun):
    got = rows(md.LSUNDataset(str(lsun), shuffle=False))
    # bedroom 0 (train, val), kitchen 1 (val only), tower 2 (train, val)
    assert [int(r["label"]) for r in got] == [0, 0, 0, 1, 1, 2, 2, 2]


def test_classes_usage_and_decode(lsun):
    assert md.LSUNDataset(str(lsun), usage="valid", classes="kitchen").get_dataset_size() == 2
    assert md.LSUNDataset(str(lsun), usage="valid", classes=["bedroom", "tower"]).get_dataset_size() == 2
    test = rows(md.LSUNDataset(str(lsun), usage="test", decode=True, shuffle=False))
    assert [int(r["label"]) for r in test] == [0, 0] and test[0]["image"].shape == (17, 18, 3)


def test_shards_and_resume(lsun):
    assert_shards_partition(lambda **kw: md.LSUNDataset(str(lsun), shuffle=False, **kw), 4)
    assert_resumes_exactly(lambda w: md.LSUNDataset(str(lsun), decode=True, num_parallel_workers=w))


def test_errors(lsun, tmp_path):
    with pytest.raises(ArgumentError, match="`classes` must be names from"):
        md.LSUNDataset(str(lsun), classes=["office"])
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.LSUNDataset(str(lsun), usage="val")
    with pytest.raises(DataFormatError, match=r"no images for usage='train'.*LMDB"):
        md.LSUNDataset(str(lsun), usage="train", classes=["kitchen"]).get_dataset_size()
