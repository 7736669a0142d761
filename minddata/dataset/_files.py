"""What file-reading sources share: file lists, ``Shuffle`` modes, sharding and seeded shuffling.

Random-access sources (record files, Parquet, MNIST, CIFAR, COCO, ...) shard and shuffle through
samplers (:func:`minddata.samplers.resolve_sampler`); :func:`block_sampler` adds MindSpore's
``Shuffle.FILES`` / ``Shuffle.INFILE`` for them. Streamed sources (CSV, text, TFRecord) are read
front to back by :func:`stream_rows`, which shards and shuffles the stream itself:

- files are read in sorted order, or in an order drawn from the seed (``GLOBAL``, ``FILES``);
- sharding by rows (the default), as MindSpore: shard ``k`` reads rows ``[k * per, (k + 1) * per)``
  of the files in that order (``per = ceil(rows / num_shards)``), the last shard padded with the
  first rows, so every row lands in exactly one shard before padding. Sharding by files
  (TFRecord's ``shard_equal_rows=False``): file ``j`` of the epoch's order goes to shard
  ``j % num_shards``; shards may then differ in size;
- the shard's file blocks are dealt to ``num_parallel_workers`` readers (MindSpore's default 8
  when not given) and the readers' rows interleaved one at a time, MindSpore's order for
  ``shuffle=False`` (so two files give file 0's first row, file 1's first row, ...);
- rows are then shuffled through a seeded buffer of :data:`SHUFFLE_BUFFER` rows (``GLOBAL``), or
  within each block (``INFILE``).

Every decision draws from (seed, epoch), never from the shard id, so all shards agree on the
epoch's file order and row stream.
"""

from __future__ import annotations

import enum
import glob
import itertools
import math
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from minddata.dataset import _storage
from minddata.dataset._braces import brace_expand
from minddata.errors import ArgumentError
from minddata.samplers import DistributedSampler, Sampler, _BuiltinSampler, resolve_sampler

__all__ = [
    "Shuffle", "shuffle_mode", "expand_files", "block_sampler", "stream_rows", "SHUFFLE_BUFFER", "shard_args",
    "MINDSPORE_DEFAULT_WORKERS",
]

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


