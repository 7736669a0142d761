"""The text ops' differential cases: each op built and called eagerly under MindSpore 2.10 and under
minddata, outputs compared by tests/text/test_mindspore_text.py.

This file runs in both environments (MindSpore's needs numpy<2 and has neither minddata nor jieba):
``python text_differential.py PATHS_JSON OUT_JSON`` runs every case with ``mindspore.dataset.text`` and
writes the outputs; :func:`run` does the same with ``minddata.text``. Arguments are plain data, with
markers for what differs between the two libraries: ``{"vocab": [...]}`` (``Vocab.from_list``),
``{"enum": "JiebaMode.MP"}``, ``{"dtype": "int32"}`` (mstype), ``{"file": key}`` (a fixture file),
``{"spm": [model type, vocab size]}`` (a SentencePieceVocab trained on the ``corpus`` file by each library).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

WELCOME = "Welcome     To   BeiJing!"
MIXED = "Hello, World!  Chinese中国 русский 123 日本語のテキスト e\u0301 ﬁ ① Straße\ttab"
S1 = "今天天气太好了我们一起去外面玩吧"
S2 = "小明硕士毕业于中国科学院计算所，后在日本京都大学深造 hello world 2024年"
WORDPIECE = ["book", "cholera", "era", "favor", "##ite", "my", "is", "love", "dur", "##ing", "the"]
# MindSpore's documented BertTokenizer example vocabulary (tests/text/test_tokenizers.py uses it too).
BERT_DOC_VOCAB = [
    "床", "前", "明", "月", "光", "疑", "是", "地", "上", "霜", "举", "头", "望", "低", "思", "故", "乡", "繁", "體", "字", "嘿",
    "哈", "大", "笑", "嘻", "i", "am", "mak", "make", "small", "mistake", "##s", "katra", "take", "##es", "##cop",
    "##e", "[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]", "[unused1]",
]
BERT = [*BERT_DOC_VOCAB, "hello", "world", ",", "!", "straße", "strasse", "e"]


def s(value: str) -> dict:
    return {"str": value}


def strs(values: list[str]) -> dict:
    return {"strs": values}


def ints(values: list) -> dict:
    return {"ints": values}


def enum(name: str) -> dict:
    return {"enum": name}


# name -> (op class, args, kwargs, inputs)
CASES: dict[str, tuple[str, list, dict, list]] = {
    "whitespace": ("WhitespaceTokenizer", [True], {}, [s(WELCOME)]),
    "whitespace_unicode": ("WhitespaceTokenizer", [True], {}, [s("a\u3000b\xa0c\u200bd\x1ce\u2028f")]),
    "whitespace_empty": ("WhitespaceTokenizer", [True], {}, [s("")]),
    "whitespace_blank": ("WhitespaceTokenizer", [True], {}, [s(" \t ")]),
    "unicode_char": ("UnicodeCharTokenizer", [True], {}, [s("床前 a🙂é")]),
    "unicode_char_empty": ("UnicodeCharTokenizer", [True], {}, [s("")]),
    "unicode_script_keep": ("UnicodeScriptTokenizer", [True, True], {}, [s(WELCOME)]),
    "unicode_script_mixed": ("UnicodeScriptTokenizer", [False, True], {}, [s(MIXED)]),
    "unicode_script_edges": ("UnicodeScriptTokenizer", [False, True], {}, [s("  a  ")]),
    "regex": ("RegexTokenizer", [r"[ |,]"], {}, [s("Welcome  |,  To  |,  BeiJing!")]),
    "regex_keep": ("RegexTokenizer", [r"\s+|\p{P}", r"\p{P}", True], {}, [s(MIXED)]),
    "regex_cjk": (
        "RegexTokenizer",
        [r"[\x{4E00}-\x{9FFF}]", r"[\x{4E00}-\x{9FFF}]", True],
        {},
        [s(S1 + "ab")],
    ),
    "regex_blank": ("RegexTokenizer", [r"\s+", "", True], {}, [s("   ")]),
    "basic": ("BasicTokenizer", [], {}, [s(WELCOME)]),
    "basic_mixed_offsets": ("BasicTokenizer", [], {"with_offsets": True}, [s(MIXED)]),
    "basic_lower": ("BasicTokenizer", [True], {"with_offsets": True}, [s(MIXED)]),
    "basic_lower_no_special": (
        "BasicTokenizer",
        [True, False, enum("NormalizeForm.NONE"), False, True],
        {},
        [s("Héllo [CLS] WORLD [unused12] Straße")],
    ),
    "basic_fold_compat": ("BasicTokenizer", [True], {}, [s("a\u00adb CAFÉ ① ﬁ ǅ")]),
    "basic_keep_whitespace": ("BasicTokenizer", [False, True], {"with_offsets": True}, [s("我爱 ok¡\tyes")]),
    "basic_nfkc": (
        "BasicTokenizer",
        [False, False, enum("NormalizeForm.NFKC")],
        {"with_offsets": True},
        [s("ﬁne ① Ａ")],
    ),
    "basic_nfd": ("BasicTokenizer", [False, False, enum("NormalizeForm.NFD")], {}, [s("é ñ")]),
    "basic_control": ("BasicTokenizer", [], {}, [s("a\x00b\u200dc\td\x7fe")]),
    "basic_empty": ("BasicTokenizer", [], {"with_offsets": True}, [s("")]),
    "wordpiece": (
        "WordpieceTokenizer",
        [{"vocab": WORDPIECE}],
        {},
        [strs(["my", "favorite", "book", "is", "love", "during", "the", "cholera", "era"])],
    ),
    "wordpiece_offsets": (
        "WordpieceTokenizer",
        [{"vocab": WORDPIECE}],
        {"with_offsets": True},
        [strs(["favorite", "xyz", "during"])],
    ),
    "wordpiece_keep_unknown": (
        "WordpieceTokenizer",
        [{"vocab": WORDPIECE}],
        {"unknown_token": "", "with_offsets": True},
        [strs(["zz", "my", "yy"])],
    ),
    "wordpiece_too_long": (
        "WordpieceTokenizer",
        [{"vocab": WORDPIECE}],
        {"max_bytes_per_token": 4, "with_offsets": True},
        [strs(["favorite", "book"])],
    ),
    "wordpiece_scalar": ("WordpieceTokenizer", [{"vocab": WORDPIECE}], {}, [s("favorite")]),
    "wordpiece_empty_word": (
        "WordpieceTokenizer",
        [{"vocab": WORDPIECE}],
        {"with_offsets": True},
        [strs([""])],
    ),
    "bert": ("BertTokenizer", [{"vocab": BERT}], {}, [s("床前明月光")]),
    "bert_offsets": (
        "BertTokenizer",
        [{"vocab": BERT}],
        {"with_offsets": True},
        [s("i make small mistakes 嘿哈, hello world!")],
    ),
    "bert_lower": (
        "BertTokenizer",
        [{"vocab": BERT}],
        {"lower_case": True, "with_offsets": True},
        [s("I MAKE small Mistakes, Hello WORLD! Straße é")],
    ),
    "bert_unknown": ("BertTokenizer", [{"vocab": BERT}], {}, [s("i am zzz [CLS] [unused1]")]),
    "jieba_mp": (
        "JiebaTokenizer",
        [{"file": "hmm"}, {"file": "jieba_dict"}, enum("JiebaMode.MP"), True],
        {},
        [s(S1)],
    ),
    "jieba_mp_mixed": (
        "JiebaTokenizer",
        [{"file": "hmm"}, {"file": "jieba_dict"}, enum("JiebaMode.MP"), True],
        {},
        [s(S2)],
    ),
    "jieba_hmm": (
        "JiebaTokenizer",
        [{"file": "hmm"}, {"file": "jieba_dict"}, enum("JiebaMode.HMM"), True],
        {},
        [s(S2)],
    ),
    "jieba_mix": (
        "JiebaTokenizer",
        [{"file": "hmm"}, {"file": "jieba_dict"}, enum("JiebaMode.MIX"), True],
        {},
        [s(S2)],
    ),
    "jieba_mix_poem": (
        "JiebaTokenizer",
        [{"file": "hmm"}, {"file": "jieba_dict"}],
        {},
        [s("床前明月光，疑是地上霜。")],
    ),
    "jieba_blank": ("JiebaTokenizer", [{"file": "hmm"}, {"file": "jieba_dict"}], {}, [s("  ")]),
    "sentencepiece_string": (
        "SentencePieceTokenizer",
        [{"file": "spm"}, enum("SPieceTokenizerOutType.STRING")],
        {},
        [s("The quick brown fox, 跳过 the lazy dogs!")],
    ),
    "sentencepiece_int": (
        "SentencePieceTokenizer",
        [{"file": "spm"}, enum("SPieceTokenizerOutType.INT")],
        {},
        [s("床前明月光 hello world 1234")],
    ),
    "sentencepiece_trained_unigram": (
        "SentencePieceTokenizer",
        [{"spm": ["UNIGRAM", 40]}, enum("SPieceTokenizerOutType.STRING")],
        {},
        [s("the quick dogs sleep 明月")],
    ),
    "sentencepiece_trained_bpe": (
        "SentencePieceTokenizer",
        [{"spm": ["BPE", 60]}, enum("SPieceTokenizerOutType.INT")],
        {},
        [s("the quick dogs sleep 明月")],
    ),
    "sentencepiece_trained_char": (
        "SentencePieceTokenizer",
        [{"spm": ["CHAR", 50]}, enum("SPieceTokenizerOutType.STRING")],
        {},
        [s("the lazy sun")],
    ),
    "sentencepiece_trained_word": (
        "SentencePieceTokenizer",
        [{"spm": ["WORD", 20]}, enum("SPieceTokenizerOutType.STRING")],
        {},
        [s("the quick dogs sleep")],
    ),
    "lookup": (
        "Lookup",
        [{"vocab": ["深", "圳", "欢", "迎", "您"]}],
        {},
        [strs(["深", "圳", "欢", "迎", "您"])],
    ),
    "lookup_unknown_2d": (
        "Lookup",
        [{"vocab": ["a", "b", "<unk>"]}, "<unk>", {"dtype": "int64"}],
        {},
        [{"strs2d": [["a", "zz"], ["b", "a"]]}],
    ),
    "ngram": (
        "Ngram",
        [3],
        {"separator": "-"},
        [strs(["WildRose Country", "Canada's Ocean Playground", "Land of Living Skies"])],
    ),
    "ngram_pads": ("Ngram", [[2, 3]], {"left_pad": ("_", 5), "right_pad": ("$", 1)}, [strs(["a", "b"])]),
    "ngram_short": ("Ngram", [[3, 1]], {}, [strs(["a", "b"])]),
    "to_number_int8": ("ToNumber", [{"dtype": "int8"}], {}, [strs(["1", "2", "-3", " 4", "+5"])]),
    "to_number_float": (
        "ToNumber",
        [{"dtype": "float32"}],
        {},
        [{"strs2d": [["1.5", "-2e3"], ["0.1", "7"]]}],
    ),
    "to_number_uint64": ("ToNumber", [{"dtype": "uint64"}], {}, [strs(["18446744073709551615", "0"])]),
    "truncate": ("Truncate", [3], {}, [strs(["a", "b", "c", "d", "e"])]),
    "truncate_2d": ("Truncate", [2], {}, [ints([[0, 1, 2], [3, 4, 5]])]),
    "truncate_pair": ("TruncateSequencePair", [4], {}, [ints([1, 2, 3]), ints([4, 5])]),
    "truncate_pair_tie": ("TruncateSequencePair", [3], {}, [strs(["a", "b"]), strs(["c", "d"])]),
    "sliding_window": ("SlidingWindow", [3, 0], {}, [ints([1, 2, 3, 4, 5])]),
    "sliding_window_strings": ("SlidingWindow", [2, -1], {}, [strs(["a", "b", "c"])]),
    "normalize_nfkc": (
        "NormalizeUTF8",
        [enum("NormalizeForm.NFKC")],
        {},
        [strs(["ṩ", "ḍ̇", "q̇", "ﬁ", "2⁵", "ẛ"])],
    ),
    "normalize_nfd": ("NormalizeUTF8", [enum("NormalizeForm.NFD")], {}, [strs(["é", "한국어", "Å"])]),
    "normalize_nfc": ("NormalizeUTF8", [enum("NormalizeForm.NFC")], {}, [strs(["e\u0301", "\u1100\u1161"])]),
    "normalize_nfkd": ("NormalizeUTF8", [enum("NormalizeForm.NFKD")], {}, [s("ﬁ①Ａé")]),
    "case_fold": ("CaseFold", [], {}, [{"strs2d": [["Welcome to China!", "Straße"], ["ΣΊΣΥΦΟΣ", "İ ǅ ﬀ"]]}]),
    "case_fold_ignorables": (
        "CaseFold",
        [],
        {},
        [strs(["a\u00adb\u200dc", "①ﬁ", "ẞ", "ΐ", "\u0130", "Ⅻ ㎏"])],
    ),
    "regex_replace_all": ("RegexReplace", ["one", "two", True], {}, [strs(["onetwoonetwoone"])]),
    "regex_replace_first": ("RegexReplace", ["one", "two", False], {}, [s("one one")]),
    "regex_replace_groups": ("RegexReplace", [r"(\w+)@(\w+)", r"$2: $1 \$0"], {}, [s("me@home you@work")]),
    "regex_replace_classes": ("RegexReplace", [r"\p{P}+|\d", "_"], {}, [s("a, b! 12 c.")]),
    "add_token": ("AddToken", ["TOKEN", True], {}, [strs(["happy", "birthday", "to", "you"])]),
    "add_token_end_2d": ("AddToken", ["[SEP]", False], {}, [{"strs2d": [["a", "b"], ["c", "d"]]}]),
    "wikipedia_plain": ("FilterWikipediaXML", [], {}, [s("Welcome to China")]),
    "to_vectors": ("ToVectors", [{"vectors": "Vectors"}], {}, [strs(["no", "ok", "what"])]),
    "to_vectors_unk_lower": (
        "ToVectors",
        [{"vectors": "Vectors"}, [1, 1, 1], True],
        {},
        [strs(["OK", "hi", "x"])],
    ),
    "glove": ("ToVectors", [{"vectors": "GloVe"}], {}, [strs(["the", ",", "nope"])]),
    "fasttext": ("ToVectors", [{"vectors": "FastText"}], {}, [strs(["world", "hello"])]),
    "char_ngram": ("ToVectors", [{"vectors": "CharNGram"}, [-1, -1]], {}, [strs(["ab", "zz", "a"])]),
}

# Files the cases read: key -> (file name, content); "hmm", "spm" and "jieba_dict" are made by the test.
TEXT_FILES = {
    "vectors": ("vectors.txt", "ok 0.5 1.0 -1\nno -1 2 3\nHi 7 8 9\nok 9 9 9\n"),
    "glove": ("glove.6B.3d.txt", "the 0.1 0.2 0.3\n, 1 1 1\n"),
    "fasttext": ("wiki.simple.vec", "2 2\nhello 1 0\nworld 0 1\n"),
    "corpus": (
        "corpus.txt",
        "\n".join(
            [
                "the quick brown fox jumps over the lazy dog",
                "a lazy dog sleeps all day in the warm sun",
                "quick thinking saves the day",
                "床前明月光 疑是地上霜",
            ]
            * 25
        )
        + "\n",
    ),
    "char_ngram": (
        "charNgram.txt",
        "2gram-#BEGIN#a 1 0\n2gram-ab 0 1\n2gram-b#END# 1 1\n3gram-#BEGIN#ab 3 3\n2gram-a#END# 5 5\n",
    ),
}
VECTOR_FILES = {"Vectors": "vectors", "GloVe": "glove", "FastText": "fasttext", "CharNGram": "char_ngram"}


def _value(lib: Any, dtypes: Any, paths: dict, value: Any) -> Any:
    if isinstance(value, dict):
        if "vocab" in value:
            return lib.Vocab.from_list(value["vocab"])
        if "enum" in value:
            kind, member = value["enum"].split(".")
            return getattr(getattr(lib, kind), member)
        if "dtype" in value:
            return getattr(dtypes, value["dtype"])
        if "file" in value:
            return paths[value["file"]]
        if "spm" in value:
            kind, size = value["spm"]
            model = getattr(lib.SentencePieceModel, kind)
            return lib.SentencePieceVocab.from_file([paths["corpus"]], size, 0.9995, model, {})
        if "vectors" in value:
            kind = value["vectors"]
            return getattr(lib, kind).from_file(paths[VECTOR_FILES[kind]])
    return value


def _input(value: dict) -> np.ndarray:
    if "str" in value:
        return np.array(value["str"])
    if "strs" in value or "strs2d" in value:
        return np.array(value.get("strs", value.get("strs2d")), dtype=str)
    return np.array(value["ints"])


def _encode(out: Any) -> list:
    outs = out if isinstance(out, (tuple, list)) else [out]
    encoded = []
    for o in outs:
        arr = np.asarray(o)
        kind = "str" if arr.dtype.kind in "US" else str(arr.dtype)
        values = np.char.decode(arr, "utf-8").tolist() if arr.dtype.kind == "S" else arr.tolist()
        encoded.append({"dtype": kind, "shape": list(arr.shape), "values": values})
    return encoded


def run(lib: Any, dtypes: Any, paths: dict) -> dict:
    """``{case: outputs or {"error": message}}`` with ``lib`` the text module and ``dtypes`` its mstype."""
    results = {}
    for name, (cls, args, kwargs, inputs) in CASES.items():
        try:
            op = getattr(lib, cls)(
                *[_value(lib, dtypes, paths, a) for a in args],
                **{k: _value(lib, dtypes, paths, v) for k, v in kwargs.items()},
            )
            results[name] = _encode(op(*[_input(x) for x in inputs]))
        except Exception as error:  # noqa: BLE001 - recorded and compared by the test
            results[name] = {"error": f"{type(error).__name__}: {str(error)[:500]}"}
    return results


def write_files(folder: str) -> dict:
    import os

    paths = {}
    for key, (name, content) in TEXT_FILES.items():
        paths[key] = os.path.join(folder, name)
        with open(paths[key], "w", encoding="utf-8") as f:
            f.write(content)
    return paths


if __name__ == "__main__":
    import mindspore.common.dtype as mstype
    import mindspore.dataset.text as ms_text

    with open(sys.argv[1]) as f:
        file_paths = json.load(f)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(run(ms_text, mstype, file_paths), f, ensure_ascii=False)
