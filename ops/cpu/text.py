"""CPU kernels of the text transforms (minddata/text/transforms.py): Lookup, Ngram, ToNumber, Truncate,
TruncateSequencePair, SlidingWindow, NormalizeUTF8, CaseFold, RegexReplace, AddToken,
FilterWikipediaXML, ToVectors; and the string helpers the tokenizers' kernels share."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.icu_regex import compile_icu, expand
from minddata.ops.registry import register_kernel

__all__ = ["nfkc_casefold", "one_string", "string_array", "strings"]


def strings(op: KernelOp, data: Any) -> np.ndarray:
    """``data`` as a NumPy ``str`` array: ``U`` arrays as they are, ``S`` (bytes) and object arrays of
    str/bytes decoded as UTF-8; an empty array of any dtype is an empty string array."""
    arr = data if isinstance(data, np.ndarray) else np.asarray(data)
    kind = arr.dtype.kind
    if kind == "U":
        return arr
    if arr.size == 0:
        return arr.astype("<U1")
    try:
        if kind == "S":
            return np.char.decode(arr, "utf-8")
        if kind == "O":
            flat = [v.decode("utf-8") if isinstance(v, bytes) else v for v in arr.reshape(-1).tolist()]
            if all(isinstance(v, str) for v in flat):
                return np.array(flat, dtype=str).reshape(arr.shape)
    except UnicodeDecodeError as error:
        raise ValueError(f"{op.name}: the input holds bytes that are not UTF-8: {error}") from None
    raise ValueError(
        f"{op.name}: the input must be strings (a NumPy str or bytes array). Found dtype {arr.dtype}, "
        f"shape {arr.shape}"
    )


def one_string(op: KernelOp, data: Any) -> str:
    """The text of a 0-d string input (tokenizers take one string per row, as MindSpore's)."""
    arr = strings(op, data)
    if arr.ndim != 0:
        raise ValueError(
            f"{op.name}: the input must be one string (a 0-d string array). Found shape {arr.shape}; "
            "tokenize each string in its own row"
        )
    return str(arr)


def one_d(op: KernelOp, arr: np.ndarray) -> np.ndarray:
    if arr.ndim != 1:
        raise ValueError(f"{op.name}: the input must be 1-D. Found shape {arr.shape}")
    return arr


def string_array(values: list[str], shape: tuple[int, ...] | None = None) -> np.ndarray:
    out = np.array(values, dtype=str) if values else np.zeros(0, "<U1")
    return out if shape is None else out.reshape(shape)


def _map_strings(op: KernelOp, data: Any, fn: Any) -> np.ndarray:
    arr = strings(op, data)
    return string_array([fn(s) for s in arr.reshape(-1).tolist()], arr.shape)


# ---------------------------------------------------------------------------------------------- vocabularies


@register_kernel("Lookup", "CPU")
def lookup(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = strings(op, data)
    tokens = arr.reshape(-1).tolist()
    ids = op.vocab.tokens_to_ids(tokens)
    if op.unknown_token is not None:
        unknown = op.vocab.tokens_to_ids(op.unknown_token)
        ids = [unknown if i < 0 else i for i in ids]
    elif ids and min(ids) < 0:
        missing = [t for t, i in zip(tokens, ids) if i < 0]
        raise ValueError(
            f"Lookup: {missing[0]!r} is not in the vocabulary ({len(missing)} token(s) of this row are not) and no "
            "`unknown_token` is given. Give Lookup(vocab, unknown_token=...) with a token of the vocabulary."
        )
    return np.array(ids, dtype=np.int64).astype(op.data_type).reshape(arr.shape)


@register_kernel("ToVectors", "CPU")
def to_vectors(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = strings(op, data)
    unk = None if op.unk_init is None else np.asarray(op.unk_init, np.float32)
    out = op.vectors.lookup(arr.reshape(-1).tolist(), unk, op.lower_case_backup)
    return out.reshape((*arr.shape, op.vectors.dim))


# ---------------------------------------------------------------------------------------------- sequences


@register_kernel("Ngram", "CPU")
def ngram(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    tokens = one_d(op, strings(op, data)).tolist()
    (left, left_width), (right, right_width) = op.left_pad, op.right_pad
    out: list[str] = []
    for n in op.n:
        seq = [left] * min(left_width, n - 1) + tokens + [right] * min(right_width, n - 1)
        if len(seq) < n:
            out.append("")
            continue
        out.extend(op.separator.join(seq[i : i + n]) for i in range(len(seq) - n + 1))
    return string_array(out)


@register_kernel("Truncate", "CPU")
def truncate(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if arr.ndim not in (1, 2):
        raise ValueError(f"Truncate: the input must be 1-D or 2-D. Found shape {arr.shape}")
    return arr[..., : op.max_seq_len].copy()


@register_kernel("TruncateSequencePair", "CPU")
def truncate_sequence_pair(
    op: KernelOp, ctx: KernelContext, first: Any, second: Any
) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(first), np.asarray(second)
    for name, arr in (("first", a), ("second", b)):
        if arr.ndim != 1:
            raise ValueError(f"TruncateSequencePair: the {name} input must be 1-D. Found shape {arr.shape}")
    n, m = len(a), len(b)
    # Drop from the longer one (the second on a tie) until the pair fits.
    while n + m > op.max_length:
        if n > m:
            n -= 1
        else:
            m -= 1
    return a[:n].copy(), b[:m].copy()


@register_kernel("SlidingWindow", "CPU")
def sliding_window(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if arr.ndim != 1:
        raise ValueError(f"SlidingWindow: the input must be 1-D (as in MindSpore). Found shape {arr.shape}")
    if len(arr) < op.width:
        return np.zeros((0, op.width), arr.dtype)
    return np.lib.stride_tricks.sliding_window_view(arr, op.width).copy()


@register_kernel("AddToken", "CPU")
def add_token(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = strings(op, data)
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"AddToken: the input must be 1-D or 2-D (a row of tokens per line). Found shape {arr.shape}"
        )
    column = np.full((*arr.shape[:-1], 1), op.token)
    return np.concatenate([column, arr] if op.begin else [arr, column], axis=-1)


# ---------------------------------------------------------------------------------------------- strings


_NUMBER_INT = re.compile(r"[+-]?[0-9]+")


def _parse(op: KernelOp, s: str) -> Any:
    dtype = op.data_type
    # Leading whitespace is skipped, as C++'s stoll/stod (MindSpore's parsers) do. Trailing text is an
    # error here, where MindSpore would drop it silently ("12abc" -> 12).
    number = s.lstrip()
    if dtype.kind in "iu":
        if not _NUMBER_INT.fullmatch(number):
            raise ValueError(f"ToNumber: {s!r} is not an integer, so it can't be converted to {dtype}")
        whole = int(number)
        info = np.iinfo(dtype)
        if not info.min <= whole <= info.max:
            raise ValueError(f"ToNumber: {s!r} is out of the range of {dtype} [{info.min}, {info.max}]")
        return whole
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"ToNumber: {s!r} is not a number, so it can't be converted to {dtype}") from None
    # Infinities are out of range too, as in MindSpore; NaN passes.
    if abs(value) > float(np.finfo(dtype).max):
        raise ValueError(f"ToNumber: {s!r} is out of the range of {dtype}")
    return value


@register_kernel("ToNumber", "CPU")
def to_number(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = strings(op, data)
    values = [_parse(op, s) for s in arr.reshape(-1).tolist()]
    return np.array(values, dtype=op.data_type).reshape(arr.shape)


@register_kernel("NormalizeUTF8", "CPU")
def normalize_utf8(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    form = op.normalize_form.name
    if form == "NONE":
        return strings(op, data).copy()
    return _map_strings(op, data, lambda s: unicodedata.normalize(form, s))


# Unicode's Default_Ignorable_Code_Point characters (DerivedCoreProperties.txt), which NFKC_Casefold drops.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)


def nfkc_casefold(text: str) -> str:
    """Unicode's NFKC_Casefold (ICU's ``getNFKCCasefoldInstance``, MindSpore's CaseFold): full case
    folding with compatibility normalization, default-ignorable characters removed."""
    if text.isascii():
        return text.lower()
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFD", text).casefold())
    return _IGNORABLE.sub("", unicodedata.normalize("NFKC", folded.casefold()))


@register_kernel("CaseFold", "CPU")
def case_fold(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return _map_strings(op, data, nfkc_casefold)


@register_kernel("RegexReplace", "CPU")
def regex_replace(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    pattern = compile_icu(op.pattern)
    template = op.replace
    count = 0 if op.replace_all else 1
    return _map_strings(op, data, lambda s: pattern.sub(lambda m: expand(m, template), s, count=count))


# Matt Mahoney's wikifil.pl, step by step (MindSpore's FilterWikipediaXML runs the same rules).
_WIKI_RULES = [
    (re.compile(r"<.*>"), ""),
    (re.compile(r"&amp;"), "&"),
    (re.compile(r"&lt;"), "<"),
    (re.compile(r"&gt;"), ">"),
    (re.compile(r"<ref[^<]*</ref>"), ""),
    (re.compile(r"<[^>]*>"), ""),
    (re.compile(r"\[http:[^] ]*"), "["),
    (re.compile(r"\|thumb", re.I), ""),
    (re.compile(r"\|left", re.I), ""),
    (re.compile(r"\|right", re.I), ""),
    (re.compile(r"\|\d+px", re.I), ""),
    (re.compile(r"\[\[image:[^\[\]]*\|", re.I), ""),
    (re.compile(r"\[\[category:([^|\]]*)[^]]*\]\]", re.I), r"[[\1]]"),
    (re.compile(r"\[\[[a-z\-]*:[^\]]*\]\]"), ""),
    (re.compile(r"\[\[[^\|\]]*\|"), "[["),
    (re.compile(r"\{\{[^}]*\}\}"), ""),
    (re.compile(r"\{[^}]*\}"), ""),
    (re.compile(r"\["), ""),
    (re.compile(r"\]"), ""),
    (re.compile(r"&[^;]*;"), " "),
]
_DIGITS = str.maketrans(
    {
        str(d): f" {w} "
        for d, w in enumerate(
            ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
        )
    }
)
_NOT_LETTERS = re.compile(r"[^a-z]+")


def _filter_wikipedia(s: str) -> str:
    if "#redirect" in s or "#REDIRECT" in s:
        return ""
    for pattern, replacement in _WIKI_RULES:
        s = pattern.sub(replacement, s)
    s = s.translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")).translate(
        _DIGITS
    )
    return _NOT_LETTERS.sub(" ", s).strip()


@register_kernel("FilterWikipediaXML", "CPU")
def filter_wikipedia_xml(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return _map_strings(op, data, _filter_wikipedia)
