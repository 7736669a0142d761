"""The tokenizers without outside models: Whitespace, UnicodeChar, UnicodeScript, Regex, Basic, Wordpiece,
Bert and Python. MindSpore's documented examples, byte offsets checked against the UTF-8 encoding itself,
and pipelines over TextFileDataset files with the three output columns."""

from __future__ import annotations

import numpy as np
import pytest
from text_differential import BERT_DOC_VOCAB

import minddata as md
from minddata import text
from minddata.errors import ArgumentError
from minddata.text import NormalizeForm

WELCOME = "Welcome     To   BeiJing!"


def _spans_slice_the_utf8_text(sentence, tokens, start, limit):
    """Offsets are UTF-8 byte offsets: slicing the encoded text at them gives back each token."""
    data = sentence.encode("utf-8")
    assert start.dtype == np.uint32 and limit.dtype == np.uint32
    return [data[a:b].decode("utf-8") for a, b in zip(start.tolist(), limit.tolist())] == tokens.tolist()


def _text_file(tmp_path, lines):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------------------------------------- Whitespace


def test_whitespace_tokenizer_documented_example_with_offsets():
    tokens, start, limit = text.WhitespaceTokenizer(with_offsets=True)(WELCOME)
    assert tokens.tolist() == ["Welcome", "To", "BeiJing!"]
    assert start.tolist() == [0, 12, 17] and limit.tolist() == [7, 14, 25]


def test_whitespace_tokenizer_splits_on_unicode_white_space_only():
    # U+3000 (ideographic space) and U+00A0 are White_Space; U+200B (zero width space) is not.
    sentence = "a\u3000b\xa0c\u200bd"
    assert text.WhitespaceTokenizer()(sentence).tolist() == ["a", "b", "c\u200bd"]


def test_whitespace_tokenizer_gives_one_empty_token_for_blank_text():
    tokens, start, limit = text.WhitespaceTokenizer(with_offsets=True)("   ")
    assert tokens.tolist() == [""] and start.tolist() == [0] and limit.tolist() == [0]


def test_tokenizers_take_bytes_strings():
    assert text.WhitespaceTokenizer()(np.array("caf\xe9 au lait".encode())).tolist() == ["café", "au", "lait"]


def test_tokenizers_reject_arrays_of_several_strings():
    with pytest.raises(ValueError, match=r"WhitespaceTokenizer: the input must be one string .*shape \(2,\)"):
        text.WhitespaceTokenizer()(np.array(["a b", "c"]))


def test_tokenizers_reject_numbers():
    with pytest.raises(ValueError, match="UnicodeCharTokenizer: the input must be strings"):
        text.UnicodeCharTokenizer()(np.array(3))


def test_with_offsets_must_be_a_bool():
    with pytest.raises(
        TypeError, match=r"WhitespaceTokenizer: `with_offsets` must be a bool. Found: 1 \(int\)"
    ):
        text.WhitespaceTokenizer(with_offsets=1)


# ---------------------------------------------------------------------------------------------- UnicodeChar


def test_unicode_char_tokenizer_offsets_are_utf8_bytes():
    sentence = "床前明月光 ok"
    tokens, start, limit = text.UnicodeCharTokenizer(with_offsets=True)(sentence)
    assert tokens.tolist() == list(sentence)
    assert start.tolist()[:3] == [0, 3, 6]
    assert _spans_slice_the_utf8_text(sentence, tokens, start, limit)


def test_unicode_char_tokenizer_keeps_astral_characters_whole():
    tokens, start, limit = text.UnicodeCharTokenizer(with_offsets=True)("a🙂b")
    assert tokens.tolist() == ["a", "🙂", "b"] and limit.tolist() == [1, 5, 6]


# ---------------------------------------------------------------------------------------------- UnicodeScript


