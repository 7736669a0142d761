"""What the text corpus loaders share: argument checks, the files a ``usage`` reads, a line reader
that names its dataset, and the streamed source node.

The corpora (``corpora_*.py``) are read front to back like :class:`~minddata.dataset.TextFileDataset`
and shard, shuffle and resume through the same stream (:mod:`minddata.dataset._files`): rows are
dealt to shards by position, shards padded to equal length, ``shuffle`` is ``Shuffle.GLOBAL`` (file
order and a seeded row buffer), ``Shuffle.FILES`` (file order only), ``Shuffle.INFILE`` or False.
Every file a ``usage`` needs is checked when the dataset is built, and a missing one is an error
naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minddata.dataset._files import shard_args, shuffle_mode
from minddata.dataset.text_sources import _node, _readers, _Stream
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["check_dir", "check_usage", "count_lines", "stream_node", "strings", "text_lines", "usage_files"]


def check_dir(where: str, dataset_dir: Any) -> str:
    """``dataset_dir`` as an absolute path, or an error saying it is not a folder."""
    if not isinstance(dataset_dir, (str, os.PathLike)) or not os.path.isdir(dataset_dir):
        raise ArgumentError(f"{where}: `dataset_dir` must be an existing folder. Found: {dataset_dir!r}")
    return os.path.abspath(os.fspath(dataset_dir))


def check_usage(where: str, usage: Any, allowed: Sequence[str], default: str = "all") -> str:
    """``usage`` checked against ``allowed`` (None gives ``default``)."""
    if usage is None:
        return default
    if usage not in allowed:
        raise ArgumentError(f"{where}: `usage` must be one of {list(allowed)}. Found: {usage!r}")
    return str(usage)


def usage_files(where: str, folder: str, usage: str, names: dict[str, str | Sequence[str]]) -> list[str]:
    """The files ``usage`` reads (``names``: split -> file(s) relative to ``folder``; ``"all"`` reads
    every split), in sorted order as MindSpore reads them; a missing one is an error naming it."""
    splits = list(names) if usage == "all" else [usage]
    files: list[str] = []
    for split in splits:
        entry = names[split]
        for name in [entry] if isinstance(entry, str) else entry:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                reads = f"usage={usage!r} reads" if len(names) > 1 else "it reads"
                raise DataFormatError(
                    f"{where}: {path} is missing: {reads} {name} from dataset_dir ({folder}).", path=path
                )
            files.append(path)
    return sorted(files)


def stream_node(
    where: str,
    columns: list[str],
    files: list[str],
    read_file: Callable[[str], Iterator[tuple]],
    count_file: Callable[[str], int],
    *,
    shuffle: Any,
    num_samples: Any,
    num_parallel_workers: Any,
    num_shards: Any,
    shard_id: Any,
) -> ir.IterableSourceNode:
    """The source node of a corpus read front to back from ``files`` (sharded by rows)."""
    stream = _Stream(
        files,
        read_file,
        count_file,
        shuffle_mode(where, shuffle),
        shard_args(where, num_shards, shard_id),
        False,
        _readers(where, num_parallel_workers),
    )
    return _node(where, columns, stream, num_samples)


def _raw_lines(where: str, path: str) -> Iterator[tuple[int, bytes]]:
    try:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, start=1):
                yield number, raw.rstrip(b"\n").rstrip(b"\r")
    except OSError as error:
        raise DataFormatError(f"{where}: can't read {path}: {error.strerror or error}", path=path) from None


def text_lines(where: str, path: str, *, keep_empty: bool = False) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line of a UTF-8 file, line ends dropped; empty lines skipped
    unless ``keep_empty``."""
    for number, line in _raw_lines(where, path):
        if not line and not keep_empty:
            continue
        try:
            yield number, line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataFormatError(
                f"{where}: {path}, line {number}: not UTF-8 text (byte {error.start} of the line).", path=path
            ) from None


def count_lines(where: str, path: str, *, keep_empty: bool = False) -> int:
    """How many lines :func:`text_lines` gives (without decoding them)."""
    return sum(1 for _, line in _raw_lines(where, path) if line or keep_empty)


def strings(values: Sequence[str]) -> np.ndarray:
    """A 1-D string array (``str`` dtype even when empty)."""
    return np.array(list(values), dtype=str)
