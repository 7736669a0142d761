"""Jieba segmentation for the JiebaTokenizer kernel: the ``jieba`` package's dictionary graph (DAG and
maximum-probability route) over MindSpore's dictionary file, with the HMM read from cppjieba's
``hmm_model.utf8`` instead of jieba's built-in tables, so ``hmm_path`` means what it means in MindSpore.

The MIX and HMM modes follow jieba's own ``cut(HMM=True)`` and ``finalseg.cut`` step for step (runs of
single characters the dictionary can't join go through the HMM's Viterbi path); MP follows the
dictionary's route as cppjieba does. All three give MindSpore's tokens (tests/text/test_mindspore_text.py). Segmenters are built once
per (dictionary, model, added words) and shared by threads; jieba's dictionary cache file is not written.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

__all__ = ["segmenter", "HmmModel", "Segmenter"]

_MIN = -3.14e100
_STATES = "BEMS"
# Which states may precede each state (B begins a word, M continues it, E ends it, S is a word alone).
_PREVIOUS = {"B": "ES", "M": "MB", "S": "SE", "E": "BM"}
_HAN = re.compile("([\u4e00-\u9fd5]+)")
_HMM_SKIP = re.compile(r"([a-zA-Z0-9]+(?:\.\d+)?%?)")


class HmmModel:
    """The B/E/M/S model of a cppjieba ``hmm_model.utf8``: a start line, four transition lines and four
    emission lines (``char:logprob,...``), with ``#`` comment lines between."""

    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
        if len(lines) != 9:
            raise ValueError(
                f"JiebaTokenizer: {path} is not a cppjieba HMM model (hmm_model.utf8): expected 9 data lines "
                f"(start, 4 transition, 4 emission), found {len(lines)}"
            )
        try:
            start = [float(x) for x in lines[0].split()]
            trans = [[float(x) for x in ln.split()] for ln in lines[1:5]]
            emit = []
            for ln in lines[5:9]:
                table = {}
                for item in ln.split(","):
                    ch, _, p = item.rpartition(":")
                    table[ch] = float(p)
                emit.append(table)
        except ValueError as error:
            raise ValueError(f"JiebaTokenizer: {path} is not a cppjieba HMM model: {error}") from None
        if len(start) != 4 or any(len(row) != 4 for row in trans):
            raise ValueError(f"JiebaTokenizer: {path}: the start and transition lines need 4 numbers each")
        self.start = dict(zip(_STATES, start))
        self.trans = {s: dict(zip(_STATES, row)) for s, row in zip(_STATES, trans)}
        self.emit = dict(zip(_STATES, emit))

    def viterbi(self, text: str) -> str:
        """The most likely state of each character."""
        emit, trans = self.emit, self.trans
        score = {s: self.start[s] + emit[s].get(text[0], _MIN) for s in _STATES}
        path = {s: s for s in _STATES}
        for ch in text[1:]:
            new_score, new_path = {}, {}
            for s in _STATES:
                e = emit[s].get(ch, _MIN)
                best, prev = max((score[p] + trans[p][s] + e, p) for p in _PREVIOUS[s])
                new_score[s] = best
                new_path[s] = path[prev] + s
            score, path = new_score, new_path
        _, last = max((score[s], s) for s in "ES")
        return path[last]

    def cut_han(self, text: str) -> Iterator[str]:
        states = self.viterbi(text)
        begin = done = 0
        for i, state in enumerate(states):
            if state == "B":
                begin = i
            elif state == "E":
                yield text[begin : i + 1]
                done = i + 1
            elif state == "S":
                yield text[i]
                done = i + 1
        if done < len(text):
            yield text[done:]

    def cut(self, text: str) -> Iterator[str]:
        for block in _HAN.split(text):
            if not block:
                continue
            if _HAN.match(block):
                yield from self.cut_han(block)
            else:
                yield from (x for x in _HMM_SKIP.split(block) if x)


