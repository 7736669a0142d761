"""``cache=``: the graph node and the stage that serve a source's or a map's rows from the cache.

The cached subtree is a chain from a source up to the cached node through maps without random ops,
projects and renames, so each of its output rows is a function of one source row id (the sampler's
index, or a generator's position). The stage keys rows by that id:

- each pass it asks the sampler for the pass's ids (as the source would); ids already stored are read
  from the cache, and the source is asked, through its own sampler stage, for the missing ids only;
  rows come out in the sampler's order, so everything above the cache (a random crop, a shuffle)
  sees exactly the rows and row positions of an uncached run, and draws the same random numbers;
- a pass that has every id stored never runs the subtree (no file read, no decode);
- a source read front to back (a generator) is served from the cache once one full pass is stored.

Rows of a map with a random op would differ per epoch, so caching above one is refused when the
graph is built, as in MindSpore. Storage and sharing between pipelines: :mod:`minddata.engine.cache_store`.
"""

from __future__ import annotations

import hashlib
import io
import threading
import types
from contextlib import closing
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from minddata.engine import ir
from minddata.engine.cache_store import CacheStore
from minddata.engine.chunk import Chunk, Chunks, FailedRow
from minddata.engine.runtime import Runtime
from minddata.engine.stages import IndexSourceStage, IterableSourceStage, Stage
from minddata.errors import GraphError

__all__ = ["CacheNode", "CacheStage", "build_cache_stage", "check_cacheable", "fingerprint", "source_of"]

_CHAIN = (ir.MapNode, ir.ProjectNode, ir.RenameNode, ir.CallbackNode)


@dataclass(frozen=True, eq=False, repr=False)  # as ir's nodes: written out for type checkers
class CacheNode(ir._UnaryNode):
    """Rows of ``child`` kept in cache ``session_id`` (``size_mb`` of memory for the session, 0: no
    bound; ``spilling``: rows past it to disk). ``key`` names the cached subtree (:func:`fingerprint`).
    Build it with :meth:`over`, which checks the subtree and takes its key."""

    session_id: int
    size_mb: int
    spilling: bool
    where: str
    key: str
    name: ClassVar[str] = "Cache"

    @classmethod
    def over(cls, child: ir.Node, session_id: int, size_mb: int, spilling: bool, where: str, *,
             fixed_order: bool = False) -> CacheNode:
        check_cacheable(child, where, fixed_order=fixed_order)
        # Taken now, while the source has read nothing: what it loads lazily later (its file list, row
        # counts, decoded blocks) must not make the same pipeline's key differ between runs.
        return cls(child, session_id, size_mb, spilling, where, fingerprint(child))

    @property
    def label(self) -> str:
        return f"Cache(session {self.session_id})"


def _is_random(op: Any) -> bool:
    inner = getattr(op, "transforms", None)
    if isinstance(inner, (list, tuple)) and any(_is_random(o) for o in inner):
        return True
    return bool(getattr(op, "random", False)) and hasattr(op, "device_target")


def source_of(node: ir.Node) -> ir.Node:
    """The node at the bottom of ``node``'s chain of maps, projects and renames."""
    while isinstance(node, _CHAIN):
        node = node.children[0]
    return node


def check_cacheable(node: ir.Node, where: str, *, fixed_order: bool = False) -> None:
    """Raise :class:`GraphError` unless ``node`` is a chain a cache can serve (see the module doc).
    ``fixed_order``: a seeded streamed source below reads in the same order every epoch (no shuffle)."""
    below = node
    while isinstance(below, _CHAIN):
        if isinstance(below, ir.MapNode):
            for op in below.operations:
                if _is_random(op):
                    name = getattr(op, "name", type(op).__name__)
                    raise GraphError(
                        f"{where}: cache is not supported above the random op {name} (its output differs in "
                        f"every epoch, so stored rows would repeat epoch 1's draws). Move {name} to a map after "
                        "the cached one, or cache below it (as in MindSpore)."
                    )
        below = below.children[0]
    if isinstance(below, ir.IterableSourceNode) and below.seeded and not fixed_order:
        raise GraphError(
            f"{where}: cache over {below.name} with shuffle is not supported: the cache replays rows by their "
            "position in the source, which a shuffled read changes every epoch. Use shuffle=False, and shuffle "
            "after the cache (.shuffle(buffer_size))."
        )
    if not isinstance(below, (ir.RandomAccessSourceNode, ir.IterableSourceNode)):
        raise GraphError(
            f"{where}: cache is supported only on a source or on a map whose input comes from a source through "
            f"maps, project and rename; found {below.label} below it. Put the cache on the source or the map "
            "right after it."
        )


