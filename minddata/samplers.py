"""Samplers: which rows of a source are read, and in which order, in each epoch.

Names and arguments follow ``mindspore.dataset`` (2.x): pass a sampler as a source's ``sampler=``
argument, or let the source build one from ``shuffle``, ``num_samples``, ``num_shards`` and
``shard_id`` (:func:`resolve_sampler`).

Randomness: a random sampler draws only from the pipeline seed and the epoch (pass) number, so every
epoch reshuffles, a rerun with the same seed reads the same rows, and every shard of a
:class:`DistributedSampler` agrees on one permutation per epoch without talking to the others.

Engine protocol (internal; every sampler, including user subclasses of :class:`Sampler`, has it):

- ``_indices(num_rows, seed, pass_index)`` returns one pass's row indices as a 1-D int64 array.
- ``_num_samples(num_rows)`` returns how many indices ``_indices`` returns, without drawing them
  (a user sampler has to be iterated to be counted).

Examples:
    >>> from minddata.samplers import DistributedSampler
    >>> sampler = DistributedSampler(num_shards=2, shard_id=0, shuffle=False)
    >>> sampler._indices(5, seed=1, pass_index=0).tolist()   # what shard 0 reads of 5 rows
    [0, 2, 4]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from minddata._checks import check_bool, is_int, show_value
from minddata.errors import ArgumentError
from minddata.ops.base import record_init_arguments

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "DistributedSampler",
    "SubsetSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "PKSampler",
    "resolve_sampler",
    "with_labels",
]

# One constant per random sampler class, mixed into the RNG seed: two samplers seeded with the same
# (seed, pass) must not draw the same stream (a RandomSampler and a SubsetRandomSampler over the same
# rows would otherwise produce correlated orders).
_STREAM_RANDOM = 0x52414E44
# A shuffled DistributedSampler draws the RandomSampler's permutation: the global order of an epoch
# depends only on (seed, epoch), never on the number of shards (engine/elastic.py relies on it).
_STREAM_DISTRIBUTED = _STREAM_RANDOM
_STREAM_SUBSET_RANDOM = 0x53554252
_STREAM_WEIGHTED = 0x57454947
_STREAM_PK = 0x504B5341

_U64 = (1 << 64) - 1


def _rng(seed: int, pass_index: int, stream: int, depth: int) -> np.random.Generator:
    # SeedSequence needs non-negative entropy; masking keeps negative seeds distinct and valid.
    # `depth` (position in a parent/child chain) keeps a sampler and a same-class child apart.
    return np.random.default_rng([int(seed) & _U64, int(pass_index) & _U64, stream, depth])


def _type_error(owner: str, name: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{owner}: `{name}` must be {expected}. Found: {show_value(value)}")


def _check_int(owner: str, name: str, value: object) -> int:
    if not is_int(value):
        raise _type_error(owner, name, "an int", value)
    return int(value)  # type: ignore[call-overload]  # an int, checked by is_int


def _check_bool(owner: str, name: str, value: object) -> bool:
    # A NumPy bool is a bool here: sampler flags are often read from arrays of settings.
    return check_bool(owner, name, bool(value) if isinstance(value, np.bool_) else value)


def _check_num_samples(owner: str, value: object) -> int | None:
    if value is None:
        return None
    if not is_int(value):
        raise _type_error(owner, "num_samples", "None or an int", value)
    value = int(value)  # type: ignore[call-overload]  # an int, checked by is_int
    if value < 0:
        raise ArgumentError(
            f"{owner}: `num_samples` must be None or greater than 0 (0 is read as 'all rows', as in "
            f"MindSpore). Found: {value}"
        )
    return value


def _check_num_rows(owner: str, num_rows: object) -> int:
    if not is_int(num_rows):
        raise _type_error(owner, "num_rows", "an int", num_rows)
    if num_rows < 0:  # type: ignore[operator]  # an int, checked by is_int
        raise ArgumentError(f"{owner}: `num_rows` must be greater than or equal to 0. Found: {num_rows}")
    return int(num_rows)  # type: ignore[call-overload]  # an int, checked by is_int


def _check_in_range(owner: str, indices: np.ndarray, num_rows: int) -> None:
    if indices.size == 0:
        return
    bad = (indices < 0) | (indices >= num_rows)
    if bad.any():
        position = int(np.argmax(bad))
        raise ArgumentError(
            f"{owner}: index {int(indices[position])} (position {position}) is out of range: a source of "
            f"{num_rows} rows takes indices in [0, {num_rows})."
        )


def _as_index_array(owner: str, name: str, values: Any) -> np.ndarray:
    """``values`` as a 1-D int64 array, or a TypeError naming ``owner`` and ``name``."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Iterable, np.ndarray)):
        raise _type_error(owner, name, "a sequence of ints", values)
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ArgumentError(f"{owner}: `{name}` must be one-dimensional. Found shape: {values.shape}")
        if values.size and values.dtype.kind not in "iu":
            raise _type_error(owner, name, "a sequence of ints", values.tolist()[0])
        return values.astype(np.int64)
    items = list(values)
    # Checked item by item: np.asarray would silently turn [1, 2.5] into floats and [1, True] into ints.
    for item in items:
        if not is_int(item):
            raise _type_error(owner, name, "a sequence of ints", item)
    return np.array(items, dtype=np.int64)


