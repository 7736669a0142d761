"""Elastic resume: the iterator states of N ranks continue on M ranks (docs/data.md, "Resuming on a
different number of ranks").

The facts it rests on:

- the global order of an epoch depends only on the seed and the epoch: a shuffled sharded source
  draws the permutation an unsharded one draws, and rank ``k`` of ``n`` reads positions
  ``k, k + n, ...`` of it (padded from the start of the order to equal shares, as MindSpore);
- a sample's random draws are keyed by its position in that order (``Chunk.keys``), not by its place
  in a rank's stream, so a sample is augmented alike on any number of ranks;
- what a rank consumed is a prefix of its share, so a state is (the positions consumed before this
  rank's share was dealt, as ranges; the share; how many of its rows the consumer took).

Merging N states gives the consumed positions of the epoch; the remaining positions, in global
order, are dealt to the M new ranks as the order itself is (rank ``m`` takes remaining ``m, m + M,
...``): each once, so shares differ by at most one row, or, with ``config.set_elastic_equal_shares``
(what DDP's lockstep needs), padded from the start of the remaining to equal shares. Only pipelines
in which every row keeps its global position are accepted: one random-access source with a plain
sampler, then maps, project/rename, at most one batch (after it, maps without random ops). The rest
is refused by :func:`describe` with the op and the reason.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import zlib
from typing import Any

import numpy as np

from minddata.engine import ir
from minddata.errors import GraphError

__all__ = [
    "Chain", "describe", "merge", "share", "share_size", "remaining", "epoch_plan", "state_part", "check_part",
    "check_data", "next_epoch",
]

KEY = "elastic"


@dataclasses.dataclass(frozen=True)
class Chain:
    """What a pipeline that can resume elastically is: its source, the rows per consumer row, the
    sampler's shuffle and shard, and a digest of the ops (a state from another pipeline is refused);
    :attr:`data` digests the source's data (a state saved from other files is refused)."""

    source: ir.RandomAccessSourceNode
    batch: int
    shuffle: bool
    num_shards: int
    shard_id: int
    # What the digest covers besides the source's row count: the ops above the source, the source's
    # name and columns, its file order (see :func:`describe`).
    ops: tuple[str, ...]
    order: str

    @functools.cached_property
    def rows(self) -> int:
        """The source's rows, counted when a state is saved or checked, not when the iterator is made:
        counting may read the data (a remote WebDataset's shards), which an executor with workers of its
        own (Ray) has them do first."""
        return self.source.num_rows()

    @functools.cached_property
    def digest(self) -> str:
        """A digest of the ops, the source's name, row count and columns, and its file order."""
        parts = [*self.ops, f"{self.source.name}:{self.rows}:{self.source.column_names}"]
        if self.order:  # a file source's Shuffle.FILES / INFILE order: another order's state is refused
            parts.append(f"order:{self.order}")
        return hashlib.sha1(json.dumps(parts).encode()).hexdigest()[:16]

    @functools.cached_property
    def data(self) -> str:
        """A digest of the source's :meth:`~minddata.engine.ir.RandomAccessSourceNode.data_identity`
        (its files' names and row counts), taken when a state is saved or checked, not when the
        iterator is made: a source of a million files lists them in a list of a million names."""
        names, counts = self.source.data_identity()
        digest = hashlib.sha1("\n".join(names).encode("utf-8", "surrogateescape"))
        digest.update(np.asarray(counts, dtype="<i8").tobytes())
        return digest.hexdigest()[:16]


_WHY = {
    ir.ShuffleNode: "a shuffle buffer's output order depends on the rows it held, so a row's place in "
    "the epoch's global order is lost",
    ir.FilterNode: "a filter drops rows, so the rows consumed can't be told from the count the consumer took",
    ir.RepeatNode: "a repeat inside the epoch makes a position stand for several rows",
    ir.TakeNode: "take cuts the epoch by the count of one rank's stream, which differs between world sizes",
    ir.SkipNode: "skip cuts the epoch by the count of one rank's stream, which differs between world sizes",
    ir.ZipNode: "zip pairs rows of several sources by their place in each stream",
    ir.ConcatNode: "concat's rows have no single global order with the sources' shards",
    ir.FlatMapNode: "flat_map makes a varying number of rows from each row",
    ir.BucketBatchNode: "bucket_batch_by_length groups rows by length, so batches don't hold consecutive rows",
    ir.ShardRowsNode: "use_sampler on a concat deals rows after the source",
    ir.IterableSourceNode: "a streamed source (CSV, text, TFRecord, an iterable generator) has no row index, "
    "so the rows not yet consumed can't be dealt to other ranks without reading the stream",
    ir.OnlineSourceNode: "an online source's rows are pushed in",
}


