"""The text ops' entries of the op contract (tests/ops/test_contract.py): text inputs, and the odd texts
(tests/textkit.py ``ODD_TEXT``) standing for the odd images."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from typing import Any

import numpy as np
from textkit import odd_text, odd_words, sentencepiece_model, write_small_jieba_dict

from minddata import text


@functools.cache
def _files() -> dict[str, str]:
    """Jieba's dictionary and HMM files, written once per session and removed at exit."""
    folder = tempfile.mkdtemp(prefix="minddata-text-contract-")
    atexit.register(shutil.rmtree, folder, True)
    return {
        "mp": write_small_jieba_dict(os.path.join(folder, "jieba.dict.utf8")),
        "hmm": text.JiebaTokenizer.write_hmm_model(os.path.join(folder, "hmm_model.utf8")),
        "vectors": _write(
            os.path.join(folder, "vectors.txt"), "the 1 0 0\nfox 0 1 0\ndog 0 0 1\n, 0.5 0.5 0.5\n"
        ),
    }


def _write(path: str, content: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)
    return path


VOCAB = text.Vocab.from_list(
    ["the", "quick", "brown", "fox", "lazy", "dog", "##s", "[UNK]", "[CLS]", ",", "!", "hello", "a", "1234"],
    special_tokens=["<unk>"],
)
SENTENCE = np.array("The quick brown fox, 跳过 the lazy dogs!")
WORDS = np.array(["the", "quick", "brown", "fox", "dogs"])


def _words() -> tuple[Any, ...]:
    return (WORDS,)


def _sentence() -> tuple[Any, ...]:
    return (SENTENCE,)


def _numbers(img: np.ndarray) -> tuple[Any, ...]:
    """Numbers as strings: the lengths of the odd text's words."""
    return (np.array([str(len(w)) for w in odd_words(img)[0].tolist()], dtype=str),)


def _pair(img: np.ndarray) -> tuple[Any, ...]:
    words = odd_words(img)[0]
    return words, words[::-1].copy()


def text_cases(case: Any) -> dict[str, Any]:
    """``{op name: Case}`` for the text ops; ``case`` is test_contract's ``Case`` class."""
    return {
        "WhitespaceTokenizer": case(lambda: text.WhitespaceTokenizer(with_offsets=True), _sentence, odd_text),
        "UnicodeCharTokenizer": case(
            lambda: text.UnicodeCharTokenizer(with_offsets=True), _sentence, odd_text
        ),
        "UnicodeScriptTokenizer": case(
            lambda: text.UnicodeScriptTokenizer(keep_whitespace=True, with_offsets=True), _sentence, odd_text
        ),
        "RegexTokenizer": case(
            lambda: text.RegexTokenizer(r"\s+|\p{P}", r"\p{P}", with_offsets=True), _sentence, odd_text
        ),
        "BasicTokenizer": case(
            lambda: text.BasicTokenizer(lower_case=True, with_offsets=True), _sentence, odd_text
        ),
        "WordpieceTokenizer": case(
            lambda: text.WordpieceTokenizer(VOCAB, with_offsets=True), _words, odd_words
        ),
        "BertTokenizer": case(
            lambda: text.BertTokenizer(VOCAB, lower_case=True, with_offsets=True), _sentence, odd_text
        ),
        "JiebaTokenizer": case(
            lambda: text.JiebaTokenizer(
                _files()["hmm"], _files()["mp"], text.JiebaMode.MIX, with_offsets=True
            ),
            lambda: (np.array("今天天气太好了我们一起去外面玩吧"),),
            odd_text,
        ),
        "SentencePieceTokenizer": case(
            lambda: text.SentencePieceTokenizer(sentencepiece_model(), text.SPieceTokenizerOutType.INT),
            _sentence,
            odd_text,
        ),
        "PythonTokenizer": case(lambda: text.PythonTokenizer(str.split), _sentence, odd_text),
        "Lookup": case(lambda: text.Lookup(VOCAB, "<unk>"), _words, odd_words),
        "ToVectors": case(
            lambda: text.ToVectors(text.Vectors.from_file(_files()["vectors"]), lower_case_backup=True),
            _words,
            odd_words,
        ),
        "Ngram": case(lambda: text.Ngram([3, 1], left_pad=("<s>", 2), separator="_"), _words, odd_words),
        "AddToken": case(lambda: text.AddToken("[CLS]", begin=True), _words, odd_words),
        "Truncate": case(lambda: text.Truncate(3), _words, odd_words),
        "TruncateSequencePair": case(
            lambda: text.TruncateSequencePair(4), lambda: (WORDS, np.array([1, 2, 3])), _pair
        ),
        "SlidingWindow": case(lambda: text.SlidingWindow(2), _words, odd_words),
        "ToNumber": case(lambda: text.ToNumber(np.int16), lambda: (np.array(["1", "-20", "300"]),), _numbers),
        "NormalizeUTF8": case(text.NormalizeUTF8, _sentence, odd_text),
        "CaseFold": case(text.CaseFold, _sentence, odd_text),
        "RegexReplace": case(lambda: text.RegexReplace(r"(\p{L}+)", "<$1>"), _sentence, odd_text),
        "FilterWikipediaXML": case(
            text.FilterWikipediaXML,
            lambda: (np.array("[[Paris|the capital]] of &lt;b&gt;France&lt;/b&gt; since 987"),),
            odd_text,
        ),
    }