def test_unicode_script_tokenizer_documented_example_keeps_whitespace():
    op = text.UnicodeScriptTokenizer(keep_whitespace=True, with_offsets=False)
    assert op(WELCOME).tolist() == ["Welcome", "     ", "To", "   ", "BeiJing", "!"]


def test_unicode_script_tokenizer_splits_where_the_script_changes():
    sentence = "Chinese中国русский123!"
    tokens, start, limit = text.UnicodeScriptTokenizer(with_offsets=True)(sentence)
    # Latin, Han, Cyrillic, then digits and "!" (both Common)
    assert tokens.tolist() == ["Chinese", "中国", "русский", "123!"]
    assert _spans_slice_the_utf8_text(sentence, tokens, start, limit)


def test_unicode_script_tokenizer_drops_whitespace_by_default():
    assert text.UnicodeScriptTokenizer()("日本語 のテキスト").tolist() == ["日本語", "の", "テキスト"]


# ---------------------------------------------------------------------------------------------- Regex


def test_regex_tokenizer_documented_example():
    assert text.RegexTokenizer(r"[ |,]")("Welcome  |,  To  |,  BeiJing!").tolist() == [
        "Welcome",
        "To",
        "BeiJing!",
    ]


def test_regex_tokenizer_keeps_delimiters_that_match_the_keep_pattern():
    sentence = "Hello, World!  Bye"
    tokens, start, limit = text.RegexTokenizer(r"\s+|\p{P}", r"\p{P}", with_offsets=True)(sentence)
    assert tokens.tolist() == ["Hello", ",", "World", "!", "Bye"]
    assert _spans_slice_the_utf8_text(sentence, tokens, start, limit)


def test_regex_tokenizer_reads_icu_code_point_escapes():
    # ICU's \x{hhhh}: every CJK ideograph is a delimiter, kept as a token.
    op = text.RegexTokenizer(r"[\x{4E00}-\x{9FFF}]", r"[\x{4E00}-\x{9FFF}]")
    assert op("ab中cd文").tolist() == ["ab", "中", "cd", "文"]


def test_regex_tokenizer_rejects_a_broken_pattern():
    with pytest.raises(
        ArgumentError, match=r"RegexTokenizer: `delim_pattern` is not a valid regular expression"
    ):
        text.RegexTokenizer("(unclosed")


# ---------------------------------------------------------------------------------------------- Basic


def test_basic_tokenizer_documented_example():
    op = text.BasicTokenizer(
        lower_case=False,
        keep_whitespace=False,
        normalization_form=NormalizeForm.NONE,
        preserve_unused_token=True,
    )
    assert op(WELCOME).tolist() == ["Welcome", "To", "BeiJing", "!"]


def test_basic_tokenizer_lower_case_folds_and_strips_accents_but_keeps_special_tokens():
    # MindSpore 2.10 repeats the text before each special token here (docs/mindspore_differences.md).
    op = text.BasicTokenizer(lower_case=True)
    assert op("Héllo [CLS] WORLD [unused12] Straße").tolist() == [
        "hello",
        "[CLS]",
        "world",
        "[unused12]",
        "strasse",
    ]


def test_basic_tokenizer_splits_special_tokens_when_not_preserved():
    op = text.BasicTokenizer(preserve_unused_token=False)
    assert op("[CLS] hi").tolist() == ["[", "CLS", "]", "hi"]


def test_basic_tokenizer_makes_each_cjk_ideograph_and_punctuation_a_token():
    op = text.BasicTokenizer(keep_whitespace=True)
    assert op("我爱 ok¡").tolist() == ["我", "爱", " ", "ok", "¡"]


def test_basic_tokenizer_normalizes_with_the_given_form_and_offsets_index_the_normalized_text():
    sentence = "ﬁne ①"
    tokens, start, limit = text.BasicTokenizer(normalization_form=NormalizeForm.NFKC, with_offsets=True)(
        sentence
    )
    assert tokens.tolist() == ["fine", "1"]
    assert _spans_slice_the_utf8_text("fine 1", tokens, start, limit)


