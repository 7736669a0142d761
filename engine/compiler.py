"""Graph → stages: validate, optimize, place and build (DESIGN.md §4)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from minddata import config
from minddata.config import RunOptions
from minddata.engine import flow, ir
from minddata.engine.autotune import is_autotune
from minddata.engine.batchfn import BatchInfo, BatchSlots, Collate
from minddata.engine.cache_stage import CacheNode, build_cache_stage
from minddata.engine.chunk import Chunk, FailedRow
from minddata.engine.devicemap import build_device_map, needs_device_build
from minddata.engine.ir import column_layout
from minddata.engine.mapfn import MapErrorPolicy, MapFunction
from minddata.engine.optimizer import lower
from minddata.engine.parallel import ParallelApplyStage, reading_first
from minddata.engine.readahead import Prefetched, ReadAheadStage
from minddata.engine.runtime import Runtime
from minddata.engine.stages import (
    ConcatStage,
    GroupStage,
    IndexSourceStage,
    InlineApplyStage,
    IterableSourceStage,
    ProjectStage,
    RepeatStage,
    ShuffleStage,
    SkipStage,
    Stage,
    TakeStage,
    ZipStage,
)
from minddata.errors import DeviceError, GraphError, PipelineError, RowError
from minddata.ops.base import op_label
from minddata.ops.fused import NormalizeInputCheck

__all__ = ["compile_plan", "validate", "plan_tree", "Planner", "number_nodes"]


def validate(root: ir.Node) -> None:
    """Schema checks (raise :class:`GraphError`). Devices are checked by the placement pass
    (:mod:`minddata.engine.placement`), which runs in :func:`lower` and raises :class:`DeviceError`."""
    _ = root.columns


class ReadRows:
    """A source's ``fetch(ids) -> rows``, as ``(rows, errors)``: with ``per_row_errors``, a batch
    whose read raised a :class:`RowError` is read again row by row, and each failing row leaves
    ``None`` in its place and its error in ``errors`` (position → error), for the error policy."""

    def __init__(self, fetch: Callable[[list[int]], list[tuple]], per_row_errors: bool):
        self.fetch = fetch
        self.per_row_errors = per_row_errors

    def __call__(self, ids: list[int]) -> tuple[list[Any], dict[int, BaseException]]:
        if not self.per_row_errors:
            return self.fetch(ids), {}
        try:
            return self.fetch(ids), {}
        except RowError:
            pass
        rows: list[Any] = []
        errors: dict[int, BaseException] = {}
        for k, i in enumerate(ids):
            try:
                rows.extend(self.fetch([i]))
            except RowError as error:
                rows.append(None)
                errors[k] = error
        return rows, errors


def stream_seeds(node: ir.IterableSourceNode, rt: Runtime, position: int) -> dict[str, int]:
    """The seeds a streamed source at plan ``position`` is opened with (``open_iter``'s keywords)."""
    if not node.seeded:
        return {}
    # As for samplers: shards of one source (same seed, same graph) draw the same order.
    node_seed = int(np.random.SeedSequence([rt.seed, position]).generate_state(1)[0])
    if not node.sharded:
        return {"seed": node_seed}
    # What the shards must agree on draws from the shard seed; the rest (a shard's row shuffle) from
    # the run's seed.
    shard_seed = int(np.random.SeedSequence([rt.shard_seed, position]).generate_state(1)[0])
    return {"seed": shard_seed, "row_seed": node_seed}


def number_nodes(tree: ir.Node) -> dict[tuple[int, ...], int]:
    """Each node's plan position, keyed by its path from ``tree`` (the child indices from the root).

    Positions count from 1 in post-order: a node's children, left to right, before the node. A cache
    node takes none, so the nodes above it keep an uncached graph's positions. A position keys the
    random streams of its node's stages (a sampler's permutation, a shuffle buffer, a streamed source's
    order), so every executor that builds all or part of a plan takes positions from here, through
    :class:`Planner`: two numberings would draw different rows from the same seed. Paths, not nodes,
    are the keys: a node that feeds two consumers is built, and numbered, once per use.

    Examples:
        >>> import minddata as md
        >>> from minddata.engine.compiler import number_nodes, plan_tree
        >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).shuffle(4).batch(2)
        >>> number_nodes(plan_tree(ds._node))
        {(0, 0): 1, (0,): 2, (): 3}
    """
    positions: dict[tuple[int, ...], int] = {}

    def visit(node: ir.Node, path: tuple[int, ...]) -> None:
        for k, child in enumerate(node.children):
            visit(child, (*path, k))
        if not isinstance(node, CacheNode):
            positions[path] = len(positions) + 1

    visit(tree, ())
    return positions


# A stage standing for a node and everything under it, or None to build the node as usual.
Substitute = Callable[[ir.Node, tuple[int, ...]], "Stage | None"]


class Planner:
    """Builds the stages of one run (one :class:`Runtime`) from a plan tree (:func:`plan_tree`).

    Each node is built at its position from :func:`number_nodes`. ``substitute(node, path)`` is asked
    first for every node: a stage it returns stands for the node and its subtree (the Ray executor
    puts its segments' stages there), and the nodes above keep their positions.
    ``online_source`` builds an :class:`~minddata.engine.ir.OnlineSourceNode`'s stage (a serving
    session); without it such a node is refused.

    Examples:
        >>> import minddata as md
        >>> from minddata.engine.compiler import Planner, plan_tree
        >>> from minddata.engine.runtime import Runtime
        >>> tree = plan_tree(md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).batch(2)._node)
        >>> rt = Runtime(seed=1, error_mode="raise")
        >>> [row[0].tolist() for chunk in Planner(rt).build(tree).run() for row in chunk.rows]
        [[1, 2], [3]]
        >>> rt.close()
    """

    def __init__(
        self,
        rt: Runtime,
        online_source: Callable[[ir.OnlineSourceNode], Stage] | None = None,
        substitute: Substitute | None = None,
    ):
        self.rt = rt
        self.online_source = online_source
        self.substitute = substitute
        self.chunk_rows = rt.options.rows_per_chunk
        self.positions: dict[tuple[int, ...], int] = {}

    def build(self, tree: ir.Node) -> Stage:
        """The stages of ``tree``; returns the last (the one to iterate)."""
        self.positions = number_nodes(tree)
        return self._build(tree, ())

    def _build(self, node: ir.Node, path: tuple[int, ...]) -> Stage:
        if self.substitute is not None:
            stage = self.substitute(node, path)
            if stage is not None:
                return _named(stage, node)
        if isinstance(node, CacheNode):
            return _named(build_cache_stage(self.rt, node, self._build(node.children[0], (*path, 0)), self.chunk_rows), node)
        if isinstance(node, ir.MapNode) and node.reads_source:
            return _named(self._map_reading_source(node, path), node)
        children = [self._build(child, (*path, k)) for k, child in enumerate(node.children)]
        return _named(self.build_node(node, children, self.positions[path]), node)

    def build_node(self, node: ir.Node, children: list[Stage], position: int) -> Stage:
        """The stages of ``node`` alone over its inputs' stages ``children``, its random streams keyed
        by ``position``; returns the last. (An executor running one node's work elsewhere, over rows
        it feeds in, builds it this way.)"""
        return _BUILDERS[type(node)](self, node, children, position)

    def sampler_stage(self, node: ir.RandomAccessSourceNode, position: int) -> IndexSourceStage:
        """The stage drawing the row ids of random-access source ``node`` at plan ``position``, pass by
        pass, in the order this run reads them."""
        rt = self.rt
        # Samplers of different sources draw different permutations; shards of one source agree,
        # also without config.set_seed: a sharded sampler draws from the shard seed every rank shares.
        base_seed = rt.shard_seed if node.sampler.is_sharded() else rt.seed
        node_seed = int(np.random.SeedSequence([base_seed, position]).generate_state(1)[0])
        chunk_rows = min(self.chunk_rows, node.chunk_rows or self.chunk_rows)
        return IndexSourceStage(rt, node.num_rows(), node.sampler, node_seed, chunk_rows, f"{node.name}.sampler")

    # Sources ---------------------------------------------------------------------------------

    def _source_parts(
        self, node: ir.RandomAccessSourceNode, position: int, *, absorbed: bool = False, readers: int | None = None
    ) -> tuple[Stage, Callable, Callable]:
        """The sampler stage of a random-access source, its read function, and its row finisher.

        Under ``error_samples_mode`` skip/replace (and online delivery), a row whose read fails (a
        :class:`RowError`: e.g. its file was deleted after the folder was listed) is handled like a
        row whose op failed: skipped or replaced, and counted. A source read by its map's workers
        (``absorbed``) leaves a :class:`FailedRow` in the row's place for the map's policy."""
        rt = self.rt
        indices: Stage = self.sampler_stage(node, position)
        origins = node.origins
        read = ReadRows(node.fetch, per_row_errors=rt.error_mode != "raise")
        policy = MapErrorPolicy(rt, "deliver" if absorbed else rt.error_mode, node.name, [node.name])

        def finish(chunk: Chunk, result: Any, pass_index: int, row_start: int) -> Chunk:
            rows, errors = result
            out = Chunk(rows, chunk.ids, origins(chunk.ids) if origins is not None else None, chunk.keys)  # type: ignore[arg-type]  # a source's chunks carry ids
            return policy.apply(out, rows, errors) if errors else out

        def work(chunk: Chunk, pass_index: int, row_start: int) -> Any:
            if type(chunk) is Prefetched:
                return chunk.pending.result()
            return read(chunk.rows)

        if node.requests_in_flight is not None and not node.inline and not node.python_multiprocessing:
            # Network reads start as the sampler gives their ids, two chunks ahead of each worker that
            # computes on them (``readers``: the source's or its map's workers), with as many requests
            # in flight in all as each of those workers would keep reading its own chunks.
            workers = max(1, readers if readers is not None else node.num_workers)
            indices = ReadAheadStage(rt, indices, lambda chunk: read(chunk.rows), 2 * workers,
                                     workers * node.requests_in_flight(), f"{node.name}.read_ahead")
        return indices, work, finish

    def _map_reading_source(self, node: ir.MapNode, path: tuple[int, ...]) -> Stage:
        # The map's workers read their own rows (the optimizer's source absorption): file reads run
        # in parallel across the map's workers, without a stage and a hand-off of their own.
        source = node.child
        assert isinstance(source, ir.RandomAccessSourceNode)
        indices, read, finish_read = self._source_parts(source, self.positions[(*path, 0)], absorbed=True,
                                                        readers=node.num_workers)
        return self._map(node, [indices], self.positions[path], read=(read, finish_read))

    def _random_access_source(self, node: ir.RandomAccessSourceNode, children, position) -> Stage:
        rt = self.rt
        indices, work, finish = self._source_parts(node, position)
        # As for maps: "skip" drops rows, so row counts stop lining up with the sampler's.
        one_to_one = rt.error_mode in ("raise", "deliver")
        policy = MapErrorPolicy(rt, rt.error_mode, node.name, [node.name])
        ordered = policy.replace_in_order if rt.error_mode == "replace" else None
        if node.inline:
            return InlineApplyStage(
                rt, indices, lambda c, p, r: finish(c, work(c, p, r), p, r), node.name, one_to_one=one_to_one,
                ordered=ordered,
            )
        read = ReadRows(node.fetch, per_row_errors=rt.error_mode != "raise")
        remotes = self._process_workers(node.name, lambda arg: read(arg[0]), node.num_workers) if node.python_multiprocessing else None
        return ParallelApplyStage(
            rt, indices, work, node.num_workers, node.name, finish=finish, ordered=ordered, remotes=remotes,
            one_to_one=one_to_one,
        )

    def _iterable_source(self, node: ir.IterableSourceNode, children, position) -> Stage:
        open_iter = functools.partial(node.open_iter, **stream_seeds(node, self.rt, position))
        return IterableSourceStage(self.rt, open_iter, node.to_row, self.chunk_rows, node.num_samples, node.name)

    def _online_source(self, node: ir.OnlineSourceNode, children, position) -> Stage:
        if self.online_source is None:
            raise GraphError(
                "OnlineDataset: rows are pushed into an online pipeline, so it can't be iterated directly. "
                "Start it with .serve() and submit rows to the session."
            )
        return self.online_source(node)

    # Operations ------------------------------------------------------------------------------

    def _process_workers(self, label: str, fn: Callable[[Any], Any], count: int) -> list:
        from minddata.engine.procpool import ProcessWorker

        workers = [
            ProcessWorker(
                fn,
                name=f"{label} worker {i}",
                shm_size=self.rt.options.worker_shm_size,
                shared_memory=self.rt.options.enable_shared_mem,
                timeout_interval=self.rt.options.multiprocessing_timeout_interval,
                watchdog=self.rt.options.enable_watchdog,
                start_method=self.rt.options.multiprocessing_start_method,
                options=self.rt.options,
            )
            for i in range(count)
        ]
        for worker in workers:
            self.rt.on_close(worker.close)
        # Fork now, from the thread building the plan, before this pipeline starts any thread: the
        # children get a copy of a process whose pipeline threads do not exist yet.
        for worker in workers:
            if worker.start_method == "fork":
                worker.start()
        return [worker.call for worker in workers]

    def _map(
        self, node: ir.MapNode, children: list[Stage], position: int, read: tuple[Callable, Callable] | None = None
    ) -> Stage:
        """The stages of map ``node``; with ``read`` (a source's read function and row finisher), its
        workers read their chunks' rows first."""
        if needs_device_build(node):  # ops off the CPU: a stage per device part
            return build_device_map(self, node, children[0], read=read)
        rt = self.rt
        operations = node.operations
        have = node.child.columns
        inputs = node.resolved_inputs()
        outputs = node.resolved_outputs()
        layout = column_layout(have, inputs, outputs)
        fn = MapFunction(
            operations,
            node.op_positions,
            [have.index(c) for c in inputs],
            layout,
            len(outputs),
            rt.seed,
            node.label,
            keep_tracebacks=node.python_multiprocessing,
            options=rt.options,
        )
        policy = MapErrorPolicy(rt, rt.error_mode, node.label, [op_label(op) for op in operations])
        remotes = self._process_workers(node.label, fn, node.num_workers) if node.python_multiprocessing else None
        work: Callable = lambda chunk, p, r: fn((chunk.rows, p, r, chunk.keys), rt.stop_event)  # noqa: E731
        finish: Callable = policy.finish
        if read is not None:
            work, finish = reading_first(read[0], read[1], work, finish)
        if node.inline and remotes is None:
            return InlineApplyStage(
                rt, children[0], lambda c, p, r: finish(c, work(c, p, r), p, r), node.label,
                one_to_one=rt.error_mode in ("raise", "deliver"),
                ordered=policy.replace_in_order if rt.error_mode == "replace" else None,
            )
        return ParallelApplyStage(
            rt,
            children[0],
            work,
            node.num_workers,
            node.label,
            finish=finish,
            ordered=policy.replace_in_order if rt.error_mode == "replace" else None,
            remotes=remotes,
            # "skip" drops rows, so row counts stop lining up with the input; "replace" looks back
            # at earlier rows: a resume replays those instead of skipping ahead.
            one_to_one=rt.error_mode in ("raise", "deliver"),
            map_function=fn,
            op_names=[op_label(op, timings=True) for op in operations],
        )

    def _batch(self, node: ir.BatchNode, children, position) -> Stage:
        rt = self.rt
        have = node.children[0].columns
        inputs = list(node.input_columns) if node.input_columns is not None else have
        outputs = list(node.output_columns) if node.output_columns is not None else inputs
        group = GroupStage(rt, children[0], node.batch_size, node.drop_remainder, BatchInfo, f"{node.label}.group")
        collate = Collate(
            node.label,
            have,
            node.columns,
            node.per_batch_map,
            [have.index(c) for c in inputs] if node.per_batch_map is not None else [],
            column_layout(have, inputs, outputs),
            len(outputs),
            epilogues=node.epilogues,
            pad_info=node.pad_info,
        )
        stage: Stage
        if node.num_workers <= 1 and not is_autotune(node.num_workers):
            stage = InlineApplyStage(rt, group, collate, node.label, one_to_one=True)
        else:
            stage = ParallelApplyStage(rt, group, collate, node.num_workers, node.label, one_to_one=True)
        stage.batch_slots = _normalize_in_map_workers(node, children[0], collate)
        return stage

    def _bucket_batch(self, node: ir.BucketBatchNode, children, position) -> Stage:
        from minddata.engine.bucketing import BucketCollate, BucketGroupStage

        have = node.children[0].columns
        picks = [have.index(c) for c in node.column_names]
        fn = node.element_length_function
        if fn is None:
            only = picks[0]

            def length_of(row: tuple) -> Any:
                return np.shape(row[only])[0]
        else:

            def length_of(row: tuple) -> Any:
                return fn(*[row[i] for i in picks])

        group = BucketGroupStage(
            self.rt, children[0], length_of, list(node.bucket_boundaries), list(node.bucket_batch_sizes),
            node.drop_remainder, f"{node.label}.group",
        )
        collate = BucketCollate(node.label, have, node.pad_info, list(node.bucket_boundaries), node.pad_to_bucket_boundary)
        return InlineApplyStage(self.rt, group, collate, node.label)

    def _shuffle(self, node: ir.ShuffleNode, children, position) -> Stage:
        return ShuffleStage(self.rt, children[0], node.buffer_size, position, self.chunk_rows, node.label)

    def _repeat(self, node: ir.RepeatNode, children, position) -> Stage:
        return RepeatStage(self.rt, children[0], node.count, node.label)

    def _take(self, node: ir.TakeNode, children, position) -> Stage:
        if node.count < 0:
            return children[0]
        return TakeStage(self.rt, children[0], node.count, node.label)

    def _skip(self, node: ir.SkipNode, children, position) -> Stage:
        return SkipStage(self.rt, children[0], node.count, node.label)

    def _zip(self, node: ir.ZipNode, children, position) -> Stage:
        return ZipStage(self.rt, children, node.label)

    def _concat(self, node: ir.ConcatNode, children, position) -> Stage:
        return ConcatStage(self.rt, children, node.label, columns=node.columns)

    def _shard_rows(self, node: ir.ShardRowsNode, children, position) -> Stage:
        return flow.ShardRowsStage(self.rt, children[0], node.num_shards, node.shard_id, node.label)

    def _flat_map(self, node: ir.FlatMapNode, children, position) -> Stage:
        return flow.FlatMapStage(self.rt, children[0], node.rows_of, self.chunk_rows, node.label)

    def _sync_wait(self, node: ir.SyncWaitNode, children, position) -> Stage:
        return flow.SyncWaitStage(self.rt, children[0], node.gate, node.label)

    def _callback(self, node: ir.CallbackNode, children, position) -> Stage:
        return flow.CallbackStage(self.rt, children[0], node.runner, node.where, node.label)

    def _project(self, node: ir.ProjectNode, children, position) -> Stage:
        have = node.children[0].columns
        return ProjectStage(self.rt, children[0], [have.index(c) for c in node.keep], node.label)

    def _rename(self, node: ir.RenameNode, children, position) -> Stage:
        # Names live in the schema only: rows are unchanged.
        return children[0]

    def _filter(self, node: ir.FilterNode, children, position) -> Stage:
        have = node.children[0].columns
        picks = [have.index(c) for c in (node.input_columns or have)]
        predicate, label = node.predicate, node.label

        def keep(chunk: Chunk, pass_index: int, row_start: int) -> Chunk:
            kept: list[int] = []
            for i, row in enumerate(chunk.rows):
                if type(row) is FailedRow:
                    kept.append(i)
                    continue
                try:
                    if predicate(*[row[j] for j in picks]):
                        kept.append(i)
                except Exception as error:
                    where = chunk.where(i)
                    raise RowError(
                        f"{label}: predicate failed on row {row_start + i}{f' ({where})' if where else ''}: "
                        f"{type(error).__name__}: {error}",
                        op=label,
                        row=row_start + i,
                        source=chunk.origins[i] if chunk.origins else None,
                    ) from error
            if len(kept) == len(chunk):
                return chunk
            return chunk.take(kept)

        if node.num_workers <= 1 and not is_autotune(node.num_workers):
            return InlineApplyStage(self.rt, children[0], keep, label)
        return ParallelApplyStage(self.rt, children[0], keep, node.num_workers, label)


def _normalize_in_map_workers(node: ir.BatchNode, below: Stage, collate: Collate) -> BatchSlots | None:
    """Let the map's workers normalize the images the batch would (:class:`BatchSlots`, returned;
    None where the batch does it), where the rows' positions fix their slots: a map of threads of
    this process right under a batch of a fixed size, keeping one output row per input row
    (``fast_skip``: no rows skipped, none replaced)."""
    if len(node.epilogues) != 1 or callable(node.batch_size) or node.per_batch_map is not None:
        return None
    if not (isinstance(below, ParallelApplyStage) and below.node is node.children[0]
            and below.map_function is not None and below.remotes is None and below.fast_skip
            and below.finish is not None and below.op_names
            and isinstance(below.map_function.operations[-1], NormalizeInputCheck)):
        return None
    ((column, (normalize, chw, _)),) = node.epilogues.items()
    slots = BatchSlots(column, int(node.batch_size), normalize, chw, collate.pool)
    below.finish = slots.after(below.finish, below.map_function, len(below.op_names) - 1)
    # The profiler names the normalizing where it now runs, and times it as the map's last op.
    below.op_names[-1] = "Normalize+HWC2CHW into the batch" if chw else "Normalize into the batch"
    below.batch_slots = slots
    return slots


# Which builder method makes the stages of each kind of node.
_BUILDERS: dict[type, Callable[..., Stage]] = {
    ir.RandomAccessSourceNode: Planner._random_access_source,
    ir.IterableSourceNode: Planner._iterable_source,
    ir.OnlineSourceNode: Planner._online_source,
    ir.MapNode: Planner._map,
    ir.BatchNode: Planner._batch,
    ir.BucketBatchNode: Planner._bucket_batch,
    ir.ShuffleNode: Planner._shuffle,
    ir.RepeatNode: Planner._repeat,
    ir.TakeNode: Planner._take,
    ir.SkipNode: Planner._skip,
    ir.ZipNode: Planner._zip,
    ir.ConcatNode: Planner._concat,
    ir.ShardRowsNode: Planner._shard_rows,
    ir.FlatMapNode: Planner._flat_map,
    ir.SyncWaitNode: Planner._sync_wait,
    ir.CallbackNode: Planner._callback,
    ir.ProjectNode: Planner._project,
    ir.RenameNode: Planner._rename,
    ir.FilterNode: Planner._filter,
}


def _named(stage: Stage, node: ir.Node) -> Stage:
    # A node that builds no stage of its own (rename) returns its child's: keep the child's node.
    if stage.node is None:
        stage.node = node
    return stage


def _serial(node: ir.Node) -> ir.Node:
    """``node`` with one worker, in this process (``config.set_debug_mode``)."""
    fields = {f.name for f in dataclasses.fields(node)}
    changes: dict[str, Any] = {}
    if "num_workers" in fields and node.num_workers != 1:  # type: ignore[attr-defined]  # in fields: the node has it
        changes["num_workers"] = 1
    if "python_multiprocessing" in fields and node.python_multiprocessing:  # type: ignore[attr-defined]  # as above
        changes["python_multiprocessing"] = False
    return dataclasses.replace(node, **changes) if changes else node


def plan_tree(root: ir.Node, fusion: bool | None = None, auto_offload: bool | None = None, *,
              options: RunOptions | None = None) -> ir.Node:
    """The validated, optimized tree that an iterator over ``root`` runs under the run's ``options``
    (the iterator's snapshot; default: the settings now), which placement and fusion read; ``fusion``
    and ``auto_offload`` override ``options.enable_fusion`` and ``options.auto_offload``."""
    if options is None:
        options = config.snapshot()
    validate(root)
    return lower(root, options.enable_fusion if fusion is None else fusion,
                 fast_decode_resize=options.fast_decode_resize,
                 auto_offload=options.auto_offload if auto_offload is None else auto_offload, options=options)


def compile_plan(
    root: ir.Node,
    rt: Runtime,
    *,
    online_source: Callable[[ir.OnlineSourceNode], Stage] | None = None,
) -> Stage:
    """Validate and optimize ``root``, then build its stages for one run (one iterator), all under
    the run's settings ``rt.options`` (code the build runs, a source counting its rows, sees them
    through ``minddata.config`` too)."""
    tree = plan_tree(root, options=rt.options)
    if rt.options.debug_mode:
        tree = ir.rewrite(tree, _serial)
    try:
        with config.running(rt.options):
            return Planner(rt, online_source).build(tree)
    except (GraphError, DeviceError):
        raise
    except RecursionError:
        raise PipelineError("the pipeline graph is too deep to compile") from None
