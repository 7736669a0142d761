"""Language-modelling corpora of plain text lines: ``PennTreebankDataset``, ``WikiTextDataset`` and
``EnWik9Dataset``. One row per line, in column ``text`` (a string). Sharding, shuffling and resume:
see :mod:`minddata.dataset.corpora_common`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from minddata.dataset.base import Dataset
from minddata.dataset.corpora_common import (
    check_dir,
    check_usage,
    count_lines,
    stream_node,
    text_lines,
    usage_files,
)

__all__ = ["EnWik9Dataset", "PennTreebankDataset", "WikiTextDataset"]


class _Lines:
    """The lines of a file as one-column rows; ``keep_empty`` keeps empty lines as ``""`` rows."""

    def __init__(self, where: str, keep_empty: bool):
        self.where = where
        self.keep_empty = keep_empty

    def read(self, path: str) -> Iterator[tuple]:
        for _, line in text_lines(self.where, path, keep_empty=self.keep_empty):
            yield (np.asarray(line),)

    def count(self, path: str) -> int:
        return count_lines(self.where, path, keep_empty=self.keep_empty)


def _lines_node(where: str, files: list[str], keep_empty: bool, **stream: Any) -> Any:
    lines = _Lines(where, keep_empty)
    return stream_node(where, ["text"], files, lines.read, lines.count, **stream)


_SPLITS = ("train", "valid", "test", "all")


class _SplitFiles(Dataset):
    """A corpus of one text file per split (``_FILE`` with the split's name), its non-empty lines as rows."""

    _FILE = "{}"

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
        where = type(self).__name__
        folder = check_dir(where, dataset_dir)
        split = check_usage(where, usage, _SPLITS)
        names = {s: self._FILE.format(s) for s in _SPLITS[:3]}
        super().__init__(
            _lines_node(
                where,
                usage_files(where, folder, split, names),
                False,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )


class PennTreebankDataset(_SplitFiles):
    """Penn Treebank, Mikolov's language-modelling version (MindSpore's ``PennTreebankDataset``).

    ``dataset_dir`` holds ``ptb.train.txt``, ``ptb.valid.txt`` and ``ptb.test.txt``; each non-empty
    line is a row (column ``text``, the line as it is, leading space included).

    Args:
        dataset_dir: the folder holding the files.
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default: all).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: MindSpore's file readers (default 8), whose rows interleave.
        shuffle: ``Shuffle.GLOBAL`` (default, same as True), ``Shuffle.FILES``, ``Shuffle.INFILE`` or False.
        num_shards, shard_id: this shard's rows (row ``p`` of the stream to shard ``p % num_shards``).
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "ptb.valid.txt"), "w").write(" consumers may want to move\\n")
        >>> ds = md.PennTreebankDataset(folder, usage="valid", shuffle=False)
        >>> [str(r["text"]) for r in ds.create_dict_iterator(output_numpy=True)]
        [' consumers may want to move']
    """

    _FILE = "ptb.{}.txt"



class WikiTextDataset(_SplitFiles):
    """WikiText-2 or WikiText-103 (MindSpore's ``WikiTextDataset``).

    ``dataset_dir`` holds ``wiki.train.tokens``, ``wiki.valid.tokens`` and ``wiki.test.tokens``; each
    non-empty line is a row (column ``text``; WikiText's ``" "`` separator lines are rows too, as in
    MindSpore). Arguments as in :class:`PennTreebankDataset`.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "wiki.test.tokens"), "w").write(" = Robert Boulter = \\n")
        >>> ds = md.WikiTextDataset(folder, usage="test", shuffle=False)
        >>> [str(r["text"]) for r in ds.create_dict_iterator(output_numpy=True)]
        [' = Robert Boulter = ']
    """

    _FILE = "wiki.{}.tokens"



class EnWik9Dataset(Dataset):
    """The first 10**9 bytes of an English Wikipedia dump, ``enwik9`` (MindSpore's ``EnWik9Dataset``).

    ``dataset_dir`` holds the file ``enwik9``; every line is a row (column ``text``), empty lines
    included (as ``""``), as in MindSpore: its line breaks mark paragraphs. ``shuffle`` defaults to
    True (``Shuffle.GLOBAL``); other arguments as in :class:`PennTreebankDataset`.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "enwik9"), "w").write("<mediawiki>\\n\\n  <page>\\n")
        >>> ds = md.EnWik9Dataset(folder, shuffle=False)
        >>> [str(r["text"]) for r in ds.create_dict_iterator(output_numpy=True)]
        ['<mediawiki>', '', '  <page>']
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = True,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "EnWik9Dataset"
        folder = check_dir(where, dataset_dir)
        files = usage_files(where, folder, "all", {"all": "enwik9"})
        super().__init__(
            _lines_node(
                where,
                files,
                True,
                shuffle=shuffle,
                num_samples=num_samples,
                num_parallel_workers=num_parallel_workers,
                num_shards=num_shards,
                shard_id=shard_id,
            )
        )
