"""Maps whose ops run on several devices: a chain of stages, one per device part.

The placement pass (:mod:`minddata.engine.placement`) cuts such a map into parts. Here each part
becomes a stage:

* a ``"row"`` part is a map over its ops in the map's workers (thread or process), with each op's
  kernel for its device (CPU, or Dvpp's ``reference``/``ascend`` driver);
* a ``"segment"`` part is one device segment (:meth:`~minddata.ops.devices.Device.build_segment`:
  for the GPU a DALI pipeline or a torch segment) run by one worker thread,
  batch by batch (chunks are first merged up to the segment's batch size, except in online
  sessions, where rows must not wait for others).

Rows keep their place across parts: a row that fails in an early part travels on as a placeholder
(:class:`~minddata.engine.chunk.FailedRow`) and the last part applies the error policy (raise, skip,
replace, deliver), naming the op and the row as a one-stage map would. So every part sees every row
at its original index, and random ops draw from the same (seed, pass, row, op position) streams as
on the CPU. Between parts rows carry ``(row, value)``: the input row, for the last part to lay out
the map's output columns, and the single image flowing through.

Each part reports what crossed devices to ``rt.device_stats``: one transfer per row per boundary
between parts (``"CPU->GPU"``, ``"GPU->CPU"``, ``"CPU->Dvpp"``, ...), and rows a Dvpp op ran on the
CPU under ``config.set_dvpp_policy("cpu")``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import closing
from typing import Any

from minddata.config import RunOptions
from minddata.engine import ir
from minddata.engine.chunk import Chunk, Chunks, FailedRow
from minddata.engine.mapfn import (
    MapErrorPolicy,
    MapFunction,
    _OutputCountError,
    column_layout,
    op_label,
)
from minddata.engine.parallel import Finish, ParallelApplyStage, reading_first
from minddata.engine.runtime import Runtime
from minddata.engine.stages import Stage
from minddata.errors import GraphError
from minddata.ops.base import KernelContext, Op
from minddata.ops.devices import RowFailure, get_device
from minddata.ops.registry import get_kernel

__all__ = ["PartFunction", "RechunkStage", "build_device_map", "needs_device_build"]

# Rows per segment run when nothing better is known (a following batch's size is used when there is one).
DEFAULT_SEGMENT_ROWS = 64


def needs_device_build(node: ir.MapNode) -> bool:
    """Whether ``node`` has an op off the CPU (then it is built here, not as a plain map)."""
    parts = node.device_parts
    if not parts:
        return False
    return len(parts) > 1 or parts[0].kind != "row" or any(
        isinstance(op, Op) and op.device_target not in ("CPU", "auto") for op in node.operations
    )


def _device(op: Any) -> str:
    # Placed names are canonical: the host, "auto" (the host, once placed) or an accelerator's.
    return op.device_target if isinstance(op, Op) and op.device_target not in ("CPU", "auto") else "CPU"


# ---------------------------------------------------------------------------------------------- row parts


class PartFunction(MapFunction):
    """A :class:`MapFunction` over one part of a map: each op runs on its device's kernel.

    ``entry``: rows are the map's input rows (else ``(row, value)`` pairs from the previous part);
    ``exit``: outputs are the map's output rows (else ``(row, value)`` pairs for the next part).
    Calls return ``(out_rows, failures, counts)``; ``counts`` are the events the kernels reported
    (:meth:`KernelContext.count`), e.g. Dvpp rows run on the CPU.
    """

    def __init__(self, operations: list[Any], op_positions: list[int], input_indices: list[int],
                 layout: list[tuple[int, int]], num_outputs: int, seed: int, label: str, keep_tracebacks: bool,
                 *, entry: bool, exit: bool, options: RunOptions | None = None):
        super().__init__(
            operations, op_positions, input_indices if entry else [1], layout,
            num_outputs if exit else 1, seed, label, keep_tracebacks, options,
        )
        self.entry = entry
        self.exit = exit
        self._local = threading.local()

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_local", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    def _pending(self) -> dict[str, int]:
        pending = getattr(self._local, "counts", None)
        if pending is None:
            pending = self._local.counts = {}
        return pending

    def _counting(self, kernel: Callable[..., Any]) -> Callable[..., Any]:
        def counted(op: Op, ctx: KernelContext, *values: Any) -> Any:
            out = kernel(op, ctx, *values)
            if ctx.counts:
                pending = self._pending()
                for key, n in ctx.counts.items():
                    pending[key] = pending.get(key, 0) + n
                ctx.counts = None
            return out

        return counted

    def _steps(self) -> tuple:
        if self._steps_cache is None:
            steps: list[tuple[Callable[..., Any], Op | None, bool, bool | None]] = []
            for op in self.operations:
                if isinstance(op, Op):
                    device = _device(op)
                    kernel = get_kernel(op.name, device)
                    steps.append((self._counting(kernel) if device != "CPU" else kernel, op, op.random, op.num_outputs != 1))
                else:
                    steps.append((op, None, False, None))
            self._steps_cache = (steps, self._assembler())
        return self._steps_cache

    def _assembler(self) -> Callable[[tuple, tuple], tuple]:
        if self.exit:
            base = super()._assembler()
            return base if self.entry else (lambda prow, out: base(prow[0], out))
        if self.entry:
            return lambda row, out: (row, out[0])
        return lambda prow, out: (prow[0], out[0])

    def __call__(self, arg: tuple, stop: threading.Event | None = None) -> tuple:
        out_rows, failures = super().__call__(arg, stop)
        pending = getattr(self._local, "counts", None)
        self._local.counts = None
        return out_rows, failures, pending


class PartPolicy(MapErrorPolicy):
    """The error policy of one part. Parts before the last turn failures into :class:`FailedRow`
    placeholders (the row keeps its place); the last applies the map's policy to its own failures and
    to those placeholders. Every part records its device statistics."""

    def __init__(self, rt: Runtime, label: str, op_labels: list[str], *, offset: int, last: bool,
                 boundaries: list[tuple[int, str]]):
        mode = rt.error_mode if last else "deliver"
        super().__init__(rt, mode, label, op_labels)
        self.offset = offset
        self.last = last
        # (step index within the part, "A->B"): a row reaching step k crossed every boundary at <= k.
        self.boundaries = boundaries

    def _record(self, rows_in: list[Any], failures: list[tuple], counts: dict | None) -> None:
        transfers: dict[str, int] = {}
        if counts and "transfers" in counts:
            transfers = dict(counts["transfers"])
        elif self.boundaries:
            failed_at = {i: k for i, k, _, _ in failures}
            for i, row in enumerate(rows_in):
                if type(row) is FailedRow:
                    continue
                reached = failed_at.get(i)
                for step, label in self.boundaries:
                    if reached is None or step <= reached:
                        transfers[label] = transfers.get(label, 0) + 1
        cpu_rows: dict[str, int] = {}
        source = counts.get("cpu_rows") if counts and "transfers" in counts else counts
        for key, n in (source or {}).items():
            name = key.split(":", 1)[1] if key.startswith("dvpp_cpu_rows:") else key
            cpu_rows[name] = cpu_rows.get(name, 0) + n
        if transfers or cpu_rows:
            self.rt.device_stats.add(transfers, cpu_rows)

    def finish(self, chunk: Chunk, result: tuple, pass_index: int, row_start: int) -> Chunk:
        out_rows, failures, counts = result
        self._record(chunk.rows, failures, counts)
        errors: dict[int, BaseException] = {}
        for i, k, error, text in failures:
            if isinstance(error, _OutputCountError):
                raise error
            errors[i] = self.row_error(chunk, i, row_start + i, self.offset + k, error, text)
        return self.apply(chunk, out_rows, errors)  # the last part's policy also fails FailedRow placeholders


def _row_boundaries(ops: list[Any]) -> list[tuple[int, str]]:
    """Where a row part's data crosses devices: it arrives on the host and leaves on the host."""
    where = "CPU"
    found = []
    for k, op in enumerate(ops):
        device = _device(op)
        if device != where:
            found.append((k, f"{where}->{device}"))
            where = device
    if where != "CPU":
        found.append((len(ops), f"{where}->CPU"))
    return found


