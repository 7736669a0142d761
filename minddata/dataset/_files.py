"""What file-reading sources share: file lists, ``Shuffle`` modes, sharding and seeded shuffling.

Random-access sources (record files, Parquet, MNIST, CIFAR, COCO, ...) shard and shuffle through
samplers (:func:`minddata.samplers.resolve_sampler`); :func:`block_sampler` adds MindSpore's
``Shuffle.FILES`` / ``Shuffle.INFILE`` for them. Streamed sources (CSV, text, TFRecord) are read
front to back by :func:`stream_rows`, which shards and shuffles the stream itself:

- files are read in sorted order, or in an order drawn from the seed (``GLOBAL``, ``FILES``);
- sharding by rows (the default): row ``p`` of the whole stream goes to shard ``p % num_shards``;
  shards are padded to equal length by repeating rows from the start of the stream, the way
  :class:`~minddata.samplers.DistributedSampler` pads, so every row lands in exactly one shard
  before padding. Sharding by files (TFRecord's ``shard_equal_rows=False``): file ``j`` of the
  epoch's order goes to shard ``j % num_shards``; shards may then differ in size;
- rows are then shuffled through a seeded buffer of :data:`SHUFFLE_BUFFER` rows (``GLOBAL``), or
  within each file (``INFILE``).

Every decision draws from (seed, epoch), never from the shard id, so all shards agree on the
epoch's file order and row stream.
"""

from __future__ import annotations

import enum
import glob
import math
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.samplers import DistributedSampler, Sampler, _BuiltinSampler, resolve_sampler

__all__ = ["Shuffle", "shuffle_mode", "expand_files", "block_sampler", "stream_rows", "SHUFFLE_BUFFER", "shard_args"]

SHUFFLE_BUFFER = 10000
_U64 = (1 << 64) - 1
_STREAM_FILES = 0x46494C45
_STREAM_ROWS = 0x524F5753
_STREAM_BLOCKS = 0x424C4B53


class Shuffle(str, enum.Enum):
    """MindSpore's shuffle levels for file sources: ``GLOBAL`` (files and rows), ``FILES`` (the order
    of files only), ``INFILE`` (rows within each file only)."""

    GLOBAL = "global"
    FILES = "files"
    INFILE = "infile"


def shuffle_mode(where: str, shuffle: Any, default: str | None = "global") -> str | None:
    """``shuffle`` as ``"global"``, ``"files"``, ``"infile"`` or None (no shuffle)."""
    if shuffle is None:
        return default
    if isinstance(shuffle, (bool, np.bool_)):
        return "global" if shuffle else None
    if isinstance(shuffle, Shuffle):
        return shuffle.value
    if isinstance(shuffle, str) and shuffle.lower() in ("global", "files", "infile"):
        return shuffle.lower()
    raise ArgumentError(
        f"{where}: `shuffle` must be True, False, Shuffle.GLOBAL, Shuffle.FILES or Shuffle.INFILE. Found: {shuffle!r}"
    )


def expand_files(where: str, dataset_files: Any, *, sort: bool = True) -> list[str]:
    """A path, a glob pattern or a list of them → existing files (sorted, as MindSpore does)."""
    items = [dataset_files] if isinstance(dataset_files, (str, os.PathLike)) else dataset_files
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, (str, os.PathLike)) for i in items):
        raise ArgumentError(f"{where}: `dataset_files` must be a path, a glob pattern or a non-empty list of them. Found: {dataset_files!r}")
    files: list[str] = []
    for item in items:
        path = os.fspath(item)
        if os.path.isfile(path):
            files.append(os.path.abspath(path))
            continue
        matches = sorted(m for m in glob.glob(path) if os.path.isfile(m))
        if not matches:
            raise ArgumentError(f"{where}: {path} is not a file and matches no file.")
        files.extend(os.path.abspath(m) for m in matches)
    files = list(dict.fromkeys(files))
    return sorted(files) if sort else files


def shard_args(where: str, num_shards: Any, shard_id: Any) -> tuple[int, int] | None:
    """``(num_shards, shard_id)`` checked, or None when not sharding."""
    if num_shards is None and shard_id is None:
        return None
    # resolve_sampler owns the rules and the messages.
    sampler = resolve_sampler(
        sampler=None, shuffle=False, num_samples=None, num_shards=num_shards, shard_id=shard_id,
        default_shuffle=False, where=where,
    )
    return sampler.num_shards, sampler.shard_id  # type: ignore[attr-defined]


def _rng(seed: int, pass_index: int, stream: int, depth: int = 0) -> np.random.Generator:
    return np.random.default_rng([int(seed) & _U64, int(pass_index) & _U64, stream, depth])


