"""Vocabularies: :class:`Vocab` (token ↔ id tables for :class:`~minddata.text.Lookup` and the WordPiece
tokenizers) and :class:`SentencePieceVocab` (a trained SentencePiece model), as in
``mindspore.dataset.text``."""

from __future__ import annotations

import collections
import io
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.text._checks import check_bool, check_enum, check_int, check_str, check_str_list
from minddata.text.utils import SentencePieceModel

__all__ = ["SentencePieceVocab", "Vocab"]

_MAX_ID = 2**31 - 1


def _specials(where: str, special_tokens: Any, special_first: Any) -> tuple[list[str], bool]:
    tokens = [] if special_tokens is None else check_str_list(where, "special_tokens", special_tokens)
    return tokens, check_bool(where, "special_first", special_first)


def _with_specials(where: str, words: list[str], specials: list[str], special_first: bool) -> list[str]:
    clash = sorted(set(words) & set(specials))
    if clash:
        raise ArgumentError(
            f"{where}: `special_tokens` must not repeat words of the vocabulary. Found: {clash[:5]}"
        )
    return specials + words if special_first else words + specials


class Vocab:
    """A vocabulary: a table of tokens and their ids, built with :meth:`from_list`, :meth:`from_file`,
    :meth:`from_dict` or :meth:`from_dataset`.

    Vocabularies pickle (ops holding one travel to worker processes) and compare equal when their tables
    are equal.

    Examples:
        >>> from minddata import text
        >>> vocab = text.Vocab.from_list(["w1", "w2", "w3"], special_tokens=["<unk>"], special_first=True)
        >>> vocab.vocab()
        {'<unk>': 0, 'w1': 1, 'w2': 2, 'w3': 3}
        >>> vocab.tokens_to_ids(["w1", "w3", "nope"])
        [1, 3, -1]
        >>> vocab.ids_to_tokens(0)
        '<unk>'
    """

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._tokens: dict[int, str] = {}

    @classmethod
    def _of(cls, table: dict[str, int]) -> Vocab:
        vocab = cls()
        vocab._ids = table
        vocab._tokens = {i: w for w, i in table.items()}
        return vocab

    @classmethod
    def from_list(
        cls, word_list: Sequence[str], special_tokens: Sequence[str] | None = None, special_first: bool = True
    ) -> Vocab:
        """Ids in list order (special tokens first or last). Repeated words are an error.

        Args:
            word_list: the words.
            special_tokens: tokens such as ``"<pad>"``, ``"<unk>"`` to add.
            special_first: put the special tokens before the words (True) or after them.

        Examples:
            >>> from minddata import text
            >>> text.Vocab.from_list(["a", "b"], ["<pad>"], special_first=False).vocab()
            {'a': 0, 'b': 1, '<pad>': 2}
        """
        where = "Vocab.from_list"
        words = check_str_list(where, "word_list", word_list)
        specials, first = _specials(where, special_tokens, special_first)
        return cls._of({w: i for i, w in enumerate(_with_specials(where, words, specials, first))})

    @classmethod
    def from_file(
        cls,
        file_path: str,
        delimiter: str = "",
        vocab_size: int | None = None,
        special_tokens: Sequence[str] | None = None,
        special_first: bool = True,
    ) -> Vocab:
        """One word per line of a UTF-8 file: the part before the first ``delimiter`` (the whole line when
        ``delimiter`` is ``""``), ids in line order; the first ``vocab_size`` words are kept. As in MindSpore,
        an empty line is the word ``""`` (so the ids of the lines after it stay those of their lines), and
        a word on two lines is an error.

        Args:
            file_path: the vocabulary file.
            delimiter: what ends the word on a line (e.g. ``","`` for ``apple,123``).
            vocab_size: how many words to read (None: all).
            special_tokens: tokens to add, as in :meth:`from_list`.
            special_first: put the special tokens first.

        Examples:
            >>> import os, tempfile
            >>> from minddata import text
            >>> tmp = tempfile.TemporaryDirectory()
            >>> path = os.path.join(tmp.name, "vocab.txt")
            >>> _ = open(path, "w").write("apple,apple2\\nbanana, 333\\ncat,00\\n")
            >>> text.Vocab.from_file(path, ",", None, ["<pad>", "<unk>"], True).vocab()
            {'<pad>': 0, '<unk>': 1, 'apple': 2, 'banana': 3, 'cat': 4}
            >>> tmp.cleanup()
        """
        where = "Vocab.from_file"
        if not isinstance(file_path, (str, os.PathLike)):
            raise TypeError(f"{where}: `file_path` must be a path. Found: {file_path!r}")
        check_str(where, "delimiter", delimiter)
        if vocab_size is not None:
            check_int(where, "vocab_size", vocab_size, low=1, high=_MAX_ID)
        specials, first = _specials(where, special_tokens, special_first)
        words: list[str] = []
        seen: dict[str, int] = {}
        try:
            with open(file_path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if vocab_size is not None and len(words) >= vocab_size:
                        break
                    line = line.rstrip("\n").rstrip("\r")
                    word = line.split(delimiter, 1)[0] if delimiter else line
                    if word in seen:
                        raise ArgumentError(
                            f"{where}: {os.fspath(file_path)}, line {number}: {word!r} repeats line {seen[word]}"
                        )
                    seen[word] = number
                    words.append(word)
        except OSError as error:
            raise ArgumentError(
                f"{where}: can't read `file_path` {os.fspath(file_path)!r}: {error}"
            ) from None
        except UnicodeDecodeError as error:
            raise ArgumentError(f"{where}: {os.fspath(file_path)!r} is not UTF-8 text: {error}") from None
        return cls._of({w: i for i, w in enumerate(_with_specials(where, words, specials, first))})

    @classmethod
    def from_dict(cls, word_dict: dict[str, int]) -> Vocab:
        """The table as given: ``{word: id}`` with ids >= 0. Ids need not be contiguous, and several words
        may share one (:meth:`ids_to_tokens` then gives the last of them, as MindSpore's does).

        Examples:
            >>> from minddata import text
            >>> text.Vocab.from_dict({"home": 3, "behind": 2, "<unk>": 6}).tokens_to_ids("home")
            3
        """
        where = "Vocab.from_dict"
        if not isinstance(word_dict, dict):
            raise TypeError(
                f"{where}: `word_dict` must be a dict of str to int. Found: {type(word_dict).__name__}"
            )
        table: dict[str, int] = {}
        for word, index in word_dict.items():
            check_str(where, "word_dict key", word)
            check_int(where, f"word_dict[{word!r}]", index, low=0, high=_MAX_ID)
            table[word] = int(index)
        return cls._of(table)

    @classmethod
    def from_dataset(
        cls,
        dataset: Any,
        columns: str | Sequence[str] | None = None,
        freq_range: tuple[int | None, int | None] | None = None,
        top_k: int | None = None,
        special_tokens: Sequence[str] | None = None,
        special_first: bool = True,
    ) -> Vocab:
        """Count every string of ``columns`` over one pass of ``dataset`` and keep the words whose count lies
        in ``freq_range`` (inclusive; ``None`` ends are open), most frequent first, ties in lexicographic
        order, at most ``top_k`` of them (taken after the frequency filter).

        A special token that also occurs in the data is an error, as in MindSpore.

        Args:
            dataset: the pipeline to read (it runs once, to the end).
            columns: the column(s) to count (None: every column).
            freq_range: ``(min_frequency, max_frequency)``.
            top_k: keep the ``top_k`` most frequent words.
            special_tokens: tokens to add, as in :meth:`from_list`.
            special_first: put the special tokens first.

        Examples:
            >>> import minddata as md
            >>> from minddata import text
            >>> ds = md.NumpySlicesDataset({"text": [["b", "a"], ["a", "c"]]}, shuffle=False)
            >>> text.Vocab.from_dataset(ds, "text", special_tokens=["<unk>"]).vocab()
            {'<unk>': 0, 'a': 1, 'b': 2, 'c': 3}
        """
        where = "Vocab.from_dataset"
        if isinstance(columns, str):
            columns = [columns]
        names = None if columns is None else check_str_list(where, "columns", columns)
        low, high = _freq_range(where, freq_range)
        if top_k is not None:
            check_int(where, "top_k", top_k, low=1, high=_MAX_ID)
        specials, first = _specials(where, special_tokens, special_first)
        if names is not None:
            have = dataset.get_col_names()
            missing = [c for c in names if c not in have]
            if missing:
                raise ArgumentError(
                    f"{where}: `columns` {missing} are not columns of the dataset. It has: {have}"
                )
        counts: collections.Counter[str] = collections.Counter()
        for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
            for name in names if names is not None else list(row):
                counts.update(_strings(where, name, row[name]))
        kept = [
            (w, c) for w, c in counts.items() if (low is None or c >= low) and (high is None or c <= high)
        ]
        kept.sort(key=lambda wc: (-wc[1], wc[0]))
        if top_k is not None:
            kept = kept[:top_k]
        words = [w for w, _ in kept]
        clash = sorted(set(specials) & set(counts))
        if clash:
            raise ArgumentError(f"{where}: `special_tokens` {clash[:5]} also occur in the dataset")
        return cls._of({w: i for i, w in enumerate(_with_specials(where, words, specials, first))})

    def vocab(self) -> dict[str, int]:
        """The table, ``{token: id}`` (a copy).

        Examples:
            >>> from minddata import text
            >>> text.Vocab.from_list(["word_1", "word_2"]).vocab()
            {'word_1': 0, 'word_2': 1}
        """
        return dict(self._ids)

    def tokens_to_ids(self, tokens: str | Iterable[str] | np.ndarray) -> int | list[int]:
        """The id of a token (``-1`` when it is not in the vocabulary), or the list of ids of several.

        Examples:
            >>> from minddata import text
            >>> text.Vocab.from_list(["w1", "w2", "w3"], ["<unk>"]).tokens_to_ids(["w1", "w3"])
            [1, 3]
        """
        if isinstance(tokens, np.ndarray):
            tokens = tokens.tolist()
        if isinstance(tokens, (str, np.str_)):
            return self._ids.get(str(tokens), -1)
        if isinstance(tokens, (bytes, np.bytes_)):
            return self._ids.get(bytes(tokens).decode("utf-8"), -1)
        get = self._ids.get
        return [get(t if isinstance(t, str) else _word("Vocab.tokens_to_ids", t), -1) for t in tokens]

    def ids_to_tokens(self, ids: int | Iterable[int] | np.ndarray) -> str | list[str]:
        """The token of an id (``""`` when no token has it), or the list of tokens of several ids. Ids must
        be >= 0.

        Examples:
            >>> from minddata import text
            >>> text.Vocab.from_list(["w1", "w2", "w3"], ["<unk>"]).ids_to_tokens([0, 3, 9])
            ['<unk>', 'w3', '']
        """
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        if isinstance(ids, (int, np.integer)) and not isinstance(ids, bool):
            return self._tokens.get(_id(ids), "")
        return [self._tokens.get(_id(i), "") for i in ids]  # type: ignore[union-attr]  # only a bool (no id) is left not iterable, and fails so

    def __len__(self) -> int:
        return len(self._ids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocab):
            return NotImplemented
        return self._ids == other._ids

    __hash__ = None  # type: ignore[assignment]  # None makes instances unhashable, as __eq__ needs

    def __repr__(self) -> str:
        head = ", ".join(repr(w) for w in list(self._ids)[:3])
        return f"Vocab(size={len(self._ids)}, first=[{head}])"

    def __getstate__(self) -> dict[str, Any]:
        return {"_ids": self._ids}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._ids = state["_ids"]
        self._tokens = {i: w for w, i in self._ids.items()}


def _id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"Vocab.ids_to_tokens: every id must be an int. Found: {value!r} ({type(value).__name__})"
        )
    if not 0 <= value <= _MAX_ID:
        raise ArgumentError(f"Vocab.ids_to_tokens: ids must be in [0, {_MAX_ID}]. Found: {value}")
    return int(value)