# ---------------------------------------------------------------------------------------------- segment parts


class SegmentWork:
    """The work of a ``"segment"`` part: one segment run per chunk of rows (see the module docstring)."""

    def __init__(self, segment: Any, positions: list[int], seed: int, *, entry: int | None,
                 assemble: Callable[[tuple, tuple], tuple] | None, labels: tuple[str, str],
                 options: RunOptions | None = None):
        self.segment = segment
        self.positions = positions
        self.seed = seed
        self.options = options
        self.entry = entry  # the input column's index when the part starts the map
        self.assemble = assemble  # lays out the map's output when the part ends it
        self.labels = labels  # (device data enters, device data leaves)

    def __call__(self, chunk: Chunk, pass_index: int, row_start: int) -> tuple:
        rows = chunk.rows
        live = [i for i, row in enumerate(rows) if type(row) is not FailedRow]
        entry = self.entry
        values = [rows[i][entry] if entry is not None else rows[i][1] for i in live]
        keys = chunk.keys  # a shard's rows draw by their global position, as on the CPU (Chunk.keys)
        contexts = [
            [KernelContext(self.seed, pass_index, row_start + i if keys is None else keys[i], position, self.options)
             for position in self.positions]
            for i in live
        ]
        with self.segment.lock:
            results, stats = self.segment.run(values, contexts)
        out_rows: list[Any] = list(rows)
        failures: list[tuple] = []
        for i, result in zip(live, results, strict=True):
            if isinstance(result, RowFailure):
                out_rows[i] = None
                failures.append((i, result.op_index, result.error, ""))
                continue
            row = rows[i] if entry is not None else rows[i][0]
            out_rows[i] = self.assemble(row, (result,)) if self.assemble is not None else (row, result)
        enter, leave = self.labels
        transfers = {}
        if stats.to_device:
            transfers[f"CPU->{enter}"] = stats.to_device
        if stats.to_host:
            transfers[f"{leave}->CPU"] = stats.to_host
        return out_rows, failures, {"transfers": transfers, "cpu_rows": stats.cpu_rows or {}}


