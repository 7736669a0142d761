"""The per-row steps on Ray: ``map_batches`` calls and actor pools running the local engine's stages.

Each plan step (a map, filter or project; a batch for ``to_ray``) is built in the Ray worker by the
local compiler's :class:`~minddata.engine.compiler.Planner`, over a stage that feeds it a block's
rows, so a Ray map runs the very kernels, error policy and device parts a local one runs, with the
run's settings (the iterator's :class:`~minddata.config.RunOptions`, shipped with the step; the
worker's own config is never read or written). Consecutive task steps run as one Ray call; a map with
a device part or a stateful Python callable runs in an actor pool, set up once per actor.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from contextlib import closing
from typing import Any

import numpy as np

from minddata import config
from minddata.config import RunOptions
from minddata.engine import ir
from minddata.engine.chunk import Chunk, Chunks
from minddata.engine.compiler import Planner
from minddata.engine.devicemap import needs_device_build
from minddata.engine.ray_executor.codec import (
    ID,
    NOTE_POS,
    ORIGIN,
    Packer,
    block_positions,
    frame,
    frame_rows,
    origins_of,
)
from minddata.engine.ray_executor.datasource import Reads
from minddata.engine.runtime import ErrorStats, Runtime
from minddata.engine.stages import Stage
from minddata.errors import GraphError
from minddata.ops.base import Op

__all__ = ["Step", "Chain", "ActorChain", "needs_actor", "is_random", "num_gpus", "step_groups", "op_name",
           "named_fn"]


def is_random(node: ir.MapNode) -> bool:
    """Whether a map's ops draw from the row's random stream (keyed by the row's position)."""
    # Python callables may draw their own randomness; only ops keyed on the row index matter here.
    return any(isinstance(op, Op) and op.random for op in node.operations)


def needs_actor(node: ir.Node) -> bool:
    """Maps with set-up worth keeping: a device part (GPU segment, Dvpp driver) or a Python callable
    object (a class instance may hold a model): they run in an actor pool, built once per actor."""
    if not isinstance(node, ir.MapNode):
        return False
    if needs_device_build(node):
        return True
    return any(not isinstance(op, Op) and not _is_function(op) for op in node.operations)


def _is_function(op: Any) -> bool:
    return isinstance(op, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial))


def num_gpus(node: ir.Node) -> float:
    """GPUs one actor of ``node``'s pool asks Ray for: one when a segment part runs on a real GPU, with
    either driver (DALI's ``cuda``, torch's ``torch-cuda``; Dvpp on ``nvjpg`` is a ``cuda`` segment).
    Ray hides every GPU from an actor that asked for none (``CUDA_VISIBLE_DEVICES`` is emptied), so
    without this the segment could not build there. Emulated segments need none.
    """
    from minddata.ops.devices import segment_needs_gpu

    parts = getattr(node, "device_parts", None) or []
    return 1.0 if any(part.kind == "segment" and segment_needs_gpu(part.backend) for part in parts) else 0.0


def step_groups(steps: list[ir.Node]) -> list[list[ir.Node]]:
    """Consecutive task steps as one group (one Ray call: rows unpacked and packed once for all of
    them); each map that needs an actor pool alone. Renames have no step: names live in the schema."""
    groups: list[list[ir.Node]] = []
    for node in steps:
        if isinstance(node, ir.RenameNode):
            continue
        if needs_actor(node) or not groups or needs_actor(groups[-1][0]):
            groups.append([node])
        else:
            groups[-1].append(node)
    return groups


def op_name(node: ir.Node) -> str:
    """A plan node's label as a Ray operator name (letters, digits and underscores)."""
    return "".join(ch if ch.isalnum() else "_" for ch in node.label)[:60]


def named_fn(step: Any, name: str) -> Any:
    """``step`` as a function called ``name``."""
    # Ray names a task operator after its function: the plan's labels read better than "Chain".
    def run(table: Any) -> Any:
        return step(table)

    run.__name__ = run.__qualname__ = name
    return run


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

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        chunk, self.pending = self.pending, None
        if chunk is None:
            return
        # In chunks of the local engine's size: the last step's rows are packed, and freed, as they come.
        step = max(1, self.rt.options.rows_per_chunk)
        for start in range(0, len(chunk), step):
            yield chunk.slice(start, start + step)


