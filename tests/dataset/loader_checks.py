"""Checks every standard-dataset loader's tests apply: rows as plain values, and shards that split an
epoch exactly (disjoint, and together every row)."""

from __future__ import annotations

import numpy as np


def rows(dataset):
    """One epoch as a list of {column: numpy value}."""
    return list(dataset.create_dict_iterator(num_epochs=1, output_numpy=True))


def row_keys(dataset):
    """Each row of one epoch as bytes (every column's dtype, shape and data), for set comparisons."""
    out = []
    for row in dataset.create_tuple_iterator(num_epochs=1, output_numpy=True):
        out.append(b"|".join(str(np.asarray(c).dtype).encode() + str(np.shape(c)).encode() + np.asarray(c).tobytes()
                             for c in row))
    return out


def assert_shards_partition(build, num_shards):
    """``build(num_shards=..., shard_id=...)`` / ``build()`` make the dataset; with a row count that
    ``num_shards`` divides, the shards are disjoint and together hold every row once."""
    full = row_keys(build())
    assert len(full) % num_shards == 0, "pick a row count the shard count divides"
    assert len(set(full)) == len(full), "the fixture's rows must differ"
    shards = [row_keys(build(num_shards=num_shards, shard_id=k)) for k in range(num_shards)]
    assert [len(s) for s in shards] == [len(full) // num_shards] * num_shards
    together = [key for shard in shards for key in shard]
    assert len(set(together)) == len(together)
    assert sorted(together) == sorted(full)
