"""AG News, Amazon/Yelp reviews, Sogou News, DBpedia, Yahoo! Answers (CSV) and SST-2 (TSV), on
files written here in the layout and quoting the datasets ship with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from corpora_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

# The character-level CNN collection's CSV: every field quoted, quotes doubled, newlines written as
# the two characters backslash-n.
AG_TRAIN = (
    '"3","Wall St. Bears Claw Back Into the Black (Reuters)","Reuters - Short-sellers, Wall Street\'s '
    'dwindling\\band of ultra-cynics, are seeing green again."\n'
    '"4","Google IPO ""on track""","SAN JOSE, Calif. - The auction\\nopens Friday."\n'
    '"2","Phelps Wins Again","ATHENS (Reuters) - Michael Phelps, gold."\n'
)
AG_TEST = '"1","Fears for T N pension after talks","Unions representing workers at Turner   Newall say."\n'

CSV_SETS = {
    "AGNewsDataset": ["index", "title", "description"],
    "AmazonReviewDataset": ["label", "title", "content"],
    "YelpReviewDataset": ["label", "text"],
    "SogouNewsDataset": ["index", "title", "content"],
    "DBpediaDataset": ["class", "title", "content"],
    "YahooAnswersDataset": ["class", "title", "content", "answer"],
}


def _csv_line(fields: list[str]) -> str:
    return ",".join('"' + f.replace('"', '""') + '"' for f in fields) + "\n"


def _csv_rows(width: int, split: str, n: int) -> list[list[str]]:
    return [
        [str(1 + k % 4)]
        + [f'{split} row {k}, field {j} with "quotes"\\nand an escape' for j in range(1, width)]
        for k in range(n)
    ]


def write_csv_set(root: Path, width: int, n_train: int = 7, n_test: int = 3) -> dict[str, list[tuple]]:
    root.mkdir(parents=True, exist_ok=True)
    want = {}
    for split, n in (("train", n_train), ("test", n_test)):
        data = _csv_rows(width, split, n)
        (root / f"{split}.csv").write_text("".join(_csv_line(r) for r in data), encoding="utf-8")
        want[split] = [tuple(r) for r in data]
    (root / "readme.txt").write_text("not data\n")
    (root / "classes.txt").write_text("World\nSports\nBusiness\nSci/Tech\n")
    return want


@pytest.mark.parametrize("name", list(CSV_SETS))
def test_csv_set_columns_and_values(tmp_path: Path, name: str) -> None:
    want = write_csv_set(tmp_path, len(CSV_SETS[name]))
    ds = getattr(md, name)(str(tmp_path), usage="train", shuffle=False)
    assert ds.get_col_names() == CSV_SETS[name]
    # One reader per file block; a single file reads in order.
    assert rows(ds) == want["train"]


@pytest.mark.parametrize("name", list(CSV_SETS))
def test_csv_set_usage_all_reads_both_files(tmp_path: Path, name: str) -> None:
    want = write_csv_set(tmp_path, len(CSV_SETS[name]))
    got = rows(getattr(md, name)(str(tmp_path), shuffle=False))
    assert sorted(got) == sorted(want["train"] + want["test"])
    assert sorted(rows(getattr(md, name)(str(tmp_path), usage="test"))) == sorted(want["test"])


def test_ag_news_parses_real_quoting(tmp_path: Path) -> None:
    (tmp_path / "train.csv").write_text(AG_TRAIN, encoding="utf-8")
    (tmp_path / "test.csv").write_text(AG_TEST, encoding="utf-8")
    got = rows(md.AGNewsDataset(str(tmp_path), usage="train", shuffle=False))
    assert got[1] == ("4", 'Google IPO "on track"', "SAN JOSE, Calif. - The auction\\nopens Friday.")
    assert got[0][2].startswith("Reuters - Short-sellers, Wall Street's")
    assert rows(md.AGNewsDataset(str(tmp_path), usage="test"))[0][0] == "1"


@pytest.mark.parametrize("name", list(CSV_SETS))
def test_csv_set_shards_partition_rows(tmp_path: Path, name: str) -> None:
    write_csv_set(tmp_path, len(CSV_SETS[name]))
    assert_shards_partition(lambda **kw: getattr(md, name)(str(tmp_path), shuffle=False, **kw), 3)


def test_csv_set_resumes_exactly(tmp_path: Path) -> None:
    write_csv_set(tmp_path, 3, n_train=11, n_test=5)
    assert_resumes_exactly(lambda w: md.AGNewsDataset(str(tmp_path), num_shards=2, shard_id=1))