def _refuse(node: Any, why: str) -> GraphError:
    label = getattr(node, "label", None) or getattr(node, "name", type(node).__name__)
    return GraphError(
        f"{label}: this pipeline can't resume on a different number of ranks: {why}. Resume it on the "
        "same number of ranks (each rank passes its own state), or build the pipeline from a random-access "
        "source, maps, project/rename and one batch (docs/data.md, 'Resuming on a different number of ranks')"
    )


def _sampler_shard(node: ir.RandomAccessSourceNode) -> tuple[bool, int, int]:
    sampler = node.sampler
    shard = getattr(sampler, "_elastic_shard", lambda: None)()
    if shard is None:
        raise _refuse(
            node,
            f"its sampler {sampler!r} is not the epoch's whole order dealt to shards (give shuffle, "
            "num_shards/shard_id and no num_samples, or a plain RandomSampler/SequentialSampler/DistributedSampler)",
        )
    return shard


def _random(op: Any) -> bool:
    return bool(getattr(op, "random", False)) or any(_random(o) for o in getattr(op, "transforms", None) or ())


def describe(root: ir.Node) -> Chain | GraphError:
    """The pipeline's :class:`Chain`, or the :class:`GraphError` saying which op prevents an elastic
    resume and why (returned, not raised: same-world-size resume needs none of this)."""
    parts: list[str] = []
    batch = 1
    random_above: ir.MapNode | None = None  # the first map with a random op seen above any batch
    node = root
    try:
        while True:
            if isinstance(node, ir.RandomAccessSourceNode):
                shuffle, num_shards, shard_id = _sampler_shard(node)
                order = getattr(node.sampler, "_elastic_order_name", lambda: "")()
                return Chain(node, batch, shuffle, num_shards, shard_id, tuple(parts), order)
            if isinstance(node, (ir.ProjectNode, ir.RenameNode)):
                parts.append(f"{type(node).__name__}:{node.columns}")
            elif isinstance(node, ir.MapNode):
                off_cpu = [op for op in node.operations if getattr(op, "device_target", "CPU") != "CPU"]
                if off_cpu:
                    raise _refuse(node, f"{type(off_cpu[0]).__name__} runs on {off_cpu[0].device_target}, whose "
                                  "segments key random draws by stream position (run it on the CPU)")
                if random_above is None and any(_random(op) for op in node.operations):
                    random_above = node
                parts.append(f"{node.label}:{node.input_columns}:{node.output_columns}")
            elif isinstance(node, ir.BatchNode):
                if random_above is not None:
                    raise _refuse(random_above, "a random op after batch draws per batch, and batches are "
                                  "regrouped when the number of ranks changes (move it before the batch)")
                if batch != 1:
                    raise _refuse(node, "a second batch")
                if callable(node.batch_size):
                    raise _refuse(node, "a batch size computed per batch")
                if node.per_batch_map is not None:
                    raise _refuse(node, "per_batch_map sees BatchInfo counted in one rank's stream")
                batch = node.batch_size
                parts.append(f"Batch:{node.batch_size}:{node.drop_remainder}:{node.pad_info}")
            else:
                why = next((w for t, w in _WHY.items() if isinstance(node, t)), None)
                raise _refuse(node, why or "its rows don't keep their global position in the epoch")
            node = node.children[0]
    except GraphError as error:
        # Kept by the iterator: without its traceback, which would hold the iterator's frames (a
        # cycle that keeps an abandoned iterator's threads alive until the garbage collector runs).
        return GraphError(str(error))
    except Exception as error:  # noqa: BLE001 - e.g. a user sampler without the built-ins' fields
        return _refuse(node, f"its shape could not be read ({type(error).__name__}: {error})")


# Positions ------------------------------------------------------------------------------------


def remaining(num_rows: int, base: list[list[int]]) -> np.ndarray:
    """The positions of ``[0, num_rows)`` not in the ranges ``base``, ascending (the global order)."""
    mask = np.ones(num_rows, dtype=bool)
    for start, stop in base:
        mask[start:stop] = False
    return np.flatnonzero(mask)


