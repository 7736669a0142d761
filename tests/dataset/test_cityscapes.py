"""CityscapesDataset over Cityscapes' layout: leftImg8bit/ images and gtFine/ gtCoarse/ annotations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import png_bytes

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

SPLITS = {"train": {"aachen": ["000000_000019", "000001_000019"], "bochum": ["000000_000313"]},
          "val": {"frankfurt": ["000000_000294"]}}


@pytest.fixture
def cityscapes(tmp_path):
    rng = np.random.default_rng(0)
    for split, cities in SPLITS.items():
        for city, stems in cities.items():
            images = tmp_path / "leftImg8bit" / split / city
            labels = tmp_path / "gtFine" / split / city
            images.mkdir(parents=True)
            labels.mkdir(parents=True)
            for stem in stems:
                name = f"{city}_{stem}"
                (images / f"{name}_leftImg8bit.png").write_bytes(png_bytes(rng.integers(0, 256, (8, 16, 3), dtype=np.uint8)))
                for suffix in ("instanceIds", "labelIds"):
                    ids = rng.integers(0, 34, (8, 16), dtype=np.uint8)
                    (labels / f"{name}_gtFine_{suffix}.png").write_bytes(png_bytes(ids))
                (labels / f"{name}_gtFine_color.png").write_bytes(png_bytes(rng.integers(0, 256, (8, 16, 4), dtype=np.uint8)))
                polygons = {"imgHeight": 8, "imgWidth": 16,
                            "objects": [{"label": "road", "polygon": [[0, 4], [15, 4], [15, 7]]}]}
                (labels / f"{name}_gtFine_polygons.json").write_text(json.dumps(polygons, indent=4))
    return tmp_path


def test_image_and_semantic_mask(cityscapes):
    got = rows(md.CityscapesDataset(str(cityscapes), task="semantic", shuffle=False))
    assert len(got) == 3
    first = "aachen_000000_000019"
    assert got[0]["image"].tobytes() == (cityscapes / f"leftImg8bit/train/aachen/{first}_leftImg8bit.png").read_bytes()
    assert got[0]["task"].tobytes() == (cityscapes / f"gtFine/train/aachen/{first}_gtFine_labelIds.png").read_bytes()
    decoded = rows(md.CityscapesDataset(str(cityscapes), usage="val", decode=True, shuffle=False))
    assert decoded[0]["image"].shape == (8, 16, 3) and decoded[0]["task"].shape == (8, 16, 3)


def test_polygon_task_is_compact_json(cityscapes):
    got = rows(md.CityscapesDataset(str(cityscapes), usage="val", task="polygon", decode=True, shuffle=False))
    text = str(got[0]["task"])
    assert text == '{"imgHeight":8,"imgWidth":16,"objects":[{"label":"road","polygon":[[0,4],[15,4],[15,7]]}]}'
    assert got[0]["image"].shape == (8, 16, 3)


def test_usage_all_and_shards_and_resume(cityscapes):
    (cityscapes / "leftImg8bit" / "test").mkdir()
    (cityscapes / "gtFine" / "test").mkdir()
    assert md.CityscapesDataset(str(cityscapes), usage="all").get_dataset_size() == 4
    assert_shards_partition(lambda **kw: md.CityscapesDataset(str(cityscapes), usage="all", shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.CityscapesDataset(str(cityscapes), task="polygon", num_parallel_workers=w))


def test_errors(cityscapes):
    with pytest.raises(ArgumentError, match=r"`usage` must be one of \['train', 'train_extra', 'val', 'all'\]"):
        md.CityscapesDataset(str(cityscapes), usage="test", quality_mode="coarse")
    with pytest.raises(ArgumentError, match="`task` must be one of"):
        md.CityscapesDataset(str(cityscapes), task="depth")
    with pytest.raises(DataFormatError, match=r"gtCoarse/train is missing"):
        md.CityscapesDataset(str(cityscapes), quality_mode="coarse").get_dataset_size()
    (cityscapes / "gtFine/train/bochum/bochum_000000_000313_gtFine_color.png").unlink()
    with pytest.raises(DataFormatError, match=r"bochum_000000_000313_gtFine_color.png, the color annotation"):
        md.CityscapesDataset(str(cityscapes), task="color").get_dataset_size()