class _BlockSampler(_BuiltinSampler):
    """Rows in blocks (files): ``files`` shuffles the blocks' order, ``infile`` the rows within blocks."""

    def __init__(self, blocks: Sequence[tuple[int, int]], mode: str, num_samples: int | None = None):
        super().__init__(num_samples)
        self.blocks = [(int(a), int(n)) for a, n in blocks]
        self.mode = mode

    def is_shuffled(self) -> bool:
        return True

    def _own_count(self, num_rows: int) -> int:
        return self._cap(num_rows)

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        rng = _rng(seed, pass_index, _STREAM_BLOCKS, depth)
        order = rng.permutation(len(self.blocks)) if self.mode == "files" else range(len(self.blocks))
        parts = []
        for b in order:
            start, count = self.blocks[b]
            rows = np.arange(start, start + count, dtype=np.int64)
            parts.append(rng.permutation(rows) if self.mode == "infile" else rows)
        out = np.concatenate(parts) if parts else np.zeros(0, np.int64)
        return out[: self._own_count(len(out))]

    def _repr_args(self) -> dict[str, Any]:
        return {"mode": self.mode, "blocks": len(self.blocks), "num_samples": self.num_samples}


def block_sampler(
    where: str,
    *,
    shuffle: Any,
    blocks: Callable[[], Sequence[tuple[int, int]]],
    sampler: Any,
    num_samples: int | None,
    num_shards: int | None,
    shard_id: int | None,
) -> Sampler:
    """The sampler of a random-access file source: :func:`resolve_sampler`, plus ``Shuffle.FILES`` and
    ``Shuffle.INFILE`` over ``blocks()`` (``(first row, rows)`` per file), sharded row-wise after."""
    if isinstance(shuffle, (Shuffle, str)) and not isinstance(shuffle, bool):
        mode = shuffle_mode(where, shuffle)
        if mode in ("files", "infile"):
            if sampler is not None:
                raise ArgumentError(f"{where}: `sampler` and `shuffle` cannot be given together: the sampler decides the order.")
            base = _LazyBlockSampler(blocks, mode)
            sharding = shard_args(where, num_shards, shard_id)
            if sharding is None:
                base.num_samples = resolve_sampler(
                    sampler=None, shuffle=False, num_samples=num_samples, num_shards=None, shard_id=None,
                    default_shuffle=False, where=where,
                ).num_samples
                return base
            parent = DistributedSampler(sharding[0], sharding[1], shuffle=False, num_samples=num_samples or None)
            parent.add_child(base)
            return parent
        shuffle = True
    return resolve_sampler(
        sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
        default_shuffle=True, where=where,
    )


class _LazyBlockSampler(_BlockSampler):
    """A block sampler whose blocks are listed on first use (building the graph reads no files)."""

    def __init__(self, blocks: Callable[[], Sequence[tuple[int, int]]], mode: str):
        super().__init__([], mode)
        self._blocks_fn = blocks
        self._listed = False

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        if not self._listed:
            self.blocks = [(int(a), int(n)) for a, n in self._blocks_fn()]
            self._listed = True
        return super()._own_indices(num_rows, seed, pass_index, depth)


def stream_rows(
    files: Sequence[str],
    read_file: Callable[[str], Iterator[Any]],
    *,
    mode: str | None,
    sharding: tuple[int, int] | None,
    by_file: bool,
    seed: int,
    pass_index: int,
    buffer_size: int = SHUFFLE_BUFFER,
) -> Iterator[Any]:
    """One epoch of a streamed source's rows for this shard (see the module docstring)."""
    order = list(range(len(files)))
    if mode in ("global", "files") and len(files) > 1:
        order = _rng(seed, pass_index, _STREAM_FILES).permutation(len(files)).tolist()
    if sharding is not None and by_file:
        shards, me = sharding
        order = [f for j, f in enumerate(order) if j % shards == me]
    tagged = ((f, row) for f in order for row in read_file(files[f]))
    if sharding is not None and not by_file:
        tagged = _row_shard(tagged, *sharding)
    if mode in ("global", "infile"):
        return _buffer_shuffle(tagged, _rng(seed, pass_index, _STREAM_ROWS), buffer_size, per_file=mode == "infile")
    return (row for _, row in tagged)


def _row_shard(tagged: Iterator[tuple[int, Any]], shards: int, me: int) -> Iterator[tuple[int, Any]]:
    head: list[tuple[int, Any]] = []
    mine = 0
    position = 0
    for item in tagged:
        if position < shards:
            head.append(item)
        if position % shards == me:
            mine += 1
            yield item
        position += 1
    total = position
    if total == 0:
        return
    for j in range(mine, math.ceil(total / shards)):
        yield head[(me + shards * j) % total]


def _buffer_shuffle(tagged: Iterator[tuple[int, Any]], rng: np.random.Generator, size: int, per_file: bool) -> Iterator[Any]:
    """A seeded buffer shuffle (as ``Dataset.shuffle``); with ``per_file`` the buffer drains at each
    file's end, so rows never move across files."""
    buffer: list[Any] = []
    uniforms = rng.random(1024)
    used = 0
    current = None

    def draw(n: int) -> int:
        nonlocal uniforms, used
        if used == len(uniforms):
            uniforms, used = rng.random(1024), 0
        used += 1
        return int(uniforms[used - 1] * n)

    def drain() -> Iterator[Any]:
        while buffer:
            j = draw(len(buffer))
            buffer[j], buffer[-1] = buffer[-1], buffer[j]
            yield buffer.pop()

    for f, row in tagged:
        if per_file and f != current:
            yield from drain()
            current = f
        if len(buffer) < size:
            buffer.append(row)
            continue
        j = draw(size)
        yield buffer[j]
        buffer[j] = row
    yield from drain()
