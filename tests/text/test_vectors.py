"""Vectors, GloVe, FastText and CharNGram loaders and ToVectors, on vector files written in tmp_path."""

from __future__ import annotations

import numpy as np
import pytest

import minddata as md
from minddata import text
from minddata.errors import ArgumentError


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture
def vectors_file(tmp_path):
    return _write(tmp_path / "vectors.txt", ["ok 0.5 1.0 -1", "no -1 2 3", "Hi 7 8 9", "ok 9 9 9"])


def test_to_vectors_maps_tokens_and_zeros_unknown_ones(vectors_file):
    out = text.ToVectors(text.Vectors.from_file(vectors_file))(["no", "ok", "what"])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[-1, 2, 3], [0.5, 1.0, -1], [0, 0, 0]])


def test_a_repeated_token_keeps_its_first_vector(vectors_file):
    vectors = text.Vectors.from_file(vectors_file)
    assert len(vectors) == 3 and text.ToVectors(vectors)("ok").tolist() == [0.5, 1.0, -1.0]


def test_unk_init_and_lower_case_backup(vectors_file):
    op = text.ToVectors(text.Vectors.from_file(vectors_file), unk_init=[1, 1, 1], lower_case_backup=True)
    np.testing.assert_array_equal(op(["OK", "hi", "x"]), [[0.5, 1.0, -1], [1, 1, 1], [1, 1, 1]])


def test_max_vectors_reads_only_the_first_ones(vectors_file):
    vectors = text.Vectors.from_file(vectors_file, max_vectors=1)
    assert len(vectors) == 1 and text.ToVectors(vectors)(["no"]).tolist() == [[0.0, 0.0, 0.0]]


def test_unk_init_must_have_the_vectors_dimension(vectors_file):
    with pytest.raises(
        ArgumentError, match="ToVectors: `unk_init` must have the vectors' dimension 3. Found 2"
    ):
        text.ToVectors(text.Vectors.from_file(vectors_file), unk_init=[0, 0])


def test_a_vector_of_another_dimension_names_its_line(tmp_path):
    path = _write(tmp_path / "bad.txt", ["a 1 2", "b 1 2 3"])
    with pytest.raises(ArgumentError, match="bad.txt, line 2: 3 numbers, but the first vector has 2"):
        text.Vectors.from_file(path)


def test_fasttext_skips_the_header_and_needs_a_vec_file(tmp_path):
    path = _write(tmp_path / "wiki.simple.vec", ["2 2", "hello 1 0", "world 0 1"])
    assert text.ToVectors(text.FastText.from_file(path))(["world"]).tolist() == [[0.0, 1.0]]
    other = _write(tmp_path / "wiki.simple.txt", ["hello 1 0"])
    with pytest.raises(ArgumentError, match="FastText.from_file: `file_path` must be a fastText .vec file"):
        text.FastText.from_file(other)


def test_glove_needs_a_glove_file(tmp_path):
    path = _write(tmp_path / "glove.6B.2d.txt", ["the 0.1 0.2", ", 1 1"])
    assert text.GloVe.from_file(path).dim == 2
    with pytest.raises(
        ArgumentError, match=r"GloVe.from_file: `file_path` must name a GloVe file, glove\.\*\.txt"
    ):
        text.GloVe.from_file(_write(tmp_path / "vectors.txt", ["the 0.1 0.2"]))


def test_char_ngram_averages_the_ngrams_of_the_token(tmp_path):
    path = _write(
        tmp_path / "charNgram.txt",
        [
            "2gram-#BEGIN#a 1 0",
            "2gram-ab 0 1",
            "2gram-b#END# 1 1",
            "3gram-#BEGIN#ab 3 3",
            "4gram-xyzw 9 9",
        ],
    )
    out = text.ToVectors(text.CharNGram.from_file(path), unk_init=[-1, -1])(["ab", "zz"])
    # "ab": 2-grams #BEGIN#a, ab, b#END# and the 3-gram #BEGIN#ab are in the table: their mean.
    np.testing.assert_allclose(out, [[(1 + 0 + 1 + 3) / 4, (0 + 1 + 1 + 3) / 4], [-1, -1]])


def test_vectors_pickle(vectors_file):
    import pickle

    vectors = text.Vectors.from_file(vectors_file)
    assert pickle.loads(pickle.dumps(vectors)) == vectors


def test_to_vectors_pipeline_over_a_text_file(tmp_path, vectors_file):
    path = _write(tmp_path / "corpus.txt", ["ok no", "no what"])
    ds = md.TextFileDataset(path, shuffle=False).map(
        [text.WhitespaceTokenizer(), text.ToVectors(text.Vectors.from_file(vectors_file))],
        input_columns="text",
    )
    rows = [r["text"] for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert [r.shape for r in rows] == [(2, 3), (2, 3)]
    np.testing.assert_array_equal(rows[1], [[-1, 2, 3], [0, 0, 0]])
