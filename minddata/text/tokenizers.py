"""Tokenizers, named as in ``mindspore.dataset.text``: each splits a string (a 0-d string array, as
``TextFileDataset`` gives) into a 1-D string array of tokens.

With ``with_offsets=True`` a tokenizer has three outputs, as in MindSpore: the tokens and two uint32 arrays,
each token's start and end as UTF-8 byte offsets into the text it tokenized
(``output_columns=["token", "offsets_start", "offsets_limit"]`` in a map). A text that gives no token gives
one empty token at offsets (0, 0), as MindSpore does, so rows never come out empty.

Specs only; the CPU kernels live in ``minddata.ops.cpu.text_tokenizers`` (the Jieba and SentencePiece ones
import ``jieba`` / ``sentencepiece`` when they first run).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.icu_regex import compile_icu
from minddata.text._checks import check_bool, check_enum, check_file, check_int, check_str
from minddata.text.utils import JiebaMode, NormalizeForm, SPieceTokenizerOutType
from minddata.text.vocab import SentencePieceVocab, Vocab

__all__ = [
    "BasicTokenizer",
    "BertTokenizer",
    "JiebaTokenizer",
    "PythonTokenizer",
    "RegexTokenizer",
    "SentencePieceTokenizer",
    "UnicodeCharTokenizer",
    "UnicodeScriptTokenizer",
    "WhitespaceTokenizer",
    "WordpieceTokenizer",
]

_OFFSETS = np.dtype(np.uint32)


class _Tokenizer(Op):
    """A string in, tokens out (and their byte offsets with ``with_offsets``)."""

    with_offsets: bool = False

    @property
    def num_outputs(self) -> int:  # type: ignore[override]  # per instance (with_offsets), where Op has a class attribute
        return 3 if self.with_offsets else 1

    def _token_dtype(self) -> np.dtype | None:
        return None  # strings: the length of the longest token is known only at run time

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        if len(inputs) != 1:
            raise ValueError(f"{self.name}: expected 1 input. Found: {len(inputs)}")
        tokens = TensorSpec((None,), self._token_dtype())
        if not self.with_offsets:
            return tokens
        return tokens, TensorSpec((None,), _OFFSETS), TensorSpec((None,), _OFFSETS)


class WhitespaceTokenizer(_Tokenizer):
    """Split a string on Unicode whitespace (the ``White_Space`` property, as ICU's ``u_isUWhiteSpace``),
    which is dropped.

    Args:
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> text.WhitespaceTokenizer()("Welcome to   Beijing!")
        array(['Welcome', 'to', 'Beijing!'], dtype='<U8')
        >>> tokens, start, limit = text.WhitespaceTokenizer(with_offsets=True)("to be")
        >>> start.tolist(), limit.tolist()
        ([0, 3], [2, 5])
    """

    def __init__(self, with_offsets: bool = False) -> None:
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


class UnicodeCharTokenizer(_Tokenizer):
    """Split a string into its Unicode code points.

    Args:
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> text.UnicodeCharTokenizer()("床前明月光")
        array(['床', '前', '明', '月', '光'], dtype='<U1')
        >>> text.UnicodeCharTokenizer(with_offsets=True)("床前")[2]
        array([3, 6], dtype=uint32)
    """

    def __init__(self, with_offsets: bool = False) -> None:
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


class UnicodeScriptTokenizer(_Tokenizer):
    """Split a string where the Unicode script changes (``Latin``, ``Han``, ``Common`` for digits and
    punctuation, ...) and between whitespace and the rest, as MindSpore's ICU-based op does. The script of
    each character is Unicode's ``Script`` property (Scripts.txt, read through ``fontTools.unicodedata``).

    Args:
        keep_whitespace: keep the runs of whitespace as tokens.
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> text.UnicodeScriptTokenizer()("Welcome to 北京, 2024!").tolist()
        ['Welcome', 'to', '北京', ',', '2024!']
        >>> text.UnicodeScriptTokenizer(keep_whitespace=True)("a b").tolist()
        ['a', ' ', 'b']
    """

    def __init__(self, keep_whitespace: bool = False, with_offsets: bool = False) -> None:
        self.keep_whitespace = check_bool(self.name, "keep_whitespace", keep_whitespace)
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


def _check_pattern(op: str, arg: str, pattern: Any) -> str:
    check_str(op, arg, pattern)
    try:
        compile_icu(pattern)
    except ImportError:
        raise ImportError(
            f"{op} needs the regex package (ICU-like patterns): pip install 'minddata[text]'"
        ) from None
    except Exception as error:  # noqa: BLE001 - regex.error, whose module may not be imported here
        raise ArgumentError(
            f"{op}: `{arg}` is not a valid regular expression: {error}. Found: {pattern!r}"
        ) from None
    return pattern


class RegexTokenizer(_Tokenizer):
    """Split a string at the matches of ``delim_pattern``; a delimiter that also matches
    ``keep_delim_pattern`` as a whole is kept as a token, the others are dropped. Empty pieces are dropped.

    Patterns follow ICU's syntax as MindSpore's do (``\\p{P}``, ``\\x{4E00}``, ``\\s``), run by the ``regex``
    package (see ``minddata.ops.icu_regex``).

    Args:
        delim_pattern: where to split.
        keep_delim_pattern: which delimiters to keep (default ``""``: none).
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> text.RegexTokenizer(r"\\s+|,", ",")("Hello, World").tolist()
        ['Hello', ',', 'World']
    """

    def __init__(self, delim_pattern: str, keep_delim_pattern: str = "", with_offsets: bool = False) -> None:
        self.delim_pattern = _check_pattern(self.name, "delim_pattern", delim_pattern)
        self.keep_delim_pattern = _check_pattern(self.name, "keep_delim_pattern", keep_delim_pattern)
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


class BasicTokenizer(_Tokenizer):
    """BERT's basic tokenizer: normalize, then split on whitespace, punctuation and CJK ideographs.

    In order: with ``lower_case`` the text is case-folded (as :class:`~minddata.text.CaseFold`),
    NFD-normalized and stripped of combining marks (accents); otherwise it is normalized with
    ``normalization_form``. Control and format characters become spaces. Then every punctuation character
    (Unicode ``P*`` and ASCII symbols) and every CJK ideograph is a token of its own, whitespace separates
    the rest. With ``preserve_unused_token``, ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``, ``[MASK]`` and
    ``[unusedN]`` stay whole and keep their case. (MindSpore 2.10, with ``lower_case`` too, repeats the
    text before such a token after it: ``"A [CLS] b"`` gives ``a [CLS] a [ cls ] b``; minddata gives
    ``a [CLS] b``.) Offsets are UTF-8 byte offsets into the normalized text, as MindSpore's.

    Args:
        lower_case: fold case and strip accents.
        keep_whitespace: keep the runs of whitespace as tokens.
        normalization_form: :class:`~minddata.text.NormalizeForm` used when ``lower_case`` is False.
        preserve_unused_token: keep BERT's special tokens whole.
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> text.BasicTokenizer()("Welcome     To   BeiJing!").tolist()
        ['Welcome', 'To', 'BeiJing', '!']
        >>> text.BasicTokenizer(lower_case=True)("Héllo [CLS] 你好").tolist()
        ['hello', '[CLS]', '你', '好']
    """

    def __init__(
        self,
        lower_case: bool = False,
        keep_whitespace: bool = False,
        normalization_form: NormalizeForm = NormalizeForm.NONE,
        preserve_unused_token: bool = True,
        with_offsets: bool = False,
    ) -> None:
        self.lower_case = check_bool(self.name, "lower_case", lower_case)
        self.keep_whitespace = check_bool(self.name, "keep_whitespace", keep_whitespace)
        self.normalization_form = check_enum(
            self.name, "normalization_form", normalization_form, NormalizeForm
        )
        self.preserve_unused_token = check_bool(self.name, "preserve_unused_token", preserve_unused_token)
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


def _check_vocab(op: str, vocab: Any) -> Vocab:
    if not isinstance(vocab, Vocab):
        raise TypeError(f"{op}: `vocab` must be a text.Vocab. Found: {vocab!r} ({type(vocab).__name__})")
    return vocab


class WordpieceTokenizer(_Tokenizer):
    """Split words into WordPiece sub-words found in ``vocab``, longest match first; pieces after the first
    carry ``suffix_indicator``. A word that cannot be split, or longer than ``max_bytes_per_token`` UTF-8
    bytes, becomes ``unknown_token`` (or stays as it is when ``unknown_token`` is ``""``).

    Takes a word or a 1-D array of words (e.g. a tokenizer's output). Offsets are byte offsets within each
    word; as in MindSpore, an unknown word spans the word, except one longer than ``max_bytes_per_token``,
    which spans ``len(unknown_token)`` bytes.

    Args:
        vocab: the sub-word vocabulary.
        suffix_indicator: the mark of non-initial pieces.
        max_bytes_per_token: longer words are unknown.
        unknown_token: what replaces an unknown word.
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> vocab = text.Vocab.from_list(["book", "favor", "##ite", "my", "is", "love", "dur", "##ing", "the"])
        >>> text.WordpieceTokenizer(vocab)(["my", "favorite", "book", "bookish"]).tolist()
        ['my', 'favor', '##ite', 'book', '[UNK]']
    """

    def __init__(
        self,
        vocab: Vocab,
        suffix_indicator: str = "##",
        max_bytes_per_token: int = 100,
        unknown_token: str = "[UNK]",
        with_offsets: bool = False,
    ) -> None:
        self.vocab = _check_vocab(self.name, vocab)
        self.suffix_indicator = check_str(self.name, "suffix_indicator", suffix_indicator)
        self.max_bytes_per_token = check_int(
            self.name, "max_bytes_per_token", max_bytes_per_token, low=0, high=2**31 - 1
        )
        self.unknown_token = check_str(self.name, "unknown_token", unknown_token)
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


class BertTokenizer(_Tokenizer):
    """BERT's tokenizer: :class:`BasicTokenizer`, then :class:`WordpieceTokenizer` on each of its tokens
    (special tokens such as ``[CLS]`` too: keep them in ``vocab``). Offsets are byte offsets into the
    normalized text.

    Args:
        vocab, suffix_indicator, max_bytes_per_token, unknown_token: as in :class:`WordpieceTokenizer`.
        lower_case, keep_whitespace, normalization_form, preserve_unused_token: as in :class:`BasicTokenizer`.
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> from minddata import text
        >>> vocab = text.Vocab.from_list(["床", "前", "明", "月", "光", "i", "am", "mak", "##ing", "[UNK]"])
        >>> text.BertTokenizer(vocab=vocab)("床前明月光").tolist()
        ['床', '前', '明', '月', '光']
        >>> text.BertTokenizer(vocab=vocab, lower_case=True)("I am making").tolist()
        ['i', 'am', 'mak', '##ing']
    """

    def __init__(
        self,
        vocab: Vocab,
        suffix_indicator: str = "##",
        max_bytes_per_token: int = 100,
        unknown_token: str = "[UNK]",
        lower_case: bool = False,
        keep_whitespace: bool = False,
        normalization_form: NormalizeForm = NormalizeForm.NONE,
        preserve_unused_token: bool = True,
        with_offsets: bool = False,
    ) -> None:
        self.vocab = _check_vocab(self.name, vocab)
        self.suffix_indicator = check_str(self.name, "suffix_indicator", suffix_indicator)
        self.max_bytes_per_token = check_int(
            self.name, "max_bytes_per_token", max_bytes_per_token, low=0, high=2**31 - 1
        )
        self.unknown_token = check_str(self.name, "unknown_token", unknown_token)
        self.lower_case = check_bool(self.name, "lower_case", lower_case)
        self.keep_whitespace = check_bool(self.name, "keep_whitespace", keep_whitespace)
        self.normalization_form = check_enum(
            self.name, "normalization_form", normalization_form, NormalizeForm
        )
        self.preserve_unused_token = check_bool(self.name, "preserve_unused_token", preserve_unused_token)
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)


# A line of a Jieba user dictionary: a word, then optionally its frequency (MindSpore's rule).
_USER_DICT_LINE = re.compile(r"^\s*([^\s*]+?)\s*([0-9]+)?\s*$")


class JiebaTokenizer(_Tokenizer):
    """Chinese word segmentation with the ``jieba`` package, over the dictionary and HMM model files that
    MindSpore's (cppjieba's) ``JiebaTokenizer`` takes.

    ``mp_path`` is a dictionary in Jieba's format (``word frequency [tag]`` per line, as cppjieba's
    ``jieba.dict.utf8`` and jieba's ``dict.txt``); ``hmm_path`` is cppjieba's ``hmm_model.utf8`` (start,
    transition and emission log-probabilities of the B/E/M/S states). ``mode``: :class:`JiebaMode`.
    Words added with :meth:`add_word` without a frequency get the frequency that makes them one token
    (jieba's ``suggest_freq``).

    Args:
        hmm_path: the HMM model file.
        mp_path: the dictionary file.
        mode: ``JiebaMode.MIX`` (default), ``MP`` or ``HMM``.
        with_offsets: also output each token's UTF-8 byte offsets.

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> from minddata.text import JiebaMode
        >>> tmp = tempfile.TemporaryDirectory()
        >>> folder = tmp.name
        >>> mp_path = os.path.join(folder, "jieba.dict.utf8")
        >>> _ = open(mp_path, "w").write("今天 100 t\\n天气 100 n\\n今天天气 50 n\\n太好了 20 l\\n我们 300 r\\n")
        >>> hmm_path = text.JiebaTokenizer.write_hmm_model(os.path.join(folder, "hmm_model.utf8"))
        >>> op = text.JiebaTokenizer(hmm_path, mp_path, mode=JiebaMode.MP)
        >>> op("今天天气太好了").tolist()
        ['今天天气', '太好了']
        >>> tmp.cleanup()
    """

    def __init__(
        self, hmm_path: str, mp_path: str, mode: JiebaMode = JiebaMode.MIX, with_offsets: bool = False
    ) -> None:
        self.hmm_path = check_file(self.name, "hmm_path", hmm_path)
        self.mp_path = check_file(self.name, "mp_path", mp_path)
        self.mode = check_enum(self.name, "mode", mode, JiebaMode)
        self.with_offsets = check_bool(self.name, "with_offsets", with_offsets)
        self.words: list[tuple[str, int | None]] = []

    def add_word(self, word: str, freq: int | None = None) -> None:
        """Add ``word`` to this tokenizer's dictionary (not to the file), with ``freq`` or the frequency that
        makes it one token.

        Examples:
            >>> import os, tempfile
            >>> from minddata import text
            >>> tmp = tempfile.TemporaryDirectory()
            >>> folder = tmp.name
            >>> mp_path = os.path.join(folder, "jieba.dict.utf8")
            >>> _ = open(mp_path, "w").write("男 100 n\\n默 10 v\\n女 100 n\\n泪 10 n\\n")
            >>> hmm_path = text.JiebaTokenizer.write_hmm_model(os.path.join(folder, "hmm_model.utf8"))
            >>> op = text.JiebaTokenizer(hmm_path, mp_path, mode=text.JiebaMode.MP)
            >>> op.add_word("男默女泪")
            >>> op("男默女泪").tolist()
            ['男默女泪']
            >>> tmp.cleanup()
        """
        check_str(self.name, "word", word, non_empty=True)
        if any(c.isspace() for c in word):
            raise ArgumentError(f"{self.name}: `word` must not contain whitespace. Found: {word!r}")
        if freq is not None:
            check_int(self.name, "freq", freq, low=0, high=2**31 - 1)
        self.words.append((word, None if not freq else int(freq)))

    def add_dict(self, user_dict: str | dict[str, int]) -> None:
        """Add words from a dict ``{word: freq}`` or from a user dictionary file (``word [freq]`` per line;
        lines that don't fit are skipped, as in MindSpore).

        Examples:
            >>> import os, tempfile
            >>> from minddata import text
            >>> tmp = tempfile.TemporaryDirectory()
            >>> folder = tmp.name
            >>> mp_path = os.path.join(folder, "jieba.dict.utf8")
            >>> _ = open(mp_path, "w").write("男 100 n\\n默 10 v\\n女 100 n\\n泪 10 n\\n")
            >>> hmm_path = text.JiebaTokenizer.write_hmm_model(os.path.join(folder, "hmm_model.utf8"))
            >>> op = text.JiebaTokenizer(hmm_path, mp_path, mode=text.JiebaMode.MP)
            >>> op.add_dict({"男默女泪": 10})
            >>> op("男默女泪").tolist()
            ['男默女泪']
            >>> tmp.cleanup()
        """
        if isinstance(user_dict, dict):
            for word, freq in user_dict.items():
                self.add_word(word, freq)
            return
        path = check_file(self.name, "user_dict", user_dict)
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().lstrip("\ufeff").splitlines()
        except UnicodeDecodeError:
            raise ArgumentError(f"{self.name}: `user_dict` {path!r} must be UTF-8 text") from None
        for line in lines:
            match = _USER_DICT_LINE.match(line.strip())
            if match:
                word, freq = match.groups()
                self.add_word(word, int(freq) if freq else None)

    @staticmethod
    def write_hmm_model(path: str) -> str:
        """Write the HMM model of the ``jieba`` package (its ``finalseg`` tables) to ``path`` in cppjieba's
        ``hmm_model.utf8`` format, the ``hmm_path`` this op takes, and return ``path``."""
        try:
            from jieba import finalseg
        except ImportError:
            raise ImportError(
                "JiebaTokenizer needs the jieba package: pip install 'minddata[text]'"
            ) from None
        states = "BEMS"
        lines = ["#the start prob", "#B | E | M | S", " ".join(repr(finalseg.start_P[s]) for s in states)]
        lines.append("#the transition prob matrix (B E M S rows and columns)")
        for s in states:
            lines.append(" ".join(repr(finalseg.trans_P[s].get(t, -3.14e100)) for t in states))
        for s in states:
            lines.append(f"#emit probabilities of state {s}")
            lines.append(",".join(f"{ch}:{p!r}" for ch, p in finalseg.emit_P[s].items()))
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        return os.fspath(path)


class SentencePieceTokenizer(_Tokenizer):
    """Split a string into SentencePiece pieces (``out_type=STRING``) or their ids (``INT``, int32) with the
    ``sentencepiece`` package.

    Args:
        mode: a :class:`~minddata.text.SentencePieceVocab`, or the path of a model file.
        out_type: :class:`~minddata.text.SPieceTokenizerOutType`.

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> corpus = os.path.join(tmp.name, "corpus.txt")
        >>> _ = open(corpus, "w").write("hello world\\n" * 50 + "hello there\\n" * 50)
        >>> vocab = text.SentencePieceVocab.from_file([corpus], 20, 1.0, text.SentencePieceModel.BPE, {})
        >>> ids = text.SentencePieceTokenizer(vocab, text.SPieceTokenizerOutType.INT)("hello world")
        >>> ids.dtype
        dtype('int32')
        >>> tmp.cleanup()
    """

    def __init__(self, mode: SentencePieceVocab | str, out_type: SPieceTokenizerOutType) -> None:
        if isinstance(mode, SentencePieceVocab):
            self.mode: SentencePieceVocab | str = mode
        elif isinstance(mode, (str, os.PathLike)):
            self.mode = check_file(self.name, "mode", mode)
        else:
            raise TypeError(
                f"{self.name}: `mode` must be a SentencePieceVocab or a model file's path. Found: {mode!r}"
            )
        self.out_type = check_enum(self.name, "out_type", out_type, SPieceTokenizerOutType)
        self.with_offsets = False

    def params(self) -> dict[str, Any]:
        return {"mode": self.mode, "out_type": self.out_type}

    def model_proto(self) -> bytes:
        """The serialized model: the vocabulary's, or the model file's bytes."""
        if isinstance(self.mode, SentencePieceVocab):
            return self.mode.model_proto
        with open(self.mode, "rb") as f:
            return f.read()

    def _token_dtype(self) -> np.dtype | None:
        return np.dtype(np.int32) if self.out_type == SPieceTokenizerOutType.INT else None


class PythonTokenizer(_Tokenizer):
    """Tokenize with a Python function ``str -> list[str]``.

    Args:
        tokenizer: the function.

    Examples:
        >>> from minddata import text
        >>> text.PythonTokenizer(str.split)("hello  world").tolist()
        ['hello', 'world']
    """

    def __init__(self, tokenizer: Callable[[str], list[str]]) -> None:
        if not callable(tokenizer):
            raise TypeError(f"{self.name}: `tokenizer` must be a callable. Found: {tokenizer!r}")
        self.tokenizer = tokenizer
        self.with_offsets = False

    def params(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer}