def share_size(left: int, num_shards: int, shard_id: int, equal: bool) -> int:
    """How many of ``left`` remaining positions rank ``shard_id`` is dealt (see :func:`share`)."""
    if left == 0:
        return 0
    if equal:
        return math.ceil(left / num_shards)
    return left // num_shards + (1 if shard_id < left % num_shards else 0)


def share(rest: np.ndarray, num_shards: int, shard_id: int, equal: bool) -> np.ndarray:
    """Rank ``shard_id``'s positions of ``rest``: every ``num_shards``-th from ``shard_id``; with
    ``equal``, padded from the start of ``rest`` to ``ceil(len(rest) / num_shards)`` (as the sampler
    pads shards), else each position once."""
    count = share_size(len(rest), num_shards, shard_id, equal)
    if count == 0:
        return rest[:0]
    return rest[(shard_id + num_shards * np.arange(count, dtype=np.int64)) % len(rest)]


def _ranges(mask: np.ndarray) -> list[list[int]]:
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return [[int(a), int(b)] for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1))]


def epoch_plan(chain: Chain, base: list[list[int]], order: np.ndarray, equal: bool) -> tuple[np.ndarray, np.ndarray]:
    """(source row indices, global keys) of this rank's epoch after the positions ``base`` were
    consumed; ``order`` is the epoch's global order of source rows; ``equal``: as :func:`share`."""
    keys = share(remaining(len(order), base), chain.num_shards, chain.shard_id, equal)
    return order[keys], keys


# States -----------------------------------------------------------------------------------------


def _checksum(part: dict, seed: Any, shard_seed: Any, epoch: Any, row: Any) -> int:
    body = {k: v for k, v in part.items() if k != "check"}
    text = json.dumps([body, seed, shard_seed, epoch, row], sort_keys=True)
    return zlib.crc32(text.encode())


def state_part(chain: Chain, base: list[list[int]], rows_taken: int, seed: int, shard_seed: int, epoch: int,
               equal: bool = True) -> dict:
    """The ``"elastic"`` part of ``get_state()``: ``rows_taken`` consumer rows of this epoch, whose
    share was dealt after ``base`` was consumed, padded to equal shares or not (``equal``: an epoch the
    sampler dealt is padded; one an elastic resume dealt, as it chose)."""
    rows = chain.rows
    left = rows - sum(b - a for a, b in base)
    share_rows = share_size(left, chain.num_shards, chain.shard_id, equal)
    part = {
        "rows": rows, "batch": chain.batch, "shuffle": chain.shuffle, "digest": chain.digest, "data": chain.data,
        "num_shards": chain.num_shards, "shard_id": chain.shard_id,
        "taken": min(rows_taken * chain.batch, share_rows), "base": [list(r) for r in base], "equal": equal,
    }
    part["check"] = _checksum(part, seed, shard_seed, epoch, rows_taken)
    return part


def _bad(message: str) -> ValueError:
    return ValueError(f"elastic resume: {message}")


def check_data(part: dict, chain: Chain) -> None:
    """Refuse a state's ``"elastic"`` part saved from other data than ``chain``'s source reads (another
    dataset with the same rows and columns, another shard of one)."""
    if part.get("data") == chain.data:
        return
    if "data" not in part:
        raise _bad(
            "the state has no data digest (an older minddata saved it), so the files it was saved from can't be "
            "checked. Resume it on the number of ranks that saved it, each rank with its own state"
        )
    names, _ = chain.source.data_identity()
    reads = (f"{len(names)} file(s): {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}" if names
             else "no files")
    raise _bad(
        f"the state was saved from other data than this pipeline reads (data digest {part.get('data')} in the "
        f"state, {chain.data} here; this pipeline reads {reads}). Resume with the files the state was saved "
        "from: the same file names in the same order (the folder, mount point or endpoint they are read from "
        "may differ)"
    )


def check_pipeline(part: dict, chain: Chain, require_data: bool = True) -> None:
    """Refuse a state's ``"elastic"`` part saved by another pipeline than ``chain`` (other rows, ops,
    columns, files, batch size or shuffle), on any number of ranks. Without ``require_data``, a state
    saved before the data digest (an older minddata) passes unchecked for its files."""
    if part.get("digest") != chain.digest or part.get("rows") != chain.rows:
        raise _bad(
            f"the state belongs to another pipeline (ops or dataset differ: {part.get('rows')} rows, digest "
            f"{part.get('digest')}; this pipeline: {chain.rows} rows, digest {chain.digest})"
        )
    if require_data or "data" in part:
        check_data(part, chain)
    if part.get("batch") != chain.batch or part.get("shuffle") != chain.shuffle:
        raise _bad(
            f"the state's batch size {part.get('batch')} / shuffle {part.get('shuffle')} differ from this "
            f"pipeline's ({chain.batch} / {chain.shuffle})"
        )