def _freq_range(where: str, freq_range: Any) -> tuple[int | None, int | None]:
    if freq_range is None:
        return None, None
    if not isinstance(freq_range, (tuple, list)) or len(freq_range) != 2:
        raise TypeError(
            f"{where}: `freq_range` must be a tuple (min_frequency, max_frequency). Found: {freq_range!r}"
        )
    ends = []
    for k, value in zip(("min_frequency", "max_frequency"), freq_range):
        if value is not None:
            check_int(where, f"freq_range ({k})", value, low=0, high=_MAX_ID)
        ends.append(value)
    if ends[0] is not None and ends[1] is not None and ends[0] > ends[1]:
        raise ArgumentError(
            f"{where}: `freq_range` must have min_frequency <= max_frequency. Found: {freq_range!r}"
        )
    return ends[0], ends[1]


def _word(where: str, value: Any) -> str:
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8")
    if isinstance(value, str):
        return str(value)
    raise TypeError(f"{where}: every token must be a str. Found: {value!r} ({type(value).__name__})")


def _strings(where: str, column: str, value: Any) -> list[str]:
    arr = np.asarray(value)
    if arr.dtype.kind == "U":
        return [str(s) for s in arr.reshape(-1)]
    if arr.dtype.kind in "SO":
        return [_word(where, s) for s in arr.reshape(-1)]
    raise ArgumentError(
        f"{where}: column {column!r} holds {arr.dtype} values; a vocabulary is built from string columns"
    )


