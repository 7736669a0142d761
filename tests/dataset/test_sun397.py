"""SUN397Dataset over SUN397's layout: ClassName.txt and category folders of sun_*.jpg."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import DataFormatError

CATEGORIES = {"/a/abbey": 2, "/a/airplane_cabin": 1, "/b/bakery/shop": 3}


@pytest.fixture
def sun(tmp_path):
    seed = 0
    for category, count in CATEGORIES.items():
        folder = tmp_path / category.lstrip("/")
        folder.mkdir(parents=True)
        for k in range(count):
            seed += 1
            (folder / f"sun_{'abcdefgh'[k]}{seed:03d}.jpg").write_bytes(make_jpeg(11, 9 + seed, seed=seed))
        (folder / "notes.txt").write_text("not an image")
    (tmp_path / "a" / "abbey" / "thumb.jpg").write_bytes(make_jpeg(5, 5, seed=99))  # not sun_*: skipped
    (tmp_path / "ClassName.txt").write_text("".join(f"{c}\n" for c in CATEGORIES))
    return tmp_path


def test_labels_follow_the_class_list(sun):
    got = rows(md.SUN397Dataset(str(sun), shuffle=False))
    assert [int(r["label"]) for r in got] == [0, 0, 1, 2, 2, 2] and got[0]["label"].dtype == np.uint32
    assert got[2]["image"].tobytes() == (sun / "a/airplane_cabin/sun_a003.jpg").read_bytes()
    assert rows(md.SUN397Dataset(str(sun), decode=True, shuffle=False))[0]["image"].shape == (10, 11, 3)


def test_shards_and_resume(sun):
    assert_shards_partition(lambda **kw: md.SUN397Dataset(str(sun), shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.SUN397Dataset(str(sun), num_parallel_workers=w))


def test_errors_name_the_file(sun):
    (sun / "ClassName.txt").write_text("/a/abbey\n/z/zoo\n")
    with pytest.raises(DataFormatError, match=r"z/zoo is missing.*category '/z/zoo'"):
        md.SUN397Dataset(str(sun)).get_dataset_size()
    (sun / "ClassName.txt").unlink()
    with pytest.raises(DataFormatError, match=r"ClassName.txt is missing"):
        md.SUN397Dataset(str(sun)).get_dataset_size()
