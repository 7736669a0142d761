"""LFWDataset over LFW's layout: person folders of JPEGs, lfw-names.txt and the people/pairs views."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

PEOPLE = {"Aaron_Peirsol": 2, "Abel_Pacheco": 1, "Zico": 3}


@pytest.fixture
def lfw(tmp_path):
    seed = 0
    for image_set in ("lfw_funneled", "lfw"):
        for name, count in PEOPLE.items():
            (tmp_path / image_set / name).mkdir(parents=True)
            for k in range(1, count + 1):
                seed += 1
                (tmp_path / image_set / name / f"{name}_{k:04d}.jpg").write_bytes(make_jpeg(25, 20 + k, seed=seed))
    (tmp_path / "lfw-names.txt").write_text("".join(f"{n}\t{c}\n" for n, c in PEOPLE.items()))
    (tmp_path / "peopleDevTrain.txt").write_text("2\nAaron_Peirsol\t2\nZico\t3\n")
    (tmp_path / "peopleDevTest.txt").write_text("1\nAbel_Pacheco\t1\n")
    (tmp_path / "people.txt").write_text("2\n1\nZico\t3\n2\nAaron_Peirsol\t2\nAbel_Pacheco\t1\n")
    (tmp_path / "pairsDevTrain.txt").write_text("1\nZico\t1\t3\nAaron_Peirsol\t2\tAbel_Pacheco\t1\n")
    (tmp_path / "pairsDevTest.txt").write_text("1\nAaron_Peirsol\t1\t2\nZico\t2\tAbel_Pacheco\t1\n")
    return tmp_path


def test_people_labels_come_from_the_names_list(lfw):
    got = rows(md.LFWDataset(str(lfw), shuffle=False))
    assert [int(r["label"]) for r in got] == [0, 0, 2, 2, 2, 1] and got[0]["label"].dtype == np.uint32
    assert got[4]["image"].tobytes() == (lfw / "lfw_funneled/Zico/Zico_0003.jpg").read_bytes()
    assert md.LFWDataset(str(lfw), usage="10fold").get_dataset_size() == 6
    original = rows(md.LFWDataset(str(lfw), usage="test", image_set="original", decode=True))
    assert original[0]["image"].shape == (21, 25, 3)


def test_pairs(lfw):
    got = rows(md.LFWDataset(str(lfw), task="pairs", usage="train", shuffle=False))
    assert [int(r["label"]) for r in got] == [1, 0]
    assert got[0]["image1"].tobytes() == (lfw / "lfw_funneled/Zico/Zico_0001.jpg").read_bytes()
    assert got[0]["image2"].tobytes() == (lfw / "lfw_funneled/Zico/Zico_0003.jpg").read_bytes()
    assert got[1]["image2"].tobytes() == (lfw / "lfw_funneled/Abel_Pacheco/Abel_Pacheco_0001.jpg").read_bytes()


def test_shards_and_resume(lfw):
    assert_shards_partition(lambda **kw: md.LFWDataset(str(lfw), shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.LFWDataset(str(lfw), task="pairs", decode=True, num_parallel_workers=w))


def test_errors(lfw):
    with pytest.raises(ArgumentError, match="`image_set` must be one of"):
        md.LFWDataset(str(lfw), image_set="aligned")
    (lfw / "pairsDevTest.txt").write_text("2\nZico\t1\t3\n")
    with pytest.raises(DataFormatError, match=r"pairsDevTest.txt is not an LFW pairs file"):
        md.LFWDataset(str(lfw), task="pairs", usage="test").get_dataset_size()
    (lfw / "pairs.txt").unlink(missing_ok=True)
    with pytest.raises(DataFormatError, match=r"pairs.txt is missing"):
        md.LFWDataset(str(lfw), task="pairs", usage="10fold").get_dataset_size()