class SentencePieceVocab:
    """A trained SentencePiece model (the ``sentencepiece`` package's), for
    :class:`~minddata.text.SentencePieceTokenizer`.

    Train one with :meth:`from_file` or :meth:`from_dataset`, write it with :meth:`save_model`. The model
    is kept as its serialized bytes, so a vocabulary pickles and an op holding it travels to worker
    processes.

    Examples:
        >>> import os, tempfile
        >>> from minddata import text
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "corpus.txt")
        >>> _ = open(path, "w").write("the cat sat on the mat\\n" * 20 + "a dog sat on a log\\n" * 20)
        >>> vocab = text.SentencePieceVocab.from_file([path], 30, 1.0, text.SentencePieceModel.BPE, {})
        >>> tokenizer = text.SentencePieceTokenizer(vocab, text.SPieceTokenizerOutType.STRING)
        >>> "".join(tokenizer("the cat sat")).replace("\\u2581", " ").strip()
        'the cat sat'
        >>> tmp.cleanup()
    """

    def __init__(self, model: bytes = b"") -> None:
        self.model_proto = bytes(model)

    @classmethod
    def from_file(
        cls,
        file_path: Sequence[str],
        vocab_size: int,
        character_coverage: float,
        model_type: SentencePieceModel,
        params: dict[str, Any],
    ) -> SentencePieceVocab:
        """Train on the sentences (one per line) of ``file_path``.

        Args:
            file_path: a list of text files.
            vocab_size: the number of pieces.
            character_coverage: the share of characters the model covers (0.9995 for Chinese or Japanese,
                1.0 for languages with small alphabets).
            model_type: :class:`~minddata.text.SentencePieceModel`.
            params: further options of sentencepiece's trainer (e.g. ``{"max_sentencepiece_length": 8}``).
        """
        where = "SentencePieceVocab.from_file"
        files = check_str_list(
            where,
            "file_path",
            [os.fspath(p) for p in file_path] if isinstance(file_path, (list, tuple)) else file_path,
            unique=False,
        )
        for path in files:
            if not os.path.isfile(path):
                raise ArgumentError(
                    f"{where}: `file_path` must list existing files. Found: {path!r}, which does not exist"
                )
        options = _train_options(where, vocab_size, character_coverage, model_type, params)
        return cls(_train(where, options, input=files))

    @classmethod
    def from_dataset(
        cls,
        dataset: Any,
        col_names: Sequence[str],
        vocab_size: int,
        character_coverage: float,
        model_type: SentencePieceModel,
        params: dict[str, Any],
    ) -> SentencePieceVocab:
        """Train on the strings of ``col_names`` over one pass of ``dataset`` (each string a sentence).

        Args:
            dataset: the pipeline to read.
            col_names: the columns to read (a list with one name, as MindSpore requires).
            vocab_size, character_coverage, model_type, params: as in :meth:`from_file`.
        """
        where = "SentencePieceVocab.from_dataset"
        names = check_str_list(where, "col_names", col_names)
        if len(names) != 1:
            raise ArgumentError(f"{where}: `col_names` must name exactly one column. Found: {names}")
        options = _train_options(where, vocab_size, character_coverage, model_type, params)

        def sentences() -> Iterable[str]:
            for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
                yield from _strings(where, names[0], row[names[0]])

        return cls(_train(where, options, sentence_iterator=sentences()))

    @classmethod
    def save_model(cls, vocab: SentencePieceVocab, path: str, filename: str) -> None:
        """Write the model to ``path/filename`` (readable by ``sentencepiece`` and by
        :class:`~minddata.text.SentencePieceTokenizer` given the file's path).

        Examples:
            >>> import os, tempfile
            >>> from minddata import text
            >>> tmp = tempfile.TemporaryDirectory()
            >>> folder = tmp.name
            >>> corpus = os.path.join(folder, "corpus.txt")
            >>> _ = open(corpus, "w").write("low lower lowest newer wider\\n" * 30)
            >>> vocab = text.SentencePieceVocab.from_file([corpus], 25, 1.0, text.SentencePieceModel.BPE, {})
            >>> text.SentencePieceVocab.save_model(vocab, folder, "m.model")
            >>> os.path.getsize(os.path.join(folder, "m.model")) > 0
            True
            >>> tmp.cleanup()
        """
        where = "SentencePieceVocab.save_model"
        if not isinstance(vocab, SentencePieceVocab):
            raise TypeError(f"{where}: `vocab` must be a SentencePieceVocab. Found: {type(vocab).__name__}")
        check_str(where, "filename", filename, non_empty=True)
        if not os.path.isdir(path):
            raise ArgumentError(f"{where}: `path` must be an existing folder. Found: {path!r}")
        with open(os.path.join(path, filename), "wb") as f:
            f.write(vocab.model_proto)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SentencePieceVocab):
            return NotImplemented
        return self.model_proto == other.model_proto

    __hash__ = None  # type: ignore[assignment]  # None makes instances unhashable, as __eq__ needs

    def __repr__(self) -> str:
        return f"SentencePieceVocab(model_bytes={len(self.model_proto)})"