# -- the subtree's fingerprint ---------------------------------------------------------------------

_OPAQUE = (
    threading.Lock().__class__,
    threading.RLock().__class__,
    threading.Event,
    threading.Thread,
    io.IOBase,
    types.ModuleType,
)


def _describe(value: Any, out: Any, depth: int = 0) -> None:
    """Feed a description of ``value`` that is stable across processes (no addresses) into ``out``."""
    write = out.update
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        write(repr(value).encode())
        return
    if isinstance(value, np.ndarray):
        write(f"array{value.shape}{value.dtype}".encode())
        if value.dtype.hasobject:
            _describe(value.tolist(), out, depth + 1)
        else:
            write(hashlib.blake2b(np.ascontiguousarray(value).view(np.uint8).reshape(-1).data).digest())
        return
    if isinstance(value, np.generic):
        write(repr(value.item()).encode())
        return
    if depth > 6:
        write(type(value).__qualname__.encode())
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        write(f"{type(value).__name__}[{len(value)}]".encode())
        for item in items:
            _describe(item, out, depth + 1)
        return
    if isinstance(value, dict):
        write(f"dict[{len(value)}]".encode())
        for key in sorted(value, key=repr):
            _describe(key, out, depth + 1)
            _describe(value[key], out, depth + 1)
        return
    if isinstance(value, types.CodeType):
        write(value.co_code + repr(value.co_names).encode())
        _describe(value.co_consts, out, depth + 1)
        return
    if isinstance(value, (types.FunctionType, types.MethodType)):
        func = getattr(value, "__func__", value)
        write(f"{func.__module__}.{func.__qualname__}".encode())
        _describe(func.__code__, out, depth + 1)
        _describe(func.__defaults__, out, depth + 1)
        for cell in func.__closure__ or ():
            try:
                _describe(cell.cell_contents, out, depth + 1)
            except ValueError:  # an empty cell
                pass
        if isinstance(value, types.MethodType):
            _describe(value.__self__, out, depth + 1)
        return
    kind = type(value)
    write(f"{kind.__module__}.{kind.__qualname__}".encode())
    if isinstance(value, _OPAQUE) or isinstance(value, type):
        return
    if hasattr(value, "__array__"):  # tensors, data frames: their values
        try:
            _describe(np.asarray(value), out, depth + 1)
            return
        except Exception:  # noqa: BLE001 - e.g. a tensor on a device: described by its fields below
            pass
    fields = dict(getattr(value, "__dict__", {}))
    for slot in getattr(kind, "__slots__", ()):
        if hasattr(value, slot):
            fields[slot] = getattr(value, slot)
    if not fields:
        # An extension object without fields: its repr, unless that is only its address.
        text = repr(value)
        if " at 0x" not in text:
            write(text.encode())
    for key in sorted(fields):
        # Memoised reads (decoded blocks, open handles) change as a pipeline runs: not part of the data.
        if "cache" in key.lower() or "lock" in key.lower() or "handle" in key.lower():
            continue
        write(key.encode())
        _describe(fields[key], out, depth + 1)


