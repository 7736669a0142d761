"""Plan splitting: which parts of a compiled plan run on Ray (segments) and which in the consumer.

A **segment** is a random-access source (its sampler, shards and ``num_samples`` as they are), or a
streamed source whose records can be read by number, optionally a seeded ``shuffle`` right above it,
then per-row steps: maps, filters, projects and renames. The driver draws the pass's row order
exactly as the local engine does (the sampler's permutation, then the shuffle buffer's, both over row
*indices*, at the positions :func:`~minddata.engine.compiler.number_nodes` gives them), cuts it into
Ray read tasks of contiguous rows, and each step becomes a ``map_batches`` operator. Every row travels
with its position in the pass, so a random op draws from the same (seed, pass, row, op) stream as
locally: the rows are bit-identical. A streamed source numbers its records by each file's record
count; the files are counted in Ray tasks (one per file, only the count comes back), so the driver
lists and plans but reads no file's contents.

The **tail** (batch, padded and bucketed batch, shuffle buffers over several inputs, repeat,
take/skip, zip, concat, and the cheap per-row steps above them) is built by the local compiler's
:class:`~minddata.engine.compiler.Planner`, with each segment's :class:`RaySegmentStage` substituted
for the segment's nodes, and runs in the consumer. Epochs are one Ray execution each.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import Any

import numpy as np

from minddata import config
from minddata.config import RunOptions
from minddata.engine import ir
from minddata.engine.compiler import Planner, number_nodes, plan_tree, stream_seeds
from minddata.engine.ray_executor.actors import (
    ActorChain,
    Chain,
    Step,
    is_random,
    named_fn,
    needs_actor,
    num_gpus,
    op_name,
    step_groups,
)
from minddata.engine.ray_executor.datasource import Reads, datasource_class, uniform_sizes
from minddata.engine.ray_executor.datasource import rows_per_task as default_rows_per_task
from minddata.engine.ray_executor.ray_import import require_ray, unwrap
from minddata.engine.ray_executor.stage import RaySegmentStage
from minddata.engine.runtime import Runtime
from minddata.engine.stages import Stage
from minddata.errors import GraphError

__all__ = ["RayPlan", "Segment", "ROW_STEPS"]

# Per-row steps a segment runs on Ray.
ROW_STEPS = (ir.MapNode, ir.FilterNode, ir.ProjectNode, ir.RenameNode)
# Ops the consumer's final stage runs (cheap, order-dependent or joining several inputs).
_TAIL_OPS = (
    ir.BatchNode, ir.BucketBatchNode, ir.ShuffleNode, ir.RepeatNode, ir.TakeNode, ir.SkipNode,
    ir.ZipNode, ir.ConcatNode, ir.ProjectNode, ir.RenameNode, ir.FilterNode,
)

Path = tuple[int, ...]


def _one_file(work: Callable[[str], Any], path: str, options: RunOptions) -> Any:
    with config.running(options):
        return work(path)


_FILE_TASK: Any = None


def per_file_in_ray_tasks(work: Callable[[str], Any], files: list[str], options: RunOptions) -> list[Any]:
    """``work(path)`` of each file, each in a Ray task of its own (under the run's settings
    ``options``): a worker reads the file, only the result (a count, an index) comes back. A source's
    own error (a damaged file, an object that can't be read) is raised as itself, naming the file."""
    global _FILE_TASK
    ray = require_ray()
    if _FILE_TASK is None:
        _FILE_TASK = ray.remote(_one_file)
    work_ref = ray.put(work)
    try:
        return ray.get([_FILE_TASK.remote(work_ref, path, options) for path in files])
    except ray.exceptions.RayTaskError as error:
        inner = unwrap(error)
        if inner is error:
            raise
        raise inner from None


class Segment:
    """A source, an optional seeded shuffle right above it, and the per-row steps above those
    (bottom-up), all run on Ray. ``top`` is the plan node the tail sees in its place; positions are the
    plan's (:func:`~minddata.engine.compiler.number_nodes`) for the source and the shuffle."""

    def __init__(self, source: ir.RandomAccessSourceNode | ir.IterableSourceNode, shuffle: ir.ShuffleNode | None,
                 steps: list[ir.Node], top: ir.Node, source_position: int, shuffle_position: int | None):
        self.source = source
        # What the read tasks call: ``fetch(ids)``, ``origins(ids)`` (a streamed source's by record number).
        self.reads: Any = source.record_reads if isinstance(source, ir.IterableSourceNode) else source
        self.shuffle = shuffle
        self.steps = steps
        self.top = top
        self.source_position = source_position
        self.shuffle_position = shuffle_position
        # Ray's name of each map_batches operator -> the plan labels of the steps it runs.
        self.operator_labels: dict[str, str] = {}
        # Set when the consumer is a batch that copies each row into its batch arrays and lets it go:
        # rows then stay read-only views of the blocks (no copy out of the object store first).
        self.consumer_copies_rows = False

    @property
    def label(self) -> str:
        return f"Ray[{' → '.join([self.source.name] + [n.label for n in self.steps])}]"

    def pass_ids(self, rt: Runtime, pass_index: int) -> np.ndarray:
        """The source rows of pass ``pass_index``, in the order the local engine reads them: the
        sampler's stage (and shuffle buffer) as the local compiler builds them, run over indices only;
        a streamed source's own order over record numbers."""
        if isinstance(self.source, ir.IterableSourceNode):
            ids = self.reads.order(pass_index, **stream_seeds(self.source, rt, self.source_position))
            return ids if self.source.num_samples is None else ids[: self.source.num_samples]
        planner = Planner(rt)
        sampler = planner.sampler_stage(self.source, self.source_position)
        if self.shuffle is None:
            return np.asarray(sampler.sampler._indices(sampler.num_rows, sampler.seed, pass_index), dtype=np.int64)
        assert self.shuffle_position is not None
        stage = planner.build_node(self.shuffle, [sampler], self.shuffle_position)
        stage.skip_passes(pass_index)
        with closing(stage.run()) as chunks:
            parts = [np.asarray(chunk.rows, dtype=np.int64) for chunk in chunks]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)


