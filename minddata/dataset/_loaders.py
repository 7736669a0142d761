"""What the standard-dataset loaders share: argument checks, the lazy index, and the two kinds of
random-access source they build.

- :func:`array_source`: the whole data set is a few in-memory arrays (MNIST, CIFAR, SVHN, USPS...),
  loaded on first use; a row is one index into each array.
- :func:`file_source`: an index of files plus per-row values (VOC, CelebA, Caltech...), built on
  first use; a row reads its file(s) as bytes (1-D uint8), decoded when ``decode=True``.

Both go through :func:`minddata.samplers.resolve_sampler`, so ``shuffle``, ``num_samples``,
``sampler`` and ``num_shards``/``shard_id`` behave as for every other source, and exact resume
comes from the engine's random-access source. Nothing is read when the dataset is built (only the
folder is checked), so a pipeline is cheap to define; a missing or malformed file is an error naming
the file and the fix when it is first read.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._paths import PathEscapeError, inside_root
from minddata.dataset.cache import with_cache
from minddata.dataset.sources import IMAGE_CHUNK_ROWS
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError, RowError
from minddata.ops.file_bytes import read_file
from minddata.samplers import resolve_sampler, with_labels

__all__ = [
    "Lazy",
    "ArrayFetch",
    "FileIndex",
    "array_source",
    "dataset_folder",
    "file_source",
    "missing",
    "name_inside",
    "read_lines",
    "source_sampler",
    "usage_splits",
]


def dataset_folder(where: str, dataset_dir: Any) -> str:
    """``dataset_dir`` as an absolute path; an error unless it is an existing folder."""
    if not isinstance(dataset_dir, (str, os.PathLike)) or not os.path.isdir(dataset_dir):
        raise ArgumentError(f"{where}: `dataset_dir` must be an existing folder. Found: {dataset_dir!r}")
    return os.path.abspath(os.fspath(dataset_dir))


def usage_splits(where: str, usage: Any, splits: Sequence[str], *, default: str = "all") -> list[str]:
    """The splits ``usage`` selects: one of ``splits``, or ``"all"`` (every split, in order);
    ``None`` means ``default``."""
    chosen = default if usage is None else usage
    if chosen == "all":
        return list(splits)
    if chosen not in splits:
        raise ArgumentError(f"{where}: `usage` must be one of {[*splits, 'all']} or None. Found: {usage!r}")
    return [chosen]


def source_sampler(
    where: str, sampler: Any, shuffle: Any, num_samples: Any, num_shards: Any, shard_id: Any,
    labels: Callable[[], np.ndarray] | None = None,
) -> Any:
    """The sampler of a standard dataset (shuffled by default, as in MindSpore); ``labels`` lets a
    PKSampler group rows by class."""
    if labels is not None:
        sampler = with_labels(sampler, labels)
    return resolve_sampler(
        sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
        default_shuffle=True, where=where,
    )


def missing(where: str, path: str, fix: str) -> DataFormatError:
    """The error for a file the data set needs that is not there: names it and says what to do."""
    return DataFormatError(f"{where}: {path} is missing. {fix}", path=path)


def read_lines(where: str, path: str, fix: str) -> list[str]:
    """A text file's non-empty lines (stripped); a missing or undecodable file names itself."""
    try:
        with open(path, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        raise missing(where, path, fix) from None
    except (OSError, UnicodeDecodeError) as error:
        raise DataFormatError(f"{where}: can't read {path}: {error}", path=path) from None


def name_inside(where: str, root: str, name: str, entry: str) -> str:
    """``root/name`` for a ``name`` read from a data file (``entry`` says where); a name that leaves
    ``root`` (``../x``, an absolute path) is a :class:`DataFormatError`."""
    try:
        return inside_root(root, name, where, entry, resolve=False)
    except PathEscapeError as error:
        raise DataFormatError(str(error)) from None


class Lazy:
    """Loads a value once, on first use, under a lock (several reader threads may ask at once).
    Pickling loads it first, so worker processes get the value, not the work."""

    def __init__(self, load: Callable[[], Any]):
        self._load = load
        self._value: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._load()
        return self._value

    def __getstate__(self) -> dict[str, Any]:
        self.get()
        return {"_load": self._load, "_value": self._value}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


class ArrayFetch:
    """Rows from in-memory column arrays: one fancy-index per column per chunk."""

    def __init__(self, lazy: Lazy):
        self.lazy = lazy

    def __call__(self, ids: list[int]) -> list[tuple]:
        arrays = self.lazy.get()
        index = np.asarray(ids, dtype=np.int64)
        return list(zip(*[a[index] for a in arrays]))


def array_source(
    where: str,
    columns: Sequence[str],
    load: Callable[[], tuple[np.ndarray, ...]],
    *,
    label_column: int | None = None,
    sampler: Any = None,
    shuffle: Any = None,
    num_samples: Any = None,
    num_shards: Any = None,
    shard_id: Any = None,
    num_parallel_workers: Any = None,
    cache: Any = None,
) -> ir.Node:
    """A source whose ``load()`` returns one array per column (the same length). ``label_column``:
    the column a PKSampler groups by."""
    lazy = Lazy(load)
    labels = None if label_column is None else (lambda: lazy.get()[label_column])
    node = ir.RandomAccessSourceNode(
        where, list(columns), lambda: len(lazy.get()[0]),
        source_sampler(where, sampler, shuffle, num_samples, num_shards, shard_id, labels),
        ArrayFetch(lazy), inline=True, num_workers=v.workers(where, num_parallel_workers),
    )
    return with_cache(where, node, cache)


class FileIndex:
    """The rows of a file-based data set, listed once on first use: each row is a tuple whose first
    ``file_columns`` values are file paths (read as bytes when the row is fetched) and whose other
    values are ready arrays, except at the positions of ``readers``: there the value is a path that
    ``readers[position](path, row)`` turns into the column's value when the row is fetched (an
    annotation file read per row). ``build()`` returns that list of tuples (and may be slow: it
    parses annotation files)."""

    def __init__(self, where: str, build: Callable[[], list[tuple]], file_columns: int = 1,
                 readers: dict[int, Callable[[str, int], Any]] | None = None):
        self.where = where
        self.file_columns = file_columns
        self.readers = dict(readers or {})
        self._lazy = Lazy(build)

    def rows(self) -> list[tuple]:
        return self._lazy.get()

    def count(self) -> int:
        return len(self.rows())

    def paths_of(self, ids: list[int]) -> list[str]:
        rows = self.rows()
        return [rows[i][0] for i in ids]

    def column(self, position: int) -> np.ndarray:
        return np.asarray([row[position] for row in self.rows()])


class _FileFetch:
    def __init__(self, index: FileIndex):
        self.index = index

    def __call__(self, ids: list[int]) -> list[tuple]:
        rows = self.index.rows()
        k = self.index.file_columns
        where = self.index.where
        out = []
        for i in ids:
            row = rows[i]
            read = []
            for path in row[:k]:
                try:
                    read.append(read_file(path))
                except OSError as error:
                    raise RowError(
                        f"{where}: can't read row {i}, file {path}: {error.strerror or error}",
                        op=where, row=i, source=path,
                    ) from None  # the message holds the OS's reason
            rest = row[k:]
            if self.index.readers:
                rest = tuple(self.index.readers[k + j](value, i) if k + j in self.index.readers else value
                             for j, value in enumerate(rest))
            out.append((*read, *rest))
        return out


def file_source(
    where: str,
    columns: Sequence[str],
    index: FileIndex,
    *,
    decode: Any = False,
    decode_columns: Sequence[str] = ("image",),
    label_column: int | None = None,
    sampler: Any = None,
    shuffle: Any = None,
    num_samples: Any = None,
    num_shards: Any = None,
    shard_id: Any = None,
    num_parallel_workers: Any = None,
    cache: Any = None,
) -> ir.Node:
    """A source over ``index``; with ``decode`` each of ``decode_columns`` is decoded to RGB HWC
    uint8 by :class:`minddata.vision.Decode` (so the decode fusions apply). ``label_column``: the
    row position a PKSampler groups by."""
    v.bool_arg(where, "decode", decode)
    labels = None if label_column is None else (lambda: index.column(label_column))
    node: ir.Node = ir.RandomAccessSourceNode(
        where, list(columns), index.count,
        source_sampler(where, sampler, shuffle, num_samples, num_shards, shard_id, labels),
        _FileFetch(index), origins=index.paths_of, num_workers=v.workers(where, num_parallel_workers),
        chunk_rows=IMAGE_CHUNK_ROWS,
    )
    if decode:
        from minddata.vision import Decode

        workers = node.num_workers  # type: ignore[attr-defined]  # a random-access source node, which has num_workers
        for name in decode_columns:
            node = ir.MapNode(node, [Decode()], [name], None, workers, False)
    return with_cache(where, node, cache)  # after the decode: later epochs skip reading and decoding