def expand_files(where: str, dataset_files: Any, *, sort: bool = True, storage_options: Any = False) -> list[str]:
    """A path, a glob pattern, a brace pattern (``part-{0..9}.tfrecord``, :mod:`._braces`) or a list
    of them → existing files (sorted, as MindSpore does). Braces expand first, then each name is a
    file or a glob; a local file whose own name has braces is taken as it is.

    Sources that read object storage pass their ``storage_options`` (a ``StorageOptions``): then
    ``s3://``/``gs://`` URLs, prefixes and globs are listed and ``http(s)://`` URLs taken as files
    (:class:`~minddata.dataset._storage.RemotePath`, which ``_storage.open_file`` opens). The others
    (``storage_options=False``) refuse URLs, naming the source."""
    items = [dataset_files] if isinstance(dataset_files, (str, os.PathLike)) else dataset_files
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, (str, os.PathLike)) for i in items):
        raise ArgumentError(f"{where}: `dataset_files` must be a path, a glob pattern or a non-empty list of them. Found: {dataset_files!r}")
    if storage_options is False:
        _storage.refuse_remote(where, items)
    files: list[str] = []
    for item in items:
        text = os.fspath(item)
        if _storage.is_remote(text):
            files.extend(_storage.expand_remote(where, brace_expand(text, where), storage_options))
            continue
        text = _storage.local_path(text)
        for path in [text] if os.path.isfile(text) else brace_expand(text, where):
            if os.path.isfile(path):
                files.append(os.path.abspath(path))
                continue
            matches = sorted(m for m in glob.glob(path) if os.path.isfile(m))
            if not matches:
                shown = path if path == text else f"{path} (from the pattern {text})"
                raise ArgumentError(f"{where}: {shown} is not a file and matches no file.")
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
    return sampler.num_shards, sampler.shard_id  # type: ignore[attr-defined]  # source_sampler with num_shards gives a DistributedSampler


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

    def _whole_order_name(self) -> str | None:
        return None if self.num_samples or self.child_sampler is not None else self.mode

    def _elastic_shard(self) -> tuple[bool, int, int] | None:
        return (True, 1, 0) if self._whole_order_name() is not None else None

    def _epoch_order(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        return self._indices(num_rows, seed, pass_index)

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        # Drawn at depth 0 wherever it stands: alone or under a DistributedSampler, the epoch's order
        # is the same, which an elastic resume (and a shard's global sample keys) rests on.
        rng = _rng(seed, pass_index, _STREAM_BLOCKS, 0)
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


MINDSPORE_DEFAULT_WORKERS = 8


def stream_rows(
    files: Sequence[str],
    read_file: Callable[[str], Iterator[Any]],
    *,
    mode: str | None,
    sharding: tuple[int, int] | None,
    by_file: bool,
    seed: int,
    pass_index: int,
    counts: Callable[[], Sequence[int]] | None = None,
    readers: int = 1,
    row_seed: int | None = None,
    buffer_size: int = SHUFFLE_BUFFER,
    files_read_ahead: bool = False,
) -> Iterator[Any]:
    """One epoch of a streamed source's rows for this shard (see the module docstring).

    As MindSpore's file sources: the epoch's files are cut into blocks (a whole file, or the part
    of it in this shard's row range, which wraps to the first rows to pad the shard); block ``b``
    goes to reader ``b % readers``; each reader reads its blocks in turn, and rows are taken from
    the readers one at a time, round-robin, skipping readers that are done. ``counts()`` gives each
    file's rows (needed to shard by rows). ``seed`` decides what every shard must agree on (the
    file order); ``row_seed`` (default: ``seed``) the shuffling of this shard's rows. With
    ``files_read_ahead`` (``read_file`` opens the file with :func:`_storage.open_file`), each reader's
    next file in object storage has its first block read while it reads the one before.
    """
    row_seed = seed if row_seed is None else row_seed
    order = list(range(len(files)))
    if mode in ("global", "files") and len(files) > 1:
        order = _rng(seed, pass_index, _STREAM_FILES).permutation(len(files)).tolist()
    if sharding is not None and by_file:
        shards, me = sharding
        order = [f for j, f in enumerate(order) if j % shards == me]
    if sharding is not None and not by_file:
        if counts is None:
            raise ValueError("stream_rows: sharding by rows needs the files' row counts")
        blocks = _shard_blocks(order, list(counts()), *sharding)
    else:
        blocks = [(f, 0, None) for f in order]

    def block_rows(index: int, block: tuple[int, int, int | None]) -> Iterator[tuple[int, Any]]:
        f, start, stop = block
        rows = itertools.islice(read_file(files[f]), start, stop)
        if mode == "infile":
            rng = _rng(row_seed, pass_index, _STREAM_ROWS, index + 1)
            return ((f, row) for row in _buffer_shuffle(((f, r) for r in rows), rng, buffer_size, per_file=False))
        return ((f, row) for row in rows)

    def reader_rows(mine: list[int]) -> Iterator[tuple[int, Any]]:
        # A reader's blocks in turn; the next one's file, if it is an object, has its first bytes read
        # while this one is (a file's first GET would otherwise wait a round trip at its start).
        forget: Callable[[], None] | None = None
        try:
            for k, b in enumerate(mine):
                if files_read_ahead and k + 1 < len(mine) and blocks[mine[k + 1]][0] != blocks[b][0]:
                    following = _storage.read_first_block_ahead(files[blocks[mine[k + 1]][0]])
                else:
                    following = None
                yield from block_rows(b, blocks[b])
                if forget is not None:
                    forget()  # taken by now, or not wanted
                forget = following
        finally:
            if forget is not None:
                forget()

    per_reader: list[list[int]] = [list(range(r, len(blocks), readers)) for r in range(min(readers, len(blocks)))]
    streams = [reader_rows(mine) for mine in per_reader]
    tagged = _round_robin(streams)
    if mode == "global":
        return _buffer_shuffle(tagged, _rng(row_seed, pass_index, _STREAM_ROWS), buffer_size, per_file=False)
    return (row for _, row in tagged)


def _shard_blocks(order: list[int], counts: list[int], shards: int, me: int) -> list[tuple[int, int, int]]:
    """This shard's ``(file, first row, end row)`` blocks: rows ``[me * per, (me + 1) * per)`` of the
    files read in ``order``, wrapping past the end (MindSpore pads shards with the first rows)."""
    total = sum(counts[f] for f in order)
    if total == 0:
        return []
    per = math.ceil(total / shards)
    starts = list(itertools.accumulate([0] + [counts[f] for f in order]))
    blocks: list[tuple[int, int, int]] = []
    position, remaining = me * per, per
    while remaining:
        begin = position % total
        take = min(remaining, total - begin)
        end = begin + take
        for k, f in enumerate(order):
            lo, hi = max(begin, starts[k]), min(end, starts[k + 1])
            if lo < hi:
                blocks.append((f, lo - starts[k], hi - starts[k]))
        position += take
        remaining -= take
    return blocks


def _round_robin(streams: list[Iterator[Any]]) -> Iterator[Any]:
    live = list(streams)
    while live:
        still = []
        for stream in live:
            for item in stream:
                yield item
                still.append(stream)
                break
        live = still


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
