"""CLUE (JSON lines per task) and SQuAD 1.1/2.0 (one JSON document per split) on files written here
in the layouts the benchmarks ship."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from corpora_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError


def write_lines(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return str(path)


AFQMC_TRAIN = [
    {"sentence1": "蚂蚁借呗等额还款可以换成先息后本吗", "sentence2": "借呗有先息到期还本吗", "label": "0"},
    {"sentence1": "蚂蚁花呗说我违约一次", "sentence2": "蚂蚁花呗违约行为是什么", "label": "0"},
    {"sentence1": "帮我看一下本月花呗账单有没有结清", "sentence2": "下月花呗账单", "label": "1"},
]
AFQMC_TEST = [{"id": 0, "sentence1": "借呗取消了", "sentence2": "借呗怎么用不了"}]
TNEWS_TRAIN = [
    {
        "label": "102",
        "label_desc": "news_entertainment",
        "sentence": "江疏影甜甜圈自拍",
        "keywords": "江疏影,美少女",
    }
]
WSC_TRAIN = [
    {
        "target": {"span2_index": 37, "span1_index": 5, "span1_text": "床", "span2_text": "它"},
        "idx": 0,
        "label": "false",
        "text": "这时候放在床上枕头旁边的手机响了,我感到奇怪,因为欠费已被停机两个月,现在它突然响了。",
    }
]
CSL_TEST = [{"id": 2565, "abst": "目的探讨", "keyword": ["糖尿病", "胰岛素"]}]


def test_clue_afqmc_train_columns(tmp_path: Path) -> None:
    ds = md.CLUEDataset(
        write_lines(tmp_path / "train.json", AFQMC_TRAIN), task="AFQMC", usage="train", shuffle=False
    )
    assert ds.get_col_names() == ["sentence1", "sentence2", "label"]
    assert rows(ds) == [(r["sentence1"], r["sentence2"], r["label"]) for r in AFQMC_TRAIN]


def test_clue_test_usage_has_uint32_id(tmp_path: Path) -> None:
    ds = md.CLUEDataset(write_lines(tmp_path / "test.json", AFQMC_TEST), usage="test", shuffle=False)
    assert ds.get_col_names() == ["id", "sentence1", "sentence2"]
    row = next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    assert row[0].dtype == np.uint32 and int(row[0]) == 0


def test_clue_tnews_and_wsc_columns(tmp_path: Path) -> None:
    tnews = md.CLUEDataset(write_lines(tmp_path / "tnews.json", TNEWS_TRAIN), task="TNEWS", shuffle=False)
    assert rows(tnews) == [("102", "news_entertainment", "江疏影甜甜圈自拍", "江疏影,美少女")]
    wsc = md.CLUEDataset(
        write_lines(tmp_path / "wsc.json", WSC_TRAIN), task="WSC", usage="eval", shuffle=False
    )
    assert wsc.get_col_names() == [
        "span1_index",
        "span2_index",
        "span1_text",
        "span2_text",
        "idx",
        "text",
        "label",
    ]
    assert rows(wsc)[0][:5] == (5, 37, "床", "它", 0) and rows(wsc)[0][6] == "false"


def test_clue_csl_keywords_are_a_string_array(tmp_path: Path) -> None:
    csl = md.CLUEDataset(
        write_lines(tmp_path / "test.json", CSL_TEST), task="CSL", usage="test", shuffle=False
    )
    assert csl.get_col_names() == ["id", "abst", "keyword"]
    assert rows(csl) == [(2565, "目的探讨", ("糖尿病", "胰岛素"))]


def test_clue_missing_key_names_file_line_and_key(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "test.json", CSL_TEST)
    with pytest.raises(
        DataFormatError, match=r"CLUEDataset: .*test\.json, line 1: key 'label' \(column 'label'\) is missing"
    ):
        rows(md.CLUEDataset(path, task="CSL", usage="train"))


def test_clue_rejects_unknown_task(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match=r"CLUEDataset: `task` must be one of"):
        md.CLUEDataset(write_lines(tmp_path / "a.json", AFQMC_TRAIN), task="CMRC")


def test_clue_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match=r"CLUEDataset: .*dev\.json is not a file"):
        md.CLUEDataset(str(tmp_path / "dev.json"))


@pytest.fixture
def afqmc_files(tmp_path: Path) -> list[str]:
    records = [{"sentence1": f"s{k}", "sentence2": f"t{k}", "label": str(k % 2)} for k in range(9)]
    return [
        write_lines(tmp_path / "train.json", records[:5]),
        write_lines(tmp_path / "train2.json", records[5:]),
    ]


def test_clue_shards_partition_rows(afqmc_files: list[str]) -> None:
    assert_shards_partition(lambda **kw: md.CLUEDataset(afqmc_files, shuffle=False, **kw), 2)


def test_clue_resumes_exactly(afqmc_files: list[str]) -> None:
    assert_resumes_exactly(lambda w: md.CLUEDataset(afqmc_files, num_shards=2, shard_id=1))


# -- SQuAD ----------------------------------------------------------------------------------------


def squad_document(version: str, split: str, n_questions: int) -> dict:
    qas = []
    for k in range(n_questions):
        answers = (
            []
            if version == "2.0" and k == n_questions - 1
            else [
                {"text": "Saint Bernadette Soubirous", "answer_start": 515},
                {"text": "Bernadette", "answer_start": 521},
            ]
        )
        qa = {"id": f"{split}{k}", "question": f"{split} question {k}?", "answers": answers}
        if version == "2.0":
            qa["is_impossible"] = not answers
        qas.append(qa)
    paragraphs = [
        {"context": f"{split} context A", "qas": qas[:1]},
        {"context": f"{split} context B", "qas": qas[1:]},
    ]
    return {"version": version, "data": [{"title": "University_of_Notre_Dame", "paragraphs": paragraphs}]}


@pytest.fixture
def squad1(tmp_path: Path) -> Path:
    for split, n in (("train", 4), ("dev", 2)):
        (tmp_path / f"{split}-v1.1.json").write_text(json.dumps(squad_document("1.1", split, n)))
    return tmp_path


def test_squad_columns(squad1: Path) -> None:
    ds = md.SQuADDataset(str(squad1), usage="dev", shuffle=False)
    assert ds.get_col_names() == ["context", "question", "text", "answer_start"]
    got = rows(ds)
    assert got[0] == (
        "dev context A",
        "dev question 0?",
        ("Saint Bernadette Soubirous", "Bernadette"),
        (515, 521),
    )
    assert got[1][0] == "dev context B"
    row = next(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    assert row[3].dtype == np.uint32


@pytest.mark.parametrize(("usage", "count"), [("train", 4), ("dev", 2), ("all", 6)])
def test_squad_usage(squad1: Path, usage: str, count: int) -> None:
    assert len(rows(md.SQuADDataset(str(squad1), usage=usage))) == count


def test_squad2_unanswerable_question(tmp_path: Path) -> None:
    (tmp_path / "dev-v2.0.json").write_text(json.dumps(squad_document("2.0", "dev", 3)))
    last = rows(md.SQuADDataset(str(tmp_path), usage="dev", shuffle=False))[-1]
    assert last[2:] == (("",), (4294967295,))


def test_squad_shards_partition_rows(squad1: Path) -> None:
    assert_shards_partition(lambda **kw: md.SQuADDataset(str(squad1), shuffle=False, **kw), 4)


def test_squad_resumes_exactly(squad1: Path) -> None:
    assert_resumes_exactly(lambda w: md.SQuADDataset(str(squad1), num_shards=2, shard_id=0))


def test_squad_missing_file(squad1: Path) -> None:
    os.remove(squad1 / "dev-v1.1.json")
    with pytest.raises(
        DataFormatError,
        match=r"SQuADDataset: .* has no dev file: usage='all' reads dev-v1\.1\.json or dev-v2\.0\.json",
    ):
        md.SQuADDataset(str(squad1))


def test_squad_malformed_names_what_is_missing(squad1: Path) -> None:
    (squad1 / "dev-v1.1.json").write_text(json.dumps({"version": "1.1", "data": [{"title": "t"}]}))
    with pytest.raises(DataFormatError, match=r"dev-v1\.1\.json: data\[0\] has no 'paragraphs'"):
        rows(md.SQuADDataset(str(squad1), usage="dev"))
