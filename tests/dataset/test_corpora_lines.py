"""PennTreebank, WikiText and EnWik9 on files written here with the datasets' names and line shapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corpora_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import DataFormatError


@pytest.fixture
def ptb(tmp_path: Path) -> Path:
    texts = {
        "train": [" aer banknote berlitz calloway centrust", " pierre <unk> N years old will join the board"],
        "valid": [" consumers may want to move their telephones a little closer to the tv set"],
        "test": [
            " no it was n't black monday",
            " but while the new york stock exchange did n't fall apart",
            " some circuit breakers installed after the october N crash failed",
        ],
    }
    for split, lines in texts.items():
        (tmp_path / f"ptb.{split}.txt").write_text("".join(line + " \n" for line in lines), encoding="utf-8")
    return tmp_path


def test_ptb_rows_are_lines(ptb: Path) -> None:
    ds = md.PennTreebankDataset(str(ptb), usage="test", shuffle=False)
    assert ds.get_col_names() == ["text"]
    assert rows(ds) == [
        (" no it was n't black monday ",),
        (" but while the new york stock exchange did n't fall apart ",),
        (" some circuit breakers installed after the october N crash failed ",),
    ]


@pytest.mark.parametrize(("usage", "count"), [("train", 2), ("valid", 1), ("test", 3), ("all", 6), (None, 6)])
def test_ptb_usage(ptb: Path, usage: str | None, count: int) -> None:
    assert len(rows(md.PennTreebankDataset(str(ptb), usage=usage))) == count


def test_ptb_shards_partition_rows(ptb: Path) -> None:
    assert_shards_partition(lambda **kw: md.PennTreebankDataset(str(ptb), shuffle=False, **kw), 4)


def test_ptb_resumes_exactly(ptb: Path) -> None:
    assert_resumes_exactly(lambda w: md.PennTreebankDataset(str(ptb), num_shards=2, shard_id=1))


def test_ptb_missing_file(ptb: Path) -> None:
    os.remove(ptb / "ptb.valid.txt")
    with pytest.raises(DataFormatError, match=r"PennTreebankDataset: .*ptb\.valid\.txt is missing"):
        md.PennTreebankDataset(str(ptb))


@pytest.fixture
def wikitext(tmp_path: Path) -> Path:
    # WikiText's files: " " lines between paragraphs, headings as " = Title = ".
    for split in ("train", "valid", "test"):
        body = (
            f" \n = Valkyria {split} = \n \n Senjō no Valkyria 3 : <unk> Chronicles \n \n = = Gameplay = = \n"
        )
        (tmp_path / f"wiki.{split}.tokens").write_text(body, encoding="utf-8")
    return tmp_path


def test_wikitext_keeps_space_lines(wikitext: Path) -> None:
    got = rows(md.WikiTextDataset(str(wikitext), usage="valid", shuffle=False))
    assert got == [
        (" ",),
        (" = Valkyria valid = ",),
        (" ",),
        (" Senjō no Valkyria 3 : <unk> Chronicles ",),
        (" ",),
        (" = = Gameplay = = ",),
    ]


def test_wikitext_all_and_shards(wikitext: Path) -> None:
    assert len(rows(md.WikiTextDataset(str(wikitext)))) == 18
    assert_shards_partition(lambda **kw: md.WikiTextDataset(str(wikitext), shuffle=False, **kw), 5)


def test_wikitext_resumes(wikitext: Path) -> None:
    assert_resumes_exactly(
        lambda w: md.WikiTextDataset(str(wikitext), usage="all", shuffle=md.Shuffle.GLOBAL)
    )


def test_wikitext_missing_file(wikitext: Path) -> None:
    os.remove(wikitext / "wiki.test.tokens")
    with pytest.raises(DataFormatError, match=r"WikiTextDataset: .*wiki\.test\.tokens is missing"):
        md.WikiTextDataset(str(wikitext), usage="test")


@pytest.fixture
def enwik9(tmp_path: Path) -> Path:
    text = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.3/" version="0.3" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n"
        "\n"
        "'''Anarchism''' originated as a term of abuse.\n"
        "\n"
        "== Origins ==\n"
    )
    (tmp_path / "enwik9").write_text(text, encoding="utf-8")
    return tmp_path


def test_enwik9_keeps_every_line(enwik9: Path) -> None:
    got = rows(md.EnWik9Dataset(str(enwik9), shuffle=False))
    assert len(got) == 8
    assert got[4] == ("",) and got[5] == ("'''Anarchism''' originated as a term of abuse.",)


def test_enwik9_shuffles_by_default(enwik9: Path) -> None:
    md.config.set_seed(5)
    shuffled = rows(md.EnWik9Dataset(str(enwik9)))
    in_order = rows(md.EnWik9Dataset(str(enwik9), shuffle=False))
    assert sorted(shuffled) == sorted(in_order) and shuffled != in_order


def test_enwik9_shards_partition_rows(enwik9: Path) -> None:
    assert_shards_partition(lambda **kw: md.EnWik9Dataset(str(enwik9), shuffle=False, **kw), 3)


def test_enwik9_resumes_exactly(enwik9: Path) -> None:
    assert_resumes_exactly(lambda w: md.EnWik9Dataset(str(enwik9), num_shards=3, shard_id=2))


def test_enwik9_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r"EnWik9Dataset: .*enwik9 is missing: it reads enwik9 from dataset_dir"):
        md.EnWik9Dataset(str(tmp_path))


def test_not_utf8_names_file_and_line(ptb: Path) -> None:
    (ptb / "ptb.train.txt").write_bytes(b" fine\n bad \xff byte\n")
    with pytest.raises(DataFormatError, match=r"PennTreebankDataset: .*ptb\.train\.txt, line 2: not UTF-8"):
        rows(md.PennTreebankDataset(str(ptb), usage="train"))
