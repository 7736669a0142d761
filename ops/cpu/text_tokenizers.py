"""CPU kernels of the tokenizers (minddata/text/tokenizers.py).

Every kernel returns the tokens (a 1-D str array), and with ``with_offsets`` their UTF-8 byte offsets
(uint32 start and limit arrays). A text without tokens gives one empty token at (0, 0), as MindSpore's
tokenizers do. Jieba and SentencePiece are imported on the first row that needs them.
"""

from __future__ import annotations

import functools
import itertools
import threading
import unicodedata
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.text import nfkc_casefold, one_string, string_array, strings
from minddata.ops.icu_regex import compile_icu
from minddata.ops.registry import register_kernel

__all__ = ["byte_offsets", "WHITESPACE"]

# Unicode's White_Space property (ICU's u_isUWhiteSpace); str.isspace() also takes \x1c-\x1f.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _utf8_len(c: str) -> int:
    o = ord(c)
    return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


def byte_offsets(text: str) -> list[int]:
    """``out[i]``: the UTF-8 byte offset of character ``i`` of ``text`` (``out[len(text)]``: its size)."""
    if text.isascii():
        return list(range(len(text) + 1))
    return [0, *itertools.accumulate(_utf8_len(c) for c in text)]


def _result(op: KernelOp, tokens: list[str], spans: list[tuple[int, int]], text: str | None) -> Any:
    """The kernel's output from tokens and their character spans in ``text`` (byte spans when ``text`` is
    None)."""
    if not tokens:
        tokens, spans, text = [""], [(0, 0)], None
    out = string_array(tokens)
    if not op.with_offsets:
        return out
    if text is not None:
        where = byte_offsets(text)
        spans = [(where[a], where[b]) for a, b in spans]
    start = np.fromiter((a for a, _ in spans), np.uint32, len(spans))
    limit = np.fromiter((b for _, b in spans), np.uint32, len(spans))
    return out, start, limit


def _runs(text: str, key: Any) -> list[tuple[int, int, Any]]:
    """Maximal runs of characters with equal ``key(c)``: ``(start, end, key)``."""
    runs = []
    start = 0
    last = None
    for i, c in enumerate(text):
        k = key(c)
        if i and k != last:
            runs.append((start, i, last))
            start = i
        last = k
    if text:
        runs.append((start, len(text), last))
    return runs


# ---------------------------------------------------------------------------------------------- simple splits


@register_kernel("WhitespaceTokenizer", "CPU")
def whitespace_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    text = one_string(op, data)
    spans = [(a, b) for a, b, space in _runs(text, WHITESPACE.__contains__) if not space]
    return _result(op, [text[a:b] for a, b in spans], spans, text)


@register_kernel("UnicodeCharTokenizer", "CPU")
def unicode_char_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    text = one_string(op, data)
    return _result(op, list(text), [(i, i + 1) for i in range(len(text))], text)


@functools.lru_cache(maxsize=65536)
def _script(c: str) -> str:
    from fontTools.unicodedata import script

    return script(c)


def _script_key(c: str) -> tuple[bool, str]:
    return c in WHITESPACE, _script(c)


@register_kernel("UnicodeScriptTokenizer", "CPU")
def unicode_script_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    text = one_string(op, data)
    try:
        runs = _runs(text, _script_key)
    except ImportError:
        raise ImportError(
            "UnicodeScriptTokenizer reads Unicode's script property through fontTools: pip install 'minddata[text]'"
        ) from None
    spans = [(a, b) for a, b, (space, _) in runs if op.keep_whitespace or not space]
    return _result(op, [text[a:b] for a, b in spans], spans, text)


def _regex_split(text: str, delim: Any, keep: Any | None) -> list[tuple[int, int]]:
    """Spans of the pieces between ``delim``'s matches, and of the matches ``keep`` matches in full."""
    spans = []
    previous = 0
    for match in delim.finditer(text):
        a, b = match.span()
        if a > previous:
            spans.append((previous, a))
        if b > a and keep is not None and keep.fullmatch(text, a, b):
            spans.append((a, b))
        previous = max(previous, b)
    if previous < len(text):
        spans.append((previous, len(text)))
    return spans


@register_kernel("RegexTokenizer", "CPU")
def regex_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    text = one_string(op, data)
    keep = compile_icu(op.keep_delim_pattern) if op.keep_delim_pattern else None
    spans = _regex_split(text, compile_icu(op.delim_pattern), keep)
    return _result(op, [text[a:b] for a, b in spans], spans, text)


# ---------------------------------------------------------------------------------------------- BERT

# MindSpore's BasicTokenizer patterns: ASCII symbols, Unicode punctuation and the CJK ideograph blocks
# each make a token; BERT's special tokens stay whole.
_COMMON = (
    r"[!-/]|[:-@]|[\[-`]|[{-~]|[\p{P}]|[\x{4E00}-\x{9FFF}]|[\x{3400}-\x{4DBF}]|[\x{20000}-\x{2A6DF}]"
    r"|[\x{2A700}-\x{2B73F}]|[\x{2B740}-\x{2B81F}]|[\x{2B820}-\x{2CEAF}]|[\x{F900}-\x{FAFF}]|[\x{2F800}-\x{2FA1F}]"
)
_UNUSED = r"\[CLS\]|\[SEP\]|\[UNK\]|\[PAD\]|\[MASK\]|\[unused\d+\]"
_CONTROL = r"\p{Cc}|\p{Cf}"


