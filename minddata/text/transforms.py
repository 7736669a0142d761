"""Text transforms, named as in ``mindspore.dataset.text``: :class:`Lookup`, :class:`Ngram`,
:class:`ToNumber`, :class:`Truncate`, :class:`TruncateSequencePair`, :class:`SlidingWindow`,
:class:`NormalizeUTF8`, :class:`CaseFold`, :class:`RegexReplace`, :class:`AddToken`,
:class:`FilterWikipediaXML`, :class:`ToVectors`.

Strings are NumPy string arrays (dtype ``U``; ``S`` bytes arrays are read as UTF-8). Specs only; the CPU
kernels live in ``minddata.ops.cpu.text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.text._checks import check_bool, check_enum, check_int, check_numeric_dtype, check_str
from minddata.text.tokenizers import _check_pattern
from minddata.text.utils import NormalizeForm
from minddata.text.vectors import Vectors
from minddata.text.vocab import Vocab

__all__ = [
    "AddToken",
    "CaseFold",
    "FilterWikipediaXML",
    "Lookup",
    "Ngram",
    "NormalizeUTF8",
    "RegexReplace",
    "SlidingWindow",
    "ToNumber",
    "ToVectors",
    "Truncate",
    "TruncateSequencePair",
]

_MAX = 2**31 - 1


def _one(op: str, inputs: tuple[TensorSpec, ...]) -> TensorSpec:
    if len(inputs) != 1:
        raise ValueError(f"{op}: expected 1 input. Found: {len(inputs)}")
    return inputs[0]


class _StringMap(Op):
    """A string array in, a string array of the same shape out."""

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return TensorSpec(tuple(_one(self.name, inputs).shape), None)


class Lookup(Op):
    """Map each token of a string array to its id in ``vocab``; a token not in it maps to
    ``unknown_token``'s id, or is an error naming the token when ``unknown_token`` is None.

    Args:
        vocab: the vocabulary.
        unknown_token: the token whose id out-of-vocabulary tokens get (it must be in ``vocab``).
        data_type: the ids' dtype, a numeric NumPy dtype (default int32).

    Examples:
        >>> from minddata import text
        >>> vocab = text.Vocab.from_list(["深", "圳", "欢", "迎", "您"])
        >>> text.Lookup(vocab)(text.UnicodeCharTokenizer()("深圳欢迎您"))
        array([0, 1, 2, 3, 4], dtype=int32)
    """

    def __init__(self, vocab: Vocab, unknown_token: str | None = None, data_type: Any = np.int32) -> None:
        if not isinstance(vocab, Vocab):
            raise TypeError(
                f"Lookup: `vocab` must be a text.Vocab. Found: {vocab!r} ({type(vocab).__name__})"
            )
        self.vocab = vocab
        if unknown_token is not None:
            check_str(self.name, "unknown_token", unknown_token)
            if vocab.tokens_to_ids(unknown_token) == -1:
                raise ArgumentError(
                    f"Lookup: `unknown_token` must be in the vocabulary. Found: {unknown_token!r}"
                )
        self.unknown_token = unknown_token
        self.data_type = check_numeric_dtype(self.name, "data_type", data_type)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return TensorSpec(tuple(_one(self.name, inputs).shape), self.data_type)


def _check_pad(op: str, arg: str, value: Any) -> tuple[str, int]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ArgumentError(f"{op}: `{arg}` must be a tuple (pad_token, pad_width). Found: {value!r}")
    token = check_str(op, f"{arg}[0] (pad_token)", value[0])
    width = check_int(op, f"{arg}[1] (pad_width)", value[1], low=0, high=_MAX)
    return token, width


class Ngram(Op):
    """The n-grams of a 1-D string array, joined by ``separator``: for each ``n`` of ``n`` in order, all
    n-grams of the sequence padded with up to ``n - 1`` ``left_pad`` / ``right_pad`` tokens; a sequence
    shorter than ``n`` gives one empty string for that ``n``.

    Args:
        n: an int or a list of ints > 0.
        left_pad: ``(pad_token, pad_width)`` for the left side.
        right_pad: ``(pad_token, pad_width)`` for the right side.
        separator: what joins the tokens of an n-gram.

    Examples:
        >>> from minddata import text
        >>> op = text.Ngram(3, separator="-")
        >>> op(["WildRose Country", "Canada's Ocean Playground", "Land of Living Skies"]).tolist()
        ["WildRose Country-Canada's Ocean Playground-Land of Living Skies"]
        >>> text.Ngram([2, 1], left_pad=("_", 1))(["a", "b"]).tolist()
        ['_ a', 'a b', 'a', 'b']
    """

    def __init__(
        self,
        n: int | Sequence[int],
        left_pad: tuple[str, int] = ("", 0),
        right_pad: tuple[str, int] = ("", 0),
        separator: str = " ",
    ) -> None:
        ns = [n] if not isinstance(n, (list, tuple)) else list(n)
        if not ns:
            raise ArgumentError(f"{self.name}: `n` must not be empty. Found: {n!r}")
        self.n = [check_int(self.name, "n", k, low=1, high=_MAX) for k in ns]
        self.left_pad = _check_pad(self.name, "left_pad", left_pad)
        self.right_pad = _check_pad(self.name, "right_pad", right_pad)
        self.separator = check_str(self.name, "separator", separator)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        _one(self.name, inputs)
        return TensorSpec((None,), None)


class ToNumber(Op):
    """Parse every string of an array as a number of ``data_type`` (same shape). Leading whitespace is
    skipped; a string that is not a number (trailing text included, which MindSpore drops silently), or
    out of the type's range (infinities, and negative numbers for unsigned types), is an error naming it.

    Args:
        data_type: an integer or floating NumPy dtype.

    Examples:
        >>> import numpy as np
        >>> from minddata import text
        >>> text.ToNumber(np.int8)(["1", "2", "-3"])
        array([ 1,  2, -3], dtype=int8)
    """

    def __init__(self, data_type: Any) -> None:
        dtype = check_numeric_dtype(self.name, "data_type", data_type)
        if dtype.kind == "b":
            raise TypeError(f"{self.name}: `data_type` must be an integer or floating dtype. Found: {dtype}")
        self.data_type = dtype

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return TensorSpec(tuple(_one(self.name, inputs).shape), self.data_type)


class Truncate(Op):
    """Keep the first ``max_seq_len`` elements along the last axis of a 1-D or 2-D array (any dtype).

    Args:
        max_seq_len: the length to keep, > 0.

    Examples:
        >>> from minddata import text
        >>> text.Truncate(2)(["a", "b", "c"]).tolist()
        ['a', 'b']
    """

    def __init__(self, max_seq_len: int) -> None:
        self.max_seq_len = check_int(self.name, "max_seq_len", max_seq_len, low=1, high=_MAX)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _one(self.name, inputs)
        if len(spec.shape) not in (1, 2):
            raise ValueError(f"{self.name}: the input must be 1-D or 2-D. Found shape {spec.shape}")
        last = spec.shape[-1]
        return TensorSpec(
            (*spec.shape[:-1], None if last is None else min(last, self.max_seq_len)), spec.dtype
        )


class TruncateSequencePair(Op):
    """Truncate two 1-D arrays until their lengths sum to at most ``max_length``, dropping from the end of
    the longer one (the second one on a tie), as BERT does with sentence pairs.

    Args:
        max_length: the longest total length, >= 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import text
        >>> first, second = text.TruncateSequencePair(4)(np.array([1, 2, 3]), np.array([4, 5]))
        >>> first.tolist(), second.tolist()
        ([1, 2], [4, 5])
    """

    num_inputs = 2
    num_outputs = 2

    def __init__(self, max_length: int) -> None:
        self.max_length = check_int(self.name, "max_length", max_length, low=0, high=_MAX)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        if len(inputs) != 2:
            raise ValueError(f"{self.name}: expected 2 inputs. Found: {len(inputs)}")
        return TensorSpec((None,), inputs[0].dtype), TensorSpec((None,), inputs[1].dtype)


class SlidingWindow(Op):
    """Windows of ``width`` consecutive elements of a 1-D array: shape ``(n - width + 1, width)``, or
    ``(0, width)`` when the array is shorter than ``width``.

    Args:
        width: the window's width, > 0.
        axis: the axis to slide along (0 or -1: only 1-D inputs, as in MindSpore).

    Examples:
        >>> import numpy as np
        >>> from minddata import text
        >>> text.SlidingWindow(3, 0)(np.array([1, 2, 3, 4, 5])).tolist()
        [[1, 2, 3], [2, 3, 4], [3, 4, 5]]
    """

    def __init__(self, width: int, axis: int = 0) -> None:
        self.width = check_int(self.name, "width", width, low=1, high=_MAX)
        self.axis = check_int(self.name, "axis", axis, low=-1, high=0)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _one(self.name, inputs)
        if len(spec.shape) != 1:
            raise ValueError(f"{self.name}: the input must be 1-D. Found shape {spec.shape}")
        n = spec.shape[0]
        return TensorSpec((None if n is None else max(n - self.width + 1, 0), self.width), spec.dtype)


class NormalizeUTF8(_StringMap):
    """Unicode-normalize every string of an array (:func:`unicodedata.normalize`).

    Args:
        normalize_form: :class:`~minddata.text.NormalizeForm` (default NFKC).

    Examples:
        >>> from minddata import text
        >>> text.NormalizeUTF8()(["ﬁ①", "e\\u0301"]).tolist()
        ['fi1', 'é']
    """

    def __init__(self, normalize_form: NormalizeForm = NormalizeForm.NFKC) -> None:
        self.normalize_form = check_enum(self.name, "normalize_form", normalize_form, NormalizeForm)


class CaseFold(_StringMap):
    """Unicode case folding of every string, as MindSpore's (ICU's NFKC_Casefold): full case folding
    (``"ß"`` becomes ``"ss"``) with compatibility normalization (``"ﬁ"`` becomes ``"fi"``, ``"①"``
    ``"1"``), default-ignorable characters (soft hyphens, zero-width joiners) removed.

    Examples:
        >>> from minddata import text
        >>> text.CaseFold()(["Welcome to China!", "Straße", "ﬁ①"]).tolist()
        ['welcome to china!', 'strasse', 'fi1']
    """

    def __init__(self) -> None:
        pass


class RegexReplace(_StringMap):
    """Replace the matches of ``pattern`` in every string with ``replace`` (all of them, or the first
    only). Patterns follow ICU's syntax as MindSpore's do, run by the ``regex`` package; ``replace`` follows ICU too: ``$1`` or ``${name}``
    insert a group, a backslash makes the next character literal.

    Args:
        pattern: the regular expression.
        replace: the replacement.
        replace_all: replace every match (True) or the first.

    Examples:
        >>> from minddata import text
        >>> text.RegexReplace(r"\\s+", "_")(["hello   big world"]).tolist()
        ['hello_big_world']
        >>> text.RegexReplace("(one)", "$1 two", replace_all=False)("one one").tolist()
        'one two one'
    """

    def __init__(self, pattern: str, replace: str, replace_all: bool = True) -> None:
        self.pattern = _check_pattern(self.name, "pattern", pattern)
        self.replace = check_str(self.name, "replace", replace)
        self.replace_all = check_bool(self.name, "replace_all", replace_all)


class AddToken(Op):
    """Add ``token`` at the start (``begin=True``) or the end of a 1-D string array (of each row of a
    2-D one).

    Args:
        token: the token.
        begin: where to add it.

    Examples:
        >>> from minddata import text
        >>> text.AddToken(token="TOKEN", begin=True)(["happy", "birthday", "to", "you"]).tolist()
        ['TOKEN', 'happy', 'birthday', 'to', 'you']
    """

    def __init__(self, token: str, begin: bool = True) -> None:
        self.token = check_str(self.name, "token", token)
        self.begin = check_bool(self.name, "begin", begin)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = _one(self.name, inputs)
        if len(spec.shape) not in (1, 2):
            raise ValueError(f"{self.name}: the input must be 1-D or 2-D. Found shape {spec.shape}")
        n = spec.shape[-1]
        return TensorSpec((*spec.shape[:-1], None if n is None else n + 1), None)


class FilterWikipediaXML(_StringMap):
    """Clean Wikipedia XML dump text into lower-case words, as Matt Mahoney's ``wikifil.pl`` (which
    MindSpore follows): markup, links' targets, references, tables and entities removed, digits spelled
    out, everything but ``a-z`` turned into single spaces; a ``#redirect`` line becomes ``""``.

    Examples:
        >>> from minddata import text
        >>> text.FilterWikipediaXML()(["Welcome to China", "!!!", "ABC"]).tolist()
        ['welcome to china', '', 'abc']
        >>> text.FilterWikipediaXML()("[[Paris|the capital]] has 2 &lt;b&gt;towers").tolist()
        'the capital has two towers'
    """

    def __init__(self) -> None:
        pass


class ToVectors(Op):
    """Map each token of a string array to its vector in ``vectors``: shape ``S`` gives ``S + (dim,)``,
    float32. A token not in the table (nor, with ``lower_case_backup``, its lower-case form) gets
    ``unk_init`` (default zeros).

    Args:
        vectors: a :class:`~minddata.text.Vectors` (or GloVe, FastText, CharNGram).
        unk_init: the vector of unknown tokens (``dim`` numbers).
        lower_case_backup: look a token up in lower case when it is not found as it is.

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "vectors.txt")
        >>> _ = open(path, "w").write("hello 1 2\\n")
        >>> text.ToVectors(text.Vectors.from_file(path), unk_init=[9, 9], lower_case_backup=True)(["Hello", "x"])
        array([[1., 2.],
               [9., 9.]], dtype=float32)
        >>> tmp.cleanup()
    """

    def __init__(
        self, vectors: Vectors, unk_init: Sequence[float] | None = None, lower_case_backup: bool = False
    ) -> None:
        if not isinstance(vectors, Vectors):
            raise TypeError(
                f"{self.name}: `vectors` must be a text.Vectors (or GloVe, FastText, CharNGram). Found: {vectors!r}"
            )
        self.vectors = vectors
        if unk_init is not None:
            if isinstance(unk_init, (str, bytes)) or not isinstance(unk_init, (Sequence, np.ndarray)):
                raise TypeError(f"{self.name}: `unk_init` must be a sequence of numbers. Found: {unk_init!r}")
            for i, v in enumerate(unk_init):
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise TypeError(f"{self.name}: `unk_init[{i}]` must be a number. Found: {v!r}")
            if len(unk_init) != vectors.dim:
                raise ArgumentError(
                    f"{self.name}: `unk_init` must have the vectors' dimension {vectors.dim}. Found {len(unk_init)} numbers"
                )
            unk_init = [float(v) for v in unk_init]
        self.unk_init = unk_init
        self.lower_case_backup = check_bool(self.name, "lower_case_backup", lower_case_backup)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return TensorSpec((*_one(self.name, inputs).shape, self.vectors.dim), np.dtype(np.float32))
