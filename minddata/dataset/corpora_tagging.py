"""Sequence-tagging corpora, one row per sentence: ``CoNLL2000Dataset`` (chunking) and
``UDPOSDataset`` (part-of-speech tags). Each column is a 1-D string array with one entry per word.
Files hold one word per line with its tags, and a blank line after each sentence. Sharding,
shuffling and resume (by sentence): see :mod:`minddata.dataset.corpora_common`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from minddata.dataset.base import Dataset
from minddata.dataset.corpora_common import (
    check_dir,
    check_usage,
    stream_node,
    strings,
    text_lines,
    usage_files,
)
from minddata.errors import DataFormatError

__all__ = ["CoNLL2000Dataset", "UDPOSDataset"]


class _Sentences:
    """Blocks of ``word<sep>tag<sep>tag`` lines separated by blank lines, as rows of string arrays."""

    def __init__(self, where: str, columns: list[str], separator: str | None):
        self.where = where
        self.columns = columns
        self.separator = separator  # None: runs of spaces

    def _blocks(self, path: str) -> Iterator[list[list[str]]]:
        block: list[list[str]] = []
        for number, line in text_lines(self.where, path, keep_empty=True):
            text = line.strip(" \r")
            if not text:
                if block:
                    yield block
                block = []
                continue
            fields = text.split(self.separator)
            if len(fields) != len(self.columns):
                sep = "a tab" if self.separator == "\t" else "spaces"
                raise DataFormatError(
                    f"{self.where}: {path}, line {number}: {len(fields)} field(s) separated by {sep}; expected "
                    f"{len(self.columns)} ({', '.join(self.columns)}). Found: {line!r}",
                    path=path,
                )
            block.append(fields)
        if block:
            yield block

    def read(self, path: str) -> Iterator[tuple]:
        for block in self._blocks(path):
            yield tuple(strings(column) for column in zip(*block))

    def count(self, path: str) -> int:
        return sum(1 for _ in self._blocks(path))


def _tagging_node(
    where: str, columns: list[str], separator: str | None, files: list[str], **stream: Any
) -> Any:
    sentences = _Sentences(where, columns, separator)
    return stream_node(where, columns, files, sentences.read, sentences.count, **stream)


class CoNLL2000Dataset(Dataset):
    """The CoNLL-2000 chunking task (MindSpore's ``CoNLL2000Dataset``).

    ``dataset_dir`` holds ``train.txt`` and ``test.txt``: ``word POS-tag chunk-tag`` per line,
    separated by spaces, a blank line after each sentence. One row per sentence, columns ``word``,
    ``pos_tag``, ``chunk_tag`` (1-D string arrays of equal length).

    Args:
        dataset_dir: the folder holding the files.
        usage: ``"train"``, ``"test"`` or ``"all"`` (default: all).
        num_samples: read at most this many sentences per epoch (per shard when sharding).
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's sentences (sentence ``p`` of the stream to shard
            ``p % num_shards``).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "test.txt"), "w").write("Rockwell NNP B-NP\\nsaid VBD B-VP\\n\\n")
        >>> row = next(md.CoNLL2000Dataset(folder, "test", shuffle=False).create_dict_iterator(output_numpy=True))
        >>> row["word"].tolist(), row["chunk_tag"].tolist()
        (['Rockwell', 'said'], ['B-NP', 'B-VP'])
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        num_parallel_workers: int | None = None,
        cache: Any = None,
    ):
        where = "CoNLL2000Dataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "test", "all"))
        files = usage_files(where, folder, split, {"train": "train.txt", "test": "test.txt"})
        super().__init__(
            _tagging_node(
                where,
                ["word", "pos_tag", "chunk_tag"],
                None,
                files,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )


class UDPOSDataset(Dataset):
    """Universal Dependencies English Web Treebank POS tags (MindSpore's ``UDPOSDataset``).

    ``dataset_dir`` holds ``en-ud-tag.v2.train.txt``, ``en-ud-tag.v2.dev.txt`` and
    ``en-ud-tag.v2.test.txt``: ``word<TAB>universal-tag<TAB>PTB-tag`` per line, a blank line after
    each sentence. One row per sentence, columns ``word``, ``universal``, ``stanford`` (1-D string
    arrays of equal length). ``usage``: ``"train"``, ``"valid"`` (the dev file), ``"test"`` or
    ``"all"`` (default). Other arguments as in :class:`CoNLL2000Dataset`.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "en-ud-tag.v2.dev.txt"), "w").write("From\\tADP\\tIN\\nthe\\tDET\\tDT\\n\\n")
        >>> row = next(md.UDPOSDataset(folder, "valid", shuffle=False).create_dict_iterator(output_numpy=True))
        >>> row["word"].tolist(), row["universal"].tolist(), row["stanford"].tolist()
        (['From', 'the'], ['ADP', 'DET'], ['IN', 'DT'])
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        num_parallel_workers: int | None = None,
        cache: Any = None,
    ):
        where = "UDPOSDataset"
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "valid", "test", "all"))
        names = {
            s: f"en-ud-tag.v2.{f}.txt" for s, f in (("train", "train"), ("valid", "dev"), ("test", "test"))
        }
        files = usage_files(where, folder, split, names)
        super().__init__(
            _tagging_node(
                where,
                ["word", "universal", "stanford"],
                "\t",
                files,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )
