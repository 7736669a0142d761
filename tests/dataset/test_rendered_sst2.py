"""RenderedSST2Dataset over its layout: <train|valid|test>/<negative|positive>/*.png."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import random_png

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

LAYOUT = {"train": {"negative": 2, "positive": 1}, "valid": {"negative": 1, "positive": 1}, "test": {"positive": 1}}


@pytest.fixture
def sst2(tmp_path):
    seed = 0
    for split, classes in LAYOUT.items():
        for name, count in classes.items():
            (tmp_path / split / name).mkdir(parents=True)
            for _ in range(count):
                seed += 1
                (tmp_path / split / name / f"{seed:05d}.png").write_bytes(random_png(8, 12, seed))
    return tmp_path


def test_usage_and_labels(sst2):
    train = rows(md.RenderedSST2Dataset(str(sst2), usage="train", shuffle=False))
    assert [int(r["label"]) for r in train] == [0, 0, 1] and train[0]["label"].dtype == np.uint32
    assert train[2]["image"].tobytes() == (sst2 / "train/positive/00003.png").read_bytes()
    assert [int(r["label"]) for r in rows(md.RenderedSST2Dataset(str(sst2), usage="val", shuffle=False))] == [0, 1]
    every = rows(md.RenderedSST2Dataset(str(sst2), shuffle=False, decode=True))
    assert [int(r["label"]) for r in every] == [1, 0, 0, 1, 0, 1] and every[0]["image"].shape == (8, 12, 3)


def test_shards_and_resume(sst2):
    assert_shards_partition(lambda **kw: md.RenderedSST2Dataset(str(sst2), shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.RenderedSST2Dataset(str(sst2), num_parallel_workers=w))


def test_errors(sst2, tmp_path):
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.RenderedSST2Dataset(str(sst2), usage="valid")
    import shutil

    shutil.rmtree(sst2 / "test")
    with pytest.raises(DataFormatError, match=r"no .png images for usage='test'"):
        md.RenderedSST2Dataset(str(sst2), usage="test").get_dataset_size()
