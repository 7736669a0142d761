"""Text ops and vocabularies, named as in ``mindspore.dataset.text``.

Strings travel through pipelines as NumPy string arrays (``TextFileDataset`` gives one 0-d array per
line); tokenizers turn them into 1-D arrays of tokens, :class:`Lookup` into ids.

Examples:
    >>> import minddata as md
    >>> from minddata import text
    >>> ds = md.NumpySlicesDataset({"text": ["深圳欢迎您"]}, shuffle=False)
    >>> vocab = text.Vocab.from_list(["深", "圳", "欢", "迎", "您"])
    >>> ds = ds.map(operations=[text.UnicodeCharTokenizer(), text.Lookup(vocab)], input_columns="text")
    >>> [row["text"].tolist() for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    [[0, 1, 2, 3, 4]]
"""

from minddata._missing import module_getattr
from minddata.text.tokenizers import (
    BasicTokenizer,
    BertTokenizer,
    JiebaTokenizer,
    PythonTokenizer,
    RegexTokenizer,
    SentencePieceTokenizer,
    UnicodeCharTokenizer,
    UnicodeScriptTokenizer,
    WhitespaceTokenizer,
    WordpieceTokenizer,
)
from minddata.text.transforms import (
    AddToken,
    CaseFold,
    FilterWikipediaXML,
    Lookup,
    Ngram,
    NormalizeUTF8,
    RegexReplace,
    SlidingWindow,
    ToNumber,
    ToVectors,
    Truncate,
    TruncateSequencePair,
)
from minddata.text.utils import (
    JiebaMode,
    NormalizeForm,
    SentencePieceModel,
    SPieceTokenizerLoadType,
    SPieceTokenizerOutType,
    to_bytes,
    to_str,
)
from minddata.text.vectors import CharNGram, FastText, GloVe, Vectors
from minddata.text.vocab import SentencePieceVocab, Vocab

__all__ = [
    "AddToken",
    "BasicTokenizer",
    "BertTokenizer",
    "CaseFold",
    "CharNGram",
    "FastText",
    "FilterWikipediaXML",
    "GloVe",
    "JiebaMode",
    "JiebaTokenizer",
    "Lookup",
    "Ngram",
    "NormalizeForm",
    "NormalizeUTF8",
    "PythonTokenizer",
    "RegexReplace",
    "RegexTokenizer",
    "SPieceTokenizerLoadType",
    "SPieceTokenizerOutType",
    "SentencePieceModel",
    "SentencePieceTokenizer",
    "SentencePieceVocab",
    "SlidingWindow",
    "ToNumber",
    "ToVectors",
    "Truncate",
    "TruncateSequencePair",
    "UnicodeCharTokenizer",
    "UnicodeScriptTokenizer",
    "Vectors",
    "Vocab",
    "WhitespaceTokenizer",
    "WordpieceTokenizer",
    "to_bytes",
    "to_str",
]

__getattr__ = module_getattr(__name__)
