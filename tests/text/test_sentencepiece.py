"""SentencePieceVocab (trained with sentencepiece's trainer on a file written in tmp_path, or on a
dataset) and SentencePieceTokenizer, compared with sentencepiece's own processor on the same model."""

from __future__ import annotations

import numpy as np
import pytest
import sentencepiece as spm

import minddata as md
from minddata import text
from minddata.errors import ArgumentError
from minddata.text import SentencePieceModel, SPieceTokenizerOutType

LINES = [
    "the quick brown fox jumps over the lazy dog",
    "a lazy dog sleeps all day in the warm sun",
    "quick thinking saves the day",
    "床前明月光 疑是地上霜",
] * 25


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("spm") / "corpus.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def vocab(corpus):
    return text.SentencePieceVocab.from_file([corpus], 40, 0.9995, SentencePieceModel.UNIGRAM, {})


def _processor(vocab):
    processor = spm.SentencePieceProcessor()
    processor.LoadFromSerializedProto(vocab.model_proto)
    return processor


def _model_type(vocab):
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(vocab.model_proto)
    return proto.trainer_spec.model_type


def test_from_file_trains_a_model_of_the_requested_size_and_type(vocab):
    processor = _processor(vocab)
    assert processor.get_piece_size() == 40
    assert _model_type(vocab) == 1  # 1: unigram in sentencepiece's proto


def test_string_output_matches_sentencepiece(vocab):
    sentence = "the lazy fox sleeps in the sun"
    pieces = text.SentencePieceTokenizer(vocab, SPieceTokenizerOutType.STRING)(sentence)
    assert pieces.dtype.kind == "U"
    assert pieces.tolist() == _processor(vocab).encode(sentence, out_type=str)
    assert "".join(pieces.tolist()).replace("\u2581", " ").strip() == sentence


def test_int_output_matches_sentencepiece(vocab):
    sentence = "quick brown 明月"
    ids = text.SentencePieceTokenizer(vocab, SPieceTokenizerOutType.INT)(sentence)
    assert ids.dtype == np.int32 and ids.tolist() == _processor(vocab).encode(sentence, out_type=int)


def test_bpe_model_from_a_dataset(tmp_path, corpus):
    ds = md.TextFileDataset(corpus, shuffle=False)
    vocab = text.SentencePieceVocab.from_dataset(ds, ["text"], 60, 1.0, SentencePieceModel.BPE, {})
    processor = _processor(vocab)
    assert processor.get_piece_size() == 60 and _model_type(vocab) == 2  # 2: BPE
    sentence = "the quick dog"
    assert text.SentencePieceTokenizer(vocab, SPieceTokenizerOutType.STRING)(
        sentence
    ).tolist() == processor.encode(sentence, out_type=str)


def test_trainer_params_reach_sentencepiece(corpus):
    vocab = text.SentencePieceVocab.from_file(
        [corpus], 70, 1.0, SentencePieceModel.BPE, {"max_sentencepiece_length": 2}
    )
    processor = _processor(vocab)
    learned = [
        processor.id_to_piece(i)
        for i in range(70)
        if not (processor.is_control(i) or processor.is_unknown(i))
    ]
    assert max(len(p) for p in learned) <= 2


def test_saved_model_loads_by_path(tmp_path, vocab):
    text.SentencePieceVocab.save_model(vocab, str(tmp_path), "m.model")
    by_path = text.SentencePieceTokenizer(str(tmp_path / "m.model"), SPieceTokenizerOutType.INT)
    by_vocab = text.SentencePieceTokenizer(vocab, SPieceTokenizerOutType.INT)
    assert by_path("the warm sun").tolist() == by_vocab("the warm sun").tolist()


def test_pipeline_over_a_text_file(tmp_path, vocab):
    path = tmp_path / "lines.txt"
    path.write_text("the quick dog\nthe warm day\n", encoding="utf-8")
    ds = md.TextFileDataset(str(path), shuffle=False).map(
        text.SentencePieceTokenizer(vocab, SPieceTokenizerOutType.INT),
        input_columns="text",
        num_parallel_workers=2,
        python_multiprocessing=True,
    )
    rows = [r["text"].tolist() for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    processor = _processor(vocab)
    assert rows == [processor.encode("the quick dog"), processor.encode("the warm day")]


def test_vocab_pickles_by_its_model_bytes(vocab):
    import pickle

    assert pickle.loads(pickle.dumps(vocab)) == vocab


def test_bad_character_coverage_is_refused(corpus):
    with pytest.raises(ArgumentError, match=r"`character_coverage` must be in \[0.98, 1.0\]. Found: 0.5"):
        text.SentencePieceVocab.from_file([corpus], 50, 0.5, SentencePieceModel.BPE, {})


def test_missing_corpus_file_is_refused(tmp_path):
    with pytest.raises(ArgumentError, match="must list existing files"):
        text.SentencePieceVocab.from_file([str(tmp_path / "none.txt")], 50, 1.0, SentencePieceModel.BPE, {})


def test_out_type_must_be_the_enum(vocab):
    with pytest.raises(TypeError, match="SentencePieceTokenizer: `out_type` must be one of"):
        text.SentencePieceTokenizer(vocab, "int")


def test_dataset_build_sentencepiece_vocab(corpus):
    ds = md.TextFileDataset(corpus, shuffle=False)
    vocab = ds.build_sentencepiece_vocab(["text"], 50, 1.0, SentencePieceModel.CHAR, {})
    assert _model_type(vocab) == 4  # 4: CHAR in sentencepiece's proto
    pieces = text.SentencePieceTokenizer(vocab, SPieceTokenizerOutType.STRING)("the dog")
    assert pieces.tolist() == _processor(vocab).encode("the dog", out_type=str)
