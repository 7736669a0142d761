"""SBUDataset over SBU's layout: the URL and caption lists and the sbu_images/ folder."""

from __future__ import annotations

import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import DataFormatError

URLS = ["http://static.flickr.com/2723/4385058960_b0f291553e.jpg", "http://static.flickr.com/3184/2761733513_5a1a2d6ed0.jpg",
        "http://static.flickr.com/1020/1375045155_a4d4e23c5e.jpg", "http://static.flickr.com/3611/3443133130_7ee9b4e4ff.jpg",
        "http://static.flickr.com/2404/2296081427_8a9b02e2f0.jpg"]
CAPTIONS = ["Man sits in a rusted car buried in the sand on Waitarere beach   ", "Interior design of modern white and brown living room furniture",
            "the boat, the rocks and the sea", "a cloud over the hill", "Our dog in the snow "]


@pytest.fixture
def sbu(tmp_path):
    (tmp_path / "SBU_captioned_photo_dataset_urls.txt").write_text("\n".join(URLS) + "\n")
    (tmp_path / "SBU_captioned_photo_dataset_captions.txt").write_text("\n".join(CAPTIONS) + "\n")
    (tmp_path / "sbu_images").mkdir()
    for k, url in enumerate(URLS):
        if k != 2:  # one photo was never downloaded
            (tmp_path / "sbu_images" / md.dataset.sbu.image_name(url)).write_bytes(make_jpeg(20, 14 + k, seed=k))
    return tmp_path


def test_captions_and_images_skip_missing_photos(sbu):
    got = rows(md.SBUDataset(str(sbu), shuffle=False))
    assert [str(r["caption"]) for r in got] == [c.rstrip(" ") for k, c in enumerate(CAPTIONS) if k != 2]
    assert got[0]["image"].tobytes() == (sbu / "sbu_images" / "m_2723_4385058960_b0f291553e.jpg").read_bytes()
    assert rows(md.SBUDataset(str(sbu), decode=True, shuffle=False))[3]["image"].shape == (18, 20, 3)


def test_shards_and_resume(sbu):
    assert_shards_partition(lambda **kw: md.SBUDataset(str(sbu), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.SBUDataset(str(sbu), num_parallel_workers=w))


def test_errors_name_the_files(sbu):
    (sbu / "SBU_captioned_photo_dataset_captions.txt").write_text("\n".join(CAPTIONS[:3]) + "\n")
    with pytest.raises(DataFormatError, match=r"urls.txt and .*captions.txt must have one line per photo"):
        md.SBUDataset(str(sbu)).get_dataset_size()
    (sbu / "SBU_captioned_photo_dataset_urls.txt").unlink()
    with pytest.raises(DataFormatError, match=r"SBU_captioned_photo_dataset_urls.txt is missing"):
        md.SBUDataset(str(sbu)).get_dataset_size()
