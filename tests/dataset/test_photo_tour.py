"""PhotoTourDataset over a scene folder in its real layout: 1024 x 1024 BMPs of 64 x 64 patches,
info.txt and the m50 match list."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from PIL import Image
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

PATCHES = 260  # a full first bitmap and 4 patches on the second


@pytest.fixture
def scene(tmp_path):
    folder = tmp_path / "liberty"
    folder.mkdir()
    rng = np.random.default_rng(0)
    bitmaps = [rng.integers(0, 256, (1024, 1024), dtype=np.uint8) for _ in range(2)]
    for k, bitmap in enumerate(bitmaps):
        Image.fromarray(bitmap, mode="L").save(folder / f"patches{k:04d}.bmp")
    points = np.repeat(np.arange(PATCHES // 2), 2)
    (folder / "info.txt").write_text("".join(f"{p} 0\n" for p in points))
    pairs = [(0, 1), (2, 5), (258, 259), (7, 256)]
    (folder / "m50_100000_100000_0.txt").write_text(
        "".join(f"{a} {points[a]} 0 {b} {points[b]} 0 0\n" for a, b in pairs))
    return tmp_path, bitmaps


def _patch(bitmaps, number):
    which, place = divmod(number, 256)
    y, x = divmod(place, 16)
    return bitmaps[which][y * 64 : y * 64 + 64, x * 64 : x * 64 + 64, None]


def test_train_patches_are_cut_row_by_row(scene):
    folder, bitmaps = scene
    ds = md.PhotoTourDataset(str(folder), "liberty", shuffle=False)
    assert ds.get_dataset_size() == PATCHES and ds.get_col_names() == ["image"]
    got = rows(ds)
    assert got[0]["image"].shape == (64, 64, 1) and got[0]["image"].dtype == np.uint8
    for number in (0, 17, 255, 256, 259):
        assert np.array_equal(got[number]["image"], _patch(bitmaps, number))


def test_test_pairs_and_matches(scene):
    folder, bitmaps = scene
    got = rows(md.PhotoTourDataset(str(folder), "liberty", usage="test", shuffle=False))
    assert [int(r["matches"]) for r in got] == [1, 0, 1, 0] and got[0]["matches"].dtype == np.uint32
    assert np.array_equal(got[3]["image1"], _patch(bitmaps, 7)) and np.array_equal(got[3]["image2"], _patch(bitmaps, 256))


def test_shards_and_resume(scene):
    folder, _ = scene
    assert_shards_partition(lambda **kw: md.PhotoTourDataset(str(folder), "liberty", usage="test", shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.PhotoTourDataset(str(folder), "liberty", usage="test", num_parallel_workers=w))
    assert_resumes_exactly(lambda w: md.PhotoTourDataset(str(folder), "liberty", num_parallel_workers=w).take(20),
                           points=[0, 7, 20])


def test_errors(scene):
    folder, _ = scene
    with pytest.raises(ArgumentError, match="`name` must be one of"):
        md.PhotoTourDataset(str(folder), "paris")
    with pytest.raises(DataFormatError, match=r"yosemite is missing"):
        md.PhotoTourDataset(str(folder), "yosemite").get_dataset_size()
    (folder / "liberty" / "m50_100000_100000_0.txt").write_text("1 2 3\n")
    with pytest.raises(DataFormatError, match=r"m50_100000_100000_0.txt must have 7 columns"):
        md.PhotoTourDataset(str(folder), "liberty", usage="test").get_dataset_size()
    (folder / "liberty" / "patches0001.bmp").unlink()
    with pytest.raises(DataFormatError, match=r"patch 259 is listed but .* has 1 bitmap"):
        md.PhotoTourDataset(str(folder), "liberty").get_dataset_size()