def test_csv_set_resumes_exactly_shuffling_files(tmp_path: Path) -> None:
    write_csv_set(tmp_path, 2, n_train=9, n_test=4)
    assert_resumes_exactly(lambda w: md.YelpReviewDataset(str(tmp_path), shuffle=md.Shuffle.FILES))


def test_csv_set_num_samples_caps_rows(tmp_path: Path) -> None:
    write_csv_set(tmp_path, 3)
    assert len(rows(md.DBpediaDataset(str(tmp_path), num_samples=4))) == 4


def test_csv_set_missing_file_names_it(tmp_path: Path) -> None:
    write_csv_set(tmp_path, 3)
    os.remove(tmp_path / "test.csv")
    with pytest.raises(
        DataFormatError, match=r"SogouNewsDataset: .*test\.csv is missing: usage='all' reads test\.csv"
    ):
        md.SogouNewsDataset(str(tmp_path))
    md.SogouNewsDataset(str(tmp_path), usage="train")  # train alone needs only train.csv


def test_csv_set_rejects_bad_usage(tmp_path: Path) -> None:
    write_csv_set(tmp_path, 2)
    with pytest.raises(
        ArgumentError, match=r"YelpReviewDataset: `usage` must be one of \['train', 'test', 'all'\]"
    ):
        md.YelpReviewDataset(str(tmp_path), usage="valid")


def test_csv_set_wrong_field_count_names_file_and_line(tmp_path: Path) -> None:
    write_csv_set(tmp_path, 3)
    (tmp_path / "train.csv").write_text('"1","a","b"\n"2","only two"\n')
    with pytest.raises(
        Exception, match=r"AGNewsDataset: .*train\.csv, line 2: 2 field\(s\) but 3 column\(s\)"
    ):
        rows(md.AGNewsDataset(str(tmp_path), usage="train", shuffle=False))


# -- SST-2 ----------------------------------------------------------------------------------------

SST2_TRAIN = "sentence\tlabel\nhide new secretions from the parental units \t0\nthe greatest musicians \t1\n"
SST2_DEV = "sentence\tlabel\nit 's a charming and often affecting journey . \t1\nunflinchingly bleak \" desperate \t0\n"
SST2_TEST = "index\tsentence\n0\tuneasy mishmash of styles and genres .\n1\tthis film 's relationship to actual tension .\n"


@pytest.fixture
def sst2(tmp_path: Path) -> Path:
    for name, text in (("train.tsv", SST2_TRAIN), ("dev.tsv", SST2_DEV), ("test.tsv", SST2_TEST)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_sst2_train_columns_default_usage(sst2: Path) -> None:
    ds = md.SST2Dataset(str(sst2), shuffle=False)
    assert ds.get_col_names() == ["sentence", "label"]
    assert rows(ds) == [
        ("hide new secretions from the parental units ", "0"),
        ("the greatest musicians ", "1"),
    ]


def test_sst2_keeps_quotes_as_text(sst2: Path) -> None:
    assert rows(md.SST2Dataset(str(sst2), usage="dev", shuffle=False))[1] == (
        'unflinchingly bleak " desperate ',
        "0",
    )


def test_sst2_test_drops_the_index(sst2: Path) -> None:
    ds = md.SST2Dataset(str(sst2), usage="test", shuffle=False)
    assert ds.get_col_names() == ["sentence"]
    assert rows(ds) == [
        ("uneasy mishmash of styles and genres .",),
        ("this film 's relationship to actual tension .",),
    ]


def _longer_train(folder: Path) -> None:
    (folder / "train.tsv").write_text(
        "sentence\tlabel\n" + "".join(f"sentence {k} .\t{k % 2}\n" for k in range(13))
    )


def test_sst2_shards_partition_rows(sst2: Path) -> None:
    _longer_train(sst2)
    assert_shards_partition(lambda **kw: md.SST2Dataset(str(sst2), shuffle=False, **kw), 2)


def test_sst2_resumes_exactly(sst2: Path) -> None:
    _longer_train(sst2)
    assert_resumes_exactly(lambda w: md.SST2Dataset(str(sst2), num_shards=2, shard_id=0))


def test_sst2_missing_file(sst2: Path) -> None:
    os.remove(sst2 / "dev.tsv")
    with pytest.raises(DataFormatError, match=r"SST2Dataset: .*dev\.tsv is missing"):
        md.SST2Dataset(str(sst2), usage="dev")
