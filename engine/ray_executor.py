"""Running a compiled plan on Ray Data (DESIGN.md §7): the same pipeline, on a cluster.

This is an executor over the plan the local engine runs (:func:`minddata.engine.compiler.plan_tree`,
after fusion and placement), not a second graph. The plan is cut in two:

* **segments** run on Ray. A segment is a random-access source (its sampler, shards and
  ``num_samples`` as they are), optionally a seeded ``shuffle`` right above it, then per-row steps:
  maps, filters, projects and renames. The driver draws the pass's row order exactly as the local
  engine does (the sampler's permutation, then the shuffle buffer's, both over row *indices*), cuts it
  into Ray read tasks of contiguous rows, and each step becomes a ``map_batches`` operator. Every row
  travels with its position in the pass, so a random op draws from the same (seed, pass, row, op)
  stream as locally: the rows are bit-identical.
* the **tail** (batch, padded and bucketed batch, shuffle buffers over several inputs, repeat,
  take/skip, zip, concat, and the cheap per-row steps above them) is compiled by the local compiler
  with each segment as its source stage, and runs in the consumer. Epochs are one Ray execution each.

Inside a Ray worker each step is built by the local compiler too (its ``_build_*`` method over a
feeding stage), so a Ray map runs the very kernels, error policy and device parts a local one runs.
Cheap steps run as Ray tasks; maps with a device part (GPU, Dvpp) or a stateful Python callable run
in an actor pool, set up once per actor. What cannot run this way fails when the plan is built,
naming the op and why.

Ray is imported lazily: without it, asking for the Ray executor raises an ImportError naming
``pip install 'minddata[ray]'``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import struct
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from typing import Any

import numpy as np

from minddata import config
from minddata.engine import ir
from minddata.engine.batchfn import BufferPool
from minddata.engine.chunk import Chunk
from minddata.engine.compiler import _Builder, plan_tree, stream_seeds
from minddata.engine.devicemap import needs_device_build
from minddata.engine.runtime import ErrorStats, Runtime
from minddata.engine.stages import ShuffleStage, Stage
from minddata.errors import GraphError, MinddataError
from minddata.ops.base import Op

__all__ = ["RayPlan", "require_ray", "init_local_cluster", "to_ray", "RAY_INSTALL_HINT"]

RAY_INSTALL_HINT = "pip install 'minddata[ray]'"

# Per-row steps a segment runs on Ray.
_ROW_STEPS = (ir.MapNode, ir.FilterNode, ir.ProjectNode, ir.RenameNode)
# Ops the consumer's final stage runs (cheap, order-dependent or joining several inputs).
_TAIL_OPS = (
    ir.BatchNode, ir.BucketBatchNode, ir.ShuffleNode, ir.RepeatNode, ir.TakeNode, ir.SkipNode,
    ir.ZipNode, ir.ConcatNode, ir.ProjectNode, ir.RenameNode, ir.FilterNode,
)
# Columns of the internal Ray blocks: a row travels whole (bit for bit), with its provenance.
POS, ID, ROW, ORIGIN = "__pos__", "__id__", "__row__", "__origin__"
# A block's bookkeeping rows have this position: their row is (skipped, replaced, first messages), the
# rows a worker's error policy dropped, for the consumer's error counts and end-of-epoch log.
NOTE_POS = -1


def require_ray() -> Any:
    """The ``ray`` module with Ray Data, or an ImportError saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401 - Ray Data is a separate part of the ray package
    except ImportError as error:
        raise ImportError(
            f"executor='ray' needs Ray Data, which is not installed ({error}). Install it with: {RAY_INSTALL_HINT}"
        ) from None
    return ray


# Ray resolves 127.0.0.1 to the machine's reachable address and binds its servers to every interface
# unless it runs as a single-machine cluster; this setting (read when ray is imported, here and in every
# Ray process started from here) keeps every address and listening socket on loopback.
SINGLE_MACHINE_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# A cluster that sends nothing elsewhere reports no usage statistics either: Ray's usage reporting
# and Ray Data's usage actor and metrics poller (about 3% of a 2-CPU machine in a benchmark epoch) are
# off, in the Ray processes and in this one (the poller runs in the driver).
NO_USAGE_STATS_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DATA_USAGE_DISABLED": "1"}


def init_local_cluster(num_cpus: int, **kwargs: Any) -> Any:
    """Start a single-machine Ray cluster of ``num_cpus`` CPUs bound to 127.0.0.1 only (for tests and
    benchmarks on a machine that must send nothing elsewhere); returns ``ray``. ``kwargs`` go to
    ``ray.init``. Environment set here for the Ray processes is restored in this one afterwards, except
    the usage-statistics opt-out (:data:`NO_USAGE_STATS_ENV`, unless this process set its own)."""
    saved = dict(os.environ)
    os.environ.update(SINGLE_MACHINE_ENV)
    os.environ.update(NO_USAGE_STATS_ENV)
    try:
        ray = require_ray()
        import ray._private.ray_constants as ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False  # in case ray was imported before the setting
        options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False, **kwargs}
        ray.init(num_cpus=num_cpus, _node_ip_address="127.0.0.1", **options)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for name, value in NO_USAGE_STATS_ENV.items():
            os.environ.setdefault(name, value)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return ray