class Sampler:
    """Base class of every sampler, and the class to subclass for a sampler of your own.

    A subclass overrides ``__iter__`` to yield row indices, as in MindSpore. Before iterating, the
    pipeline sets ``self.dataset_size`` (the rows the sampler chooses from) and ``self.num_samples``
    (how many indices it reads: the ``num_samples`` given to the constructor, or ``dataset_size``).
    Iteration stops after ``num_samples`` indices. Every index must be an int in
    ``[0, dataset_size)``. ``reset()`` is called before each epoch after the first.

    Unlike MindSpore, an explicit ``num_samples`` larger than ``dataset_size`` is honoured (a sampler
    may oversample); MindSpore silently caps it.

    Args:
        num_samples: the most indices to read per epoch. None (or 0, as in MindSpore) reads
            ``dataset_size`` of them.

    Examples:
        >>> from minddata.samplers import Sampler
        >>> class ReverseSampler(Sampler):
        ...     def __iter__(self):
        ...         yield from range(self.dataset_size - 1, -1, -1)
        >>> ReverseSampler()._indices(4, seed=0, pass_index=0).tolist()
        [3, 2, 1, 0]
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Samplers remember their constructor call: minddata.serialize writes a sampler as that call.
        record_init_arguments(cls)

    def __init__(self, num_samples: int | None = None) -> None:
        self.num_samples = _check_num_samples(type(self).__name__, num_samples)
        # Kept apart from `num_samples`, which the pipeline overwrites with the resolved count.
        self._requested_num_samples = self.num_samples
        self.dataset_size = 0
        self.child_sampler: Sampler | None = None

    # ---- MindSpore's public methods ----------------------------------------------------------

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(
            f"{type(self).__name__}: a Sampler subclass must override __iter__ to yield row indices "
            f"(ints in [0, self.dataset_size))."
        )

    def reset(self) -> None:
        """Called before each epoch after the first; override to restart per-epoch state."""

    def add_child(self, sampler: Sampler) -> None:
        """Sample from ``sampler``'s output instead of the source's rows.

        The child runs first; this sampler then sees ``dataset_size`` equal to the child's count, and
        its indices pick positions in the child's output (MindSpore's semantics).

        Examples:
            >>> from minddata.samplers import SequentialSampler, SubsetSampler
            >>> parent = SequentialSampler(start_index=1, num_samples=2)
            >>> parent.add_child(SubsetSampler([9, 7, 5, 3]))
            >>> parent._indices(10, seed=0, pass_index=0).tolist()
            [7, 5]
        """
        owner = type(self).__name__
        if not isinstance(sampler, Sampler):
            raise _type_error(owner, "sampler", "a Sampler", sampler)
        if getattr(self, "child_sampler", None) is not None:
            raise ArgumentError(
                f"{owner}: this sampler already has a child ({type(self.child_sampler).__name__}); a "
                f"sampler takes at most one. Add the new sampler to the child instead."
            )
        node: Sampler | None = sampler
        while node is not None:
            if node is self:
                raise ArgumentError(f"{owner}: adding this child would make the sampler its own descendant.")
            node = getattr(node, "child_sampler", None)
        self.child_sampler = sampler

    def get_child(self) -> Sampler | None:
        """The child sampler given to :meth:`add_child`, or None."""
        return getattr(self, "child_sampler", None)

    def get_num_samples(self) -> int | None:
        """The ``num_samples`` given, combined with the child's as in MindSpore; None means 'all'.

        With a child: min of both when both are set, else whichever is set.
        """
        own = getattr(self, "_requested_num_samples", getattr(self, "num_samples", None)) or None
        child = self.get_child()
        child_samples = child.get_num_samples() if child is not None else None
        if own is not None and child_samples is not None:
            return min(own, child_samples)
        return own if own is not None else child_samples

    def is_shuffled(self) -> bool:
        """Whether the order is random (MindSpore's ``is_shuffled``)."""
        child = self.get_child()
        return child.is_shuffled() if child is not None else False

    def is_sharded(self) -> bool:
        """Whether this sampler reads one shard of the rows (MindSpore's ``is_sharded``)."""
        child = self.get_child()
        return child.is_sharded() if child is not None else False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_samples={getattr(self, 'num_samples', None)!r})"

    # ---- engine protocol -----------------------------------------------------------------------

    def _indices(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        """Row indices (1-D int64) of pass ``pass_index`` over a source of ``num_rows`` rows."""
        num_rows = _check_num_rows(type(self).__name__, num_rows)
        return self._chain_indices(num_rows, int(seed), int(pass_index), 0)

    def _elastic_shard(self) -> tuple[bool, int, int] | None:
        """(shuffle, num_shards, shard_id) when this sampler deals the whole epoch's global order to
        shards (the rule an elastic resume rests on, engine/elastic.py); None otherwise."""
        return None

    def _epoch_order(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        """The epoch's global order (all shards together) of a sampler with an :meth:`_elastic_shard`."""
        raise NotImplementedError

    def _whole_order_name(self) -> str | None:
        """The name of the whole epoch order this sampler draws, the same alone and as the child of a
        DistributedSampler (which then deals it to shards, and can resume elastically); None when it
        draws no such order."""
        return None

    def _elastic_order_name(self) -> str:
        """The name an elastic state records for the order this sampler deals ("" for a permutation or
        the rows in order): a resume under another order is refused."""
        return self._whole_order_name() or ""

    def _num_samples(self, num_rows: int) -> int:
        """How many indices :meth:`_indices` returns for ``num_rows`` rows, without drawing them."""
        return self._chain_count(_check_num_rows(type(self).__name__, num_rows))

    def _chain_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        child = self.get_child()
        if child is None:
            return self._own_indices(num_rows, seed, pass_index, depth)
        base = child._chain_indices(num_rows, seed, pass_index, depth + 1)
        return base[self._own_indices(len(base), seed, pass_index, depth)]

    def _chain_count(self, num_rows: int) -> int:
        child = self.get_child()
        return self._own_count(num_rows if child is None else child._chain_count(num_rows))

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        # A user sampler: its randomness is its own business, (seed, pass) are not passed on.
        return self._collect(num_rows, reset=pass_index > 0)

    def _own_count(self, num_rows: int) -> int:
        # A user sampler's count is only known by iterating it.
        return len(self._collect(num_rows, reset=False))

    def _collect(self, num_rows: int, *, reset: bool) -> np.ndarray:
        owner = type(self).__name__
        # Subclasses that skip super().__init__ still work: read what they set themselves.
        if "_requested_num_samples" not in self.__dict__:
            self._requested_num_samples = _check_num_samples(owner, getattr(self, "num_samples", None))
        requested = self._requested_num_samples
        limit = requested if requested else num_rows
        self.dataset_size = num_rows
        self.num_samples = limit
        if reset:
            self.reset()
        indices = _as_index_array(owner, "__iter__ output", itertools.islice(iter(self), limit))
        _check_in_range(owner, indices, num_rows)
        return indices


class _BuiltinSampler(Sampler):
    """Shared code of the built-in samplers: they compute indices directly instead of iterating."""

    _shuffled = False

    def __init__(self, num_samples: int | None) -> None:
        # Not Sampler.__init__: built-ins have no `dataset_size` and never overwrite `num_samples`.
        self.num_samples = _check_num_samples(type(self).__name__, num_samples)
        self.child_sampler = None

    def __iter__(self) -> Iterator[int]:
        raise TypeError(
            f"{type(self).__name__} is not iterable on its own: its indices depend on the dataset it "
            f"samples. Pass it as a dataset's `sampler` argument."
        )

    def get_num_samples(self) -> int | None:
        own = self.num_samples or None
        child = self.child_sampler
        child_samples = child.get_num_samples() if child is not None else None
        if own is not None and child_samples is not None:
            return min(own, child_samples)
        return own if own is not None else child_samples

    def is_shuffled(self) -> bool:
        return self._shuffled or super().is_shuffled()

    def _cap(self, available: int) -> int:
        # MindSpore: num_samples of None or 0 means all; more than there are means all.
        return available if not self.num_samples else min(self.num_samples, available)

    def _own_count(self, num_rows: int) -> int:
        raise NotImplementedError

    def _repr_args(self) -> dict[str, Any]:
        return {"num_samples": self.num_samples}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._repr_args().items())
        return f"{type(self).__name__}({args})"


class SequentialSampler(_BuiltinSampler):
    """Rows in order, from ``start_index``.

    Args:
        start_index: the first row to read (default 0). It must be below the number of rows.
        num_samples: the most rows to read per epoch; None (or 0) reads to the end.

    Examples:
        >>> from minddata.samplers import SequentialSampler
        >>> SequentialSampler(start_index=2, num_samples=3)._indices(10, seed=0, pass_index=0).tolist()
        [2, 3, 4]
    """

    def __init__(self, start_index: int | None = None, num_samples: int | None = None) -> None:
        super().__init__(num_samples)
        if start_index is not None:
            start_index = _check_int("SequentialSampler", "start_index", start_index)
            if start_index < 0:
                raise ArgumentError(
                    f"SequentialSampler: `start_index` must be greater than or equal to 0. Found: {start_index}"
                )
        self.start_index = start_index

    def _start(self, num_rows: int) -> int:
        start = self.start_index or 0
        if start and start >= num_rows:
            raise ArgumentError(
                f"SequentialSampler: `start_index` must be less than the number of rows ({num_rows}). "
                f"Found: {start}"
            )
        return start

    def _own_count(self, num_rows: int) -> int:
        return self._cap(num_rows - self._start(num_rows))

    def _elastic_shard(self) -> tuple[bool, int, int] | None:
        if type(self) is not SequentialSampler or self.start_index or self.num_samples or self.child_sampler:
            return None
        return False, 1, 0

    def _epoch_order(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        return np.arange(num_rows, dtype=np.int64)

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        start = self._start(num_rows)
        return np.arange(start, start + self._cap(num_rows - start), dtype=np.int64)

    def _repr_args(self) -> dict[str, Any]:
        return {"start_index": self.start_index, "num_samples": self.num_samples}


class RandomSampler(_BuiltinSampler):
    """Rows in a random order, a new one every epoch.

    Args:
        replacement: draw each index independently (rows may repeat) instead of permuting.
        num_samples: indices per epoch; None (or 0) means one per row. As in MindSpore, a value
            above the number of rows is capped at it.

    Examples:
        >>> from minddata.samplers import RandomSampler
        >>> sampler = RandomSampler()
        >>> sorted(sampler._indices(5, seed=7, pass_index=0).tolist())
        [0, 1, 2, 3, 4]
        >>> len(RandomSampler(replacement=True, num_samples=3)._indices(5, seed=7, pass_index=0))
        3
    """

    _shuffled = True

    def __init__(self, replacement: bool = False, num_samples: int | None = None) -> None:
        super().__init__(num_samples)
        self.replacement = _check_bool("RandomSampler", "replacement", replacement)

    def _own_count(self, num_rows: int) -> int:
        return self._cap(num_rows)

    def _elastic_shard(self) -> tuple[bool, int, int] | None:
        if type(self) is not RandomSampler or self.replacement or self.num_samples or self.child_sampler:
            return None
        return True, 1, 0

    def _epoch_order(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        return self._indices(num_rows, seed, pass_index)

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        count = self._cap(num_rows)
        if count == 0:
            return np.zeros(0, dtype=np.int64)
        rng = _rng(seed, pass_index, _STREAM_RANDOM, depth)
        if self.replacement:
            return rng.integers(0, num_rows, size=count, dtype=np.int64)
        return rng.permutation(num_rows)[:count].astype(np.int64, copy=False)

    def _repr_args(self) -> dict[str, Any]:
        return {"replacement": self.replacement, "num_samples": self.num_samples}


class DistributedSampler(_BuiltinSampler):
    """One shard of the rows, for data-parallel training: shard ``shard_id`` of ``num_shards``.

    Shard k takes every ``num_shards``-th entry of the full order, starting at entry k. The full
    order is the rows in order, or, with ``shuffle``, one permutation per epoch that every shard
    draws alike from the pipeline seed, so the shards never overlap within the first ``N`` entries.
    As in MindSpore, every shard reads ``ceil(N / num_shards)`` rows: shards short of that wrap
    around to the start of the order, so a few rows are read twice per epoch when ``num_shards``
    does not divide ``N``.

    Args:
        num_shards: the number of shards (> 0).
        shard_id: this shard, in ``[0, num_shards)``.
        shuffle: permute the rows each epoch (default True).
        num_samples: the most rows this shard reads per epoch; None (or 0) means its whole shard.
        offset: MindSpore's starting shard, used by ConcatDataset: with ``offset >= 0`` entry p of
            the order goes to shard ``(p + offset) % num_shards`` and shards are not padded (so they
            may differ in size by one). -1 (default) gives equal shards as above.

    Examples:
        >>> from minddata.samplers import DistributedSampler
        >>> DistributedSampler(num_shards=3, shard_id=1, shuffle=False)._indices(7, seed=0, pass_index=0).tolist()
        [1, 4, 0]
    """

    def __init__(
        self,
        num_shards: int,
        shard_id: int,
        shuffle: bool = True,
        num_samples: int | None = None,
        offset: int = -1,
    ) -> None:
        super().__init__(num_samples)
        owner = "DistributedSampler"
        num_shards = _check_int(owner, "num_shards", num_shards)
        if num_shards <= 0:
            raise ArgumentError(f"{owner}: `num_shards` must be greater than 0. Found: {num_shards}")
        shard_id = _check_int(owner, "shard_id", shard_id)
        if not 0 <= shard_id < num_shards:
            raise ArgumentError(f"{owner}: `shard_id` must be in [0, {num_shards}). Found: {shard_id}")
        offset = _check_int(owner, "offset", offset)
        if not -1 <= offset <= num_shards:
            raise ArgumentError(
                f"{owner}: `offset` must be -1 (equal shards) or in [0, num_shards={num_shards}]. "
                f"Found: {offset}"
            )
        self.num_shards = num_shards
        self.shard_id = shard_id
        self.shuffle = _check_bool(owner, "shuffle", shuffle)
        self.offset = offset

    def is_shuffled(self) -> bool:
        return self.shuffle or Sampler.is_shuffled(self)

    def is_sharded(self) -> bool:
        return True

    def _shard_size(self, num_rows: int) -> int:
        if num_rows == 0:
            return 0
        if self.offset == -1:
            return math.ceil(num_rows / self.num_shards)
        # Entries p in [0, num_rows) with (p + offset) % num_shards == shard_id.
        first = (self.shard_id - self.offset) % self.num_shards
        return max(0, math.ceil((num_rows - first) / self.num_shards))

    def _own_count(self, num_rows: int) -> int:
        return self._cap(self._shard_size(num_rows))

    def _positions(self, num_rows: int) -> np.ndarray:
        """This shard's positions in the epoch's global order (the order of ``num_shards=1``)."""
        count = self._own_count(num_rows)
        if count == 0:
            return np.zeros(0, dtype=np.int64)
        first = self.shard_id if self.offset == -1 else (self.shard_id - self.offset) % self.num_shards
        # Positions wrap (only ever with offset -1) to pad short shards from the start of the order.
        return (first + self.num_shards * np.arange(count, dtype=np.int64)) % num_rows

    def _dealt_child(self) -> Sampler | None:
        """The child whose whole order this sampler deals (a file source's Shuffle.FILES/INFILE order)."""
        child = self.get_child()
        return child if child is not None and not self.shuffle and child._whole_order_name() is not None else None

    def _elastic_shard(self) -> tuple[bool, int, int] | None:
        if type(self) is not DistributedSampler or self.offset != -1 or self.num_samples:
            return None
        if self.child_sampler is not None:
            return (True, self.num_shards, self.shard_id) if self._dealt_child() is not None else None
        return self.shuffle, self.num_shards, self.shard_id

    def _elastic_order_name(self) -> str:
        child = self._dealt_child()
        return child._elastic_order_name() if child is not None else ""

    def _epoch_order(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        child = self._dealt_child()
        if child is not None:
            return child._indices(num_rows, seed, pass_index)
        if not self.shuffle:
            return np.arange(num_rows, dtype=np.int64)
        return _rng(seed, pass_index, _STREAM_DISTRIBUTED, 0).permutation(num_rows).astype(np.int64, copy=False)

    def _global_key_rule(self, num_rows: int) -> tuple[int, int, int] | None:
        """(first, step, modulo): index ``i`` of this shard has the global key ``(first + step * i) %
        modulo`` (what :meth:`_global_keys` lists), or None as there."""
        if self.num_shards == 1 or (self.get_child() is not None and self._dealt_child() is None) or num_rows == 0:
            return None
        first = self.shard_id if self.offset == -1 else (self.shard_id - self.offset) % self.num_shards
        return first, self.num_shards, num_rows

    def _global_keys(self, num_rows: int) -> np.ndarray | None:
        """Each index's global identity (its position in the global order), which keys the random
        ops above: a sample draws alike on any number of shards. None when the shard is the order."""
        if self.num_shards == 1 or (self.get_child() is not None and self._dealt_child() is None):
            return None
        return self._positions(num_rows)

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        positions = self._positions(num_rows)
        if positions.size == 0:
            return positions
        if not self.shuffle:
            return positions
        # No shard_id in the seed: all shards must draw the same permutation.
        order = _rng(seed, pass_index, _STREAM_DISTRIBUTED, depth).permutation(num_rows)
        return order[positions].astype(np.int64, copy=False)

    def _repr_args(self) -> dict[str, Any]:
        return {
            "num_shards": self.num_shards,
            "shard_id": self.shard_id,
            "shuffle": self.shuffle,
            "num_samples": self.num_samples,
            "offset": self.offset,
        }


class SubsetSampler(_BuiltinSampler):
    """The given row indices, in the given order, every epoch.

    Args:
        indices: row indices (ints >= 0; repeats allowed). An index at or past the number of rows
            raises when the pipeline runs.
        num_samples: read only the first ``num_samples`` of them; None (or 0) reads all.

    Examples:
        >>> from minddata.samplers import SubsetSampler
        >>> SubsetSampler([4, 0, 2])._indices(5, seed=0, pass_index=0).tolist()
        [4, 0, 2]
    """

    def __init__(self, indices: Iterable[int], num_samples: int | None = None) -> None:
        super().__init__(num_samples)
        owner = type(self).__name__
        array = _as_index_array(owner, "indices", indices)
        if array.size and array.min() < 0:
            position = int(np.argmax(array < 0))
            raise ArgumentError(
                f"{owner}: `indices` must be greater than or equal to 0. Found: {int(array[position])} "
                f"at position {position}"
            )
        self.indices = array

    def _own_count(self, num_rows: int) -> int:
        return self._cap(len(self.indices))

    def _checked(self, num_rows: int) -> np.ndarray:
        _check_in_range(type(self).__name__, self.indices, num_rows)
        return self.indices

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        return self._checked(num_rows)[: self._cap(len(self.indices))].copy()

    def _repr_args(self) -> dict[str, Any]:
        return {"indices": self.indices.tolist(), "num_samples": self.num_samples}


class SubsetRandomSampler(SubsetSampler):
    """The given row indices in a random order, a new one every epoch.

    Args:
        indices: row indices (ints >= 0).
        num_samples: read only the first ``num_samples`` of each epoch's order; None (or 0) reads all.

    Examples:
        >>> from minddata.samplers import SubsetRandomSampler
        >>> sorted(SubsetRandomSampler([8, 1, 5])._indices(10, seed=3, pass_index=0).tolist())
        [1, 5, 8]
    """

    _shuffled = True

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        indices = self._checked(num_rows)
        order = _rng(seed, pass_index, _STREAM_SUBSET_RANDOM, depth).permutation(len(indices))
        return indices[order[: self._cap(len(indices))]]


class WeightedRandomSampler(_BuiltinSampler):
    """Row i drawn with probability proportional to ``weights[i]``, a new draw every epoch.

    Args:
        weights: one non-negative weight per row, from row 0 (at most one per row; rows past the
            last weight are never drawn). The sum must be positive.
        num_samples: draws per epoch; None (or 0) means one per row of the source, as in MindSpore,
            and a value above the number of rows is capped at it.
        replacement: draw independently (default), or never draw a row twice in an epoch, which
            needs ``num_samples`` no larger than the number of nonzero weights.

    Examples:
        >>> from minddata.samplers import WeightedRandomSampler
        >>> sampler = WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], num_samples=4)
        >>> set(sampler._indices(4, seed=0, pass_index=0).tolist()) <= {1, 3}
        True
    """

    _shuffled = True

    def __init__(
        self, weights: Iterable[float], num_samples: int | None = None, replacement: bool = True
    ) -> None:
        super().__init__(num_samples)
        owner = "WeightedRandomSampler"
        self.replacement = _check_bool(owner, "replacement", replacement)
        if isinstance(weights, (str, bytes)) or not isinstance(weights, (Iterable, np.ndarray)):
            raise _type_error(owner, "weights", "a sequence of numbers", weights)
        values = list(weights) if not isinstance(weights, np.ndarray) else weights.tolist()
        for value in values:
            if isinstance(value, (bool, np.bool_)) or not isinstance(
                value, (int, float, np.integer, np.floating)
            ):
                raise _type_error(owner, "weights", "a sequence of numbers", value)
        array = np.asarray(values, dtype=np.float64)
        if array.ndim != 1 or array.size == 0:
            raise ArgumentError(f"{owner}: `weights` must be a non-empty 1-D sequence. Found: {values!r}")
        if not np.isfinite(array).all() or (array < 0).any():
            position = int(np.argmax(~np.isfinite(array) | (array < 0)))
            raise ArgumentError(
                f"{owner}: `weights` must be finite and greater than or equal to 0. Found: "
                f"{array[position]} at position {position}"
            )
        if array.sum() <= 0:
            raise ArgumentError(
                f"{owner}: `weights` must have a positive sum (not all zero). Found: {values!r}"
            )
        self.weights = array
        nonzero = int(np.count_nonzero(array))
        if not self.replacement and self.num_samples and self.num_samples > nonzero:
            raise ArgumentError(
                f"{owner}: without replacement, `num_samples` must be at most the number of nonzero "
                f"weights ({nonzero}). Found: {self.num_samples}"
            )

    def _own_count(self, num_rows: int) -> int:
        owner = "WeightedRandomSampler"
        if len(self.weights) > num_rows:
            raise ArgumentError(
                f"{owner}: `weights` has {len(self.weights)} entries but the source has {num_rows} rows; "
                f"weight i is row i's, so give at most one weight per row."
            )
        count = self._cap(num_rows)
        nonzero = int(np.count_nonzero(self.weights))
        if not self.replacement and count > nonzero:
            raise ArgumentError(
                f"{owner}: without replacement, an epoch of {count} draws needs at least {count} nonzero "
                f"weights. Found: {nonzero}. Set `num_samples` <= {nonzero} or `replacement=True`."
            )
        return count

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        count = self._own_count(num_rows)
        rng = _rng(seed, pass_index, _STREAM_WEIGHTED, depth)
        p = self.weights / self.weights.sum()
        return rng.choice(len(p), size=count, replace=self.replacement, p=p).astype(np.int64, copy=False)

    def _repr_args(self) -> dict[str, Any]:
        return {
            "weights": self.weights.tolist(),
            "num_samples": self.num_samples,
            "replacement": self.replacement,
        }


class _IterableSampler(Sampler):
    """Wraps a plain iterable of indices passed as ``sampler=`` (MindSpore's IterSampler)."""

    def __init__(self, iterable: Iterable[int], num_samples: int | None = None) -> None:
        super().__init__(num_samples)
        self.iterable = iterable

    def __iter__(self) -> Iterator[int]:
        return iter(self.iterable)

    def __repr__(self) -> str:
        return f"_IterableSampler({self.iterable!r}, num_samples={self._requested_num_samples!r})"


def resolve_sampler(
    *,
    sampler: Sampler | Iterable[int] | int | None,
    shuffle: bool | None,
    num_samples: int | None,
    num_shards: int | None,
    shard_id: int | None,
    default_shuffle: bool,
    where: str,
) -> Sampler:
    """The sampler a source uses, from its MindSpore-style arguments (never None).

    - ``sampler`` given: used as is; a list, tuple, range or array of ints becomes a
      :class:`SubsetSampler` (``num_samples`` applies to it), another iterable of ints is iterated
      each epoch. It cannot be combined with ``shuffle`` or ``num_shards``/``shard_id``, nor a
      sampler object with ``num_samples`` (set it on the sampler).
    - ``num_shards`` and ``shard_id`` (both or neither): a :class:`DistributedSampler`, shuffled unless
      ``shuffle=False`` (or the source's default says otherwise).
    - else ``shuffle`` (None: ``default_shuffle``): :class:`RandomSampler` or :class:`SequentialSampler`.

    ``num_samples`` must be None or >= 0; 0 means all rows, as in MindSpore. Unlike MindSpore, which
    switches to sampling *with replacement* when ``num_samples`` is given with shuffling, minddata
    keeps a permutation, so no row repeats within an epoch.

    ``where`` names the source in error messages.

    Examples:
        >>> from minddata.samplers import resolve_sampler
        >>> resolve_sampler(sampler=None, shuffle=None, num_samples=None, num_shards=4, shard_id=1,
        ...                 default_shuffle=True, where="ImageFolderDataset")
        DistributedSampler(num_shards=4, shard_id=1, shuffle=True, num_samples=None, offset=-1)
    """
    if shuffle is not None:
        shuffle = _check_bool(where, "shuffle", shuffle)
    num_samples = _check_num_samples(where, num_samples)

    if sampler is not None:
        if shuffle is not None:
            raise ArgumentError(
                f"{where}: `sampler` and `shuffle` cannot be given together: the sampler decides the "
                f"order. Drop `shuffle`, or drop `sampler` and keep `shuffle={shuffle}`."
            )
        if num_shards is not None or shard_id is not None:
            raise ArgumentError(
                f"{where}: `sampler` and `num_shards`/`shard_id` cannot be given together. Use "
                f"`sampler=DistributedSampler(num_shards, shard_id)` (with the sampler as its child "
                f"via add_child), or drop `sampler`. Found: num_shards={num_shards}, shard_id={shard_id}"
            )
        if isinstance(sampler, Sampler):
            unbound = next((s for s in _chain(sampler) if isinstance(s, PKSampler) and s._labels is None), None)
            if unbound is not None:
                raise ArgumentError(
                    f"{where}: PKSampler needs the class label of every row, which {where} does not provide. "
                    f"Use it with ImageFolderDataset, MnistDataset or Cifar10Dataset (as MindSpore, which refuses "
                    f"it for GeneratorDataset too)."
                )
            if num_samples:
                raise ArgumentError(
                    f"{where}: `sampler` and `num_samples` cannot be given together: set `num_samples` on "
                    f"the sampler ({type(sampler).__name__}(..., num_samples={num_samples}))."
                )
            return sampler
        if isinstance(sampler, (list, tuple, range, np.ndarray)):
            return SubsetSampler(sampler, num_samples)
        if is_int(sampler):
            return SubsetSampler([int(sampler)], num_samples)  # type: ignore[arg-type]  # an int, checked by is_int
        if isinstance(sampler, (str, bytes)) or not isinstance(sampler, Iterable):
            raise _type_error(where, "sampler", "a Sampler or an iterable of ints", sampler)
        return _IterableSampler(sampler, num_samples)

    if (num_shards is None) != (shard_id is None):
        raise ArgumentError(
            f"{where}: `num_shards` and `shard_id` must be given together. "
            f"Found: num_shards={num_shards}, shard_id={shard_id}"
        )
    if num_shards is not None:
        num_shards = _check_int(where, "num_shards", num_shards)
        if num_shards <= 0:
            raise ArgumentError(f"{where}: `num_shards` must be greater than 0. Found: {num_shards}")
        shard_id = _check_int(where, "shard_id", shard_id)
        if not 0 <= shard_id < num_shards:
            raise ArgumentError(f"{where}: `shard_id` must be in [0, {num_shards}). Found: {shard_id}")
        return DistributedSampler(
            num_shards,
            shard_id,
            shuffle=bool(default_shuffle if shuffle is None else shuffle),
            num_samples=num_samples,
        )
    if default_shuffle if shuffle is None else shuffle:
        return RandomSampler(num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)


def _chain(sampler: Sampler) -> Iterator[Sampler]:
    node: Sampler | None = sampler
    while node is not None:
        yield node
        node = node.get_child()


class PKSampler(_BuiltinSampler):
    """``num_val`` rows of every class (MindSpore's ``PKSampler``), for metric learning.

    Classes come in label order, or in a random order each epoch with ``shuffle``. Within a class the
    ``num_val`` rows are drawn at random (a new draw each epoch), without replacement when the class
    has enough rows and with replacement when it has fewer, as in MindSpore. Only sources that know
    each row's class take it: ``ImageFolderDataset``, ``MnistDataset``, ``Cifar10Dataset``.

    Args:
        num_val: rows per class.
        num_class: not supported (as in MindSpore 2.x); must be None.
        shuffle: visit the classes in a random order.
        class_column: the label column (MindSpore's argument for MindDataset; kept for signature).
        num_samples: the most rows per epoch.

    Examples:
        >>> import numpy as np
        >>> from minddata.samplers import PKSampler, with_labels
        >>> labels = np.array([0, 0, 0, 1, 2, 2])
        >>> pk = with_labels(PKSampler(2), lambda: labels)
        >>> labels[pk._indices(6, seed=1, pass_index=0)].tolist()  # class 1 has one row: drawn twice
        [0, 0, 1, 1, 2, 2]
    """

    def __init__(
        self,
        num_val: int,
        num_class: int | None = None,
        shuffle: bool = False,
        class_column: str = "label",
        num_samples: int | None = None,
    ) -> None:
        super().__init__(num_samples)
        owner = "PKSampler"
        self.num_val = _check_int(owner, "num_val", num_val)
        if self.num_val <= 0:
            raise ArgumentError(f"{owner}: `num_val` must be greater than 0. Found: {self.num_val}")
        if num_class is not None:
            raise ArgumentError(f"{owner}: `num_class` is not supported (nor in MindSpore); leave it None. Found: {num_class!r}")
        self.shuffle = _check_bool(owner, "shuffle", shuffle)
        if not isinstance(class_column, str):
            raise _type_error(owner, "class_column", "a column name", class_column)
        self.class_column = class_column
        self._labels: Any = None  # set by the source: () -> one label per row

    def is_shuffled(self) -> bool:
        return self.shuffle or super().is_shuffled()

    def _classes(self, num_rows: int) -> list[np.ndarray]:
        labels = np.asarray(self._labels()).reshape(-1)
        if len(labels) != num_rows:
            raise ArgumentError(f"PKSampler: the source has {num_rows} rows but {len(labels)} labels.")
        order = np.argsort(labels, kind="stable")
        _, starts = np.unique(labels[order], return_index=True)
        return np.split(order, starts[1:])

    def _own_count(self, num_rows: int) -> int:
        return self._cap(len(self._classes(num_rows)) * self.num_val)

    def _own_indices(self, num_rows: int, seed: int, pass_index: int, depth: int) -> np.ndarray:
        classes = self._classes(num_rows)
        rng = _rng(seed, pass_index, _STREAM_PK, depth)
        if self.shuffle:
            classes = [classes[i] for i in rng.permutation(len(classes))]
        picks = [rng.choice(rows, self.num_val, replace=len(rows) < self.num_val) for rows in classes]
        out = np.concatenate(picks).astype(np.int64) if picks else np.zeros(0, np.int64)
        return out[: self._cap(len(out))]

    def _repr_args(self) -> dict[str, Any]:
        return {"num_val": self.num_val, "shuffle": self.shuffle, "num_samples": self.num_samples}


def with_labels(sampler: Any, labels: Any) -> Any:
    """``sampler`` with every PKSampler in its chain given the source's ``labels()`` (a copy; the
    user's sampler object is left as it was). Other samplers come back unchanged."""
    import copy

    if not isinstance(sampler, Sampler) or not any(isinstance(s, PKSampler) for s in _chain(sampler)):
        return sampler
    top = copy.copy(sampler)
    node = top
    while node is not None:
        if isinstance(node, PKSampler):
            node._labels = labels
        child = node.get_child()
        if child is not None:
            child = copy.copy(child)
            node.child_sampler = child
        node = child
    return top
