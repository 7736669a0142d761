"""Pre-trained word vectors: :class:`Vectors` (any ``token v1 ... vd`` text file), :class:`GloVe`,
:class:`FastText` and :class:`CharNGram`, as in ``mindspore.dataset.text``; :class:`~minddata.text.ToVectors`
maps tokens to them in a pipeline."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.text._checks import check_int

__all__ = ["CharNGram", "FastText", "GloVe", "Vectors"]


class Vectors:
    """A table of token vectors read from a text file: one ``token v1 v2 ... vd`` per line, separated by
    spaces. A first line of two integers (``count dim``, fastText's ``.vec`` header) is skipped; every
    vector must have the first one's dimension; a repeated token keeps its first vector.

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "vectors.txt")
        >>> _ = open(path, "w").write("ok 0.5 1.0\\nno -1 2\\n")
        >>> vectors = text.Vectors.from_file(path)
        >>> vectors.dim, text.ToVectors(vectors)(["no", "what"]).tolist()
        (2, [[-1.0, 2.0], [0.0, 0.0]])
        >>> tmp.cleanup()
    """

    def __init__(self, tokens: Sequence[str] = (), vectors: np.ndarray | None = None) -> None:
        self.tokens = list(tokens)
        self.vectors = np.zeros((0, 0), np.float32) if vectors is None else np.asarray(vectors, np.float32)
        self._index = {t: i for i, t in enumerate(self.tokens)}

    @property
    def dim(self) -> int:
        """The dimension of the vectors."""
        return int(self.vectors.shape[1])

    @classmethod
    def from_file(cls, file_path: str, max_vectors: int | None = None) -> Vectors:
        """Read the vectors of ``file_path``, the first ``max_vectors`` of them (None or 0: all).

        Args:
            file_path: the vectors file.
            max_vectors: how many vectors to read (most files list the frequent words first).
        """
        where = f"{cls.__name__}.from_file"
        path = _check_path(where, file_path)
        cls._check_name(where, path)
        if max_vectors is not None:
            check_int(where, "max_vectors", max_vectors, low=0, high=2**31 - 1)
        tokens, vectors = _read_vectors(where, path, max_vectors or None)
        return cls(tokens, vectors)

    @classmethod
    def _check_name(cls, where: str, path: str) -> None:
        pass

    def lookup(self, tokens: list[str], unk_init: np.ndarray | None, lower_case_backup: bool) -> np.ndarray:
        """The vectors of ``tokens`` as a ``(len(tokens), dim)`` float32 array: a token not in the table
        (nor, with ``lower_case_backup``, its lower-case form) gets ``unk_init`` (default zeros)."""
        out = np.zeros((len(tokens), self.dim), np.float32)
        for k, token in enumerate(tokens):
            i = self._index.get(token)
            if i is None and lower_case_backup:
                i = self._index.get(token.lower())
            if i is not None:
                out[k] = self.vectors[i]
            elif unk_init is not None:
                out[k] = unk_init
        return out

    def __len__(self) -> int:
        return len(self.tokens)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.tokens == other.tokens and np.array_equal(self.vectors, other.vectors)

    __hash__ = None  # type: ignore[assignment]  # None makes instances unhashable, as __eq__ needs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={len(self.tokens)}, dim={self.vectors.shape[1]})"

    def __getstate__(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "vectors": self.vectors}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["tokens"], state["vectors"])  # type: ignore[misc]  # rebuilds the instance through its own constructor


class GloVe(Vectors):
    """GloVe vectors (``glove.*.txt`` files, e.g. ``glove.6B.50d.txt``; MindSpore takes only the ``6B``
    sets, any GloVe text file works here).

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "glove.6B.3d.txt")
        >>> _ = open(path, "w").write("the 0.1 0.2 0.3\\n, 1 1 1\\n")
        >>> text.GloVe.from_file(path).dim
        3
        >>> tmp.cleanup()
    """

    @classmethod
    def _check_name(cls, where: str, path: str) -> None:
        name = os.path.basename(path)
        if not (name.startswith("glove.") and name.endswith(".txt")):
            raise ArgumentError(f"{where}: `file_path` must name a GloVe file, glove.*.txt. Found: {name!r}")


class FastText(Vectors):
    """fastText vectors (``*.vec`` files, whose first line ``count dim`` is skipped).

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "wiki.en.vec")
        >>> _ = open(path, "w").write("2 2\\nhello 1 0\\nworld 0 1\\n")
        >>> len(text.FastText.from_file(path))
        2
        >>> tmp.cleanup()
    """

    @classmethod
    def _check_name(cls, where: str, path: str) -> None:
        if not path.endswith(".vec"):
            raise ArgumentError(
                f"{where}: `file_path` must be a fastText .vec file. Found: {os.path.basename(path)!r}"
            )


class CharNGram(Vectors):
    """Character n-gram vectors (``charNgram.txt``: lines ``2gram-ab v1 ... vd``, ``3gram-...``,
    ``4gram-...``). A token's vector is the mean of the vectors of the 2-, 3- and 4-grams of
    ``#BEGIN# t o k e n #END#`` that the table has (torchtext's rule, which MindSpore follows); a token
    with none gets ``unk_init`` (default zeros).

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "charNgram.txt")
        >>> _ = open(path, "w").write("2gram-#BEGIN#a 1 0\\n2gram-a#END# 0 1\\n")
        >>> text.ToVectors(text.CharNGram.from_file(path))(["a"]).tolist()
        [[0.5, 0.5]]
        >>> tmp.cleanup()
    """

    def lookup(self, tokens: list[str], unk_init: np.ndarray | None, lower_case_backup: bool) -> np.ndarray:
        out = np.zeros((len(tokens), self.dim), np.float32)
        for k, token in enumerate(tokens):
            chars = ["#BEGIN#", *token, "#END#"]
            total = np.zeros(self.dim, np.float64)
            found = 0
            for n in (2, 3, 4):
                for i in range(len(chars) - n + 1):
                    j = self._index.get(f"{n}gram-{''.join(chars[i : i + n])}")
                    if j is not None:
                        total += self.vectors[j]
                        found += 1
            if found:
                out[k] = total / found
            elif unk_init is not None:
                out[k] = unk_init
        return out


def _check_path(where: str, file_path: Any) -> str:
    if not isinstance(file_path, (str, os.PathLike)):
        raise TypeError(
            f"{where}: `file_path` must be a path. Found: {file_path!r} ({type(file_path).__name__})"
        )
    path = os.fspath(file_path)
    if not os.path.isfile(path):
        raise ArgumentError(
            f"{where}: `file_path` must be an existing file. Found: {path!r}, which does not exist"
        )
    return path


_HEADER = re.compile(r"^\d+ \d+$")


def _read_vectors(where: str, path: str, limit: int | None) -> tuple[list[str], np.ndarray]:
    tokens: list[str] = []
    rows: list[list[float]] = []
    seen: set[str] = set()
    dim = None
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if limit is not None and len(tokens) >= limit:
                    break
                line = line.rstrip("\n").rstrip("\r").rstrip(" ")
                if not line:
                    continue
                if number == 1 and _HEADER.match(line):
                    continue
                fields = line.split(" ")
                if len(fields) < 2:
                    raise ArgumentError(
                        f"{where}: {path}, line {number}: a token and at least one number expected"
                    )
                if dim is None:
                    dim = len(fields) - 1
                elif len(fields) - 1 != dim:
                    raise ArgumentError(
                        f"{where}: {path}, line {number}: {len(fields) - 1} numbers, but the first vector has {dim}"
                    )
                token = fields[0]
                if token in seen:
                    continue
                try:
                    values = [float(x) for x in fields[1:]]
                except ValueError:
                    raise ArgumentError(f"{where}: {path}, line {number}: not a vector of numbers") from None
                seen.add(token)
                tokens.append(token)
                rows.append(values)
    except UnicodeDecodeError as error:
        raise ArgumentError(f"{where}: {path} is not UTF-8 text: {error}") from None
    if not tokens:
        raise ArgumentError(f"{where}: {path} holds no vectors")
    return tokens, np.asarray(rows, np.float32)