def _is_random(node: ir.MapNode) -> bool:
    # Python callables may draw their own randomness; only ops keyed on the row index matter here.
    return any(isinstance(op, Op) and op.random for op in node.operations)


def _needs_actor(node: ir.Node) -> bool:
    """Maps with set-up worth keeping: a device part (GPU segment, Dvpp driver) or a Python callable
    object (a class instance may hold a model): they run in an actor pool, built once per actor."""
    if not isinstance(node, ir.MapNode):
        return False
    if needs_device_build(node):
        return True
    return any(not isinstance(op, Op) and not _is_function(op) for op in node.operations)


def _is_function(op: Any) -> bool:
    import functools
    import types

    return isinstance(op, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial))


def _num_gpus(node: ir.Node) -> float:
    """GPUs one actor of ``node``'s pool asks Ray for: one when a segment part runs on a real GPU, with
    either driver (DALI's ``cuda``, torch's ``torch-cuda``; Dvpp on ``nvjpg`` is a ``cuda`` segment).
    Ray hides every GPU from an actor that asked for none (``CUDA_VISIBLE_DEVICES`` is emptied), so
    without this the segment could not build there. Emulated segments need none.
    """
    from minddata.ops.gpu.drivers import is_real_gpu

    parts = getattr(node, "device_parts", None) or []
    return 1.0 if any(part.kind == "segment" and is_real_gpu(part.backend) for part in parts) else 0.0


class Segment:
    """A random-access source, an optional seeded shuffle right above it, and the per-row steps above
    those (bottom-up), all run on Ray. ``top`` is the plan node the tail sees in its place."""

    def __init__(self, source: ir.RandomAccessSourceNode | ir.IterableSourceNode, shuffle: ir.ShuffleNode | None,
                 steps: list[ir.Node], top: ir.Node, positions: dict[int, int]):
        self.source = source
        # What the read tasks call: ``fetch(ids)``, ``origins(ids)`` (a streamed source's by record number).
        self.reads = source.record_reads if isinstance(source, ir.IterableSourceNode) else source
        self.shuffle = shuffle
        self.steps = steps
        self.top = top
        self.source_position = positions[id(source)]
        # Ray's name of each map_batches operator -> the plan labels of the steps it runs.
        self.operator_labels: dict[str, str] = {}
        self.shuffle_position = positions[id(shuffle)] if shuffle is not None else None

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
        builder = _Builder(rt, None)
        builder.node_counter = self.source_position - 1
        sampler, _, _ = builder._source_parts(self.source, builder._position())
        if self.shuffle is None:
            return np.asarray(sampler.sampler._indices(sampler.num_rows, sampler.seed, pass_index), dtype=np.int64)
        stage = ShuffleStage(rt, sampler, self.shuffle.buffer_size, self.shuffle_position, builder.chunk_rows,
                             self.shuffle.label)
        stage.skip_passes(pass_index)
        with closing(stage.run()) as chunks:
            parts = [np.asarray(chunk.rows, dtype=np.int64) for chunk in chunks]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _post_order_positions(tree: ir.Node) -> dict[int, int]:
    """Each node's position as the local compiler numbers them (post-order from 1): positions key the
    samplers' and shuffle buffers' random streams."""
    positions: dict[int, int] = {}

    def visit(node: ir.Node) -> None:
        for child in node.children:
            visit(child)
        positions[id(node)] = len(positions) + 1

    visit(tree)
    return positions