def fingerprint(node: ir.Node) -> str:
    """A short hex key naming what ``node``'s chain produces: its source (kind, files, arguments) and
    every op on the way. Two pipelines of one session share rows only when their keys match."""
    out = hashlib.blake2b(digest_size=8)
    while True:
        out.update(f"{type(node).__name__}:{node.columns}".encode())
        if isinstance(node, ir.MapNode):
            _describe(node.operations, out)
            _describe([node.resolved_inputs(), node.resolved_outputs()], out)
        elif isinstance(node, ir.ProjectNode):
            _describe(node.keep, out)
        elif isinstance(node, ir.RandomAccessSourceNode):
            _describe([node.name, node.fetch], out)
            return out.hexdigest()
        elif isinstance(node, ir.IterableSourceNode):
            _describe([node.name, node.num_samples, node.open_iter, node.to_row], out)
            return out.hexdigest()
        node = node.children[0]


# -- the stage ---------------------------------------------------------------------------------------


class _PassSampler:
    """Stands in for a source's sampler: gives the ids the cache misses in the pass it was set for."""

    def __init__(self, sampler: Any):
        self.sampler = sampler
        self.override: tuple[int, np.ndarray] | None = None

    def _indices(self, num_rows: int, seed: int, pass_index: int) -> np.ndarray:
        override = self.override
        if override is not None and override[0] == pass_index:
            return override[1]
        return self.sampler._indices(num_rows, seed, pass_index)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sampler, name)