def test_basic_tokenizer_turns_control_characters_into_spaces():
    assert text.BasicTokenizer()("a\x00b\u200dc").tolist() == ["a", "b", "c"]


# ---------------------------------------------------------------------------------------------- Wordpiece and Bert

WORDPIECE_VOCAB = ["book", "cholera", "era", "favor", "##ite", "my", "is", "love", "dur", "##ing", "the"]


def test_wordpiece_tokenizer_documented_vocabulary():
    vocab = text.Vocab.from_list(WORDPIECE_VOCAB)
    op = text.WordpieceTokenizer(vocab=vocab, unknown_token="[UNK]", max_bytes_per_token=100)
    assert op(["my", "favorite", "book", "is", "love", "during", "the", "cholera", "era"]).tolist() == [
        "my",
        "favor",
        "##ite",
        "book",
        "is",
        "love",
        "dur",
        "##ing",
        "the",
        "cholera",
        "era",
    ]


def test_wordpiece_offsets_are_within_each_word_and_an_unknown_word_spans_itself():
    vocab = text.Vocab.from_list(WORDPIECE_VOCAB)
    tokens, start, limit = text.WordpieceTokenizer(vocab, with_offsets=True)(["favorite", "xyz"])
    assert tokens.tolist() == ["favor", "##ite", "[UNK]"]
    assert start.tolist() == [0, 5, 0] and limit.tolist() == [5, 8, 3]


def test_wordpiece_partly_split_unknown_word_has_one_span():
    # MindSpore 2.10 keeps the spans of the pieces found before giving up, so it returns more offsets
    # than tokens; here each token has exactly one span (docs/mindspore_differences.md).
    vocab = text.Vocab.from_list(WORDPIECE_VOCAB)
    tokens, start, limit = text.WordpieceTokenizer(vocab, with_offsets=True)(["bookx", "my"])
    assert tokens.tolist() == ["[UNK]", "my"]
    assert start.tolist() == [0, 0] and limit.tolist() == [5, 2]


def test_wordpiece_keeps_unknown_words_when_unknown_token_is_empty():
    vocab = text.Vocab.from_list(WORDPIECE_VOCAB)
    assert text.WordpieceTokenizer(vocab, unknown_token="")(["bookx", "my"]).tolist() == ["bookx", "my"]


def test_wordpiece_treats_words_longer_than_max_bytes_as_unknown():
    vocab = text.Vocab.from_list(WORDPIECE_VOCAB)
    assert text.WordpieceTokenizer(vocab, max_bytes_per_token=4)(["favorite", "book"]).tolist() == [
        "[UNK]",
        "book",
    ]


def test_wordpiece_uses_the_given_suffix_indicator():
    vocab = text.Vocab.from_list(["un", "@@aff", "@@able"])
    assert text.WordpieceTokenizer(vocab, suffix_indicator="@@")("unaffable").tolist() == [
        "un",
        "@@aff",
        "@@able",
    ]


def test_wordpiece_requires_a_vocab():
    with pytest.raises(TypeError, match="WordpieceTokenizer: `vocab` must be a text.Vocab"):
        text.WordpieceTokenizer(["book"])


BERT_VOCAB = BERT_DOC_VOCAB


def test_bert_tokenizer_documented_example():
    vocab = text.Vocab.from_list(BERT_VOCAB)
    assert text.BertTokenizer(vocab=vocab, with_offsets=False)("床前明月光").tolist() == [
        "床",
        "前",
        "明",
        "月",
        "光",
    ]


def test_bert_tokenizer_lower_cases_splits_words_and_offsets_index_the_text():
    vocab = text.Vocab.from_list(BERT_VOCAB)
    sentence = "I make small mistakes [CLS] 嘿哈"
    tokens, start, limit = text.BertTokenizer(vocab, lower_case=True, with_offsets=True)(sentence)
    assert tokens.tolist() == ["i", "make", "small", "mistake", "##s", "[CLS]", "嘿", "哈"]
    assert start.tolist() == [0, 2, 7, 13, 20, 22, 28, 31]
    assert limit.tolist() == [1, 6, 12, 20, 21, 27, 31, 34]


