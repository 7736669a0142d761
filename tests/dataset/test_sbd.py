"""SBDataset over SBD's layout: img/ JPEGs, cls/ MATLAB v5 GTcls structs (sparse boundary maps)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError, RowError

IDS = {"train": ["2008_000002", "2008_000003", "2008_000007"], "val": ["2008_000009"],
       "train_noval": ["2008_000002"]}


def _gtcls(seed, height=6, width=9):
    rng = np.random.default_rng(seed)
    segmentation = rng.integers(0, 21, (height, width)).astype(np.uint8)
    boundaries = np.empty((_CATS := 20, 1), dtype=object)
    for c in range(_CATS):
        boundaries[c, 0] = scipy.sparse.csc_matrix((rng.random((height, width)) > 0.8).astype(np.uint8))
    gt = np.empty((1, 1), dtype=[("Boundaries", object), ("Segmentation", object), ("CategoriesPresent", object)])
    gt[0, 0] = (boundaries, segmentation, np.array([[1, 15]], dtype=np.uint8))
    return gt, segmentation, boundaries


@pytest.fixture
def sbd(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "cls").mkdir()
    truth = {}
    for k, image_id in enumerate(dict.fromkeys(i for ids in IDS.values() for i in ids)):
        (tmp_path / "img" / f"{image_id}.jpg").write_bytes(make_jpeg(9, 6, seed=k))
        gt, segmentation, boundaries = _gtcls(k)
        scipy.io.savemat(str(tmp_path / "cls" / f"{image_id}.mat"), {"GTcls": gt})
        truth[image_id] = (segmentation, np.stack([b[0].toarray() for b in boundaries]))
    for name, ids in IDS.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(ids) + "\n")
    return tmp_path, truth


def test_boundaries_are_twenty_maps(sbd):
    folder, truth = sbd
    got = rows(md.SBDataset(str(folder), usage="train", shuffle=False))
    assert got[0]["task"].shape == (20, 6, 9) and got[0]["task"].dtype == np.uint8
    assert np.array_equal(got[1]["task"], truth["2008_000003"][1])
    assert got[0]["image"].tobytes() == (folder / "img/2008_000002.jpg").read_bytes()


def test_segmentation_and_decode(sbd):
    folder, truth = sbd
    got = rows(md.SBDataset(str(folder), task="Segmentation", usage="val", decode=True, shuffle=False))
    assert np.array_equal(got[0]["task"], truth["2008_000009"][0]) and got[0]["image"].shape == (6, 9, 3)
    assert md.SBDataset(str(folder)).get_dataset_size() == 4
    assert md.SBDataset(str(folder), usage="train_noval").get_dataset_size() == 1


def test_shards_and_resume(sbd):
    folder, _ = sbd
    assert_shards_partition(lambda **kw: md.SBDataset(str(folder), task="Segmentation", shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.SBDataset(str(folder), num_parallel_workers=w))


def test_errors(sbd):
    folder, _ = sbd
    with pytest.raises(ArgumentError, match="`task` must be 'Boundaries' or 'Segmentation'"):
        md.SBDataset(str(folder), task="Detection")
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.SBDataset(str(folder), usage="test")
    scipy.io.savemat(str(folder / "cls/2008_000009.mat"), {"GTinst": np.zeros(2)})
    with pytest.raises(RowError, match=r"row 0: .*2008_000009.mat has no \['GTcls'\]"):
        rows(md.SBDataset(str(folder), usage="val"))
    (folder / "val.txt").unlink()
    with pytest.raises(DataFormatError, match="val.txt is missing"):
        md.SBDataset(str(folder), usage="val").get_dataset_size()
