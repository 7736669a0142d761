"""Helpers shared by the text tests (``from textkit import ...``): Jieba's dictionary and HMM files, a
small SentencePiece model trained on the spot, and the odd texts the contract test feeds text ops."""

from __future__ import annotations

import functools
import io
import os

import numpy as np

from minddata import text


def jieba_dict_path() -> str:
    """The dictionary the jieba package ships (``word freq tag`` lines, cppjieba's jieba.dict.utf8 format)."""
    import jieba

    return os.path.join(os.path.dirname(jieba.__file__), "dict.txt")


def write_small_jieba_dict(path: str) -> str:
    words = [
        "今天 300 t",
        "天气 300 n",
        "今天天气 50 n",
        "太好了 20 l",
        "我们 500 r",
        "一起 300 d",
        "去 800 v",
        "外面 100 f",
        "玩 200 v",
        "吧 300 y",
        "北京 400 ns",
        "大学 300 n",
        "北京大学 200 nt",
    ]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(words) + "\n")
    return path


@functools.cache
def sentencepiece_model() -> text.SentencePieceVocab:
    """A BPE model of 60 pieces trained on a few English and Chinese lines (cached: training takes ~0.1 s)."""
    import sentencepiece as spm

    lines = [
        "the quick brown fox jumps over the lazy dog",
        "a lazy dog sleeps in the sun",
        "床前明月光 疑是地上霜",
        "举头望明月 低头思故乡",
        "hello world 1234",
    ] * 20
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=60,
        model_type="bpe",
        character_coverage=1.0,
        minloglevel=2,
    )
    return text.SentencePieceVocab(model.getvalue())


# The contract test's odd inputs are images; text ops get these texts instead, picked by the image's shape
# (each odd image kind has its own shape).
ODD_TEXT = {
    (0, 0, 3): "",  # empty
    (1, 1, 3): "a",  # one_pixel
    (2000, 3000, 3): "The quick brown fox 跳过 the lazy dog, 1234! " * 1500,  # large (~60k characters)
    (20, 30): " \t \n ",  # gray: whitespace only
    (20, 30, 1): "Hello, 世界! 123 [CLS]",  # gray_hw1: scripts, punctuation and a BERT special token
    (20, 30, 4): "cafe\u0301 🙂 ﬁ ①",  # rgba: combining marks, an emoji, compatibility characters
}


def odd_text(img: np.ndarray) -> tuple[np.ndarray]:
    """The odd text standing for an odd image, as a 0-d string array."""
    return (np.array(ODD_TEXT[img.shape]),)


def odd_words(img: np.ndarray) -> tuple[np.ndarray]:
    """The odd text's words, as a 1-D string array (empty for the empty text)."""
    words = ODD_TEXT[img.shape].split()
    return (np.array(words, dtype=str) if words else np.zeros(0, "<U1"),)
