"""The text transforms: Ngram, ToNumber, Truncate, TruncateSequencePair, SlidingWindow, NormalizeUTF8,
CaseFold, RegexReplace, AddToken, FilterWikipediaXML, and to_str / to_bytes. MindSpore's documented
examples, Python's unicodedata and str.casefold as references, and pipelines over TextFileDataset files."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest

import minddata as md
from minddata import text
from minddata.errors import ArgumentError
from minddata.text import NormalizeForm


def _text_file(tmp_path, lines):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _column(ds, name="text"):
    return [row[name].tolist() for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


# ---------------------------------------------------------------------------------------------- Ngram


def test_ngram_documented_example():
    op = text.Ngram(3, separator="-")
    assert op(["WildRose Country", "Canada's Ocean Playground", "Land of Living Skies"]).tolist() == [
        "WildRose Country-Canada's Ocean Playground-Land of Living Skies"
    ]


def test_ngram_pads_at_most_n_minus_one_tokens_per_side():
    op = text.Ngram([2, 3], left_pad=("_", 5), right_pad=("$", 1))
    assert op(["a", "b"]).tolist() == ["_ a", "a b", "b $", "_ _ a", "_ a b", "a b $"]


def test_ngram_of_a_too_short_sequence_is_one_empty_string():
    assert text.Ngram([3, 1])(["a", "b"]).tolist() == ["", "a", "b"]


def test_ngram_of_an_empty_sequence_is_one_empty_string_per_n():
    # MindSpore 2.10 raises "Input Tensor has no data" instead.
    assert text.Ngram([2, 1])(np.array([], dtype=str)).tolist() == ["", ""]


def test_ngram_rejects_non_positive_n():
    with pytest.raises(ArgumentError, match="Ngram: `n` must be greater than 0. Found: 0"):
        text.Ngram([2, 0])


def test_ngram_rejects_bad_padding():
    with pytest.raises(ArgumentError, match=r"Ngram: `left_pad` must be a tuple \(pad_token, pad_width\)"):
        text.Ngram(2, left_pad="_")


def test_ngram_needs_a_1d_input():
    with pytest.raises(ValueError, match=r"Ngram: the input must be 1-D. Found shape \(\)"):
        text.Ngram(2)("a b")


# ---------------------------------------------------------------------------------------------- ToNumber


def test_to_number_documented_example():
    import minddata.common.dtype as mstype

    out = text.ToNumber(mstype.int8)(["1", "2", "3"])
    assert out.dtype == np.int8 and out.tolist() == [1, 2, 3]


def test_to_number_parses_floats_and_keeps_the_shape():
    out = text.ToNumber(np.float32)(np.array([["1.5", "-2e3"], ["nan", " +7"]]))
    np.testing.assert_array_equal(out, np.array([[1.5, -2000.0], [np.nan, 7.0]], np.float32))


def test_to_number_skips_leading_whitespace_and_a_plus_sign():
    assert text.ToNumber(np.int32)([" 12", "+3", "-0"]).tolist() == [12, 3, 0]


def test_to_number_rejects_infinity():
    with pytest.raises(ValueError, match="'inf' is out of the range of float64"):
        text.ToNumber(np.float64)(["inf"])


def test_to_number_rejects_values_out_of_range():
    with pytest.raises(ValueError, match=r"ToNumber: '300' is out of the range of int8 \[-128, 127\]"):
        text.ToNumber(np.int8)(["300"])


def test_to_number_rejects_negative_numbers_for_unsigned_types():
    with pytest.raises(ValueError, match="'-1' is out of the range of uint16"):
        text.ToNumber(np.uint16)(["-1"])


def test_to_number_rejects_text_that_is_not_a_number():
    with pytest.raises(ValueError, match="ToNumber: '12abc' is not an integer"):
        text.ToNumber(np.int32)(["12abc"])


def test_to_number_rejects_float_overflow():
    with pytest.raises(ValueError, match="'1e39' is out of the range of float32"):
        text.ToNumber(np.float32)(["1e39"])


def test_to_number_data_type_must_be_numeric():
    with pytest.raises(TypeError, match="ToNumber: `data_type` must be an integer or floating dtype"):
        text.ToNumber(np.bool_)


# ---------------------------------------------------------------------------------------------- lengths


def test_truncate_documented_example():
    assert text.Truncate(max_seq_len=3)(["a", "b", "c", "d", "e"]).tolist() == ["a", "b", "c"]


def test_truncate_cuts_the_last_axis_of_2d_inputs():
    assert text.Truncate(2)(np.arange(6).reshape(2, 3)).tolist() == [[0, 1], [3, 4]]


def test_truncate_rejects_3d_inputs():
    with pytest.raises(ValueError, match="Truncate: the input must be 1-D or 2-D"):
        text.Truncate(2)(np.zeros((2, 2, 2)))


def test_truncate_sequence_pair_documented_example():
    first, second = text.TruncateSequencePair(max_length=4)(np.array([1, 2, 3]), np.array([4, 5]))
    assert first.tolist() == [1, 2] and second.tolist() == [4, 5]


def test_truncate_sequence_pair_cuts_the_second_on_a_tie():
    first, second = text.TruncateSequencePair(3)(np.array(["a", "b"]), np.array(["c", "d"]))
    assert first.tolist() == ["a", "b"] and second.tolist() == ["c"]


def test_truncate_sequence_pair_in_a_pipeline():
    ds = md.NumpySlicesDataset({"col1": [[1, 2, 3]], "col2": [[4, 5]]}, shuffle=False)
    ds = ds.map(text.TruncateSequencePair(4), input_columns=["col1", "col2"])
    row = next(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert row["col1"].tolist() == [1, 2] and row["col2"].tolist() == [4, 5]


def test_sliding_window_documented_example():
    ds = md.NumpySlicesDataset(data=[[1, 2, 3, 4, 5]], column_names="col1", shuffle=False)
    ds = ds.map(operations=text.SlidingWindow(3, 0), input_columns="col1")
    assert _column(ds, "col1") == [[[1, 2, 3], [2, 3, 4], [3, 4, 5]]]


def test_sliding_window_wider_than_the_input_is_empty():
    out = text.SlidingWindow(4)(["a", "b"])
    assert out.shape == (0, 4)


def test_sliding_window_rejects_other_axes():
    with pytest.raises(ArgumentError, match="SlidingWindow: `axis` must be at most 0. Found: 1"):
        text.SlidingWindow(2, axis=1)


def test_add_token_documented_examples():
    assert text.AddToken(token="TOKEN", begin=True)(["happy", "birthday", "to", "you"]).tolist() == [
        "TOKEN",
        "happy",
        "birthday",
        "to",
        "you",
    ]
    ds = md.NumpySlicesDataset(data=[["a", "b", "c", "d", "e"]], column_names=["text"], shuffle=False)
    ds = ds.map(operations=text.AddToken(token="TOKEN", begin=False), input_columns="text")
    assert _column(ds) == [["a", "b", "c", "d", "e", "TOKEN"]]


def test_add_token_adds_to_each_row_of_a_2d_input():
    out = text.AddToken("[SEP]", begin=False)(np.array([["a", "b"], ["c", "d"]]))
    assert out.tolist() == [["a", "b", "[SEP]"], ["c", "d", "[SEP]"]]


def test_add_token_needs_a_string_token():
    with pytest.raises(TypeError, match=r"AddToken: `token` must be a str. Found: 1 \(int\)"):
        text.AddToken(1)


# ---------------------------------------------------------------------------------------------- strings


def test_normalize_utf8_documented_example():
    out = text.NormalizeUTF8(normalize_form=NormalizeForm.NFKC)(["ṩ", "ḍ̇", "q̇", "ﬁ", "2⁵", "ẛ"])
    assert out.tolist() == ["ṩ", "ḍ̇", "q̇", "fi", "25", "ṡ"]


@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD", "NFKD"])
def test_normalize_utf8_matches_unicodedata(form):
    samples = ["e\u0301", "Å", "ﬁ", "①", "한국어", "\u1e9b\u0323"]
    out = text.NormalizeUTF8(NormalizeForm[form])(samples)
    assert out.tolist() == [unicodedata.normalize(form, s) for s in samples]


def test_normalize_utf8_none_leaves_text_alone():
    assert text.NormalizeUTF8(NormalizeForm.NONE)(["e\u0301"]).tolist() == ["e\u0301"]


def test_case_fold_documented_example_and_full_folding():
    assert text.CaseFold()(["Welcome to China!"]).tolist() == ["welcome to china!"]
    assert text.CaseFold()(np.array([["Straße", "ΣΊΣΥΦΟΣ"]])).tolist() == [["strasse", "σίσυφοσ"]]


def test_regex_replace_all_and_first():
    assert text.RegexReplace(pattern="one", replace="two", replace_all=True)("onetwoonetwoone").tolist() == (
        "twotwotwotwotwo"
    )
    assert text.RegexReplace("one", "two", replace_all=False)(["one one"]).tolist() == ["two one"]


def test_regex_replace_reads_icu_groups_and_escapes():
    op = text.RegexReplace(r"(\w+)@(?<host>\w+)", r"${host}: $1 \$0")
    assert op("me@home").tolist() == "home: me $0"


def test_regex_replace_rejects_a_broken_pattern():
    with pytest.raises(ArgumentError, match="RegexReplace: `pattern` is not a valid regular expression"):
        text.RegexReplace("[", "")


def test_filter_wikipedia_xml_documented_example():
    assert text.FilterWikipediaXML()(["Welcome to China", "!!!", "ABC"]).tolist() == [
        "welcome to china",
        "",
        "abc",
    ]


def test_filter_wikipedia_xml_removes_markup_and_spells_digits():
    line = "{{Infobox}}[[Image:x.png|thumb|A ''cat'']] the [[Paris|capital]] in 1900 &amp; [[fr:Paris]]<ref>x</ref>"
    assert text.FilterWikipediaXML()(line).tolist() == "a cat the capital in one nine zero zero"


def test_filter_wikipedia_xml_empties_redirects():
    assert text.FilterWikipediaXML()(["#REDIRECT [[Elsewhere]]"]).tolist() == [""]


def test_string_ops_reject_numbers():
    with pytest.raises(ValueError, match="CaseFold: the input must be strings"):
        text.CaseFold()(np.array([1, 2]))


def test_normalize_and_case_fold_pipeline_over_a_text_file(tmp_path):
    ds = md.TextFileDataset(_text_file(tmp_path, ["Straße ﬁne", "ÅNGSTRÖM"]), shuffle=False)
    ds = ds.map([text.NormalizeUTF8(), text.CaseFold(), text.WhitespaceTokenizer()], input_columns="text")
    assert _column(ds) == [["strasse", "fine"], ["ångström"]]


# ---------------------------------------------------------------------------------------------- to_str, to_bytes


def test_to_bytes_and_back():
    data = np.array([["1", "2", "café"]], dtype=np.str_)
    encoded = text.to_bytes(data)
    assert encoded.dtype.kind == "S" and encoded[0, 2] == "café".encode()
    np.testing.assert_array_equal(text.to_str(encoded), data)


def test_to_str_reads_bytes_columns_from_a_pipeline():
    ds = md.NumpySlicesDataset(
        np.array([["1", "2", "3"]], dtype=np.bytes_), column_names=["text"], shuffle=False
    )
    row = next(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert text.to_str(row["text"]).tolist() == ["1", "2", "3"]


def test_to_str_needs_an_array():
    with pytest.raises(TypeError, match="to_str: `array` must be a NumPy array"):
        text.to_str([b"a"])