def test_bert_tokenizer_marks_words_it_cannot_split_as_unknown():
    vocab = text.Vocab.from_list(BERT_VOCAB)
    assert text.BertTokenizer(vocab)("i am zzz").tolist() == ["i", "am", "[UNK]"]


# ---------------------------------------------------------------------------------------------- Python


def test_python_tokenizer_runs_the_function():
    def my_tokenizer(line):
        return line.split()

    assert text.PythonTokenizer(my_tokenizer)("Welcome to Beijing").tolist() == ["Welcome", "to", "Beijing"]


def test_python_tokenizer_rejects_a_function_returning_a_string():
    with pytest.raises(ValueError, match="PythonTokenizer: the tokenizer 'upper' must return a list of str"):
        text.PythonTokenizer(str.upper)("abc")


def test_python_tokenizer_needs_a_callable():
    with pytest.raises(TypeError, match="PythonTokenizer: `tokenizer` must be a callable"):
        text.PythonTokenizer("split")


# ---------------------------------------------------------------------------------------------- pipelines


def test_tokenizer_with_offsets_gives_three_columns_in_a_pipeline(tmp_path):
    lines = ["Welcome to Beijing", "北京 欢迎 你"]
    ds = md.TextFileDataset(_text_file(tmp_path, lines), shuffle=False)
    ds = ds.map(
        text.WhitespaceTokenizer(with_offsets=True),
        input_columns="text",
        output_columns=["token", "offsets_start", "offsets_limit"],
    )
    rows = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert ds.get_col_names() == ["token", "offsets_start", "offsets_limit"]
    assert rows[1]["token"].tolist() == ["北京", "欢迎", "你"]
    assert rows[1]["offsets_start"].tolist() == [0, 7, 14] and rows[1]["offsets_limit"].tolist() == [
        6,
        13,
        17,
    ]
    assert rows[0]["token"].dtype.kind == "U"


def test_bert_pipeline_pads_token_batches(tmp_path):
    vocab = text.Vocab.from_list(BERT_VOCAB)
    ds = md.TextFileDataset(_text_file(tmp_path, ["床前明月光", "i make mistakes"]), shuffle=False)
    ds = ds.map(
        [text.BertTokenizer(vocab, lower_case=True), text.Lookup(vocab, "[UNK]")], input_columns="text"
    )
    ds = ds.padded_batch(2, pad_info={"text": ([None], vocab.tokens_to_ids("[PAD]"))})
    batch = next(ds.create_dict_iterator(num_epochs=1, output_numpy=True))["text"]
    pad = vocab.tokens_to_ids("[PAD]")
    assert batch.tolist() == [
        vocab.tokens_to_ids(["床", "前", "明", "月", "光"]),
        vocab.tokens_to_ids(["i", "make", "mistake", "##s"]) + [pad],
    ]


def test_string_tokens_and_offsets_cross_process_workers(tmp_path):
    lines = [f"Line {i}: naïve café, 北京{i}!" for i in range(12)]
    op = text.BasicTokenizer(lower_case=True, with_offsets=True)
    ds = md.TextFileDataset(_text_file(tmp_path, lines), shuffle=False).map(
        op,
        input_columns="text",
        output_columns=["token", "offsets_start", "offsets_limit"],
        num_parallel_workers=2,
        python_multiprocessing=True,
    )
    rows = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    expected = [op(line) for line in lines]
    assert [r["token"].tolist() for r in rows] == [e[0].tolist() for e in expected]
    assert [r["offsets_limit"].tolist() for r in rows] == [e[2].tolist() for e in expected]
    assert rows[3]["token"].tolist() == ["line", "3", ":", "naive", "cafe", ",", "北", "京", "3", "!"]
