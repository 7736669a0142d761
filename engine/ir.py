"""The dataflow graph the public API builds: immutable nodes, checked and compiled on first iteration.

Building nodes starts nothing. :func:`minddata.engine.compiler.compile_plan` validates the graph,
optimizes it and turns it into stages. A node may feed several consumers (``zip(ds, ds.skip(1))``):
each use compiles to its own stages, iterated independently.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from minddata.errors import ColumnNotFoundError, GraphError
from minddata.ops.base import op_label

__all__ = [
    "Node",
    "RandomAccessSourceNode",
    "IterableSourceNode",
    "OnlineSourceNode",
    "MapNode",
    "BatchNode",
    "BucketBatchNode",
    "ShuffleNode",
    "RepeatNode",
    "TakeNode",
    "SkipNode",
    "ZipNode",
    "ConcatNode",
    "ProjectNode",
    "RenameNode",
    "FilterNode",
    "DevicePart",
    "one_pass",
    "rewrite",
    "column_layout",
]


def column_layout(columns: list[str], input_columns: list[str], output_columns: list[str]) -> list[tuple[int, int]]:
    """Where each output column comes from, as MindSpore 2.x lays them out.

    Returns ``[(0, i) | (1, k)]``: ``(0, i)`` keeps input-row column ``i``, ``(1, k)`` takes op output
    ``k``. With as many outputs as inputs, output ``k`` takes the place of input column ``k``;
    otherwise the outputs come first, then the untouched columns in their order.
    """
    index = {name: i for i, name in enumerate(columns)}
    if len(input_columns) == len(output_columns):
        slot = {index[name]: k for k, name in enumerate(input_columns)}
        return [(1, slot[i]) if i in slot else (0, i) for i in range(len(columns))]
    used = {index[name] for name in input_columns}
    return [(1, k) for k in range(len(output_columns))] + [(0, i) for i in range(len(columns)) if i not in used]


# Every node is a frozen dataclass: the optimizer's passes derive new nodes with
# ``dataclasses.replace`` (or :meth:`Node.with_children`) and never change one in place, so a node
# the user's graph shares between two consumers stays as built. ``eq=False``: nodes compare (and
# hash) by identity, as graph vertices do. The decorator is written out on each node class (type
# checkers recognize a dataclass only by the decorator itself), here and for node classes defined
# elsewhere.


@dataclass(frozen=True)
class DevicePart:
    """A slice ``ops[start:end]`` of a map's ops and how it runs: ``kind`` ``"row"`` or ``"segment"``
    (a batch on a device driver); for ``"segment"``, the ``backend`` (see :mod:`minddata.ops.gpu.drivers`)."""

    kind: str
    start: int
    end: int
    backend: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class Node:
    """A node of the graph. ``columns`` is its output schema (names, in order).

    ``fusion_notes``: what the optimizer did to this node and why (``explain()`` prints them); empty
    in the user's graph. ``source_call``: the dataset constructor call that made it, if any.
    """

    name: ClassVar[str] = "Node"
    fusion_notes: tuple[str, ...] = field(default=(), kw_only=True)
    # The public dataset constructor call that built this node (minddata.dataset._recorded), read by
    # minddata.serialize; None for nodes the passes make. It does not travel by pickle.
    source_call: Any = field(default=None, kw_only=True)

    @property
    def children(self) -> tuple[Node, ...]:
        return ()

    def with_children(self, children: Sequence[Node], **changes: Any) -> Node:
        """A new node like this one over ``children`` (as many as it has), with ``changes`` to its fields."""
        return dataclasses.replace(self, **changes)

    @functools.cached_property
    def _schema(self) -> tuple[str, ...]:
        return tuple(self._compute_columns())

    @property
    def columns(self) -> list[str]:
        return list(self._schema)

    def _compute_columns(self) -> list[str]:
        return self.children[0].columns

    @property
    def label(self) -> str:
        return self.name

    def static_size(self) -> int | None:
        """Rows per epoch when known without running the pipeline, else ``None``."""
        return self.children[0].static_size() if self.children else None

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True, eq=False, repr=False)
class _UnaryNode(Node):
    """A node over one input, ``child``."""

    child: Node

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def with_children(self, children: Sequence[Node], **changes: Any) -> Node:
        (child,) = children
        return dataclasses.replace(self, child=child, **changes)


@dataclass(frozen=True, eq=False, repr=False)
class _ManyInputNode(Node):
    """A node over several inputs (zip, concat)."""

    inputs: list[Node]

    @property
    def children(self) -> tuple[Node, ...]:
        return tuple(self.inputs)

    def with_children(self, children: Sequence[Node], **changes: Any) -> Node:
        return dataclasses.replace(self, inputs=list(children), **changes)


def one_pass(node: Node) -> Node:
    """``node``'s graph with every endless ``repeat(-1)`` read once, for counting the rows of one
    pass (MindSpore's ``get_dataset_size`` counts an endless repeat as one pass). Nodes without an
    endless repeat below them are shared, not copied."""
    if isinstance(node, RepeatNode) and node.count < 0:
        return one_pass(node.child)
    children = [one_pass(child) for child in node.children]
    if all(new is old for new, old in zip(children, node.children)):
        return node
    return node.with_children(children)


def rewrite(node: Node, fn: Callable[[Node], Node], *, top_down: bool = False) -> Node:
    """``node``'s tree with ``fn`` applied to every node: children first (each node then sees its
    rewritten children), or with ``top_down`` parents first (``fn``'s result's children are then
    rewritten). Subtrees that ``fn`` leaves as they are stay shared."""
    if top_down:
        node = fn(node)
    children = [rewrite(child, fn, top_down=top_down) for child in node.children]
    if any(new is not old for new, old in zip(children, node.children)):
        node = node.with_children(children)
    return node if top_down else fn(node)


def _check_columns(node: Node, wanted: list[str], argument: str) -> None:
    have = node.children[0].columns
    missing = [c for c in wanted if c not in have]
    if missing:
        raise ColumnNotFoundError(
            f"{node.label}: {argument} names column(s) {missing} that the input does not have. "
            f"Input columns: {have}."
        )
    dupes = sorted({c for c in wanted if wanted.count(c) > 1})
    if dupes:
        raise GraphError(f"{node.label}: {argument} names column(s) {dupes} more than once. Found: {wanted}")


@dataclass(frozen=True, eq=False, repr=False)
class RandomAccessSourceNode(Node):
    """A source with ``num_rows`` rows read by index through a sampler.

    ``fetch(ids) -> rows`` reads rows; ``origins(ids)`` gives their files (or ``None``). ``inline``
    sources are cheap enough to read in the pulling thread; others get ``num_workers`` workers
    (processes when ``python_multiprocessing``). ``chunk_rows``: rows per chunk at most (heavy rows
    such as encoded images move in smaller chunks). ``requests_in_flight``: rows are read over the network, so many requests at a time per worker.
    """

    name: str = field()  # type: ignore[misc]  # a source is named per instance (its dataset class)
    column_names: list[str]
    num_rows: Callable[[], int]
    sampler: Any
    fetch: Callable[[list[int]], list[tuple]]
    origins: Callable[[list[int]], list[str] | None] | None = field(default=None, kw_only=True)
    num_workers: int = field(default=1, kw_only=True)
    inline: bool = field(default=False, kw_only=True)
    python_multiprocessing: bool = field(default=False, kw_only=True)
    chunk_rows: int | None = field(default=None, kw_only=True)
    # For reads that wait on the network (object storage): the requests each reading worker keeps in
    # flight, read when the plan is built; the engine starts that many chunks' reads ahead of each
    # worker (engine/readahead.py). None: local reads.
    requests_in_flight: Callable[[], int] | None = field(default=None, kw_only=True)
    # For sources that index their files before the first row (WebDataset's remote shards):
    # ``index_files_with(run_per_file)`` has an executor with workers of its own index them there,
    # ``run_per_file(index_file, files)`` giving each file's index; None: the source indexes them itself.
    index_files_with: Callable[[Callable[[Callable[[str], Any], list[str]], list[Any]]], None] | None = field(
        default=None, kw_only=True)

    def _compute_columns(self) -> list[str]:
        return list(self.column_names)

    def static_size(self) -> int | None:
        return self.sampler._num_samples(self.num_rows())

    def with_sampler(self, sampler: Any) -> RandomAccessSourceNode:
        return dataclasses.replace(self, sampler=sampler)

    def data_identity(self) -> tuple[list[str], list[int]]:
        """What names this source's data, so that an elastic resume refuses a state saved from other
        data (engine/elastic.py): the files the rows come from, in row order, each named relative to
        the files' common folder and given with its number of rows. The same files under another
        folder, mount point or endpoint have the same identity. Read from ``origins``, the file names
        the source has already listed (no I/O of its own); ``([], [])`` for a source without files
        (generators, arrays in memory)."""
        rows = self.num_rows()
        paths = self.origins(range(rows)) if self.origins is not None and rows else None  # type: ignore[arg-type]  # a range is a sequence of ints
        if paths is None or len(paths) != rows:
            return [], []
        per_row = np.empty(rows, dtype=object)
        per_row[:] = paths
        first = np.ones(rows, dtype=bool)
        first[1:] = per_row[1:] != per_row[:-1]  # a file's rows are consecutive: one entry per run
        starts = np.flatnonzero(first)
        files = [str(f) for f in per_row[starts].tolist()]
        counts = np.diff(np.append(starts, rows)).tolist()
        # The folder every file is under (the common prefix of the lowest and highest name is every
        # name's), cut at its last separator: a lone file keeps its base name.
        prefix = os.path.commonprefix([min(files), max(files)])
        cut = max(prefix.rfind("/"), prefix.rfind("\\")) + 1
        return [f[cut:] for f in files], counts


@dataclass(frozen=True, eq=False, repr=False)
class IterableSourceNode(Node):
    """A source read front to back: ``open_iter(pass_index)`` gives a fresh iterator per pass.

    ``seeded`` sources are opened as ``open_iter(pass_index, seed=...)``: the seed is the pipeline's,
    mixed with the node's position, so every shard of a data-parallel job draws the same order. A
    ``sharded`` source draws from the runtime's shard seed, which every rank shares even without
    config.set_seed (engine/runtime.py). ``record_reads`` (``None`` when the format is read front to
    back only) reads the same rows by record number, for an executor that splits a pass into tasks:
    ``order(pass_index, seed, row_seed)`` gives the record numbers of a pass in the stream's order,
    ``fetch(numbers)`` the rows, ``origins(numbers)`` their files.
    """

    name: str = field()  # type: ignore[misc]  # a source is named per instance (its dataset class)
    column_names: list[str]
    open_iter: Callable[..., Iterator[Any]]
    to_row: Callable[[Any, int], tuple]
    num_samples: int | None = None
    size: Callable[[], int | None] | None = None
    seeded: bool = False
    sharded: bool = False
    record_reads: Any = field(default=None, kw_only=True)

    def _compute_columns(self) -> list[str]:
        return list(self.column_names)

    def static_size(self) -> int | None:
        n = self.size() if self.size is not None else None
        if n is None:
            return None
        return n if self.num_samples is None else min(n, self.num_samples)


@dataclass(frozen=True, eq=False, repr=False)
class OnlineSourceNode(Node):
    """Rows pushed in by an online session (inference service) instead of read from storage."""

    name = "OnlineDataset"
    column_names: list[str]

    def _compute_columns(self) -> list[str]:
        return list(self.column_names)


@dataclass(frozen=True, eq=False, repr=False)
class MapNode(_UnaryNode):
    """``map(operations, input_columns, output_columns, ...)``.

    The keyword-only fields are the lowering passes' (:mod:`minddata.engine.optimizer`,
    :mod:`minddata.engine.placement`); the user's graph leaves them at their defaults:

    - ``op_positions``: each op's position in the plan, which keys its random stream (assigned
      before any rewrite, so fused and unfused plans draw alike);
    - ``reads_source``: the map reads its source's rows in its own workers (source absorption);
    - ``device_parts``: the map cut into runs of ops per device (:class:`DevicePart`);
    - ``device_output``: a device segment ending the map hands its rows on in device memory;
    - ``segment_rows``: rows per run of a device segment (``None``: the default);
    - ``inline``: the map runs in the thread pulling its rows, not in worker threads (a step of a
      Ray task, where the tasks are the parallelism).
    """

    name = "Map"
    operations: list[Any]
    input_columns: list[str] | None
    output_columns: list[str] | None
    num_workers: int
    python_multiprocessing: bool
    op_positions: list[int] = field(default_factory=list, kw_only=True)
    reads_source: bool = field(default=False, kw_only=True)
    device_parts: tuple[DevicePart, ...] = field(default=(), kw_only=True)
    device_output: bool = field(default=False, kw_only=True)
    segment_rows: int | None = field(default=None, kw_only=True)
    inline: bool = field(default=False, kw_only=True)

    @property
    def label(self) -> str:
        return f"Map[{', '.join(op_label(op) for op in self.operations)}]"

    def resolved_inputs(self) -> list[str]:
        # MindSpore: without input_columns a map reads the first column only.
        return list(self.input_columns) if self.input_columns is not None else self.child.columns[:1]

    def resolved_outputs(self) -> list[str]:
        return list(self.output_columns) if self.output_columns is not None else self.resolved_inputs()

    def _compute_columns(self) -> list[str]:
        inputs = self.resolved_inputs()
        _check_columns(self, inputs, "input_columns")
        first = self.operations[0]
        wanted = getattr(first, "num_inputs", -1) if hasattr(first, "device_target") else -1
        if wanted >= 0 and wanted != len(inputs):
            given = "input_columns=None passes the first column" if self.input_columns is None else "input_columns names"
            raise GraphError(
                f"{self.label}: {type(first).__name__} takes {wanted} input column(s), but {given}: {inputs}. "
                f"Set input_columns to the {wanted} column(s) it should read."
            )
        outputs = self.resolved_outputs()
        have = self.child.columns
        layout = column_layout(have, inputs, outputs)
        names = [outputs[k] if src else have[k] for src, k in layout]
        dupes = sorted({c for c in names if names.count(c) > 1})
        if dupes:
            raise GraphError(
                f"{self.label}: output_columns {outputs} clash with column(s) {dupes} the map keeps. "
                "Rename the outputs or include those columns in input_columns."
            )
        return names


@dataclass(frozen=True, eq=False, repr=False)
class BatchNode(_UnaryNode):
    """``batch``. ``epilogues`` (the optimizer's): column index → ``(Normalize op, to CHW, dtype)``
    applied while the column is stacked into the batch buffer."""

    name = "Batch"
    batch_size: int | Callable[[Any], int]
    drop_remainder: bool
    num_workers: int
    per_batch_map: Callable[..., Any] | None
    input_columns: list[str] | None
    output_columns: list[str] | None
    pad_info: dict | None = None
    epilogues: dict[int, tuple[Any, bool, Any]] = field(default_factory=dict, kw_only=True)

    @property
    def label(self) -> str:
        size = self.batch_size if not callable(self.batch_size) else "callable"
        return f"Batch({size})"

    def _compute_columns(self) -> list[str]:
        have = self.child.columns
        if self.per_batch_map is None:
            return have
        inputs = list(self.input_columns) if self.input_columns is not None else have
        _check_columns(self, inputs, "input_columns")
        outputs = list(self.output_columns) if self.output_columns is not None else inputs
        layout = column_layout(have, inputs, outputs)
        return [outputs[k] if src else have[k] for src, k in layout]

    def static_size(self) -> int | None:
        n = self.child.static_size()
        if n is None or callable(self.batch_size):
            return None
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)


@dataclass(frozen=True, eq=False, repr=False)
class BucketBatchNode(_UnaryNode):
    """``bucket_batch_by_length``: rows grouped by length into buckets, each batched and padded."""

    name = "BucketBatch"
    column_names: list[str]
    bucket_boundaries: list[int]
    bucket_batch_sizes: list[int]
    element_length_function: Callable[..., Any] | None
    pad_info: dict | None
    pad_to_bucket_boundary: bool
    drop_remainder: bool

    @property
    def label(self) -> str:
        return f"BucketBatch({self.bucket_boundaries})"

    def _compute_columns(self) -> list[str]:
        _check_columns(self, self.column_names, "column_names")
        if self.pad_info:
            _check_columns(self, list(self.pad_info), "pad_info")
        return self.child.columns

    def static_size(self) -> int | None:
        return None


@dataclass(frozen=True, eq=False, repr=False)
class ShuffleNode(_UnaryNode):
    name = "Shuffle"
    buffer_size: int

    @property
    def label(self) -> str:
        return f"Shuffle({self.buffer_size})"


@dataclass(frozen=True, eq=False, repr=False)
class RepeatNode(_UnaryNode):
    name = "Repeat"
    count: int

    @property
    def label(self) -> str:
        return f"Repeat({self.count})"

    def static_size(self) -> int | None:
        n = self.child.static_size()
        if n is None:
            return None
        return n * self.count if self.count >= 0 else None


@dataclass(frozen=True, eq=False, repr=False)
class TakeNode(_UnaryNode):
    name = "Take"
    count: int

    @property
    def label(self) -> str:
        return f"Take({self.count})"

    def static_size(self) -> int | None:
        n = self.child.static_size()
        if self.count < 0:
            return n
        return self.count if n is None else min(n, self.count)


@dataclass(frozen=True, eq=False, repr=False)
class SkipNode(_UnaryNode):
    name = "Skip"
    count: int

    @property
    def label(self) -> str:
        return f"Skip({self.count})"

    def static_size(self) -> int | None:
        n = self.child.static_size()
        return None if n is None else max(0, n - self.count)


@dataclass(frozen=True, eq=False, repr=False)
class ZipNode(_ManyInputNode):
    name = "Zip"

    def _compute_columns(self) -> list[str]:
        names: list[str] = []
        for i, child in enumerate(self.inputs):
            clash = [c for c in child.columns if c in names]
            if clash:
                raise GraphError(
                    f"Zip: input {i} ({child.label}) has column(s) {clash} that an earlier input already has. "
                    "Column names must be unique across zipped datasets: rename() or project() one of them."
                )
            names.extend(child.columns)
        return names

    def static_size(self) -> int | None:
        sizes = [child.static_size() for child in self.inputs]
        return None if any(s is None for s in sizes) else min(sizes)  # type: ignore[type-var]  # no None: any() checked


@dataclass(frozen=True, eq=False, repr=False)
class ConcatNode(_ManyInputNode):
    name = "Concat"

    def _compute_columns(self) -> list[str]:
        first = self.inputs[0].columns
        for i, child in enumerate(self.inputs[1:], start=1):
            if child.columns != first:
                raise GraphError(
                    f"Concat: input {i} ({child.label}) has columns {child.columns}, but input 0 has {first}. "
                    "Concatenated datasets need the same column names in the same order: project() or "
                    "rename() them first."
                )
        return first

    def static_size(self) -> int | None:
        sizes = [child.static_size() for child in self.inputs]
        return None if any(s is None for s in sizes) else sum(sizes)  # type: ignore[arg-type]  # no None: any() checked


@dataclass(frozen=True, eq=False, repr=False)
class ProjectNode(_UnaryNode):
    """``project(columns)``: ``keep`` names the columns kept, in their new order."""

    name = "Project"
    keep: list[str]

    def _compute_columns(self) -> list[str]:
        _check_columns(self, self.keep, "columns")
        return list(self.keep)


@dataclass(frozen=True, eq=False, repr=False)
class RenameNode(_UnaryNode):
    name = "Rename"
    input_columns: list[str]
    output_columns: list[str]

    def _compute_columns(self) -> list[str]:
        _check_columns(self, self.input_columns, "input_columns")
        mapping = dict(zip(self.input_columns, self.output_columns))
        names = [mapping.get(c, c) for c in self.child.columns]
        dupes = sorted({c for c in names if names.count(c) > 1})
        if dupes:
            raise GraphError(f"Rename: the new names give duplicate column(s) {dupes}. Columns after rename: {names}")
        return names


@dataclass(frozen=True, eq=False, repr=False)
class FilterNode(_UnaryNode):
    name = "Filter"
    predicate: Callable[..., Any]
    input_columns: list[str] | None
    num_workers: int

    def _compute_columns(self) -> list[str]:
        if self.input_columns is not None:
            _check_columns(self, self.input_columns, "input_columns")
        return self.child.columns

    def static_size(self) -> int | None:
        return None


# -- nodes of MindSpore's flow-control operations (stages in minddata.engine.flow) -----------------


@dataclass(frozen=True, eq=False, repr=False)
class ShardRowsNode(_UnaryNode):
    """``use_sampler(DistributedSampler(n, i, shuffle=False))`` on a concat: row ``k`` of a pass goes
    to shard ``k % n`` (MindSpore's concat sharding, which also shards PaddedDataset)."""

    name = "UseSampler"
    num_shards: int
    shard_id: int

    @property
    def label(self) -> str:
        return f"UseSampler(shard {self.shard_id} of {self.num_shards})"

    def static_size(self) -> int | None:
        n = self.child.static_size()
        return None if n is None else max(0, -(-(n - self.shard_id) // self.num_shards))


@dataclass(frozen=True, eq=False, repr=False)
class FlatMapNode(_UnaryNode):
    """``flat_map(func)``: ``rows_of(*row)`` gives the rows that replace each input row; ``column_names``
    is computed on first use by ``columns_of()`` (it runs ``func`` once)."""

    name = "FlatMap"
    rows_of: Callable[..., Any]
    columns_of: Callable[[], list[str]]

    def _compute_columns(self) -> list[str]:
        return list(self.columns_of())

    def static_size(self) -> int | None:
        return None


@dataclass(frozen=True, eq=False, repr=False)
class SyncWaitNode(_UnaryNode):
    """``sync_wait``: rows pass while ``gate`` allows; ``sync_update`` opens it further."""

    name = "SyncWait"
    condition_name: str
    gate: Any

    @property
    def label(self) -> str:
        return f"SyncWait({self.condition_name!r})"


@dataclass(frozen=True, eq=False, repr=False)
class CallbackNode(_UnaryNode):
    """Calls a map's dataset callbacks (``map(callbacks=...)``): ``where="begin"`` below the map
    (``ds_begin``, ``ds_epoch_begin``, ``ds_step_begin``), ``"end"`` above it (``ds_step_end``,
    ``ds_epoch_end``). ``runner`` holds the callbacks and the step counters both share."""

    name = "Callbacks"
    runner: Any
    where: str

    @property
    def label(self) -> str:
        return f"Callbacks[{self.where}]"