class RechunkStage(Stage):
    """Merges consecutive chunks into chunks of at least ``rows`` rows (the segment's batch), in order."""

    fast_skip = True  # the same rows in bigger chunks: a resume skips in the child

    def __init__(self, rt: Runtime, child: Stage, rows: int, label: str):
        super().__init__(rt, [child], label)
        self.rows = rows

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        held: list[Chunk] = []
        count = 0
        with closing(self.children[0].run(skip)) as source:
            for chunk in source:
                held.append(chunk)
                count += len(chunk)
                if count >= self.rows:
                    yield _concat(held)
                    held, count = [], 0
            if held:
                yield _concat(held)


def _concat(chunks: list[Chunk]) -> Chunk:
    if len(chunks) == 1:
        return chunks[0]
    rows = [row for c in chunks for row in c.rows]
    ids = None if any(c.ids is None for c in chunks) else [i for c in chunks for i in c.ids]  # type: ignore[union-attr]  # no None: any() checked
    origins = None if any(c.origins is None for c in chunks) else [o for c in chunks for o in c.origins]  # type: ignore[union-attr]  # no None: any() checked
    keys = None if any(c.keys is None for c in chunks) else [k for c in chunks for k in c.keys]  # type: ignore[union-attr]  # no None: any() checked
    return Chunk(rows, ids, origins, keys)


# ---------------------------------------------------------------------------------------------- building


def _segment_rows(node: ir.MapNode, rows_per_chunk: int) -> int:
    size = node.segment_rows
    return int(size) if size else max(DEFAULT_SEGMENT_ROWS, rows_per_chunk)


