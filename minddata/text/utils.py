"""Enums and helpers of the text ops, named as in ``mindspore.dataset.text.utils``: :class:`JiebaMode`,
:class:`NormalizeForm`, :class:`SentencePieceModel`, :class:`SPieceTokenizerLoadType`,
:class:`SPieceTokenizerOutType`, :func:`to_str`, :func:`to_bytes`."""

from __future__ import annotations

import enum

import numpy as np

__all__ = [
    "JiebaMode",
    "NormalizeForm",
    "SPieceTokenizerLoadType",
    "SPieceTokenizerOutType",
    "SentencePieceModel",
    "to_bytes",
    "to_str",
]


class _Enum(enum.IntEnum):
    def __repr__(self) -> str:
        # Op reprs print `JiebaMode.MP`, which reads back as code.
        return f"{type(self).__name__}.{self.name}"


class JiebaMode(_Enum):
    """How :class:`~minddata.text.JiebaTokenizer` segments: ``MIX`` (dictionary, then the HMM over runs
    of single characters), ``MP`` (dictionary only, maximum probability path), ``HMM`` (the hidden Markov
    model only).

    Examples:
        >>> from minddata.text import JiebaMode
        >>> JiebaMode.MP
        JiebaMode.MP
    """

    MIX = 0
    MP = 1
    HMM = 2


class NormalizeForm(_Enum):
    """Unicode normalization forms (`UAX #15 <https://unicode.org/reports/tr15/>`_): ``NONE`` leaves text as
    it is; ``NFC``, ``NFKC``, ``NFD``, ``NFKD`` as Python's :func:`unicodedata.normalize` names them.

    Examples:
        >>> from minddata.text import NormalizeForm
        >>> NormalizeForm.NFKC.name
        'NFKC'
    """

    NONE = 0
    NFC = 1
    NFKC = 2
    NFD = 3
    NFKD = 4


class SentencePieceModel(_Enum):
    """The algorithm a :class:`~minddata.text.SentencePieceVocab` is trained with: ``UNIGRAM``, ``BPE``,
    ``CHAR`` or ``WORD`` (input pre-tokenized by whitespace).

    Examples:
        >>> from minddata.text import SentencePieceModel
        >>> SentencePieceModel.BPE.name.lower()
        'bpe'
    """

    UNIGRAM = 0
    BPE = 1
    CHAR = 2
    WORD = 3


class SPieceTokenizerLoadType(_Enum):
    """Where :class:`~minddata.text.SentencePieceTokenizer`'s model comes from: ``FILE`` (a model file's
    path) or ``MODEL`` (a :class:`~minddata.text.SentencePieceVocab`).

    Examples:
        >>> from minddata.text import SPieceTokenizerLoadType
        >>> int(SPieceTokenizerLoadType.MODEL)
        1
    """

    FILE = 0
    MODEL = 1


class SPieceTokenizerOutType(_Enum):
    """What :class:`~minddata.text.SentencePieceTokenizer` outputs: ``STRING`` (pieces) or ``INT`` (ids,
    int32).

    Examples:
        >>> from minddata.text import SPieceTokenizerOutType
        >>> int(SPieceTokenizerOutType.INT)
        1
    """

    STRING = 0
    INT = 1


def to_str(array: np.ndarray, encoding: str = "utf8") -> np.ndarray:
    """Decode an array of ``bytes`` into an array of ``str`` with ``encoding``.

    Args:
        array: a NumPy array of bytes (dtype ``S``).
        encoding: the character set (default UTF-8).

    Examples:
        >>> import numpy as np
        >>> from minddata import text
        >>> text.to_str(np.array([b"caf\\xc3\\xa9", b"ok"]))
        array(['café', 'ok'], dtype='<U4')
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"to_str: `array` must be a NumPy array. Found: {type(array).__name__}")
    return np.char.decode(array, encoding)


def to_bytes(array: np.ndarray, encoding: str = "utf8") -> np.ndarray:
    """Encode an array of ``str`` into an array of ``bytes`` with ``encoding``.

    Args:
        array: a NumPy array of strings (dtype ``U``).
        encoding: the character set (default UTF-8).

    Examples:
        >>> import numpy as np
        >>> from minddata import text
        >>> text.to_bytes(np.array(["café", "ok"]))
        array([b'caf\\xc3\\xa9', b'ok'], dtype='|S5')
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"to_bytes: `array` must be a NumPy array. Found: {type(array).__name__}")
    return np.char.encode(array, encoding)
