"""OmniglotDataset over its layout: images_background/ and images_evaluation/, alphabet/character/PNGs."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import png_bytes

import minddata as md
from minddata.errors import DataFormatError


def _glyph(seed):
    # Omniglot's PNGs are 1-bit
    return png_bytes(np.random.default_rng(seed).integers(0, 2, size=(105, 105), dtype=np.uint8).astype(bool))


@pytest.fixture
def omniglot(tmp_path):
    layout = {"images_background": {"Greek": ["character01", "character02"], "Braille": ["character01"]},
              "images_evaluation": {"Mongolian": ["character01"]}}
    seed = 0
    for part, alphabets in layout.items():
        for alphabet, characters in alphabets.items():
            for character in characters:
                folder = tmp_path / part / alphabet / character
                folder.mkdir(parents=True)
                for k in range(2):
                    seed += 1
                    (folder / f"{alphabet[:4]}{character[-2:]}_{k:02d}.png").write_bytes(_glyph(seed))
    return tmp_path


def test_labels_number_sorted_character_folders(omniglot):
    got = rows(md.OmniglotDataset(str(omniglot), shuffle=False))
    assert [int(r["label"]) for r in got] == [0, 0, 1, 1, 2, 2] and got[0]["label"].dtype == np.int32
    assert got[0]["image"].tobytes() == (omniglot / "images_background/Braille/character01/Brai01_00.png").read_bytes()
    evaluation = rows(md.OmniglotDataset(str(omniglot), background=False, decode=True, shuffle=False))
    assert len(evaluation) == 2 and evaluation[0]["image"].shape == (105, 105, 3)


def test_shards_and_resume(omniglot):
    assert_shards_partition(lambda **kw: md.OmniglotDataset(str(omniglot), shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.OmniglotDataset(str(omniglot), num_parallel_workers=w))


def test_missing_part_is_named(omniglot):
    import shutil

    shutil.rmtree(omniglot / "images_evaluation")
    with pytest.raises(DataFormatError, match="images_evaluation is missing"):
        md.OmniglotDataset(str(omniglot), background=False).get_dataset_size()