def build_device_map(builder: Any, node: ir.MapNode, child: Stage,
                     read: tuple[Callable, Callable] | None = None) -> Stage:
    """The stages of map ``node`` over ``child`` (its parts in a chain); returns the last.

    ``read``: for a map that reads its source's rows itself, ``(read, finish_read)`` as the compiler's
    source parts give them; the first part then reads the rows in its workers.
    """
    rt = builder.rt
    ops = node.operations
    positions = node.op_positions
    parts = node.device_parts
    have = node.children[0].columns
    inputs = node.resolved_inputs()
    outputs = node.resolved_outputs()
    layout = column_layout(have, inputs, outputs)
    input_indices = [have.index(c) for c in inputs]
    labels = [op_label(op) for op in ops]
    online = builder.online_source is not None
    stage = child
    for n, part in enumerate(parts):
        first, last = n == 0, n == len(parts) - 1
        part_ops = ops[part.start : part.end]
        part_positions = positions[part.start : part.end]
        names = ", ".join(labels[part.start : part.end])
        label = node.label if len(parts) == 1 else f"{node.label}.{part.kind}[{names}]"
        if part.kind == "row":
            fn = PartFunction(part_ops, part_positions, input_indices, layout, len(outputs), rt.seed, node.label,
                              node.python_multiprocessing, entry=first, exit=last, options=rt.options)
            policy = PartPolicy(rt, node.label, labels, offset=part.start, last=last,
                                boundaries=_row_boundaries(part_ops))
            remotes = (builder._process_workers(label, fn, node.num_workers)
                       if node.python_multiprocessing else None)
            work = (lambda f: lambda chunk, p, r: f((chunk.rows, p, r, chunk.keys), rt.stop_event))(fn)
            workers = node.num_workers
        else:
            if last and len(outputs) != 1:
                raise GraphError(
                    f"{node.label}: its last op runs on the GPU and returns one value, but output_columns names "
                    f"{len(outputs)} column(s): {outputs}"
                )
            # A row a device refuses for its data (e.g. a GIF on the media engine) may run on the CPU
            # kernels instead (config.set_dvpp_policy("cpu")): the device's segment decides.
            segment = get_device(part_ops[0].device_target).build_segment(
                part_ops,
                backend=part.backend,
                options=rt.options,
                batch_size=_segment_rows(node, rt.options.rows_per_chunk),
                num_threads=max(1, int(node.num_workers)),
                output="device" if last and node.device_output else "host",
            )
            rt.on_close(segment.close)
            assemble = MapFunction([], [], input_indices, layout, len(outputs), rt.seed, node.label, False)._assembler()
            work = SegmentWork(
                segment, part_positions, rt.seed,
                entry=input_indices[0] if first else None,
                assemble=assemble if last else None,
                labels=(part_ops[0].device_target, part_ops[-1].device_target),
                options=rt.options,
            )
            policy = PartPolicy(rt, node.label, labels, offset=part.start, last=last, boundaries=[])
            remotes = None
            workers = 1  # a segment serves one thread; its own threads do the parallel work
            if not online and not (first and read is not None):
                stage = RechunkStage(rt, stage, _segment_rows(node, rt.options.rows_per_chunk), f"{label}.rechunk")
        finish: Finish = policy.finish
        if first and read is not None:
            # The map reads its source's rows in this part's workers (the optimizer's source
            # absorption); only row parts do (plan_parts keeps a segment part away from the source).
            work, finish = reading_first(read[0], read[1], work, finish)
        stage = ParallelApplyStage(
            rt, stage, work, workers, label, finish=finish,
            ordered=policy.replace_in_order if last and rt.error_mode == "replace" else None,
            remotes=remotes,
            # Parts before the last keep every row (failures travel as placeholders); the last drops
            # rows only under skip/replace. One-to-one parts let a resume skip instead of replaying.
            one_to_one=not last or rt.error_mode in ("raise", "deliver"),
            map_function=fn if part.kind == "row" else None,
            op_names=labels[part.start : part.end] if part.kind == "row" else None,
        )
        stage.node = node
    return stage
