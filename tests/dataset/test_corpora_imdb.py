"""IMDBDataset on a folder tree written here as the aclImdb archive unpacks: train/ and test/, each
with pos/ and neg/ reviews named <id>_<rating>.txt (and unsup/ and other files it ignores)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from corpora_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import DataFormatError


@pytest.fixture
def imdb(tmp_path: Path) -> Path:
    reviews = {
        ("train", "pos"): [
            "Bromwell High is a cartoon comedy.",
            "Homelessness (or Houselessness as George Carlin",
        ],
        ("train", "neg"): ["Story of a man who has unnatural feelings for a pig.<br /><br />Dull."],
        ("test", "pos"): [
            "I went and saw this movie last night.",
            "Actor turned director Bill Paxton",
            "Très bien.",
        ],
        ("test", "neg"): ["Once again Mr. Costner has dragged out a movie"],
    }
    for (split, label), texts in reviews.items():
        folder = tmp_path / split / label
        folder.mkdir(parents=True)
        for k, text in enumerate(texts):
            (folder / f"{k}_{9 if label == 'pos' else 2}.txt").write_text(text, encoding="utf-8")
    (tmp_path / "train" / "unsup").mkdir()
    (tmp_path / "train" / "unsup" / "0_0.txt").write_text("unlabelled")
    (tmp_path / "train" / "labeledBow.feat").write_text("0:9 1:1\n")
    (tmp_path / "imdb.vocab").write_text("the\nand\n")
    return tmp_path


def test_imdb_columns_and_order(imdb: Path) -> None:
    ds = md.IMDBDataset(str(imdb), usage="train", shuffle=False)
    assert ds.get_col_names() == ["text", "label"]
    assert rows(ds) == [
        ("Bromwell High is a cartoon comedy.", 1),
        ("Homelessness (or Houselessness as George Carlin", 1),
        ("Story of a man who has unnatural feelings for a pig.<br /><br />Dull.", 0),
    ]
    label = next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))[1]
    assert label.dtype == np.int32 and label.shape == ()  # as MindSpore 2.10


@pytest.mark.parametrize(("usage", "count"), [("train", 3), ("test", 4), ("all", 7), (None, 7)])
def test_imdb_usage(imdb: Path, usage: str | None, count: int) -> None:
    assert len(rows(md.IMDBDataset(str(imdb), usage=usage))) == count


def test_imdb_shards_partition_rows(imdb: Path) -> None:
    assert_shards_partition(lambda **kw: md.IMDBDataset(str(imdb), shuffle=False, **kw), 2)


def test_imdb_resumes_exactly(imdb: Path) -> None:
    assert_resumes_exactly(
        lambda w: md.IMDBDataset(str(imdb), num_parallel_workers=w, num_shards=2, shard_id=1)
    )


def test_imdb_sampler(imdb: Path) -> None:
    ds = md.IMDBDataset(str(imdb), usage="test", sampler=md.SubsetSampler([3, 0]))
    assert rows(ds) == [
        ("Once again Mr. Costner has dragged out a movie", 0),
        ("I went and saw this movie last night.", 1),
    ]


def test_imdb_missing_folder(imdb: Path) -> None:
    shutil.rmtree(imdb / "test" / "neg")
    with pytest.raises(DataFormatError, match=r"IMDBDataset: .*test/neg is missing"):
        md.IMDBDataset(str(imdb))