def _train_options(
    where: str, vocab_size: Any, character_coverage: Any, model_type: Any, params: Any
) -> dict[str, Any]:
    check_int(where, "vocab_size", vocab_size, low=1, high=_MAX_ID)
    if isinstance(character_coverage, bool) or not isinstance(character_coverage, (int, float)):
        raise TypeError(f"{where}: `character_coverage` must be a number. Found: {character_coverage!r}")
    if not 0.98 <= float(character_coverage) <= 1.0:
        raise ArgumentError(
            f"{where}: `character_coverage` must be in [0.98, 1.0]. Found: {character_coverage}"
        )
    check_enum(where, "model_type", model_type, SentencePieceModel)
    if not isinstance(params, dict):
        raise TypeError(f"{where}: `params` must be a dict of trainer options. Found: {params!r}")
    # sentencepiece's trainer logs every step to stderr; warnings and errors are what a pipeline wants.
    options: dict[str, Any] = {"minloglevel": 1}
    options.update(params)
    options.update(
        vocab_size=int(vocab_size),
        character_coverage=float(character_coverage),
        model_type=model_type.name.lower(),
    )
    return options


def _train(where: str, options: dict[str, Any], **source: Any) -> bytes:
    try:
        import sentencepiece as spm
    except ImportError:
        raise ImportError(f"{where} needs the sentencepiece package: pip install 'minddata[text]'") from None
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(model_writer=model, **source, **options)
    except (RuntimeError, OSError, ValueError) as error:
        raise ArgumentError(f"{where}: sentencepiece's trainer failed: {error}") from None
    return model.getvalue()
