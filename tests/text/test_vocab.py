"""Vocab (from_list, from_file, from_dict, from_dataset; tokens_to_ids, ids_to_tokens) and Lookup, checked
on MindSpore's documented examples and in pipelines over TextFileDataset files."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from testkit import column

import minddata as md
from minddata import text
from minddata.errors import ArgumentError


def _text_file(tmp_path, lines, name="corpus.txt"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_from_list_puts_special_tokens_first_as_mindspore_documents():
    vocab = text.Vocab.from_list(["w1", "w2", "w3"], special_tokens=["<unk>"], special_first=True)
    assert vocab.tokens_to_ids(["w1", "w3"]) == [1, 3]
    assert vocab.ids_to_tokens(0) == "<unk>"


def test_from_list_appends_special_tokens_when_not_first():
    vocab = text.Vocab.from_list(["a", "b"], special_tokens=["<pad>", "<unk>"], special_first=False)
    assert vocab.vocab() == {"a": 0, "b": 1, "<pad>": 2, "<unk>": 3}


def test_unknown_tokens_and_ids_map_to_minus_one_and_empty_string():
    vocab = text.Vocab.from_list(["x"])
    assert vocab.tokens_to_ids("y") == -1
    assert vocab.ids_to_tokens([0, 5]) == ["x", ""]


def test_tokens_to_ids_takes_numpy_string_arrays():
    vocab = text.Vocab.from_list(["a", "b"])
    assert vocab.tokens_to_ids(np.array(["b", "a", "c"])) == [1, 0, -1]


def test_from_list_rejects_repeated_words():
    with pytest.raises(
        ArgumentError, match=r"Vocab.from_list: `word_list` must not repeat a word. Found 'a' twice"
    ):
        text.Vocab.from_list(["a", "b", "a"])


def test_special_tokens_may_not_repeat_words():
    with pytest.raises(ArgumentError, match="special_tokens"):
        text.Vocab.from_list(["a", "<unk>"], special_tokens=["<unk>"])


def test_from_list_rejects_non_strings():
    with pytest.raises(TypeError, match=r"`word_list\[1\]` must be a str. Found: 3 \(int\)"):
        text.Vocab.from_list(["a", 3])


def test_from_file_takes_the_word_before_the_delimiter(tmp_path):
    # MindSpore's documented example: 5 words "<pad>", "<unk>", "apple", "banana", "cat".
    path = _text_file(tmp_path, ["apple,apple2", "banana, 333", "cat,00"])
    vocab = text.Vocab.from_file(path, ",", None, ["<pad>", "<unk>"], True)
    assert vocab.vocab() == {"<pad>": 0, "<unk>": 1, "apple": 2, "banana": 3, "cat": 4}


def test_from_file_reads_at_most_vocab_size_words(tmp_path):
    path = _text_file(tmp_path, ["a", "b", "c", "d"])
    assert text.Vocab.from_file(path, vocab_size=2).vocab() == {"a": 0, "b": 1}


def test_from_file_names_the_line_of_a_repeated_word(tmp_path):
    path = _text_file(tmp_path, ["a", "b", "a"])
    with pytest.raises(ArgumentError, match="line 3: 'a' repeats line 1"):
        text.Vocab.from_file(path)


def test_from_dict_keeps_the_given_ids():
    vocab = text.Vocab.from_dict({"home": 3, "behind": 2, "the": 4, "world": 5, "<unk>": 6})
    assert vocab.tokens_to_ids(["the", "<unk>"]) == [4, 6]
    assert vocab.ids_to_tokens(2) == "behind"


def test_from_dict_lets_words_share_an_id_and_the_last_one_names_it():
    vocab = text.Vocab.from_dict({"Hello": 1, "hello": 1, "x": 0})
    assert vocab.tokens_to_ids(["Hello", "hello"]) == [1, 1] and vocab.ids_to_tokens(1) == "hello"


def test_from_file_keeps_an_empty_line_as_a_word_so_later_ids_match_their_lines(tmp_path):
    path = _text_file(tmp_path, ["apple", "", "cat"])
    assert text.Vocab.from_file(path).vocab() == {"apple": 0, "": 1, "cat": 2}


def test_ids_to_tokens_rejects_negative_ids():
    with pytest.raises(ArgumentError, match=r"ids must be in \[0, 2147483647\]. Found: -1"):
        text.Vocab.from_list(["a"]).ids_to_tokens([0, -1])


def test_from_dict_rejects_negative_ids():
    with pytest.raises(ArgumentError, match=r"`word_dict\['a'\]` must be at least 0. Found: -1"):
        text.Vocab.from_dict({"a": -1})


def test_from_dataset_orders_by_frequency_then_alphabet(tmp_path):
    path = _text_file(tmp_path, ["b a c a", "c a d", "b b"])
    ds = md.TextFileDataset(path, shuffle=False).map(text.WhitespaceTokenizer(), input_columns="text")
    vocab = text.Vocab.from_dataset(ds, "text", special_tokens=["<pad>", "<unk>"], special_first=True)
    # counts: a 3, b 3, c 2, d 1
    assert vocab.vocab() == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "d": 5}


def test_from_dataset_filters_by_frequency_then_takes_top_k(tmp_path):
    path = _text_file(tmp_path, ["a a a a b b b c c d e e"])
    ds = md.TextFileDataset(path, shuffle=False).map(text.WhitespaceTokenizer(), input_columns="text")
    vocab = text.Vocab.from_dataset(ds, ["text"], freq_range=(2, 3), top_k=2)
    # within [2, 3]: b 3, c 2, e 2; the top 2 by count, ties alphabetically
    assert vocab.vocab() == {"b": 0, "c": 1}


def test_from_dataset_rejects_special_tokens_found_in_the_data():
    ds = md.NumpySlicesDataset({"text": [["<unk>", "a"]]}, shuffle=False)
    with pytest.raises(ArgumentError, match="also occur in the dataset"):
        text.Vocab.from_dataset(ds, "text", special_tokens=["<unk>"])


def test_from_dataset_rejects_unknown_columns():
    ds = md.NumpySlicesDataset({"text": [["a"]]}, shuffle=False)
    with pytest.raises(ArgumentError, match=r"\['words'\] are not columns"):
        text.Vocab.from_dataset(ds, "words")


def test_vocab_pickles_with_its_table():
    vocab = text.Vocab.from_list(["a", "b"], ["<unk>"])
    back = pickle.loads(pickle.dumps(vocab))
    assert back == vocab and back.ids_to_tokens(2) == "b"


def test_lookup_maps_documented_example():
    vocab = text.Vocab.from_list(["深", "圳", "欢", "迎", "您"])
    out = text.Lookup(vocab)(["深", "圳", "欢", "迎", "您"])
    assert out.dtype == np.int32 and out.tolist() == [0, 1, 2, 3, 4]


def test_lookup_gives_unknown_tokens_the_unknown_id_in_the_requested_dtype():
    vocab = text.Vocab.from_list(["a", "b"], ["<unk>"])
    out = text.Lookup(vocab, "<unk>", data_type=np.int64)(np.array([["a", "zz"], ["b", "a"]]))
    assert out.dtype == np.int64 and out.tolist() == [[1, 0], [2, 1]]


def test_lookup_without_unknown_token_names_the_missing_token():
    vocab = text.Vocab.from_list(["a"])
    with pytest.raises(ValueError, match="Lookup: 'zz' is not in the vocabulary"):
        text.Lookup(vocab)(["a", "zz"])


def test_lookup_rejects_an_unknown_token_outside_the_vocabulary():
    with pytest.raises(ArgumentError, match="`unknown_token` must be in the vocabulary. Found: '<unk>'"):
        text.Lookup(text.Vocab.from_list(["a"]), "<unk>")


def test_lookup_rejects_string_data_type():
    with pytest.raises(TypeError, match="Lookup: `data_type` must be a numeric NumPy dtype"):
        text.Lookup(text.Vocab.from_list(["a"]), data_type=str)


def test_tokenize_and_lookup_pipeline_over_a_text_file(tmp_path):
    # MindSpore's module example: UnicodeCharTokenizer then Lookup over a TextFileDataset.
    path = _text_file(tmp_path, ["深圳欢迎您", "您欢迎深圳"])
    vocab = text.Vocab.from_list(["深", "圳", "欢", "迎", "您"])
    ds = md.TextFileDataset(path, shuffle=False)
    ds = ds.map(operations=[text.UnicodeCharTokenizer(), text.Lookup(vocab)], input_columns="text")
    assert column(ds, "text") == [[0, 1, 2, 3, 4], [4, 2, 3, 0, 1]]


def test_lookup_runs_in_process_workers(tmp_path):
    path = _text_file(tmp_path, [f"w{i % 3} w{(i + 1) % 3}" for i in range(8)])
    vocab = text.Vocab.from_list(["w0", "w1", "w2"])
    ds = md.TextFileDataset(path, shuffle=False).map(
        [text.WhitespaceTokenizer(), text.Lookup(vocab)],
        input_columns="text",
        num_parallel_workers=2,
        python_multiprocessing=True,
    )
    assert column(ds, "text") == [[i % 3, (i + 1) % 3] for i in range(8)]


def test_mindspore_module_paths_hold_the_text_ops():
    import minddata.dataset.text as ms_text
    from minddata.dataset.text import transforms, utils

    assert ms_text.Lookup is text.Lookup and transforms.BertTokenizer is text.BertTokenizer
    assert utils.Vocab is text.Vocab and utils.to_str is text.to_str


def test_dataset_build_vocab_is_vocab_from_dataset(tmp_path):
    path = _text_file(tmp_path, ["b a c a", "c a d"])
    ds = md.TextFileDataset(path, shuffle=False).map(text.WhitespaceTokenizer(), input_columns="text")
    vocab = ds.build_vocab(["text"], None, 3, ["<unk>"], False)
    assert vocab.vocab() == {"a": 0, "c": 1, "b": 2, "<unk>": 3}
