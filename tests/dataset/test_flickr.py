"""FlickrDataset over Flickr8k's layout: an image folder and the tab-separated token file."""

from __future__ import annotations

import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

IMAGES = ["1000268201_693b08cb0e.jpg", "1001773457_577c3a7d70.jpg", "101654506_8eb26cfb60.jpg", "1002674143_1b742ab4b8.jpg"]


@pytest.fixture
def flickr(tmp_path):
    images = tmp_path / "Flicker8k_Dataset"
    images.mkdir()
    for k, name in enumerate(IMAGES):
        (images / name).write_bytes(make_jpeg(14, 10 + k, seed=k))
    (images / "notes.jpg").write_bytes(b"not an image")
    lines = [f"{name}#{n}\tCaption {n} of {name[:4]} .\n" for name in IMAGES for n in range(5)]
    lines.append("notes.jpg#0\tnot an image, skipped\n")
    token = tmp_path / "Flickr8k.token.txt"
    token.write_text("".join(lines))
    return images, token


def test_one_row_per_image_with_its_captions(flickr):
    images, token = flickr
    got = rows(md.FlickrDataset(str(images), str(token), shuffle=False))
    assert len(got) == 4
    first = sorted(IMAGES)[0]
    assert got[0]["image"].tobytes() == (images / first).read_bytes()
    assert got[0]["annotation"].shape == (5,) and got[0]["annotation"].dtype.kind == "U"
    assert str(got[0]["annotation"][2]) == f"Caption 2 of {first[:4]} ."
    assert rows(md.FlickrDataset(str(images), str(token), decode=True, shuffle=False))[0]["image"].ndim == 3


def test_shards_and_resume(flickr):
    images, token = flickr
    assert_shards_partition(lambda **kw: md.FlickrDataset(str(images), str(token), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.FlickrDataset(str(images), str(token), num_parallel_workers=w))


def test_errors(flickr, tmp_path):
    images, token = flickr
    with pytest.raises(ArgumentError, match="`annotation_file` must be an existing file"):
        md.FlickrDataset(str(images), str(tmp_path / "none.txt"))
    token.write_text(token.read_text() + "gone.jpg#0\tA caption\n")
    with pytest.raises(DataFormatError, match=r"gone.jpg is missing"):
        md.FlickrDataset(str(images), str(token)).get_dataset_size()
    token.write_text("1000268201_693b08cb0e.jpg A caption without a tab\n")
    with pytest.raises(DataFormatError, match=r"line 1 must be `<image>#<n>\\t<caption>`"):
        md.FlickrDataset(str(images), str(token)).get_dataset_size()
