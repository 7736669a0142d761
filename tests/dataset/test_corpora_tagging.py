"""CoNLL2000 and UDPOS on files written here in their layouts: one word per line with its tags,
a blank line after each sentence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corpora_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import DataFormatError

CONLL_TRAIN = """Confidence NN B-NP
in IN B-PP
the DT B-NP
pound NN I-NP
. . O

Chancellor NNP O
of IN B-PP
the DT B-NP
Exchequer NNP I-NP

He PRP B-NP
said VBD B-VP
"""
CONLL_TEST = """Rockwell NNP B-NP
International NNP I-NP
Corp. NNP I-NP

"""


@pytest.fixture
def conll(tmp_path: Path) -> Path:
    (tmp_path / "train.txt").write_text(CONLL_TRAIN)
    (tmp_path / "test.txt").write_text(CONLL_TEST)
    return tmp_path


def test_conll2000_rows_are_sentences(conll: Path) -> None:
    ds = md.CoNLL2000Dataset(str(conll), usage="train", shuffle=False)
    assert ds.get_col_names() == ["word", "pos_tag", "chunk_tag"]
    got = rows(ds)
    assert got[0] == (
        ("Confidence", "in", "the", "pound", "."),
        ("NN", "IN", "DT", "NN", "."),
        ("B-NP", "B-PP", "B-NP", "I-NP", "O"),
    )
    assert len(got) == 3 and got[2][0] == ("He", "said")  # the last sentence needs no trailing blank line


@pytest.mark.parametrize(("usage", "count"), [("train", 3), ("test", 1), ("all", 4)])
def test_conll2000_usage(conll: Path, usage: str, count: int) -> None:
    assert len(rows(md.CoNLL2000Dataset(str(conll), usage=usage))) == count


def test_conll2000_shards_partition_rows(conll: Path) -> None:
    assert_shards_partition(lambda **kw: md.CoNLL2000Dataset(str(conll), shuffle=False, **kw), 3)


def test_conll2000_resumes_exactly(conll: Path) -> None:
    assert_resumes_exactly(lambda w: md.CoNLL2000Dataset(str(conll), num_shards=2, shard_id=1))


def test_conll2000_missing_file(conll: Path) -> None:
    os.remove(conll / "test.txt")
    with pytest.raises(DataFormatError, match=r"CoNLL2000Dataset: .*test\.txt is missing"):
        md.CoNLL2000Dataset(str(conll))


def test_conll2000_bad_line_names_file_and_line(conll: Path) -> None:
    (conll / "train.txt").write_text("Confidence NN B-NP\nin IN\n")
    with pytest.raises(
        DataFormatError, match=r"train\.txt, line 2: 2 field\(s\) separated by spaces; expected 3"
    ):
        rows(md.CoNLL2000Dataset(str(conll), usage="train"))


UDPOS = {
    "train": "Al\tPROPN\tNNP\n-\tPUNCT\tHYPH\nZaman\tPROPN\tNNP\n:\tPUNCT\t:\n\nAmerican\tADJ\tJJ\nforces\tNOUN\tNNS\n\n",
    "dev": "From\tADP\tIN\nthe\tDET\tDT\nAP\tPROPN\tNNP\n\n",
    "test": "What\tPRON\tWP\nif\tSCONJ\tIN\n\nGoogle\tPROPN\tNNP\n\nMorphed\tVERB\tVBD\n\n",
}


@pytest.fixture
def udpos(tmp_path: Path) -> Path:
    for split, text in UDPOS.items():
        (tmp_path / f"en-ud-tag.v2.{split}.txt").write_text(text)
    return tmp_path


def test_udpos_columns(udpos: Path) -> None:
    ds = md.UDPOSDataset(str(udpos), usage="valid", shuffle=False)
    assert ds.get_col_names() == ["word", "universal", "stanford"]
    assert rows(ds) == [(("From", "the", "AP"), ("ADP", "DET", "PROPN"), ("IN", "DT", "NNP"))]


@pytest.mark.parametrize(("usage", "count"), [("train", 2), ("valid", 1), ("test", 3), (None, 6)])
def test_udpos_usage(udpos: Path, usage: str | None, count: int) -> None:
    assert len(rows(md.UDPOSDataset(str(udpos), usage=usage))) == count


def test_udpos_shards_partition_rows(udpos: Path) -> None:
    assert_shards_partition(lambda **kw: md.UDPOSDataset(str(udpos), shuffle=False, **kw), 4)


def test_udpos_resumes_exactly(udpos: Path) -> None:
    assert_resumes_exactly(lambda w: md.UDPOSDataset(str(udpos), shuffle=md.Shuffle.FILES))


def test_udpos_missing_file(udpos: Path) -> None:
    os.remove(udpos / "en-ud-tag.v2.dev.txt")
    with pytest.raises(DataFormatError, match=r"UDPOSDataset: .*en-ud-tag\.v2\.dev\.txt is missing"):
        md.UDPOSDataset(str(udpos), usage="valid")