class RayPlan:
    """A plan (validated, optimized, placed) split into Ray segments and a local tail.

    ``options``: the run's settings (by default a snapshot taken now); every Ray worker runs its steps
    with them. Raises :class:`GraphError` when part of the plan cannot run distributed, naming the op
    and why.

    Examples:
        >>> import minddata as md
        >>> from minddata.engine.ray_executor import RayPlan
        >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).map(lambda x: x + 1, input_columns="x")
        >>> [segment.label for segment in RayPlan(ds.batch(2)._node).segments.values()]
        ['Ray[NumpySlicesDataset → Map[<lambda>]]']
    """

    def __init__(self, root: ir.Node, error_mode: str | None = None, options: RunOptions | None = None):
        self.options = options if options is not None else config.snapshot()
        with config.running(self.options):  # what lowering runs (a source counting its rows) sees them
            self.tree = plan_tree(root, options=self.options)
        self.error_mode = error_mode or self.options.error_samples_mode.value
        self.positions = number_nodes(self.tree)
        # Each segment by the path of its top node from the plan's root (see number_nodes).
        self.segments: dict[Path, Segment] = {}
        self._split(self.tree, ())

    def read_files_in_tasks(self) -> None:
        """Have each source that reads its files before its first row do it in Ray tasks, one a file
        (once per source), before anything asks for its size: a streamed source counts each file's
        records (``count_files_with``), WebDataset indexes its remote shards (``index_files_with``). The
        files stay in the workers; only the counts and indexes come back."""
        def in_tasks(work: Callable[[str], Any], files: list[str]) -> list[Any]:
            return per_file_in_ray_tasks(work, files, self.options)

        for segment in self.segments.values():
            for hook in ("count_files_with", "index_files_with"):
                read_files_with = getattr(segment.reads, hook, None)
                if read_files_with is not None:
                    read_files_with(in_tasks)

    def _split(self, node: ir.Node, path: Path) -> None:
        segment = self._segment_at(node, path)
        if segment is not None:
            self.segments[path] = segment
            return
        if isinstance(node, ir.MapNode):
            blocker = node.children[0]
            while isinstance(blocker, ROW_STEPS):
                blocker = blocker.children[0]
            raise GraphError(
                f"executor='ray': {node.label} can't run distributed: it comes after {blocker.label}, which "
                "runs in the consumer (a map runs on Ray only in a chain of per-row steps over a "
                "random-access source). Move the map before it, or use the local executor."
            )
        if isinstance(node, ir.IterableSourceNode):
            raise GraphError(
                f"executor='ray': {node.label} can't run distributed: it reads its rows front to back in one "
                "process, so they can't be split into Ray read tasks. Use a random-access source (a "
                "GeneratorDataset over an object with __getitem__ and __len__, MindDataset, ParquetDataset, "
                "ImageFolderDataset, an uncompressed TFRecordDataset), or the local executor."
            )
        if isinstance(node, ir.OnlineSourceNode):
            raise GraphError("executor='ray': OnlineDataset rows are pushed in by a serving session; serve it locally.")
        if not isinstance(node, _TAIL_OPS):
            raise GraphError(f"executor='ray': {node.label} has no Ray translation; use the local executor.")
        for k, child in enumerate(node.children):
            self._split(child, (*path, k))
            # A batch without per_batch_map stacks, pads or normalizes each row into new arrays.
            below = self.segments.get((*path, k))
            if below is not None and isinstance(node, ir.BatchNode) and node.per_batch_map is None:
                below.consumer_copies_rows = True

    def _segment_at(self, node: ir.Node, path: Path) -> Segment | None:
        steps: list[ir.Node] = []
        below, below_path = node, path
        while isinstance(below, ROW_STEPS):
            steps.append(below)
            below, below_path = below.children[0], (*below_path, 0)
        shuffle, shuffle_position = None, None
        if isinstance(below, ir.ShuffleNode) and isinstance(below.children[0], ir.RandomAccessSourceNode):
            shuffle, shuffle_position = below, self.positions[below_path]
            below, below_path = below.children[0], (*below_path, 0)
        splittable_stream = isinstance(below, ir.IterableSourceNode) and below.record_reads is not None
        if not isinstance(below, ir.RandomAccessSourceNode) and not splittable_stream:
            return None
        steps.reverse()
        self._check_steps(steps)
        return Segment(below, shuffle, steps, node, self.positions[below_path], shuffle_position)  # type: ignore[arg-type]  # a source node: checked above

    def _check_steps(self, steps: list[ir.Node]) -> None:
        dropped_by: ir.Node | None = None
        for node in steps:
            if not isinstance(node, ir.MapNode):
                if isinstance(node, ir.FilterNode):
                    dropped_by = node
                continue
            if self.error_mode in ("replace", "deliver"):
                raise GraphError(
                    f"executor='ray': {node.label} can't run distributed with error_samples_mode="
                    f"{self.error_mode!r}: " + (
                        "a failed row is replaced by the previous good row, which may sit in another Ray task"
                        if self.error_mode == "replace" else "rows with errors are delivered only to online sessions"
                    ) + ". Use 'raise' or 'skip'."
                )
            if dropped_by is not None and is_random(node):
                raise GraphError(
                    f"executor='ray': {node.label} can't run distributed after {dropped_by.label}: its random "
                    "ops key on the row's position after rows were dropped, which a Ray task can't know until "
                    "every earlier task has finished. Move the random map before the filter (or the map "
                    "whose rows error_samples_mode='skip' drops), or use the local executor."
                )
            if self.error_mode == "skip":
                dropped_by = node

    # -- the consumer's stages ------------------------------------------------------------------

    def compile(self, rt: Runtime) -> Stage:
        """The stages the consumer runs: the tail, each segment a :class:`RaySegmentStage`."""

        def segment_stage(node: ir.Node, path: Path) -> Stage | None:
            segment = self.segments.get(path)
            if segment is None:
                return None
            return RaySegmentStage(rt, self, segment)

        self.read_files_in_tasks()  # the tail's stages may ask a source's size
        with config.running(rt.options):
            return Planner(rt, substitute=segment_stage).build(self.tree)

    # -- Ray datasets -----------------------------------------------------------------------------

    def segment_dataset(self, segment: Segment, seed: int, pass_index: int, skip: int = 0,
                        rows_multiple: int = 1, rows_per_task: int | None = None,
                        shard_seed: int | None = None, options: RunOptions | None = None) -> Any:
        """A ``ray.data.Dataset`` of the segment's rows for pass ``pass_index``, from row ``skip`` on,
        as internal blocks (``__pos__``, ``__id__``, ``__row__``, ``__origin__``), in pass order
        (read tasks hold multiples of ``rows_multiple`` rows, or ``rows_per_task`` when given). ``options``: the run's settings, which
        every step runs with (by default the plan's)."""
        ray = require_ray()
        options = options if options is not None else self.options
        # A runtime only to draw the pass's row order (it starts no thread): closed once it has.
        rt = Runtime(seed, self.error_mode, options, shard_seed=shard_seed)
        try:
            self.read_files_in_tasks()
            ids = segment.pass_ids(rt, pass_index)[skip:]
        finally:
            rt.close()
        chunk_rows = options.rows_per_chunk
        # Equal tasks: tasks shrinking towards the end of the pass (guided) measured the same here.
        sizes = uniform_sizes(len(ids), rows_per_task or default_rows_per_task(len(ids), rows_multiple, chunk_rows, ray))
        groups = step_groups(segment.steps)
        # A first task step reads its block's rows itself (Ray fuses the read into its task): the
        # rows then skip a pack and an unpack. An actor step keeps them read by the read tasks, which
        # run alongside the pool.
        reads_in_step = bool(groups) and not needs_actor(groups[0][0])
        source = datasource_class()(segment.reads, ids, skip, sizes, options, reads_in_step)
        # As many blocks as read tasks: Ray would otherwise split blocks at arbitrary rows.
        ds = ray.data.read_datasource(source, override_num_blocks=max(1, len(sizes)))
        ds.context.execution_options.preserve_order = True
        # An op's RowError reaches the consumer as itself (naming the op, row and file), not as text.
        ds.context.raise_original_map_exception = True
        # Each map task would otherwise poll its own memory use (psutil) once a second in a thread.
        ds.context.memory_usage_poll_interval_s = None
        if not any(needs_actor(group[0]) for group in groups):
            # Read and task maps fuse into one operator. Ray Data would reserve half the cluster for
            # operators that do not exist here, leaving about one task in flight at a time (2,000
            # images on 2 CPUs: 2.85 s with the reservation, 1.97 s without). Actor pools keep it:
            # there it stops one operator from starving the next.
            ds.context.op_resource_reservation_enabled = False
        rule = None
        read = segment.source
        if segment.shuffle is None and isinstance(read, ir.RandomAccessSourceNode) and hasattr(
            read.sampler, "_global_key_rule"
        ):
            # A shard's rows draw by their place in the epoch's global order, as locally (Chunk.keys).
            rule = read.sampler._global_key_rule(read.num_rows())
        for k, group in enumerate(groups):
            reads = Reads(segment.reads.fetch, chunk_rows) if k == 0 and reads_in_step else None
            chain = Chain([Step(node, seed, self.error_mode, pass_index, options, keys=rule) for node in group], reads)
            name = "+".join(op_name(node) for node in group)
            segment.operator_labels[name] = " → ".join(node.label for node in group)
            if needs_actor(group[0]):
                ds = ds.map_batches(
                    type(name, (ActorChain,), {}), fn_constructor_args=(chain,), batch_format="pyarrow",
                    batch_size=None, concurrency=(1, max(1, int(ray.available_resources().get("CPU", 1)))),
                    num_gpus=num_gpus(group[0]) or None,
                )
            else:
                ds = ds.map_batches(named_fn(chain, name), batch_format="pyarrow", batch_size=None)
        return ds
