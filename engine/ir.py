"""The dataflow graph the public API builds: immutable nodes, checked and compiled on first iteration.

Building nodes starts nothing. :func:`minddata.engine.compiler.compile_plan` validates the graph,
optimizes it and turns it into stages. A node may feed several consumers (``zip(ds, ds.skip(1))``):
each use compiles to its own stages, iterated independently.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from minddata.errors import ColumnNotFoundError, GraphError

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
    "one_pass",
]


class Node:
    """A node of the graph. ``columns`` is its output schema (names, in order)."""

    name = "Node"

    def __init__(self, children: list[Node]):
        self.children = children
        self._columns: list[str] | None = None

    @property
    def columns(self) -> list[str]:
        if self._columns is None:
            self._columns = self._compute_columns()
        return list(self._columns)

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


def one_pass(node: Node) -> Node:
    """``node``'s graph with every endless ``repeat(-1)`` read once, for counting the rows of one
    pass (MindSpore's ``get_dataset_size`` counts an endless repeat as one pass). Nodes without an
    endless repeat below them are shared, not copied."""
    if isinstance(node, RepeatNode) and node.count < 0:
        return one_pass(node.children[0])
    children = [one_pass(child) for child in node.children]
    if all(new is old for new, old in zip(children, node.children)):
        return node
    clone = copy.copy(node)
    clone.children = children
    clone._columns = None
    return clone


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


class RandomAccessSourceNode(Node):
    """A source with ``num_rows`` rows read by index through a sampler.

    ``fetch(ids) -> rows`` reads rows; ``origins(ids)`` gives their files (or ``None``). ``inline``
    sources are cheap enough to read in the pulling thread; others get ``num_workers`` workers
    (processes when ``python_multiprocessing``).
    """

    def __init__(
        self,
        name: str,
        column_names: list[str],
        num_rows: Callable[[], int],
        sampler: Any,
        fetch: Callable[[list[int]], list[tuple]],
        *,
        origins: Callable[[list[int]], list[str] | None] | None = None,
        num_workers: int = 1,
        inline: bool = False,
        python_multiprocessing: bool = False,
        chunk_rows: int | None = None,
    ):
        super().__init__([])
        self.name = name
        # Rows per chunk at most (heavy rows such as encoded images move in smaller chunks).
        self.chunk_rows = chunk_rows
        self._column_names = list(column_names)
        self.num_rows = num_rows
        self.sampler = sampler
        self.fetch = fetch
        self.origins = origins
        self.num_workers = num_workers
        self.inline = inline
        self.python_multiprocessing = python_multiprocessing

    def _compute_columns(self) -> list[str]:
        return list(self._column_names)

    def static_size(self) -> int | None:
        return self.sampler._num_samples(self.num_rows())

    def with_sampler(self, sampler: Any) -> RandomAccessSourceNode:
        clone = RandomAccessSourceNode.__new__(RandomAccessSourceNode)
        clone.__dict__.update(self.__dict__)
        clone.sampler = sampler
        clone._columns = None
        return clone


class IterableSourceNode(Node):
    """A source read front to back: ``open_iter(pass_index)`` gives a fresh iterator per pass."""

    def __init__(
        self,
        name: str,
        column_names: list[str],
        open_iter: Callable[[int], Iterator[Any]],
        to_row: Callable[[Any, int], tuple],
        num_samples: int | None = None,
        size: Callable[[], int | None] | None = None,
        seeded: bool = False,
        sharded: bool = False,
    ):
        super().__init__([])
        self.name = name
        self._column_names = list(column_names)
        self.open_iter = open_iter
        self.to_row = to_row
        self.num_samples = num_samples
        self.size = size
        # Seeded sources are opened as ``open_iter(pass_index, seed=...)``: the seed is the pipeline's,
        # mixed with the node's position, so every shard of a data-parallel job draws the same order.
        self.seeded = seeded
        # A sharded source draws from the runtime's shard seed, which every rank shares even without
        # config.set_seed (engine/runtime.py).
        self.sharded = sharded

    def _compute_columns(self) -> list[str]:
        return list(self._column_names)

    def static_size(self) -> int | None:
        n = self.size() if self.size is not None else None
        if n is None:
            return None
        return n if self.num_samples is None else min(n, self.num_samples)


class OnlineSourceNode(Node):
    """Rows pushed in by an online session (inference service) instead of read from storage."""

    name = "OnlineDataset"

    def __init__(self, column_names: list[str]):
        super().__init__([])
        self._column_names = list(column_names)

    def _compute_columns(self) -> list[str]:
        return list(self._column_names)


class MapNode(Node):
    name = "Map"

    def __init__(
        self,
        child: Node,
        operations: list[Any],
        input_columns: list[str] | None,
        output_columns: list[str] | None,
        num_workers: int,
        python_multiprocessing: bool,
    ):
        super().__init__([child])
        self.operations = operations
        self.input_columns = input_columns
        self.output_columns = output_columns
        self.num_workers = num_workers
        self.python_multiprocessing = python_multiprocessing

    @property
    def label(self) -> str:
        from minddata.engine.mapfn import op_label

        return f"Map[{', '.join(op_label(op) for op in self.operations)}]"

    def resolved_inputs(self) -> list[str]:
        # MindSpore: without input_columns a map reads the first column only.
        return list(self.input_columns) if self.input_columns is not None else self.children[0].columns[:1]

    def resolved_outputs(self) -> list[str]:
        return list(self.output_columns) if self.output_columns is not None else self.resolved_inputs()

    def _compute_columns(self) -> list[str]:
        from minddata.engine.mapfn import column_layout

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
        have = self.children[0].columns
        layout = column_layout(have, inputs, outputs)
        names = [outputs[k] if src else have[k] for src, k in layout]
        dupes = sorted({c for c in names if names.count(c) > 1})
        if dupes:
            raise GraphError(
                f"{self.label}: output_columns {outputs} clash with column(s) {dupes} the map keeps. "
                "Rename the outputs or include those columns in input_columns."
            )
        return names


class BatchNode(Node):
    name = "Batch"

    def __init__(
        self,
        child: Node,
        batch_size: int | Callable[[Any], int],
        drop_remainder: bool,
        num_workers: int,
        per_batch_map: Callable[..., Any] | None,
        input_columns: list[str] | None,
        output_columns: list[str] | None,
        pad_info: dict | None = None,
    ):
        super().__init__([child])
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.num_workers = num_workers
        self.per_batch_map = per_batch_map
        self.input_columns = input_columns
        self.output_columns = output_columns
        self.pad_info = pad_info

    @property
    def label(self) -> str:
        size = self.batch_size if not callable(self.batch_size) else "callable"
        return f"Batch({size})"

    def _compute_columns(self) -> list[str]:
        from minddata.engine.mapfn import column_layout

        have = self.children[0].columns
        if self.per_batch_map is None:
            return have
        inputs = list(self.input_columns) if self.input_columns is not None else have
        _check_columns(self, inputs, "input_columns")
        outputs = list(self.output_columns) if self.output_columns is not None else inputs
        layout = column_layout(have, inputs, outputs)
        return [outputs[k] if src else have[k] for src, k in layout]

    def static_size(self) -> int | None:
        n = self.children[0].static_size()
        if n is None or callable(self.batch_size):
            return None
        return n // self.batch_size if self.drop_remainder else -(-n // self.batch_size)


class BucketBatchNode(Node):
    """``bucket_batch_by_length``: rows grouped by length into buckets, each batched and padded."""

    name = "BucketBatch"

    def __init__(
        self,
        child: Node,
        column_names: list[str],
        bucket_boundaries: list[int],
        bucket_batch_sizes: list[int],
        element_length_function: Callable[..., Any] | None,
        pad_info: dict | None,
        pad_to_bucket_boundary: bool,
        drop_remainder: bool,
    ):
        super().__init__([child])
        self.column_names = column_names
        self.bucket_boundaries = bucket_boundaries
        self.bucket_batch_sizes = bucket_batch_sizes
        self.element_length_function = element_length_function
        self.pad_info = pad_info
        self.pad_to_bucket_boundary = pad_to_bucket_boundary
        self.drop_remainder = drop_remainder

    @property
    def label(self) -> str:
        return f"BucketBatch({self.bucket_boundaries})"

    def _compute_columns(self) -> list[str]:
        _check_columns(self, self.column_names, "column_names")
        if self.pad_info:
            _check_columns(self, list(self.pad_info), "pad_info")
        return self.children[0].columns

    def static_size(self) -> int | None:
        return None


class ShuffleNode(Node):
    name = "Shuffle"

    def __init__(self, child: Node, buffer_size: int):
        super().__init__([child])
        self.buffer_size = buffer_size

    @property
    def label(self) -> str:
        return f"Shuffle({self.buffer_size})"


class RepeatNode(Node):
    name = "Repeat"

    def __init__(self, child: Node, count: int):
        super().__init__([child])
        self.count = count

    @property
    def label(self) -> str:
        return f"Repeat({self.count})"

    def static_size(self) -> int | None:
        n = self.children[0].static_size()
        if n is None:
            return None
        return n * self.count if self.count >= 0 else None


class TakeNode(Node):
    name = "Take"

    def __init__(self, child: Node, count: int):
        super().__init__([child])
        self.count = count

    @property
    def label(self) -> str:
        return f"Take({self.count})"

    def static_size(self) -> int | None:
        n = self.children[0].static_size()
        if self.count < 0:
            return n
        return self.count if n is None else min(n, self.count)


class SkipNode(Node):
    name = "Skip"

    def __init__(self, child: Node, count: int):
        super().__init__([child])
        self.count = count

    @property
    def label(self) -> str:
        return f"Skip({self.count})"

    def static_size(self) -> int | None:
        n = self.children[0].static_size()
        return None if n is None else max(0, n - self.count)


class ZipNode(Node):
    name = "Zip"

    def _compute_columns(self) -> list[str]:
        names: list[str] = []
        for i, child in enumerate(self.children):
            clash = [c for c in child.columns if c in names]
            if clash:
                raise GraphError(
                    f"Zip: input {i} ({child.label}) has column(s) {clash} that an earlier input already has. "
                    "Column names must be unique across zipped datasets: rename() or project() one of them."
                )
            names.extend(child.columns)
        return names

    def static_size(self) -> int | None:
        sizes = [child.static_size() for child in self.children]
        return None if any(s is None for s in sizes) else min(sizes)  # type: ignore[type-var]


class ConcatNode(Node):
    name = "Concat"

    def _compute_columns(self) -> list[str]:
        first = self.children[0].columns
        for i, child in enumerate(self.children[1:], start=1):
            if child.columns != first:
                raise GraphError(
                    f"Concat: input {i} ({child.label}) has columns {child.columns}, but input 0 has {first}. "
                    "Concatenated datasets need the same column names in the same order: project() or "
                    "rename() them first."
                )
        return first

    def static_size(self) -> int | None:
        sizes = [child.static_size() for child in self.children]
        return None if any(s is None for s in sizes) else sum(sizes)  # type: ignore[arg-type]


class ProjectNode(Node):
    name = "Project"

    def __init__(self, child: Node, columns: list[str]):
        super().__init__([child])
        self.keep = columns

    def _compute_columns(self) -> list[str]:
        _check_columns(self, self.keep, "columns")
        return list(self.keep)


class RenameNode(Node):
    name = "Rename"

    def __init__(self, child: Node, input_columns: list[str], output_columns: list[str]):
        super().__init__([child])
        self.input_columns = input_columns
        self.output_columns = output_columns

    def _compute_columns(self) -> list[str]:
        _check_columns(self, self.input_columns, "input_columns")
        mapping = dict(zip(self.input_columns, self.output_columns))
        names = [mapping.get(c, c) for c in self.children[0].columns]
        dupes = sorted({c for c in names if names.count(c) > 1})
        if dupes:
            raise GraphError(f"Rename: the new names give duplicate column(s) {dupes}. Columns after rename: {names}")
        return names


class FilterNode(Node):
    name = "Filter"

    def __init__(self, child: Node, predicate: Callable[..., Any], input_columns: list[str] | None, num_workers: int):
        super().__init__([child])
        self.predicate = predicate
        self.input_columns = input_columns
        self.num_workers = num_workers

    def _compute_columns(self) -> list[str]:
        if self.input_columns is not None:
            _check_columns(self, self.input_columns, "input_columns")
        return self.children[0].columns

    def static_size(self) -> int | None:
        return None


# -- nodes of MindSpore's flow-control operations (stages in minddata.engine.flow) -----------------


class ShardRowsNode(Node):
    """``use_sampler(DistributedSampler(n, i, shuffle=False))`` on a concat: row ``k`` of a pass goes
    to shard ``k % n`` (MindSpore's concat sharding, which also shards PaddedDataset)."""

    name = "UseSampler"

    def __init__(self, child: Node, num_shards: int, shard_id: int):
        super().__init__([child])
        self.num_shards = num_shards
        self.shard_id = shard_id

    @property
    def label(self) -> str:
        return f"UseSampler(shard {self.shard_id} of {self.num_shards})"

    def static_size(self) -> int | None:
        n = self.children[0].static_size()
        return None if n is None else max(0, -(-(n - self.shard_id) // self.num_shards))


class FlatMapNode(Node):
    """``flat_map(func)``: ``rows_of(*row)`` gives the rows that replace each input row; ``column_names``
    is computed on first use by ``columns_of()`` (it runs ``func`` once)."""

    name = "FlatMap"

    def __init__(self, child: Node, rows_of: Callable[..., Any], columns_of: Callable[[], list[str]]):
        super().__init__([child])
        self.rows_of = rows_of
        self.columns_of = columns_of

    def _compute_columns(self) -> list[str]:
        return list(self.columns_of())

    def static_size(self) -> int | None:
        return None


class SyncWaitNode(Node):
    """``sync_wait``: rows pass while ``gate`` allows; ``sync_update`` opens it further."""

    name = "SyncWait"

    def __init__(self, child: Node, condition_name: str, gate: Any):
        super().__init__([child])
        self.condition_name = condition_name
        self.gate = gate

    @property
    def label(self) -> str:
        return f"SyncWait({self.condition_name!r})"


class CallbackNode(Node):
    """Calls a map's dataset callbacks (``map(callbacks=...)``): ``where="begin"`` below the map
    (``ds_begin``, ``ds_epoch_begin``, ``ds_step_begin``), ``"end"`` above it (``ds_step_end``,
    ``ds_epoch_end``). ``runner`` holds the callbacks and the step counters both share."""

    name = "Callbacks"

    def __init__(self, child: Node, runner: Any, where: str):
        super().__init__([child])
        self.runner = runner
        self.where = where

    @property
    def label(self) -> str:
        return f"Callbacks[{self.where}]"