class RayPlan:
    """A plan (validated, optimized, placed) split into Ray segments and a local tail.

    Raises :class:`GraphError` when part of the plan cannot run distributed, naming the op and why.
    """

    def __init__(self, root: ir.Node, error_mode: str | None = None):
        self.tree = plan_tree(root)
        self.error_mode = error_mode or config.get_error_samples_mode().value
        self.positions = _post_order_positions(self.tree)
        self.segments: dict[int, Segment] = {}
        self._split(self.tree)

    def _split(self, node: ir.Node) -> None:
        segment = self._segment_at(node)
        if segment is not None:
            self.segments[id(node)] = segment
            return
        if isinstance(node, ir.MapNode):
            blocker = node.children[0]
            while isinstance(blocker, _ROW_STEPS):
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
        for child in node.children:
            self._split(child)

    def _segment_at(self, node: ir.Node) -> Segment | None:
        steps: list[ir.Node] = []
        below = node
        while isinstance(below, _ROW_STEPS):
            steps.append(below)
            below = below.children[0]
        shuffle = None
        if isinstance(below, ir.ShuffleNode) and isinstance(below.children[0], ir.RandomAccessSourceNode):
            shuffle, below = below, below.children[0]
        splittable_stream = isinstance(below, ir.IterableSourceNode) and below.record_reads is not None
        if not isinstance(below, ir.RandomAccessSourceNode) and not splittable_stream:
            return None
        steps.reverse()
        self._check_steps(steps)
        return Segment(below, shuffle, steps, node, self.positions)

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
            if dropped_by is not None and _is_random(node):
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
        plan = self

        class _TailBuilder(_Builder):
            def build(self, node: ir.Node) -> Stage:
                segment = plan.segments.get(id(node))
                if segment is None:
                    return super().build(node)
                stage = RaySegmentStage(self.rt, plan, segment)
                stage.node = node
                # Keep the compiler's numbering: the nodes under this one are not built here.
                self.node_counter = plan.positions[id(node)]
                return stage

            def build_node(self, node: ir.Node, children: list[Stage], position: int) -> Stage:
                # A batch without per_batch_map stacks, pads or normalizes each row into new arrays.
                if isinstance(node, ir.BatchNode) and node.per_batch_map is None:
                    for child in children:
                        if isinstance(child, RaySegmentStage):
                            child.consumer_copies_rows = True
                return super().build_node(node, children, position)

        return _TailBuilder(rt, None).build(self.tree)

    # -- Ray datasets -----------------------------------------------------------------------------

    def segment_dataset(self, segment: Segment, seed: int, pass_index: int, skip: int = 0,
                        rows_multiple: int = 1, rows_per_task: int | None = None,
                        shard_seed: int | None = None) -> Any:
        """A ``ray.data.Dataset`` of the segment's rows for pass ``pass_index``, from row ``skip`` on,
        as internal blocks (``__pos__``, ``__id__``, ``__row__``, ``__origin__``), in pass order
        (read tasks hold multiples of ``rows_multiple`` rows)."""
        ray = require_ray()
        rt = Runtime(seed, self.error_mode, shard_seed=shard_seed)
        ids = segment.pass_ids(rt, pass_index)[skip:]
        # Equal tasks: tasks shrinking towards the end of the pass (guided) measured the same here.
        sizes = _uniform_sizes(len(ids), rows_per_task or _rows_per_task(len(ids), rows_multiple, ray))
        groups = _step_groups(segment.steps)
        # A first task step reads its block's rows itself (Ray fuses the read into its task): the
        # rows then skip a pack and an unpack. An actor step keeps them read by the read tasks, which
        # run alongside the pool.
        reads_in_step = bool(groups) and not _needs_actor(groups[0][0])
        chunk_rows = config.get_rows_per_chunk()
        source = _datasource_class()(segment.reads, ids, skip, sizes, chunk_rows, reads_in_step)
        # As many blocks as read tasks: Ray would otherwise split blocks at arbitrary rows.
        ds = ray.data.read_datasource(source, override_num_blocks=max(1, len(sizes)))
        ds.context.execution_options.preserve_order = True
        # An op's RowError reaches the consumer as itself (naming the op, row and file), not as text.
        ds.context.raise_original_map_exception = True
        # Each map task would otherwise poll its own memory use (psutil) once a second in a thread.
        ds.context.memory_usage_poll_interval_s = None
        if not any(_needs_actor(group[0]) for group in groups):
            # Read and task maps fuse into one operator. Ray Data would reserve half the cluster for
            # operators that do not exist here, leaving about one task in flight at a time (2,000
            # images on 2 CPUs: 2.85 s with the reservation, 1.97 s without). Actor pools keep it:
            # there it stops one operator from starving the next.
            ds.context.op_resource_reservation_enabled = False
        rule = None
        sampler = getattr(segment.source, "sampler", None)
        if segment.shuffle is None and hasattr(sampler, "_global_key_rule"):
            # A shard's rows draw by their place in the epoch's global order, as locally (Chunk.keys).
            rule = sampler._global_key_rule(segment.source.num_rows())
        for k, group in enumerate(groups):
            reads = _Reads(segment.reads.fetch, chunk_rows) if k == 0 and reads_in_step else None
            chain = _Chain([_Step(node, seed, self.error_mode, pass_index, keys=rule) for node in group], reads)
            name = "+".join(_op_name(node) for node in group)
            segment.operator_labels[name] = " → ".join(node.label for node in group)
            if _needs_actor(group[0]):
                ds = ds.map_batches(
                    type(name, (_ActorChain,), {}), fn_constructor_args=(chain,), batch_format="pyarrow",
                    batch_size=None, concurrency=(1, max(1, int(ray.available_resources().get("CPU", 1)))),
                    num_gpus=_num_gpus(group[0]) or None,
                )
            else:
                ds = ds.map_batches(_named_fn(chain, name), batch_format="pyarrow", batch_size=None)
        return ds


def _step_groups(steps: list[ir.Node]) -> list[list[ir.Node]]:
    """Consecutive task steps as one group (one Ray call: rows unpacked and packed once for all of
    them); each map that needs an actor pool alone. Renames have no step: names live in the schema."""
    groups: list[list[ir.Node]] = []
    for node in steps:
        if isinstance(node, ir.RenameNode):
            continue
        if _needs_actor(node) or not groups or _needs_actor(groups[-1][0]):
            groups.append([node])
        else:
            groups[-1].append(node)
    return groups


# Rows per read task: enough tasks to keep every CPU busy with a few in flight, few enough that the
# fixed cost of a task (scheduling, a block in the object store) stays small next to its rows.
TASKS_PER_CPU = 4
MAX_ROWS_PER_TASK = 512  # 512 decoded 224x224 images: 77 MB, under Ray's 128 MB block target


def _uniform_sizes(rows: int, per_task: int) -> list[int]:
    return [min(per_task, rows - start) for start in range(0, rows, per_task)]


