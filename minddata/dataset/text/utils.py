"""``mindspore.dataset.text.utils``: vocabularies, vectors, enums and string helpers of the text ops."""

from minddata._missing import module_getattr
from minddata.text import (
    CharNGram,
    FastText,
    GloVe,
    JiebaMode,
    NormalizeForm,
    SentencePieceModel,
    SentencePieceVocab,
    SPieceTokenizerLoadType,
    SPieceTokenizerOutType,
    Vectors,
    Vocab,
    to_bytes,
    to_str,
)

__all__ = [
    "CharNGram",
    "FastText",
    "GloVe",
    "JiebaMode",
    "NormalizeForm",
    "SPieceTokenizerLoadType",
    "SPieceTokenizerOutType",
    "SentencePieceModel",
    "SentencePieceVocab",
    "Vectors",
    "Vocab",
    "to_bytes",
    "to_str",
]

__getattr__ = module_getattr(__name__)