def _basic_patterns(op: KernelOp) -> tuple[Any, Any]:
    unused = _UNUSED + "|" if op.preserve_unused_token else ""
    delim = compile_icu(unused + r"\s+|" + _COMMON)
    keep = compile_icu(unused + (r"\s+|" if op.keep_whitespace else "") + _COMMON)
    return delim, keep


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFD", nfkc_casefold(text))
    return "".join(c for c in folded if unicodedata.category(c) != "Mn")


def _normalized(op: KernelOp, text: str) -> str:
    if op.lower_case:
        if op.preserve_unused_token:
            # Special tokens keep their case: fold only what lies between them.
            pieces = []
            previous = 0
            for match in compile_icu(_UNUSED).finditer(text):
                pieces += [_fold(text[previous : match.start()]), match.group()]
                previous = match.end()
            text = "".join([*pieces, _fold(text[previous:])])
        else:
            text = _fold(text)
    elif op.normalization_form.name != "NONE":
        text = unicodedata.normalize(op.normalization_form.name, text)
    return compile_icu(_CONTROL).sub(" ", text)


def _basic(op: KernelOp, text: str) -> tuple[str, list[tuple[int, int]]]:
    text = _normalized(op, text)
    delim, keep = _basic_patterns(op)
    return text, _regex_split(text, delim, keep)


@register_kernel("BasicTokenizer", "CPU")
def basic_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    text, spans = _basic(op, one_string(op, data))
    return _result(op, [text[a:b] for a, b in spans], spans, text)


def _wordpiece(op: KernelOp, word: str, base: int, tokens: list[str], spans: list[tuple[int, int]]) -> None:
    """Append ``word``'s pieces and their byte spans (``base``: the word's byte offset)."""
    size = len(word.encode("utf-8"))
    unknown = op.unknown_token
    if size > op.max_bytes_per_token:
        # MindSpore's spans: a word too long spans the unknown token's length, one that can't be split
        # (below) its own.
        tokens.append(unknown or word)
        spans.append((base, base + (len(unknown.encode("utf-8")) if unknown else size)))
        return
    ids = op.vocab.tokens_to_ids
    where = byte_offsets(word)
    pieces: list[str] = []
    piece_spans: list[tuple[int, int]] = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else op.suffix_indicator + word[start:end]
            if ids(piece) >= 0:
                break
            end -= 1
        if end == start:
            tokens.append(unknown or word)
            spans.append((base, base + size))
            return
        pieces.append(piece)
        piece_spans.append((base + where[start], base + where[end]))
        start = end
    tokens += pieces
    spans += piece_spans


@register_kernel("WordpieceTokenizer", "CPU")
def wordpiece_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    words = strings(op, data)
    if words.ndim > 1:
        raise ValueError(
            f"WordpieceTokenizer: the input must be a word or a 1-D array of words. Found shape {words.shape}"
        )
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    for word in words.reshape(-1).tolist():
        _wordpiece(op, word, 0, tokens, spans)
    return _result(op, tokens, spans, None)


@register_kernel("BertTokenizer", "CPU")
def bert_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    text, basic_spans = _basic(op, one_string(op, data))
    where = byte_offsets(text)
    tokens: list[str] = []
    spans: list[tuple[int, int]] = []
    for a, b in basic_spans:
        _wordpiece(op, text[a:b], where[a], tokens, spans)
    return _result(op, tokens, spans, None)


# ---------------------------------------------------------------------------------------------- Python


@register_kernel("PythonTokenizer", "CPU")
def python_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    text = one_string(op, data)
    tokens = op.tokenizer(text)
    if isinstance(tokens, (str, bytes)) or not all(isinstance(t, str) for t in tokens):
        raise ValueError(
            f"PythonTokenizer: the tokenizer {getattr(op.tokenizer, '__name__', op.tokenizer)!r} must return a list of "
            f"str. It returned {tokens!r:.100}"
        )
    return string_array(list(tokens))


# ---------------------------------------------------------------------------------------------- SentencePiece

_cache_lock = threading.Lock()


@functools.lru_cache(maxsize=16)
def _sentencepiece(model: bytes) -> Any:
    try:
        import sentencepiece
    except ImportError:
        raise ImportError(
            "SentencePieceTokenizer needs the sentencepiece package: pip install 'minddata[text]'"
        ) from None
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(model)
    return processor


@functools.lru_cache(maxsize=16)
def _model_file(path: str, mtime: float) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@register_kernel("SentencePieceTokenizer", "CPU")
def sentencepiece_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    text = one_string(op, data)
    if isinstance(op.mode, str):
        import os

        model = _model_file(op.mode, os.path.getmtime(op.mode))
    else:
        model = op.mode.model_proto
    with _cache_lock:
        processor = _sentencepiece(model)
    if op.out_type.name == "INT":
        return np.array(processor.encode(text, out_type=int), dtype=np.int32)
    return string_array(processor.encode(text, out_type=str))


# ---------------------------------------------------------------------------------------------- Jieba


@register_kernel("JiebaTokenizer", "CPU")
def jieba_tokenizer(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    from minddata.ops.cpu.text_jieba import segmenter

    text = one_string(op, data)
    words = segmenter(op.mp_path, op.hmm_path, tuple(op.words)).cut(text, op.mode.name)
    spans = []
    start = 0
    for w in words:
        spans.append((start, start + len(w)))
        start += len(w)
    return _result(op, words, spans, text)