def _rows_per_task(rows: int, multiple: int, ray: Any) -> int:
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    per_task = min(MAX_ROWS_PER_TASK, max(config.get_rows_per_chunk(), math.ceil(rows / (cpus * TASKS_PER_CPU))))
    multiple = max(1, multiple)
    return max(multiple, -(-per_task // multiple) * multiple)


def _op_name(node: ir.Node) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in node.label)[:60]


def _named_fn(step: Any, name: str) -> Any:
    # Ray names a task operator after its function: the plan's labels read better than "_Chain".
    def run(table: Any) -> Any:
        return step(table)

    run.__name__ = run.__qualname__ = name
    return run


_DATASOURCE: Any = None


def _datasource_class() -> Any:
    global _DATASOURCE
    if _DATASOURCE is not None:
        return _DATASOURCE
    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata

    class MinddataSource(Datasource):
        """Read tasks over contiguous runs of a pass's rows (a record/Parquet source's rows in file and
        row-range order when unshuffled): ``fetch(ids)`` in the task, rows tagged with their position.
        ``node`` is a random-access source or a streamed source's ``record_reads``."""

        def __init__(self, node: Any, ids: np.ndarray, first_pos: int, sizes: list[int],
                     chunk_rows: int, reads_in_step: bool = False):
            self.node = node
            self.ids = ids
            self.first_pos = first_pos
            self.sizes = sizes
            self.chunk_rows = chunk_rows
            self.reads_in_step = reads_in_step

        def get_name(self) -> str:
            return self.node.name

        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                           data_context: Any = None) -> list[Any]:
            reads = None if self.reads_in_step else _Reads(self.node.fetch, self.chunk_rows)
            origins = self.node.origins
            tasks = []
            start = 0
            for size in self.sizes:
                ids = self.ids[start : start + size].tolist()
                meta = BlockMetadata(num_rows=len(ids), size_bytes=None, exec_stats=None, input_files=None)
                tasks.append(ReadTask(_read_task(reads, origins, ids, self.first_pos + start), meta))
                start += size
            return tasks

    _DATASOURCE = MinddataSource
    return MinddataSource


class _Reads:
    """A source's rows for a list of ids, fetched ``chunk_rows`` at a time (as the local engine does)."""

    def __init__(self, fetch: Any, chunk_rows: int):
        self.fetch = fetch
        self.chunk_rows = chunk_rows

    def __call__(self, ids: list[int]) -> list[Any]:
        rows: list[Any] = []
        for start in range(0, len(ids), self.chunk_rows):
            rows.extend(self.fetch(ids[start : start + self.chunk_rows]))
        return rows


def _read_task(reads: _Reads | None, origins: Any, ids: list[int], pos: int) -> Any:
    """One block per task: map steps then see whole runs of consecutive positions. Without ``reads``
    the block carries no rows (null ``__row__``): the first step reads them."""

    def read() -> Iterator[Any]:
        where = origins(ids) if origins is not None else None
        positions = np.arange(pos, pos + len(ids), dtype=np.int64)
        yield _frame(positions, ids, reads(ids) if reads is not None else None, where)

    return read


def _objects(values: list[Any]) -> np.ndarray:
    # np.array would turn a list of tuples of arrays into one big array: fill an object array instead.
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


# A packed row: buffer count and pickle length, the buffers' lengths, the pickle, then the buffers.
_ROW_HEAD = struct.Struct("<IQ")


# A packed column is cut into buffers of at most this size. The cost of packing is first touches of
# fresh memory: 250 images of 224x224x3 took 106-128 us per image joined into one 37 MB bytes object,
# 65-77 in 16 MB pieces, 42-58 in 16 MB NumPy buffers (backed by huge pages where the kernel has them).
PACKED_CHUNK_BYTES = 16 << 20
# The pieces a process keeps for its next blocks (4: a 250-image block of 224x224x3 takes 3). They are
# handed out again once Ray has copied the block holding them into its object store and let it go:
# fresh pieces cost a page fault and a zeroed page every 4 KB (packing 250 images: 60-70 us per image
# in fresh pieces, 35-38 in recycled ones).
_PIECES = BufferPool(size=4)