class Step:
    """One per-row plan step, run over Ray blocks by the local compiler's own stage for it
    (:meth:`Planner.build_node <minddata.engine.compiler.Planner.build_node>`), in a
    :class:`Runtime` holding ``options``: the run's settings, shipped with the step (the worker's own
    config is neither read nor written)."""

    def __init__(self, node: ir.Node, seed: int, error_mode: str, pass_index: int, options: RunOptions,
                 keys: tuple[int, int, int] | None = None):
        # (first, step, modulo): the row at pass position p has the global key (first + step * p) %
        # modulo (a shard's rows, as the local engine keys them: Chunk.keys); None: keyed by position.
        self.keys = keys
        self.options = options
        if isinstance(node, ir.MapNode):
            # A Ray worker is a process already, and the read task reads the rows. The map runs in
            # the task's thread: a worker thread per task had its memory in a thread arena of its own,
            # which glibc gave back and faulted in again for every block (40 page faults per image).
            node = dataclasses.replace(node, python_multiprocessing=False, reads_source=False, inline=True)
        if isinstance(node, (ir.MapNode, ir.FilterNode, ir.BatchNode)):
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
            rt = Runtime(self.seed, self.error_mode, options=self.options)
            feed = _Feed(rt)
            # Position 0: a per-row step keys its random ops by the ops' own positions, not the node's.
            self._built = (rt, feed, Planner(rt).build_node(self.node, [feed], 0))
        return self._built

    def close(self) -> None:
        if self._built is not None:
            self._built[0].close()
            self._built = None

    def apply(self, pos: np.ndarray, ids: np.ndarray, rows: list[Any], origins: list[Any],
              packer: Packer | None = None) -> tuple:
        """The step over one block's rows (with their positions, ids and files); the same four back.
        With ``packer`` the output rows go into it as they come, and the rows returned are its column."""
        rt, feed, stage = self._build()
        return self._run_rows(pos, ids, rows, origins, feed, stage, packer)

    def _run_rows(self, pos: np.ndarray, ids: np.ndarray, rows: list[Any], origins: list[Any], feed: _Feed,
                  stage: Stage, packer: Packer | None = None) -> tuple:
        out_rows: list[Any] = []
        keep: Callable[[list[Any]], Any] = out_rows.extend if packer is None else packer.extend
        out_pos: list[int] = []
        out_ids: list[int] = []
        out_origins: list[Any] = []
        # Runs of consecutive positions: each is one chunk starting at its first row's position.
        breaks = np.flatnonzero(np.diff(pos) != 1) + 1
        batch: int | None = None
        if isinstance(self.node, ir.BatchNode):
            if callable(self.node.batch_size):  # to_ray refuses these before any step is made
                raise GraphError(f"to_ray(): {self.node.label} with a callable batch_size can't run on Ray blocks.")
            batch = self.node.batch_size
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
            tagged: list[int] = []
            for i in range(start, stop):
                row_id = _RowId(int(ids[i]))
                row_id.pos = int(pos[i])
                tagged.append(row_id)
            keys = None
            if self.keys is not None:
                first, step, modulo = self.keys
                keys = [(first + step * int(p)) % modulo for p in pos[start:stop]]
            feed.pending = Chunk(rows[start:stop], tagged, origins[start:stop], keys)
            # Row indices start at the run's position, and nothing is dropped (closing() ends the pass).
            with closing(stage.run_at(self.pass_index, skip)) as chunks:
                for chunk in chunks:
                    keep(chunk.rows)
                    if batch is not None:
                        out_pos.extend(range(skip, skip + len(chunk)))
                        out_ids.extend(range(skip, skip + len(chunk)))
                        out_origins.extend([None] * len(chunk))
                        skip += len(chunk)
                        continue
                    out_pos.extend(t.pos for t in chunk.ids)  # type: ignore[union-attr]  # the rows keep the _RowId ids tagged above
                    out_ids.extend(chunk.ids)  # type: ignore[arg-type]  # as above
                    out_origins.extend(chunk.origins or [None] * len(chunk))
        return (np.asarray(out_pos, dtype=np.int64), np.asarray(out_ids, dtype=np.int64),
                out_rows if packer is None else packer.column(), out_origins)



class Chain:
    """Consecutive steps run in one Ray call over a block: rows are unpacked once, go through every
    step, and are packed once. Error counts of ``skip`` mode travel in a bookkeeping row."""

    def __init__(self, steps: list[Step], reads: Reads | None = None):
        self.steps = steps
        self.reads = reads  # set when the block holds row ids only: this chain reads the rows
        # The run's settings, which Python code in the steps (a map's function, the reads) sees
        # through minddata.config, as in a local pipeline's threads.
        self.options = steps[0].options

    def build(self) -> None:
        with config.running(self.options):
            for step in self.steps:
                step._build()

    def close(self) -> None:
        for step in self.steps:
            step.close()

    def __call__(self, table: Any) -> Any:
        with config.running(self.options):
            return self._run(table)

    def _run(self, table: Any) -> Any:
        import pyarrow as pa

        notes = block_positions(table) == NOTE_POS
        note_rows = None
        if notes.any():
            note_rows, table = table.filter(pa.array(notes)), table.filter(pa.array(~notes))
        ids = table.column(ID).to_numpy()
        rows = self.reads(ids.tolist()) if self.reads is not None else frame_rows(table)
        data = (block_positions(table), ids, rows, origins_of(table))
        errors = ErrorStats()
        for k, step in enumerate(self.steps):
            rt = step._build()[0]
            rt.errors = ErrorStats()
            # The last step's rows are packed as they come, and freed one by one (see Packer).
            data = step.apply(*data, packer=Packer() if k == len(self.steps) - 1 else None)
            errors.merge(rt.errors.skipped, rt.errors.replaced, rt.errors.samples)
        out = frame(*data)
        parts = [out]
        if errors.skipped or errors.replaced:
            parts.append(frame([NOTE_POS], [0], [(errors.skipped, errors.replaced, errors.samples)], None))
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


class ActorChain:
    """An actor of a pool running one chain: built once per actor (device set-up, model loading).
    Subclassed per plan step with the step's name, which Ray shows as the operator's name."""

    def __init__(self, chain: Chain):
        self.chain = chain
        chain.build()

    def __call__(self, table: Any) -> Any:
        return self.chain(table)

    def __del__(self) -> None:
        self.chain.close()

