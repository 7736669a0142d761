"""Corpora stored as JSON: ``CLUEDataset`` (the CLUE benchmark's classification tasks, one JSON
object per line) and ``SQuADDataset`` (SQuAD 1.1 and 2.0, one JSON document per split). Sharding,
shuffling and resume: see :mod:`minddata.dataset.corpora_common`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from minddata.dataset._files import expand_files
from minddata.dataset.base import Dataset
from minddata.dataset.corpora_common import (
    check_dir,
    check_usage,
    count_lines,
    stream_node,
    strings,
    text_lines,
)
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["CLUEDataset", "SQuADDataset"]

# task -> usage -> the columns, each (name, key path in the JSON object, "str" or "uint32").
_S, _U = "str", "uint32"
_PAIR_TRAIN = [
    ("sentence1", ("sentence1",), _S),
    ("sentence2", ("sentence2",), _S),
    ("label", ("label",), _S),
]
_PAIR_TEST = [("id", ("id",), _U), ("sentence1", ("sentence1",), _S), ("sentence2", ("sentence2",), _S)]
_WSC = [
    ("span1_index", ("target", "span1_index"), _U),
    ("span2_index", ("target", "span2_index"), _U),
    ("span1_text", ("target", "span1_text"), _S),
    ("span2_text", ("target", "span2_text"), _S),
    ("idx", ("idx",), _U),
    ("text", ("text",), _S),
]
_CLUE_COLUMNS: dict[str, dict[str, list[tuple[str, tuple[str, ...], str]]]] = {
    "AFQMC": {"train": _PAIR_TRAIN, "test": _PAIR_TEST, "eval": _PAIR_TRAIN},
    "CMNLI": {"train": _PAIR_TRAIN, "test": _PAIR_TEST, "eval": _PAIR_TRAIN},
    "TNEWS": {
        "train": [
            ("label", ("label",), _S),
            ("label_desc", ("label_desc",), _S),
            ("sentence", ("sentence",), _S),
            ("keywords", ("keywords",), _S),
        ],
        "test": [("id", ("id",), _U), ("sentence", ("sentence",), _S), ("keywords", ("keywords",), _S)],
        "eval": [
            ("label", ("label",), _S),
            ("label_desc", ("label_desc",), _S),
            ("sentence", ("sentence",), _S),
            ("keywords", ("keywords",), _S),
        ],
    },
    "IFLYTEK": {
        "train": [
            ("label", ("label",), _S),
            ("label_des", ("label_des",), _S),
            ("sentence", ("sentence",), _S),
        ],
        "test": [("id", ("id",), _U), ("sentence", ("sentence",), _S)],
        "eval": [
            ("label", ("label",), _S),
            ("label_des", ("label_des",), _S),
            ("sentence", ("sentence",), _S),
        ],
    },
    "WSC": {
        "train": [*_WSC, ("label", ("label",), _S)],
        "test": _WSC,
        "eval": [*_WSC, ("label", ("label",), _S)],
    },
    "CSL": {
        "train": [
            ("id", ("id",), _U),
            ("abst", ("abst",), _S),
            ("keyword", ("keyword",), _S),
            ("label", ("label",), _S),
        ],
        "test": [("id", ("id",), _U), ("abst", ("abst",), _S), ("keyword", ("keyword",), _S)],
        "eval": [
            ("id", ("id",), _U),
            ("abst", ("abst",), _S),
            ("keyword", ("keyword",), _S),
            ("label", ("label",), _S),
        ],
    },
}


def _clue_value(value: Any, kind: str) -> np.ndarray:
    if kind == _U:
        if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
            raise ValueError(f"{value!r} is not a non-negative integer")
        number = int(value)
        if number > 0xFFFFFFFF:
            raise ValueError(f"{number} does not fit uint32")
        return np.asarray(number, dtype=np.uint32)
    if isinstance(value, list):
        # CSL's keywords are a list of strings: a 1-D string array.
        if not all(isinstance(v, str) for v in value):
            raise ValueError("expected a list of strings")
        return strings(value)
    if isinstance(value, dict):
        raise ValueError("expected a string, number or list of strings, found an object")
    # Labels are strings in some files and numbers in others; MindSpore gives both as text.
    return np.asarray(value if isinstance(value, str) else json.dumps(value))


class _ClueReader:
    def __init__(self, columns: list[tuple[str, tuple[str, ...], str]]):
        self.columns = columns

    def read(self, path: str) -> Iterator[tuple]:
        where = "CLUEDataset"
        for number, line in text_lines(where, path):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataFormatError(
                    f"{where}: {path}, line {number}: not a JSON object: {error}", path=path
                ) from None
            row = []
            for name, keys, kind in self.columns:
                value: Any = record
                for key in keys:
                    if not isinstance(value, dict) or key not in value:
                        raise DataFormatError(
                            f"{where}: {path}, line {number}: key {'/'.join(keys)!r} (column {name!r}) is missing.",
                            path=path,
                        )
                    value = value[key]
                try:
                    row.append(_clue_value(value, kind))
                except ValueError as error:
                    raise DataFormatError(
                        f"{where}: {path}, line {number}, column {name!r}: {error}.", path=path
                    ) from None
            yield tuple(row)

    def count(self, path: str) -> int:
        return count_lines("CLUEDataset", path)


class CLUEDataset(Dataset):
    """The CLUE benchmark's classification tasks (MindSpore's ``CLUEDataset``).

    ``dataset_files`` are the task's JSON-lines files (``train.json``, ``dev.json``, ``test.json`` as
    CLUE ships them); ``usage`` says which kind they are, and so which columns a row has:

    ========  ======================  ==================================================================
    task      usage                   columns
    ========  ======================  ==================================================================
    AFQMC     train, eval             sentence1, sentence2, label
    AFQMC     test                    id, sentence1, sentence2
    CMNLI     (as AFQMC)
    TNEWS     train, eval             label, label_desc, sentence, keywords
    TNEWS     test                    id, sentence, keywords
    IFLYTEK   train, eval             label, label_des, sentence
    IFLYTEK   test                    id, sentence
    WSC       train, eval             span1_index, span2_index, span1_text, span2_text, idx, text, label
    WSC       test                    span1_index, span2_index, span1_text, span2_text, idx, text
    CSL       train, eval             id, abst, keyword, label
    CSL       test                    id, abst, keyword
    ========  ======================  ==================================================================

    ``id``, ``idx`` and the span indices are uint32 scalars, everything else a string (a numeric
    label as its JSON text, ``"1"``; a list, such as CSL's ``keyword``, as a 1-D string array). WSC's span fields come from the object's ``target``. TNEWS's
    column is ``label_desc``, the key of CLUE's files and of MindSpore's reader (its table says
    ``label_des``). A line without a needed key is an error naming file, line and key.

    Args:
        dataset_files: a file, a glob pattern, or a list of them (read in sorted order).
        task: ``"AFQMC"`` (default), ``"TNEWS"``, ``"IFLYTEK"``, ``"CMNLI"``, ``"WSC"`` or ``"CSL"``.
        usage: ``"train"`` (default), ``"test"`` or ``"eval"``.
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's rows (row ``p`` of the stream to shard ``p % num_shards``).
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "dev.json")
        >>> _ = open(path, "w").write('{"sentence1": "花呗", "sentence2": "借呗", "label": "0"}\\n')
        >>> ds = md.CLUEDataset(path, task="AFQMC", usage="eval", shuffle=False)
        >>> ds.get_col_names()
        ['sentence1', 'sentence2', 'label']
        >>> [str(r["label"]) for r in ds.create_dict_iterator(output_numpy=True)]
        ['0']
    """

    def __init__(
        self,
        dataset_files: Any,
        task: str = "AFQMC",
        usage: str = "train",
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "CLUEDataset"
        task = "AFQMC" if task is None else task  # None: MindSpore's default, as its validator allows
        if task not in _CLUE_COLUMNS:
            raise ArgumentError(f"{where}: `task` must be one of {list(_CLUE_COLUMNS)}. Found: {task!r}")
        split = check_usage(where, usage, ("train", "test", "eval"), default="train")
        files = expand_files(where, dataset_files)
        columns = _CLUE_COLUMNS[task][split]
        reader = _ClueReader(columns)
        super().__init__(
            stream_node(
                where,
                [c[0] for c in columns],
                files,
                reader.read,
                reader.count,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )


# -- SQuAD ----------------------------------------------------------------------------------------

# What MindSpore gives as answer_start of an unanswerable SQuAD 2.0 question: -1 stored as uint32.
NO_ANSWER_START = 0xFFFFFFFF


class _SquadReader:
    def _questions(self, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
        where = "SQuADDataset"
        try:
            with open(path, encoding="utf-8") as f:
                root = json.load(f)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise DataFormatError(f"{where}: can't read {path} as JSON: {error}", path=path) from None

        def need(obj: Any, key: str, inside: str) -> Any:
            if not isinstance(obj, dict) or key not in obj:
                raise DataFormatError(f"{where}: {path}: {inside} has no {key!r}.", path=path)
            return obj[key]

        for a, article in enumerate(need(root, "data", "the document")):
            for p, paragraph in enumerate(need(article, "paragraphs", f"data[{a}]")):
                context = need(paragraph, "context", f"data[{a}].paragraphs[{p}]")
                for qa in need(paragraph, "qas", f"data[{a}].paragraphs[{p}]"):
                    yield context, qa

    def read(self, path: str) -> Iterator[tuple]:
        for context, qa in self._questions(path):
            where = f"question {qa.get('id', '?')!r}" if isinstance(qa, dict) else "a question"
            question = _squad_field(path, qa, "question", where)
            answers = _squad_field(path, qa, "answers", where)
            texts = [_squad_field(path, a, "text", where) for a in answers]
            starts = [int(_squad_field(path, a, "answer_start", where)) for a in answers]
            yield (
                np.asarray(context),
                np.asarray(question),
                strings(texts or [""]),
                np.asarray(starts or [NO_ANSWER_START], dtype=np.uint32),
            )

    def count(self, path: str) -> int:
        return sum(1 for _ in self._questions(path))


def _squad_field(path: str, obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise DataFormatError(f"SQuADDataset: {path}: {where} has no {key!r}.", path=path)
    return obj[key]


_SQUAD_FILES = {"train": ("train-v1.1.json", "train-v2.0.json"), "dev": ("dev-v1.1.json", "dev-v2.0.json")}


class SQuADDataset(Dataset):
    """The Stanford Question Answering Dataset, 1.1 or 2.0 (MindSpore's ``SQuADDataset``).

    ``dataset_dir`` holds ``train-v1.1.json`` and ``dev-v1.1.json``, or ``train-v2.0.json`` and
    ``dev-v2.0.json`` (or both versions, read together). One row per question: ``context`` and
    ``question`` (strings), ``text`` (the answers, a 1-D string array) and ``answer_start`` (their
    character offsets in the context, uint32). A SQuAD 2.0 question without an answer gives
    ``text == [""]`` and ``answer_start == [4294967295]``, as MindSpore does (its -1 as uint32).

    Args:
        dataset_dir: the folder holding the JSON files.
        usage: ``"train"``, ``"dev"`` or ``"all"`` (default: all).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's rows (row ``p`` of the stream to shard ``p % num_shards``).
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import json, os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> qa = {"id": "1", "question": "Who?", "answers": [{"text": "Ann", "answer_start": 0}]}
        >>> doc = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "Ann ran.", "qas": [qa]}]}]}
        >>> for name in ("train-v1.1.json", "dev-v1.1.json"):
        ...     _ = open(os.path.join(folder, name), "w").write(json.dumps(doc))
        >>> row = next(md.SQuADDataset(folder, "dev", shuffle=False).create_dict_iterator(output_numpy=True))
        >>> str(row["question"]), row["text"].tolist(), row["answer_start"].tolist()
        ('Who?', ['Ann'], [0])
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "SQuADDataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "dev", "all"))
        files: list[str] = []
        for name in ("train", "dev"):
            if split not in (name, "all"):
                continue
            found = [
                os.path.join(folder, f) for f in _SQUAD_FILES[name] if os.path.isfile(os.path.join(folder, f))
            ]
            if not found:
                missing = " or ".join(_SQUAD_FILES[name])
                raise DataFormatError(
                    f"{where}: {folder} has no {name} file: usage={split!r} reads {missing}.",
                    path=os.path.join(folder, _SQUAD_FILES[name][0]),
                )
            files.extend(found)
        reader = _SquadReader()
        super().__init__(
            stream_node(
                where,
                ["context", "question", "text", "answer_start"],
                files,
                reader.read,
                reader.count,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )
