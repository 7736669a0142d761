"""Splitting and sharding a graph after it was built: ``Dataset.split``'s sizes and random subsets, and
the sharding of ``to_torch`` and ``Model.train`` under torch.distributed.

Works on plan nodes only; :mod:`minddata.dataset.base` wraps the results in datasets.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from minddata import config
from minddata.dataset import _validate as v
from minddata.engine import ir
from minddata.errors import ArgumentError
from minddata.samplers import DistributedSampler, RandomSampler, SequentialSampler, SubsetRandomSampler

__all__ = ["split_counts", "random_split", "is_sharded", "shard"]


def split_counts(sizes: Sequence[int | float], total: int) -> list[int]:
    """Row counts for ``sizes``, with MindSpore's rounding rules for fractions."""
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise ArgumentError(f"split: `sizes` must be a non-empty list of ints or floats. Found: {sizes!r}")
    if all(v.is_int(s) for s in sizes):
        counts = [int(s) for s in sizes]
        if any(c <= 0 for c in counts):
            raise ArgumentError(f"split: every size must be greater than 0. Found: {counts}")
        if sum(counts) != total:
            raise ArgumentError(
                f"split: int sizes must add up to the dataset size {total}. Found: {counts} (sum {sum(counts)})"
            )
        return counts
    if all(isinstance(s, float) for s in sizes):
        if any(not 0 < s <= 1 for s in sizes) or abs(sum(sizes) - 1) > 1e-6:
            raise ArgumentError(f"split: float sizes must be in (0, 1] and add up to 1. Found: {list(sizes)}")
        counts = [round(s * total) for s in sizes]
        diff = total - sum(counts)
        if diff > 0:
            counts[0] += diff
        elif diff < 0:
            for i, c in enumerate(counts):
                if c > -diff:
                    counts[i] += diff
                    break
        if any(c <= 0 for c in counts):
            raise ArgumentError(
                f"split: sizes {list(sizes)} of {total} rows leave an empty split {counts}; use larger fractions"
            )
        return counts
    raise ArgumentError(f"split: `sizes` must be all ints or all floats. Found: {list(sizes)}")


def _chain_to_source(node: ir.Node) -> list[ir.Node]:
    chain = [node]
    while chain[-1].children:
        if len(chain[-1].children) != 1:
            return []
        chain.append(chain[-1].children[0])
    return chain


def _rebuild(chain: list[ir.Node], source: ir.Node) -> ir.Node:
    node = source
    for original in reversed(chain[:-1]):
        node = original.with_children([node])
    return node


def random_split(node: ir.Node, counts: list[int], total: int) -> list[ir.Node]:
    """``node``'s ``total`` rows assigned at random (from the seed in use) to parts of ``counts`` rows,
    each part ``node``'s graph over its own subset of the source: needs one random-access source read
    in full."""
    chain = _chain_to_source(node)
    source = chain[-1] if chain else None
    if not isinstance(source, ir.RandomAccessSourceNode) or source.static_size() != source.num_rows():
        raise ArgumentError(
            "split: randomize=True needs a single random-access source read in full (no sampler, "
            "num_samples or sharding, no zip/concat). Use randomize=False to split into consecutive ranges."
        )
    # The seed in use (the default without set_seed): every rank of a job must split alike.
    order = np.random.default_rng(config.get_seed()).permutation(total)
    out, start = [], 0
    for count in counts:
        subset = SubsetRandomSampler(np.sort(order[start : start + count]).tolist())
        out.append(_rebuild(chain, source.with_sampler(subset)))
        start += count
    return out


def is_sharded(node: ir.Node) -> bool:
    """Whether a random-access source of ``node``'s graph already reads one shard (``num_shards``/
    ``shard_id`` or a sharded sampler were given). Streamed sources (CSV, TFRecord, text, generators)
    shard inside their reader and are not detected here."""
    for below in node.walk():
        sampler = getattr(below, "sampler", None)
        if isinstance(below, ir.RandomAccessSourceNode) and sampler is not None and sampler.is_sharded():
            return True
    return False


def shard(node: ir.Node, num_shards: int, shard_id: int, where: str) -> ir.Node:
    """``node``'s graph reading only shard ``shard_id`` of ``num_shards`` of its source's rows, as if the
    source had been given ``num_shards``/``shard_id``: every shard sees the source's order (its
    sampler's) and takes every ``num_shards``-th row of it, so shards are disjoint and together cover
    the epoch.

    A shuffled source needs no ``config.set_seed``: the sharded sampler wraps the source's own, and a
    source whose sampler is sharded draws its whole sampler chain from the runtime's shard seed
    (``config.get_seed()``, the fixed default when no seed was set; see ``engine/runtime.py``), which
    every rank shares. That is the rule sources given ``num_shards`` follow, so both ways of sharding
    agree across ranks without a seed.

    Needs one random-access source below a chain of ops (no zip/concat); ``where`` names the caller
    in the error otherwise.
    """
    if num_shards == 1:
        return node
    chain = _chain_to_source(node)
    source = chain[-1] if chain else None
    if not isinstance(source, ir.RandomAccessSourceNode):
        raise ArgumentError(
            f"{where}: cannot shard this pipeline into {num_shards} parts after it was built: it needs a single "
            "random-access source (no zip/concat, not a streamed CSV/TFRecord/text/generator source). "
            f"Give the source num_shards={num_shards}, shard_id={shard_id} yourself."
        )
    sharded = DistributedSampler(num_shards=num_shards, shard_id=shard_id, shuffle=False)
    original = copy.copy(source.sampler)
    if (type(original) is RandomSampler and not original.replacement and not original.num_samples
            and original.get_child() is None):
        # A plain shuffle: the shuffled DistributedSampler draws the very permutation an unsharded
        # run draws (the epoch's global order), which an elastic resume needs (engine/elastic.py).
        sharded = DistributedSampler(num_shards=num_shards, shard_id=shard_id, shuffle=True)
    elif not (isinstance(original, SequentialSampler) and not original.is_shuffled()
              and original.get_num_samples() is None and original.get_child() is None
              and getattr(original, "start_index", 0) == 0):
        sharded.add_child(original)  # shard the sampler's order, whatever it is
    return _rebuild(chain, source.with_sampler(sharded))