class Segmenter:
    """A jieba dictionary tokenizer plus an HMM model."""

    def __init__(self, mp_path: str, hmm_path: str, words: tuple[tuple[str, int | None], ...]) -> None:
        try:
            import jieba
        except ImportError:
            raise ImportError(
                "JiebaTokenizer needs the jieba package: pip install 'minddata[text]'"
            ) from None
        self.jieba = jieba
        tokenizer = jieba.Tokenizer(dictionary=mp_path)
        # Build the prefix dictionary ourselves: jieba's initialize() would write a cache file to the
        # temp folder and log to stderr.
        try:
            with open(mp_path, "rb") as f:
                tokenizer.FREQ, tokenizer.total = tokenizer.gen_pfdict(f)
        except (ValueError, UnicodeDecodeError) as error:
            raise ValueError(
                f"JiebaTokenizer: {mp_path} is not a Jieba dictionary (word freq [tag] lines): {error}"
            ) from None
        if not tokenizer.total:
            raise ValueError(f"JiebaTokenizer: {mp_path} holds no words with a frequency")
        tokenizer.initialized = True
        for word, freq in words:
            tokenizer.add_word(word, freq)
        self.tokenizer = tokenizer
        self.hmm = HmmModel(hmm_path)

    def _cut_dag(self, block: str) -> Iterator[str]:
        tk = self.tokenizer
        dag = tk.get_DAG(block)
        route: dict[int, tuple[float, int]] = {}
        tk.calc(block, dag, route)
        buf = ""
        x = 0
        while x < len(block):
            y = route[x][1] + 1
            word = block[x:y]
            if y - x == 1:
                buf += word
            else:
                if buf:
                    yield from self._flush(buf)
                    buf = ""
                yield word
            x = y
        if buf:
            yield from self._flush(buf)

    def _flush(self, buf: str) -> Iterator[str]:
        # Single characters the dictionary left alone: the HMM may join them into unknown words.
        if len(buf) == 1:
            yield buf
        elif not self.tokenizer.FREQ.get(buf):
            yield from self.hmm.cut(buf)
        else:
            yield from buf

    def _cut_mp(self, text: str) -> list[str]:
        # cppjieba's MPSegment follows the route as it is: a character the dictionary joins to nothing
        # stays alone, Latin letters and digits included (jieba's cut(HMM=False) would join those).
        tk = self.tokenizer
        route: dict[int, tuple[float, int]] = {}
        tk.calc(text, tk.get_DAG(text), route)
        out = []
        x = 0
        while x < len(text):
            y = route[x][1] + 1
            out.append(text[x:y])
            x = y
        return out

    def cut(self, text: str, mode: str) -> list[str]:
        if mode == "MP":
            return self._cut_mp(text)
        if mode == "HMM":
            return list(self.hmm.cut(text))
        out: list[str] = []
        han, skip = self.jieba.re_han_default, self.jieba.re_skip_default
        for block in han.split(text):
            if not block:
                continue
            if han.match(block):
                out.extend(self._cut_dag(block))
                continue
            for x in skip.split(block):
                if skip.match(x):
                    out.append(x)
                else:
                    out.extend(x)
        return out


# A few segmenters at most: each holds a dictionary (jieba's full one takes some 65 MB).
_KEEP = 4
_segmenters: dict[tuple, Segmenter] = {}
_lock = threading.Lock()


def segmenter(mp_path: str, hmm_path: str, words: tuple[tuple[str, int | None], ...]) -> Segmenter:
    """The shared segmenter for these files and added words (built on first use)."""
    key = (mp_path, hmm_path, words)
    found = _segmenters.get(key)
    if found is None:
        with _lock:
            found = _segmenters.get(key)
            if found is None:
                found = Segmenter(mp_path, hmm_path, words)
                while len(_segmenters) >= _KEEP:
                    del _segmenters[next(iter(_segmenters))]
                _segmenters[key] = found
    return found
