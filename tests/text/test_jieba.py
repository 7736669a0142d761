"""JiebaTokenizer over the jieba package's dictionary and its HMM tables written in cppjieba's
hmm_model.utf8 format. References: MindSpore's documented outputs, and the jieba package's own
``cut`` / ``finalseg.cut`` on the same dictionary and model."""

from __future__ import annotations

import functools

import jieba
import jieba.finalseg
import pytest
from textkit import jieba_dict_path, write_small_jieba_dict

import minddata as md
from minddata import text
from minddata.errors import ArgumentError
from minddata.text import JiebaMode

SENTENCE = "今天天气太好了我们一起去外面玩吧"
MIXED = "小明硕士毕业于中国科学院计算所，后在日本京都大学深造 hello world 2024年"


@pytest.fixture(scope="module")
def small_dict(tmp_path_factory):
    """A dictionary of a dozen words: quick to load for the tests that build their own tokenizers."""
    return write_small_jieba_dict(str(tmp_path_factory.mktemp("jieba") / "jieba.dict.utf8"))


@pytest.fixture(scope="module")
def hmm_path(tmp_path_factory):
    return text.JiebaTokenizer.write_hmm_model(str(tmp_path_factory.mktemp("jieba") / "hmm_model.utf8"))


@functools.cache
def reference() -> jieba.Tokenizer:
    """The jieba package's tokenizer on the same dictionary (built without its temp-folder cache)."""
    tokenizer = jieba.Tokenizer(dictionary=jieba_dict_path())
    with open(jieba_dict_path(), "rb") as f:
        tokenizer.FREQ, tokenizer.total = tokenizer.gen_pfdict(f)
    tokenizer.initialized = True
    return tokenizer


def test_mp_mode_documented_example(hmm_path):
    op = text.JiebaTokenizer(hmm_path, jieba_dict_path(), mode=JiebaMode.MP)
    assert op(SENTENCE).tolist() == ["今天天气", "太好了", "我们", "一起", "去", "外面", "玩吧"]


def test_hmm_mode_matches_jiebas_hmm(hmm_path):
    op = text.JiebaTokenizer(hmm_path, jieba_dict_path(), mode=JiebaMode.HMM)
    assert op(SENTENCE).tolist() == [
        "今天",
        "天气",
        "太",
        "好",
        "了",
        "我们",
        "一起",
        "去",
        "外面",
        "玩",
        "吧",
    ]
    assert op(MIXED).tolist() == list(jieba.finalseg.cut(MIXED))


def test_mix_mode_matches_jiebas_cut_with_hmm(hmm_path):
    op = text.JiebaTokenizer(hmm_path, jieba_dict_path(), mode=JiebaMode.MIX)
    got = op(MIXED).tolist()
    assert got == list(reference().cut(MIXED, HMM=True))
    assert "小明" in got  # a word not in the dictionary, found by the HMM


def test_offsets_are_utf8_bytes(hmm_path):
    tokens, start, limit = text.JiebaTokenizer(hmm_path, jieba_dict_path(), JiebaMode.MIX, with_offsets=True)(
        "床前明月光"
    )
    assert tokens.tolist() == ["床前", "明月光"]
    assert start.tolist() == [0, 6] and limit.tolist() == [6, 15]


def test_add_word_joins_a_new_word(hmm_path, small_dict):
    op = text.JiebaTokenizer(hmm_path, small_dict, mode=JiebaMode.MP)
    assert op("我们男默女泪").tolist() == ["我们", "男", "默", "女", "泪"]
    op.add_word("男默女泪")
    assert op("我们男默女泪").tolist() == ["我们", "男默女泪"]


def test_add_dict_reads_a_user_dictionary_file(hmm_path, small_dict, tmp_path):
    user = tmp_path / "user.dict"
    user.write_text("男默女泪 10\n不是 一行 x\n江大桥\n", encoding="utf-8")
    op = text.JiebaTokenizer(hmm_path, small_dict, mode=JiebaMode.MP)
    op.add_dict(str(user))
    assert op.words == [("男默女泪", 10), ("江大桥", None)]
    assert op("男默女泪").tolist() == ["男默女泪"]


def test_add_dict_takes_a_dict(hmm_path, small_dict):
    op = text.JiebaTokenizer(hmm_path, small_dict, mode=JiebaMode.MP)
    op.add_dict({"男默女泪": 10})
    assert op("男默女泪").tolist() == ["男默女泪"]


def test_missing_files_fail_at_construction(hmm_path, tmp_path):
    with pytest.raises(ArgumentError, match=r"JiebaTokenizer: `mp_path` must be an existing file"):
        text.JiebaTokenizer(hmm_path, str(tmp_path / "nope.utf8"))


def test_mode_must_be_a_jieba_mode(hmm_path):
    with pytest.raises(TypeError, match=r"JiebaTokenizer: `mode` must be one of JiebaMode.MIX, JiebaMode.MP"):
        text.JiebaTokenizer(hmm_path, jieba_dict_path(), mode="MP")


def test_a_file_that_is_not_an_hmm_model_is_reported(tmp_path, small_dict):
    bad = tmp_path / "hmm_model.utf8"
    bad.write_text("not a model\n", encoding="utf-8")
    op = text.JiebaTokenizer(str(bad), small_dict, JiebaMode.MIX)
    with pytest.raises(ValueError, match="is not a cppjieba HMM model"):
        op("今天")


def test_pipeline_over_a_text_file_with_offsets(hmm_path, tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("今天天气太好了\n床前明月光\n", encoding="utf-8")
    ds = md.TextFileDataset(str(path), shuffle=False).map(
        text.JiebaTokenizer(hmm_path, jieba_dict_path(), JiebaMode.MIX, with_offsets=True),
        input_columns="text",
        output_columns=["token", "offsets_start", "offsets_limit"],
        num_parallel_workers=2,
    )
    rows = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [r["token"].tolist() for r in rows] == [["今天天气", "太好了"], ["床前", "明月光"]]
    assert rows[0]["offsets_limit"].tolist() == [12, 21]


def test_a_file_that_is_not_a_dictionary_is_reported(hmm_path, tmp_path):
    bad = tmp_path / "jieba.dict.utf8"
    bad.write_text("今天 lots n\n", encoding="utf-8")
    op = text.JiebaTokenizer(hmm_path, str(bad), JiebaMode.MP)
    with pytest.raises(ValueError, match="JiebaTokenizer: .* is not a Jieba dictionary"):
        op("今天")
