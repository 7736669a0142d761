"""DIV2KDataset over DIV2K's layout: HR PNGs and the low-resolution folders of each track."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import random_png

import minddata as md
from minddata.errors import ArgumentError, DataFormatError


@pytest.fixture
def div2k(tmp_path):
    for split, ids, base in (("train", ["0001", "0002", "0003", "0004"], 0), ("valid", ["0801", "0802"], 10)):
        hr = tmp_path / f"DIV2K_{split}_HR"
        hr.mkdir()
        for k, i in enumerate(ids):
            (hr / f"{i}.png").write_bytes(random_png(16, 24, base + k))
            for track, scale, suffix in (("LR_bicubic/X2", 2, ""), ("LR_x8", 8, ""), ("LR_wild", 4, "w")):
                low = tmp_path / f"DIV2K_{split}_{track}"
                low.mkdir(parents=True, exist_ok=True)
                (low / f"{i}x{scale}{suffix}.png").write_bytes(random_png(16 // scale + 1, 24 // scale, 100 + base + k))
    return tmp_path


def test_pairs_of_each_track(div2k):
    got = rows(md.DIV2KDataset(str(div2k), shuffle=False))
    assert len(got) == 4 and got[0]["hr_image"].dtype == np.uint8
    assert got[1]["hr_image"].tobytes() == (div2k / "DIV2K_train_HR/0002.png").read_bytes()
    assert got[1]["lr_image"].tobytes() == (div2k / "DIV2K_train_LR_bicubic/X2/0002x2.png").read_bytes()
    wild = rows(md.DIV2KDataset(str(div2k), usage="valid", downgrade="wild", scale=4, decode=True, shuffle=False))
    assert [(r["hr_image"].shape, r["lr_image"].shape) for r in wild] == [((16, 24, 3), (5, 6, 3))] * 2
    assert md.DIV2KDataset(str(div2k), usage="all", scale=8).get_dataset_size() == 6


def test_shards_and_resume(div2k):
    assert_shards_partition(lambda **kw: md.DIV2KDataset(str(div2k), usage="all", shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.DIV2KDataset(str(div2k), decode=True, num_parallel_workers=w))


def test_argument_rules(div2k):
    with pytest.raises(ArgumentError, match=r"`scale` must be one of \[4\] for downgrade='mild'"):
        md.DIV2KDataset(str(div2k), downgrade="mild", scale=2)
    with pytest.raises(ArgumentError, match="`downgrade` must be one of"):
        md.DIV2KDataset(str(div2k), downgrade="nearest")


def test_missing_files_are_named(div2k):
    with pytest.raises(DataFormatError, match=r"DIV2K_train_LR_unknown/X3 is missing.*unzip"):
        md.DIV2KDataset(str(div2k), downgrade="unknown", scale=3).get_dataset_size()
    (div2k / "DIV2K_train_LR_bicubic/X2/0003x2.png").unlink()
    with pytest.raises(DataFormatError, match=r"0003x2.png, the low-resolution version of .*0003.png, is missing"):
        md.DIV2KDataset(str(div2k)).get_dataset_size()