class _Packer:
    """Rows packed into an Arrow ``large_binary`` column as they come: one array, or a chunked array of
    pieces of at most :data:`PACKED_CHUNK_BYTES` (a row larger than that is a piece alone).

    Each row is pickled (protocol 5) with its arrays' data out of band and copied once into its
    piece: an image is copied once into the block, where ``pa.array`` over per-row pickles copied it
    twice and spent most of its time allocating. Rows are copied when added once the column holds
    ``PACKED_CHUNK_BYTES // 16`` (into a recycled piece), so a task's output rows are freed chunk by
    chunk instead of sitting in memory next to their packed copy until the block ends (37 MB for a
    block of 250 images of 224x224x3).
    """

    def __init__(self) -> None:
        self._chunks: list[Any] = []
        self._pending: list[Any] = []  # the current piece's parts, not copied yet
        self._piece: np.ndarray | None = None  # the current piece's buffer, once rows are copied
        self._offsets = [0]

    def add(self, row: Any) -> None:
        buffers: list[pickle.PickleBuffer] = []
        body = pickle.dumps(row, protocol=5, buffer_callback=buffers.append)
        raws = [buffer.raw() for buffer in buffers]
        sizes = [raw.nbytes for raw in raws]
        parts = [_ROW_HEAD.pack(len(sizes), len(body)) + struct.pack(f"<{len(sizes)}Q", *sizes) + body, *raws]
        size = _ROW_HEAD.size + 8 * len(sizes) + len(body) + sum(sizes)
        limit = PACKED_CHUNK_BYTES
        if len(self._offsets) > 1 and self._offsets[-1] + size > limit:
            self._finish()
        if self._piece is None and self._offsets[-1] + size > limit // 16:
            need = self._offsets[-1] + size
            # A row larger than a piece is a piece of its own size, not recycled.
            self._piece = _PIECES.empty((limit,), np.uint8) if need <= limit else np.empty(need, np.uint8)
            self._copy(self._pending, 0)
            self._pending.clear()
        if self._piece is not None:
            self._copy(parts, self._offsets[-1])
        else:
            self._pending.extend(parts)
        self._offsets.append(self._offsets[-1] + size)

    def extend(self, rows: Iterable[Any]) -> None:
        for row in rows:
            self.add(row)

    def column(self) -> Any:
        """The packed column (the packer is empty again afterwards)."""
        import pyarrow as pa

        if len(self._offsets) > 1 or not self._chunks:
            self._finish()
        chunks, self._chunks = self._chunks, []
        return chunks[0] if len(chunks) == 1 else pa.chunked_array(chunks, type=pa.large_binary())

    def _copy(self, parts: list[Any], at: int) -> None:
        assert self._piece is not None
        for part in parts:
            size = len(part) if isinstance(part, bytes) else part.nbytes
            self._piece[at : at + size] = np.frombuffer(part, dtype=np.uint8)
            at += size

    def _finish(self) -> None:
        import pyarrow as pa

        if self._piece is None:
            self._piece = np.empty(self._offsets[-1], dtype=np.uint8)
            self._copy(self._pending, 0)
            self._pending.clear()
        data = self._piece[: self._offsets[-1]]
        self._piece = None
        bounds = np.asarray(self._offsets, dtype=np.int64)
        self._chunks.append(pa.Array.from_buffers(pa.large_binary(), len(self._offsets) - 1,
                                                  [None, pa.py_buffer(bounds), pa.py_buffer(data)]))
        del self._offsets[1:]


def _pack_rows(rows: Iterable[Any]) -> Any:
    """Rows as a packed Arrow column (see :class:`_Packer`)."""
    packer = _Packer()
    packer.extend(rows)
    return packer.column()


def _unpack_rows(column: Any, copy: bool = True) -> list[Any]:
    """The rows of a packed column (an Arrow array or chunked array), each array in its own writable
    memory: a row never points into Ray's object store. With ``copy=False`` the arrays are read-only
    views of the column's buffers (for a consumer that copies every row at once, as a batch does)."""
    import pyarrow as pa

    loads, unpack_head = pickle.loads, _ROW_HEAD.unpack_from
    rows: list[Any] = []
    for array in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        if not len(array):
            continue
        if array.null_count == len(array):  # a block of row ids whose rows are not read yet
            rows.extend([None] * len(array))
            continue
        _, offset_buffer, data_buffer = array.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
        data = memoryview(data_buffer)
        for start in offsets[:-1].tolist():
            count, body_size = unpack_head(data, start)
            at = start + _ROW_HEAD.size
            sizes = struct.unpack_from(f"<{count}Q", data, at) if count else ()
            at += 8 * count
            body = data[at : at + body_size]
            at += body_size
            buffers = []
            for size in sizes:
                buffers.append(bytearray(data[at : at + size]) if copy else data[at : at + size])
                at += size
            rows.append(loads(body, buffers=buffers))
    return rows


