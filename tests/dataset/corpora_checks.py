"""Checks shared by the text corpus tests (tests/dataset/test_corpora_*.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

import minddata as md


def plain(value: Any) -> Any:
    """A column value as plain Python: a str/int for a scalar, a tuple for an array."""
    arr = np.asarray(value)
    return arr.item() if arr.ndim == 0 else tuple(arr.tolist())


def rows(ds: md.Dataset) -> list[tuple]:
    """Every row of one epoch, as tuples of plain values in column order."""
    return [tuple(plain(v) for v in row) for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def assert_shards_partition(build: Callable[..., md.Dataset], num_shards: int) -> None:
    """``build(num_shards=..., shard_id=...)`` (unshuffled): shards are equally long and together hold
    every row of the unsharded dataset; only the padding (MindSpore repeats the first rows) repeats."""
    everything = rows(build())
    shards = [rows(build(num_shards=num_shards, shard_id=k)) for k in range(num_shards)]
    per = -(-len(everything) // num_shards)
    assert [len(s) for s in shards] == [per] * num_shards
    together = Counter(r for s in shards for r in s)
    assert set(together) == set(everything)
    assert sum(together.values()) - len(everything) == per * num_shards - len(everything)
