"""Places365Dataset over its real layout: categories_places365.txt, the split lists and image folders."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

TRAIN = [("/a/airfield/00000001.jpg", 0), ("/a/airfield/00000002.jpg", 0), ("/b/bakery/shop/00000001.jpg", 2),
         ("/a/alley/00000001.jpg", 1)]
VAL = [("Places365_val_00000001.jpg", 2), ("Places365_val_00000002.jpg", 0)]


@pytest.fixture
def places(tmp_path):
    (tmp_path / "categories_places365.txt").write_text("/a/airfield 0\n/a/alley 1\n/b/bakery/shop 2\n")
    for folder, entries, small in (("data_256_standard", TRAIN, True), ("data_large_standard", TRAIN[:2], False),
                                   ("val_256", VAL, True)):
        for k, (path, _) in enumerate(entries):
            target = tmp_path / folder / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(make_jpeg(16 if small else 40, 16 if small else 30, seed=k))
    (tmp_path / "places365_train_standard.txt").write_text("".join(f"{p} {y}\n" for p, y in TRAIN))
    (tmp_path / "places365_val.txt").write_text("".join(f"{p} {y}\n" for p, y in VAL))
    return tmp_path


def test_rows_labels_and_small_or_large_images(places):
    got = rows(md.Places365Dataset(str(places), shuffle=False))
    assert [int(r["label"]) for r in got] == [0, 0, 2, 1] and got[0]["label"].dtype == np.uint32
    assert got[2]["image"].tobytes() == (places / "data_256_standard/b/bakery/shop/00000001.jpg").read_bytes()
    (places / "places365_train_standard.txt").write_text("".join(f"{p} {y}\n" for p, y in TRAIN[:2]))
    large = rows(md.Places365Dataset(str(places), small=False, decode=True, shuffle=False))
    assert [r["image"].shape for r in large] == [(30, 40, 3)] * 2


def test_val_usage_and_class_indexing(places):
    ds = md.Places365Dataset(str(places), usage="val", shuffle=False)
    assert [int(r["label"]) for r in rows(ds)] == [2, 0]
    assert ds.get_class_indexing() == {"/a/airfield": 0, "/a/alley": 1, "/b/bakery/shop": 2}
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.Places365Dataset(str(places), usage="train")


def test_shards_and_resume(places):
    assert_shards_partition(lambda **kw: md.Places365Dataset(str(places), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.Places365Dataset(str(places), decode=True, num_parallel_workers=w))


def test_errors_name_the_file(places):
    with pytest.raises(DataFormatError, match=r"places365_train_challenge.txt is missing"):
        md.Places365Dataset(str(places), usage="train-challenge").get_dataset_size()
    (places / "places365_val.txt").write_text("Places365_val_00000001.jpg\n")
    with pytest.raises(DataFormatError, match=r"places365_val.txt line 1 must be `<name> <label>`"):
        md.Places365Dataset(str(places), usage="val").get_dataset_size()