def check_part(state: dict, chain: Chain) -> dict:
    """The state's ``"elastic"`` part, checked against itself (checksum, ranges) and ``chain``."""
    part = state.get(KEY)
    if not isinstance(part, dict):
        raise _bad(
            "the state has no 'elastic' part: the pipeline it came from can't resume on a different number of "
            f"ranks (or the state is from an older version). Found: {state!r}"
        )
    if part.get("check") != _checksum(part, state.get("seed"), state.get("shard_seed", state.get("seed")),
                                       state.get("epoch"), state.get("row")):
        raise _bad(f"the state's checksum does not match its content: it was altered or corrupted. Found: {state!r}")
    check_pipeline(part, chain)
    if state.get("seed") != state.get("shard_seed", state.get("seed")):
        raise _bad(
            "the run that saved the state had no config.set_seed (its seed and shard seed differ), so its ranks "
            "did not draw alike; elastic resume needs config.set_seed in the original run"
        )
    return part


def merge(states: list[dict], chain: Chain) -> tuple[int, int, list[list[int]]]:
    """(epoch, seed, consumed ranges) from the states of every rank of a job; the ranges cover the
    whole epoch when it was consumed (the caller then starts the next one)."""
    if not states:
        raise _bad("state=[] holds no rank's state; pass the list of every rank's iterator.get_state()")
    parts = [check_part(s, chain) for s in states]
    first, p0 = states[0], parts[0]
    for s, p in zip(states, parts):
        if s.get("seed") != first.get("seed"):
            raise _bad(f"the states have different seeds ({first.get('seed')} and {s.get('seed')}): they come "
                       "from different runs")
        if p["num_shards"] != p0["num_shards"]:
            raise _bad(f"the states come from runs of {p0['num_shards']} and {p['num_shards']} ranks")
    num_shards = p0["num_shards"]
    ids = sorted(p["shard_id"] for p in parts)
    if ids != list(range(num_shards)):
        raise _bad(
            f"the states are from ranks {ids} of a run of {num_shards} ranks; pass the state of every rank "
            f"(0 to {num_shards - 1}) exactly once"
        )
    epoch = min(s["epoch"] for s in states)
    current = [p for s, p in zip(states, parts) if s["epoch"] == epoch]
    base = current[0]["base"]
    if any(p["base"] != base for p in current):
        raise _bad("the states of one epoch disagree on the rows consumed before their shares were dealt: "
                   "they come from different runs")
    # How the shares were dealt: by the sampler (padded) or as an elastic resume chose (states saved
    # before the choice existed were padded).
    equal = current[0].get("equal", True)
    if any(p.get("equal", True) != equal for p in current):
        raise _bad("the states of one epoch disagree on how its shares were dealt: they come from different runs")
    rows = chain.rows
    rest = remaining(rows, base)
    mask = np.ones(rows, dtype=bool)
    mask[rest] = False
    for s, p in zip(states, parts):
        count = share_size(len(rest), num_shards, p["shard_id"], equal)
        taken = p["taken"]
        if s["epoch"] == epoch + 1 and s["row"] == 0:
            taken = count  # this rank finished the epoch (its state points at the next one's start)
        elif s["epoch"] != epoch:
            raise _bad(f"the states are at epochs {epoch} and {s['epoch']}: ranks of one job step together, "
                       "so these come from different runs")
        if not isinstance(taken, int) or not 0 <= taken <= count:
            raise _bad(f"rank {p['shard_id']}'s state took {taken!r} rows of a share of {count}")
        mask[share(rest, num_shards, p["shard_id"], equal)[:taken]] = True
    return epoch, first["seed"], _ranges(mask)


def next_epoch(state: Any) -> Any:
    """``state`` (a consumed end of epoch) moved to the next epoch's start, its elastic part included
    (a list of every rank's states: each of them)."""
    if isinstance(state, list):
        return [next_epoch(one) for one in state]
    moved = {**state, "epoch": state["epoch"] + 1, "row": 0}
    part = state.get(KEY)
    if isinstance(part, dict):
        part = {**part, "taken": 0, "base": [], "equal": True}
        part["check"] = _checksum(part, moved.get("seed"), moved.get("shard_seed", moved.get("seed")),
                                  moved["epoch"], 0)
        moved[KEY] = part
    return moved
