"""Flowers102Dataset over its real layout: JPEGs, segmim masks, MATLAB v5 label and split files."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

LABELS = [77, 77, 1, 102, 5, 77, 1, 5]  # the class of images 1..8, as imagelabels.mat counts (from 1)
SPLITS = {"trnid": [1, 4, 5, 8], "valid": [2, 3], "tstid": [6, 7]}


@pytest.fixture
def flowers(tmp_path):
    (tmp_path / "jpg").mkdir()
    (tmp_path / "segmim").mkdir()
    for k in range(1, len(LABELS) + 1):
        (tmp_path / "jpg" / f"image_{k:05d}.jpg").write_bytes(make_jpeg(20 + k, 12, seed=k))
        (tmp_path / "segmim" / f"segmim_{k:05d}.jpg").write_bytes(make_jpeg(20 + k, 12, seed=100 + k))
    scipy.io.savemat(str(tmp_path / "imagelabels.mat"), {"labels": np.array([LABELS], dtype=np.uint8)})
    scipy.io.savemat(str(tmp_path / "setid.mat"), {k: np.array([v], dtype=np.uint16) for k, v in SPLITS.items()})
    return tmp_path


def test_flowers_classification_order_and_labels(flowers):
    got = rows(md.Flowers102Dataset(str(flowers), usage="train", shuffle=False))
    assert [int(r["label"]) for r in got] == [76, 101, 4, 4] and got[0]["label"].dtype == np.uint32
    assert got[1]["image"].tobytes() == (flowers / "jpg" / "image_00004.jpg").read_bytes()
    sizes = {u: md.Flowers102Dataset(str(flowers), usage=u).get_dataset_size() for u in ("train", "valid", "test", "all")}
    assert sizes == {"train": 4, "valid": 2, "test": 2, "all": 8}


def test_flowers_segmentation_decodes_both_images(flowers):
    ds = md.Flowers102Dataset(str(flowers), task="Segmentation", usage="test", decode=True, shuffle=False)
    assert ds.get_col_names() == ["image", "segmentation", "label"]
    got = rows(ds)
    assert got[0]["image"].shape == got[0]["segmentation"].shape == (12, 26, 3)
    assert not np.array_equal(got[0]["image"], got[0]["segmentation"])
    assert [int(r["label"]) for r in got] == [76, 0]


def test_flowers_shards_and_resume(flowers):
    assert_shards_partition(lambda **kw: md.Flowers102Dataset(str(flowers), task="Segmentation", shuffle=False, **kw), 4)
    assert_resumes_exactly(lambda w: md.Flowers102Dataset(str(flowers), decode=True, num_parallel_workers=w))


def test_flowers_errors_name_the_file(flowers):
    with pytest.raises(ArgumentError, match="`task` must be 'Classification' or 'Segmentation'"):
        md.Flowers102Dataset(str(flowers), task="Detection")
    scipy.io.savemat(str(flowers / "setid.mat"), {"trnid": np.array([[1, 9]])})
    with pytest.raises(DataFormatError, match=r"setid.mat's trnid names image 9"):
        md.Flowers102Dataset(str(flowers), usage="train").get_dataset_size()
    with pytest.raises(DataFormatError, match=r"setid.mat has no \['valid'\] variable"):
        md.Flowers102Dataset(str(flowers), usage="valid").get_dataset_size()
    (flowers / "imagelabels.mat").unlink()
    with pytest.raises(DataFormatError, match=r"imagelabels.mat is missing"):
        md.Flowers102Dataset(str(flowers)).get_dataset_size()