def _origins_column(origins: list[Any]) -> Any:
    import pyarrow as pa

    try:
        return pa.array(origins, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: they travel packed, like rows
        return _pack_rows(origins)


def _origins_of(table: Any) -> list[Any]:
    import pyarrow as pa

    column = table.column(ORIGIN)
    if pa.types.is_large_binary(column.type):
        return _unpack_rows(column)
    return column.to_pylist()


def _frame(pos: Any, ids: Any, rows: list[Any] | None, origins: list[Any] | None) -> Any:
    """An internal block: an Arrow table whose rows travel packed (:func:`_pack_rows`), bit for bit.
    Ray would otherwise infer Arrow types for them (a tuple of an int and a float becomes a list of
    floats); an Arrow block is also what Ray keeps without converting it. ``rows=None``: a block of
    row ids whose rows the first step reads (a null ``__row__`` column)."""
    import pyarrow as pa

    count = len(ids)
    if rows is None:
        column = pa.nulls(count, pa.large_binary())
    else:
        column = rows if isinstance(rows, (pa.Array, pa.ChunkedArray)) else _pack_rows(rows)
    return pa.table({
        POS: pa.array(np.asarray(pos, dtype=np.int64)),
        ID: pa.array(np.asarray(ids, dtype=np.int64)),
        ROW: column,
        ORIGIN: _origins_column(list(origins) if origins is not None else [None] * count),
    })


def _frame_rows(table: Any, copy: bool = True) -> list[Any]:
    return _unpack_rows(table.column(ROW), copy)


def _positions(table: Any) -> np.ndarray:
    return table.column(POS).to_numpy()


class _RowId(int):
    """A source row id (as error messages print it) that also carries the row's position in the pass."""

    pos: int


class _Feed(Stage):
    """Hands one prepared chunk to the step built over it; ``run(skip)`` starts at row ``skip``."""

    fast_skip = True
    label = "ray-block"

    def __init__(self, rt: Runtime):
        super().__init__(rt, [])
        self.pending: Chunk | None = None

    def _run(self, pass_index: int, skip: int = 0) -> Iterator[Chunk]:
        chunk, self.pending = self.pending, None
        if chunk is None:
            return
        # In chunks of the local engine's size: the last step's rows are packed, and freed, as they come.
        step = max(1, config.get_rows_per_chunk())
        for start in range(0, len(chunk), step):
            yield chunk.slice(start, start + step)


# Settings the kernels and device parts read in the worker: the driver's values travel with each step.
WORKER_SETTINGS = ("max_image_pixels", "device_fallback", "dvpp_driver", "dvpp_policy", "gpu_emulation",
                   "rows_per_chunk")


class _Step:
    """One per-row plan step, run over Ray blocks by the local compiler's own stage for it."""

    def __init__(self, node: ir.Node, seed: int, error_mode: str, pass_index: int,
                 keys: tuple[int, int, int] | None = None):
        # (first, step, modulo): the row at pass position p has the global key (first + step * p) %
        # modulo (a shard's rows, as the local engine keys them: Chunk.keys); None: keyed by position.
        self.keys = keys
        self.settings = {name: getattr(config, f"get_{name}")() for name in WORKER_SETTINGS}
        if isinstance(node, ir.MapNode):
            # A Ray worker is a process already, and the read task reads the rows. The map runs in
            # the task's thread: a worker thread per task had its memory in a thread arena of its own,
            # which glibc gave back and faulted in again for every block (40 page faults per image).
            node = dataclasses.replace(node, python_multiprocessing=False, reads_source=False, inline=True)
        if any(f.name == "num_workers" for f in dataclasses.fields(node)):
            node = dataclasses.replace(node, num_workers=1)  # Ray runs the tasks in parallel
        self.node = node
        self.seed = seed
        self.error_mode = error_mode
        self.pass_index = pass_index
        self._built: tuple[Runtime, _Feed, Stage] | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_built": None}

    def _build(self) -> tuple[Runtime, _Feed, Stage]:
        if self._built is None:
            for name, value in self.settings.items():
                getattr(config, f"set_{name}")(value)
            rt = Runtime(self.seed, self.error_mode)
            feed = _Feed(rt)
            builder = _Builder(rt, None)
            self._built = (rt, feed, builder.build_node(self.node, [feed], 0))
        return self._built

    def close(self) -> None:
        if self._built is not None:
            self._built[0].close()
            self._built = None

    def apply(self, pos: np.ndarray, ids: np.ndarray, rows: list[Any], origins: list[Any],
              packer: _Packer | None = None) -> tuple:
        """The step over one block's rows (with their positions, ids and files); the same four back.
        With ``packer`` the output rows go into it as they come, and the rows returned are its column."""
        rt, feed, stage = self._build()
        return self._run_rows(pos, ids, rows, origins, feed, stage, packer)

    def _run_rows(self, pos: np.ndarray, ids: np.ndarray, rows: list[Any], origins: list[Any], feed: _Feed,
                  stage: Stage, packer: _Packer | None = None) -> tuple:
        out_rows: list[Any] = []
        keep: Callable[[list[Any]], Any] = out_rows.extend if packer is None else packer.extend
        out_pos: list[int] = []
        out_ids: list[int] = []
        out_origins: list[Any] = []
        # Runs of consecutive positions: each is one chunk starting at its first row's position.
        breaks = np.flatnonzero(np.diff(pos) != 1) + 1
        batch = self.node.batch_size if isinstance(self.node, ir.BatchNode) else None
        for start, stop in zip(np.r_[0, breaks], np.r_[breaks, len(pos)]):
            skip = int(pos[start])
            if batch is not None:
                # A batch keeps the local engine's grouping only from a batch boundary (read tasks hold
                # whole batches); its rows are then the batch numbers.
                if skip % batch:
                    raise GraphError(
                        f"to_ray(): {self.node.label} got a Ray block starting at row {skip}, not at a batch "
                        "boundary; iterate with create_dict_iterator(executor='ray') instead."
                    )
                skip //= batch
            tagged = []
            for i in range(start, stop):
                row_id = _RowId(int(ids[i]))
                row_id.pos = int(pos[i])
                tagged.append(row_id)
            keys = None
            if self.keys is not None:
                first, step, modulo = self.keys
                keys = [(first + step * int(p)) % modulo for p in pos[start:stop]]
            feed.pending = Chunk(rows[start:stop], tagged, origins[start:stop], keys)
            # The stage's own _run: row indices start at the run's position, and nothing is dropped.
            with closing(stage._run(self.pass_index, skip)) as chunks:
                for chunk in chunks:
                    keep(chunk.rows)
                    if batch is not None:
                        out_pos.extend(range(skip, skip + len(chunk)))
                        out_ids.extend(range(skip, skip + len(chunk)))
                        out_origins.extend([None] * len(chunk))
                        skip += len(chunk)
                        continue
                    out_pos.extend(t.pos for t in chunk.ids)  # type: ignore[union-attr]
                    out_ids.extend(chunk.ids)  # type: ignore[arg-type]
                    out_origins.extend(chunk.origins or [None] * len(chunk))
        return (np.asarray(out_pos, dtype=np.int64), np.asarray(out_ids, dtype=np.int64),
                out_rows if packer is None else packer.column(), out_origins)



class _Chain:
    """Consecutive steps run in one Ray call over a block: rows are unpacked once, go through every
    step, and are packed once. Error counts of ``skip`` mode travel in a bookkeeping row."""

    def __init__(self, steps: list[_Step], reads: _Reads | None = None):
        self.steps = steps
        self.reads = reads  # set when the block holds row ids only: this chain reads the rows

    def build(self) -> None:
        for step in self.steps:
            step._build()

    def close(self) -> None:
        for step in self.steps:
            step.close()

    def __call__(self, table: Any) -> Any:
        import pyarrow as pa

        notes = _positions(table) == NOTE_POS
        note_rows = None
        if notes.any():
            note_rows, table = table.filter(pa.array(notes)), table.filter(pa.array(~notes))
        ids = table.column(ID).to_numpy()
        rows = self.reads(ids.tolist()) if self.reads is not None else _frame_rows(table)
        data = (_positions(table), ids, rows, _origins_of(table))
        errors = ErrorStats()
        for k, step in enumerate(self.steps):
            rt = step._build()[0]
            rt.errors = ErrorStats()
            # The last step's rows are packed as they come, and freed one by one (see _Packer).
            data = step.apply(*data, packer=_Packer() if k == len(self.steps) - 1 else None)
            errors.merge(rt.errors.skipped, rt.errors.replaced, rt.errors.samples)
        out = _frame(*data)
        parts = [out]
        if errors.skipped or errors.replaced:
            parts.append(_frame([NOTE_POS], [0], [(errors.skipped, errors.replaced, errors.samples)], None))
        if note_rows is not None:
            parts.append(note_rows)
        if len(parts) == 1:
            return out
        # Bookkeeping rows have no file: their origin column takes the type of the rows' one.
        where = out.schema.get_field_index(ORIGIN)
        origin_type = out.schema.field(where).type
        return pa.concat_tables([
            part if part.schema.equals(out.schema)
            else part.set_column(where, ORIGIN, pa.nulls(len(part), origin_type))
            for part in parts
        ])


class _ActorChain:
    """An actor of a pool running one chain: built once per actor (device set-up, model loading).
    Subclassed per plan step with the step's name, which Ray shows as the operator's name."""

    def __init__(self, chain: _Chain):
        self.chain = chain
        chain.build()

    def __call__(self, table: Any) -> Any:
        return self.chain(table)

    def __del__(self) -> None:
        self.chain.close()


def _take_notes(table: Any, errors: ErrorStats) -> Any:
    """``table`` without its bookkeeping rows, whose error counts go to ``errors``."""
    import pyarrow as pa

    notes = _positions(table) == NOTE_POS
    if not notes.any():
        return table
    for skipped, replaced, samples in _frame_rows(table.filter(pa.array(notes))):
        errors.merge(skipped, replaced, samples)
    return table.filter(pa.array(~notes))


def _unwrap(error: BaseException) -> BaseException:
    """The minddata error inside Ray's wrappers (RayTaskError, UserCodeException), if any."""
    seen = error
    for _ in range(8):
        if isinstance(seen, MinddataError) and type(seen).__module__.startswith("minddata"):
            return seen
        cause = getattr(seen, "cause", None) or seen.__cause__
        if cause is None:
            break
        seen = cause
    return error


def _blocks(ds: Any) -> Iterator[Any]:
    """The execution's blocks (Arrow tables) in order, each as soon as its task is done.

    ``iter_batches`` yields a block only once the block ``prefetch_batches`` after it is done too: on
    a 2-CPU cluster the first rows reached the consumer 1.1 s into a 2.2 s pass instead of 0.6 s, and
    its work was left for the end of the pass, when the workers are idle. A block of another node is
    fetched when the consumer reaches it; the tasks go on meanwhile.
    """
    ray = require_ray()
    for bundle in ds.iter_internal_ref_bundles():
        for ref in bundle.block_refs:
            yield ray.get(ref)


class RaySegmentStage(Stage):
    """The consumer's source for a segment: one Ray execution per pass, rows in pass order.

    In a profiled run its own time is waiting on Ray; the profiler's stage table gets one parallel
    stage per Ray operator instead (:meth:`profile_entries`), from Ray Data's per-operator stats.
    """

    fast_skip = True
    profile_internal = True

    def __init__(self, rt: Runtime, plan: RayPlan, segment: Segment):
        super().__init__(rt, [], segment.label)
        self.plan = plan
        self.segment = segment
        # Ray operator name -> summed stats over the passes run so far (see _record_stats).
        self.operator_stats: dict[str, dict[str, float]] = {}
        # Set when the consumer is a batch that copies each row into its batch arrays and lets it go:
        # rows then stay read-only views of the blocks (no copy out of the object store first).
        self.consumer_copies_rows = False

    def _run(self, pass_index: int, skip: int = 0) -> Iterator[Chunk]:
        ds = self.plan.segment_dataset(self.segment, self.rt.seed, pass_index, skip, shard_seed=self.rt.shard_seed)
        batches = _blocks(ds)
        try:
            with closing(batches):  # type: ignore[type-var]
                for table in batches:
                    self.rt.check()
                    table = _take_notes(table, self.rt.errors)
                    if len(table):
                        rows = _frame_rows(table, copy=not self.consumer_copies_rows)
                        yield Chunk(rows, table.column(ID).to_pylist(), _origins_of(table))
        except Exception as error:  # noqa: BLE001 - re-raised, unwrapped from Ray's wrappers
            inner = _unwrap(error)
            if inner is error:
                raise
            raise inner from error
        if self.prof is not None:
            self._record_stats(ds)

    def _record_stats(self, ds: Any) -> None:
        try:
            operators = ds._get_stats_summary().operators_stats
        except Exception:  # noqa: BLE001 - stats are best effort; the rows are what matters
            return
        for op in operators:
            total = self.operator_stats.setdefault(
                op.operator_name, {"wall": 0.0, "cpu": 0.0, "rows": 0, "tasks": 0, "span": 0.0}
            )
            total["wall"] += op.wall_time.sum if op.wall_time else 0.0
            total["cpu"] += op.cpu_time.sum if op.cpu_time else 0.0
            total["rows"] += int(op.output_num_rows.sum) if op.output_num_rows else 0
            total["tasks"] += int(op.wall_time.count) if op.wall_time else 0
            if op.earliest_start_time is not None and op.latest_end_time is not None:
                total["span"] += max(0.0, op.latest_end_time - op.earliest_start_time)

    def display_name(self, operator: str) -> str:
        """A Ray operator's name in the plan's words: ``ReadX->MapBatches(Map_f_)`` → ``X → Map[f]``."""
        names = self.segment.operator_labels
        parts = []
        for part in operator.split("->"):
            if part.startswith("Read"):
                parts.append(part[len("Read"):])
            elif part.startswith("MapBatches(") and part.endswith(")"):
                inner = part[len("MapBatches("):-1]
                parts.append(names.get(inner, inner))
            else:
                parts.append(part)
        return "Ray " + " → ".join(parts)

    def profile_entries(self, first_index: int, parent: int, t0: float) -> list[dict[str, Any]]:
        """Stage-table entries for the Ray operators: each a parallel stage whose workers are the
        cluster's CPUs, busy for the operator's summed task time over its span."""
        cpus = max(1, int(_cluster_cpus()))
        entries = []
        for k, (operator, stats) in enumerate(self.operator_stats.items()):
            span = max(stats["span"], 1e-9)
            workers = [
                {"name": f"ray-cpu-{i}", "start": 0.0, "end": span, "work": stats["wall"] / cpus,
                 "cpu": stats["cpu"] / cpus, "slot_wait": 0.0, "input_wait": 0.0,
                 "chunks": stats["tasks"] / cpus, "rows": stats["rows"] / cpus}
                for i in range(cpus)
            ]
            entries.append({
                "index": first_index + k, "parent": parent, "label": operator, "name": self.display_name(operator),
                "internal": False, "kind": "parallel", "inclusive": stats["wall"], "rows_out": int(stats["rows"]),
                "chunks_out": int(stats["tasks"]), "chunk_bytes": 0.0, "node_type": "RayOperator",
                "python_ops": False, "workers_now": cpus, "slots_now": cpus, "autotune": False,
                "process_workers": True, "workers": workers,
            })
        return entries


def _cluster_cpus() -> float:
    import ray

    try:
        return float(ray.cluster_resources().get("CPU", 1))
    except Exception:  # noqa: BLE001 - not connected any more: one CPU is the safe guess
        return 1.0


def to_ray(root: ir.Node, columns: list[str]) -> Any:
    """A ``ray.data.Dataset`` of the pipeline's rows (one pass), with the pipeline's column names.

    The plan must be one segment, optionally ending in ``batch`` with a fixed ``batch_size``; read
    tasks then hold whole batches, so the batches are the local engine's.
    """
    plan = RayPlan(root)
    node = plan.tree
    batch = None
    if isinstance(node, ir.BatchNode) and id(node) not in plan.segments:
        batch, node = node, node.children[0]
        if callable(batch.batch_size):
            raise GraphError(f"to_ray(): {batch.label} with a callable batch_size can't be cut into Ray read tasks.")
    segment = plan.segments.get(id(node))
    if segment is None:
        tail = next(n for n in node.walk() if id(n) not in plan.segments and not isinstance(n, _ROW_STEPS))
        raise GraphError(
            f"to_ray(): {tail.label} runs in the consumer, so it can't be part of a Ray dataset. Iterate with "
            "create_dict_iterator(executor='ray') instead, or apply it to the Ray dataset yourself."
        )
    seed = config.get_seed() if config.seed_is_set() else int.from_bytes(np.random.bytes(4), "little")
    ds = plan.segment_dataset(segment, seed, 0, rows_multiple=batch.batch_size if batch is not None else 1,
                              shard_seed=config.get_seed())
    if batch is not None:
        collate = _Chain([_Step(batch, seed, plan.error_mode, 0)])
        ds = ds.map_batches(_named_fn(collate, _op_name(batch)), batch_format="pyarrow", batch_size=None)
    names = list(columns)
    return ds.map_batches(_Columns(names), batch_format="pyarrow", batch_size=None)


class _Columns:
    """Internal blocks → the pipeline's columns (arrays stay arrays; Ray lays out tensor columns)."""

    def __init__(self, names: list[str]):
        self.names = names

    def __call__(self, table: Any) -> dict[str, Any]:
        rows = _frame_rows(_take_notes(table, ErrorStats()))
        out: dict[str, Any] = {}
        for k, name in enumerate(self.names):
            values = [np.asarray(row[k]) for row in rows]
            try:
                out[name] = np.stack(values) if values else np.empty(0)
            except ValueError:  # ragged: one array per row
                out[name] = _objects(values)
        return out