class CacheStage(Stage):
    """Serves the chain below it from a :class:`CacheStore`, filling the store with what it misses."""

    fast_skip = True

    def __init__(self, rt: Runtime, child: Stage, store: CacheStore, chunk_rows: int, label: str):
        super().__init__(rt, [child], label)
        self.store = store
        leaf = child
        while leaf.children:
            leaf = leaf.children[0]
        self.leaf = leaf
        # The source's own chunking (smaller for heavy rows such as images), so the stages above get
        # the same units of work as without the cache.
        self.chunk_rows = getattr(leaf, "chunk_rows", chunk_rows)
        if isinstance(leaf, IndexSourceStage):
            self.sampler = _PassSampler(leaf.sampler)
            leaf.sampler = self.sampler
        elif not isinstance(leaf, IterableSourceStage):
            raise GraphError(f"{label}: the cached node does not read from a source stage ({leaf.label})")
        # "replace" fills a failed row with an earlier one: not a row of its own id, so not stored.
        self.storing = rt.error_mode != "replace"
        # Ids this pipeline tried to store and could not (no room): not tried again every pass.
        self.unstorable: set[int] = set()
        rt.on_close(store.close)

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        self.store.refresh()
        if isinstance(self.leaf, IndexSourceStage):
            yield from self._run_sampled(self.leaf, skip)
        else:
            yield from self._run_streamed(skip)

    # A source read through a sampler ---------------------------------------------------------------

    def _run_sampled(self, leaf: IndexSourceStage, skip: int) -> Chunks:
        store = self.store
        leaf_pass = leaf.passes
        ids = np.asarray(self.sampler.sampler._indices(leaf.num_rows, leaf.seed, leaf_pass), dtype=np.int64)[
            skip:
        ]
        hit = store.contains(ids)
        if hit.all():
            self.children[0].skip_passes(1)
            for start in range(0, len(ids), self.chunk_rows):
                self.rt.check()
                yield self._from_store(ids[start : start + self.chunk_rows].tolist())
            return
        missing = ids[~hit]
        self.sampler.override = (leaf_pass, missing)
        filler = store.begin_fill() if self.storing else None
        try:
            with closing(self.children[0].run()) as source:
                yield from self._merge(ids.tolist(), hit.tolist(), source, filler)
        finally:
            if filler is not None:
                filler.commit()

    def _merge(
        self, ids: list[int], hit: list[bool], source: Chunks, filler: Any
    ) -> Chunks:
        """Rows of ``ids`` in order: stored ones from the store, the others from ``source``, which reads
        the missing ids in their order (a row it drops, under error_samples_mode "skip", is dropped
        here too: the next row it gives is a later missing id)."""
        missing = [i for i, h in zip(ids, hit) if not h]
        arrived: dict[int, tuple[Any, str | None]] = {}  # position in ``missing`` → (row, origin)
        filled = 0  # positions of ``missing`` the source has answered (a row, or passed over: dropped)
        wanted = 0  # position in ``missing`` of the next miss to emit
        exhausted = False
        for start in range(0, len(ids), self.chunk_rows):
            part, part_hit = ids[start : start + self.chunk_rows], hit[start : start + self.chunk_rows]
            hits = [i for i, h in zip(part, part_hit) if h]
            stored = dict(zip(hits, self.store.get(hits))) if hits else {}
            rows: list[Any] = []
            out_ids: list[int] = []
            origins: list[str | None] = []
            for row_id, is_hit in zip(part, part_hit):
                if is_hit:
                    row, origin = stored[row_id]
                else:
                    while filled <= wanted and not exhausted:
                        chunk = next(source, None)
                        if chunk is None:
                            exhausted = True
                            break
                        filled = self._place(chunk, missing, filled, arrived)
                        self._store(chunk, filler)
                    got = arrived.pop(wanted, None)
                    wanted += 1
                    if got is None:
                        continue
                    row, origin = got
                rows.append(row)
                out_ids.append(row_id)
                origins.append(origin)
            if rows:
                yield Chunk(rows, out_ids, origins if any(o is not None for o in origins) else None)

    def _place(self, chunk: Chunk, missing: list[int], filled: int, arrived: dict) -> int:
        """File ``chunk``'s rows under their positions in ``missing`` from ``filled`` on; returns the
        next unanswered position."""
        if chunk.ids is None:
            raise GraphError(f"{self.label}: rows reached the cache without their source row ids")
        origins = chunk.origins or [None] * len(chunk)
        for row, row_id, origin in zip(chunk.rows, chunk.ids, origins):
            while filled < len(missing) and missing[filled] != row_id:
                filled += 1  # dropped by the source's error policy
            if filled == len(missing):
                raise GraphError(
                    f"{self.label}: the source gave row {row_id}, which this pass did not ask for"
                )
            arrived[filled] = (row, origin)
            filled += 1
        return filled

    def _store(self, chunk: Chunk, filler: Any) -> None:
        if filler is None:
            return
        if chunk.ids is None:
            raise GraphError(f"{self.label}: rows reached the cache without their source row ids")
        origins = chunk.origins or [None] * len(chunk)
        for row, row_id, origin in zip(chunk.rows, chunk.ids, origins):
            if type(row) is not FailedRow and row_id not in self.unstorable:
                if not filler.put(row_id, row, origin):
                    self.unstorable.add(row_id)

    def _from_store(self, ids: list[int]) -> Chunk:
        got = self.store.get(ids)
        origins = [origin for _, origin in got]
        return Chunk([row for row, _ in got], ids, origins if any(o is not None for o in origins) else None)

    # A source read front to back --------------------------------------------------------------------

    def _run_streamed(self, skip: int) -> Chunks:
        store = self.store
        length = store.complete_length
        if length is not None:
            ids = np.arange(skip, length, dtype=np.int64)
            if store.contains(ids).all():
                self.children[0].skip_passes(1)
                for start in range(0, len(ids), self.chunk_rows):
                    self.rt.check()
                    yield self._from_store(ids[start : start + self.chunk_rows].tolist())
                return
        filler = store.begin_fill() if self.storing else None
        produced = skip
        complete = False
        try:
            with closing(self.children[0].run(skip)) as source:
                for chunk in source:
                    self._store(chunk, filler)
                    produced += len(chunk)
                    yield chunk
            # A full pass from its start, every row delivered: later passes can be served whole.
            complete = skip == 0 and self.rt.error_mode == "raise" and not self.unstorable
        finally:
            if filler is not None:
                filler.commit(produced if complete else None)


def build_cache_stage(rt: Runtime, node: CacheNode, child: Stage, chunk_rows: int) -> Stage:
    """The stage of ``node`` over its child's built stages."""
    store = CacheStore(node.session_id, node.key, node.size_mb << 20, node.spilling)
    return CacheStage(rt, child, store, chunk_rows, node.label)
