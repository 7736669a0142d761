"""Profile collection: what each stage of a running pipeline did, cheaply, while it runs.

Nothing here runs unless a run is profiled (a :class:`minddata.Profiler` is active when the iterator
starts, ``config.set_profiling(True)``, or autotune is on): stages check one attribute
(``stage.prof is None``) and take their usual path.

When on, collection is per chunk, never per row:

- every stage's generator is wrapped (:meth:`StageProfile.wrap`): time inside each ``next()``
  (inclusive of its children, which run in the same thread), rows and chunks out. An inline stage's
  own time is its inclusive time minus its children's;
- each worker of a parallel stage keeps its own :class:`WorkerRecord` (no shared counters, so no
  locks): time waiting for a free slot (output side full), waiting for input (pull lock and child),
  working (wall and thread CPU), rows, and a span per chunk for the timeline;
- map workers time each op of a chunk (:class:`OpTimer`, per-thread accumulators);
- the iterator records each step (time the consumer asked, time it got the item) and the prefetch
  thread's conversion time;
- a sampler thread reads queue occupancy (ready results, slots in use, worker states, the prefetch
  queue) every ``sample_interval`` seconds.

:meth:`RunProfile.snapshot` turns the live counters into plain JSON-able data; the analysis
(:mod:`minddata.engine.profile_report`) works only on snapshots, so a saved profile analyses the same
as a live one.
"""

from __future__ import annotations

import array
import os
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from minddata.ops.base import op_label

__all__ = [
    "OpTimer",
    "RunProfile",
    "StageProfile",
    "WorkerRecord",
    "active_sinks",
    "register_sink",
    "unregister_sink",
    "SNAPSHOT_VERSION",
    "HOOK_EVENTS",
]

SNAPSHOT_VERSION = 1
SAMPLE_INTERVAL = 0.01
HOOK_EVENTS = ("epoch_begin", "epoch_end", "step_begin", "step_end")

_perf = time.perf_counter

# Worker states, read by the sampler.
IDLE, WAIT_SLOT, WAIT_INPUT, WORKING, DONE = range(5)

# Bounds on what one run keeps, so a profiled run of days cannot exhaust memory: past these, timeline
# spans and per-step records stop (aggregates go on) and samples are thinned.
MAX_SPANS = 200_000  # per run, all threads together
MAX_STEPS = 1_000_000
MAX_SAMPLES = 20_000


# --- who receives new runs --------------------------------------------------------------------------

_sinks: list[Any] = []
_sinks_lock = threading.Lock()


def register_sink(sink: Any) -> None:
    """``sink._add_run(run_profile)`` is called for every run started while it is registered."""
    with _sinks_lock:
        if sink not in _sinks:
            _sinks.append(sink)


def unregister_sink(sink: Any) -> None:
    with _sinks_lock:
        if sink in _sinks:
            _sinks.remove(sink)


def active_sinks() -> list[Any]:
    with _sinks_lock:
        return list(_sinks)


# --- records --------------------------------------------------------------------------------------


class WorkerRecord:
    """One worker thread of a parallel stage. Written only by that thread (the sampler reads ``state``)."""

    __slots__ = ("name", "start", "end", "state", "work", "cpu_sampled", "work_sampled", "slot_wait", "input_wait",
                 "chunks", "rows", "spans", "room")

    def __init__(self, name: str, spans: list | None, room: list[int]):
        self.name = name
        self.start = _perf()
        self.end: float | None = None
        self.state = IDLE
        self.work = 0.0
        # Thread CPU time is read on one chunk in 8 (the clock costs a microsecond a read): CPU over
        # work on those chunks estimates it for all.
        self.cpu_sampled = 0.0
        self.work_sampled = 0.0
        self.slot_wait = 0.0
        self.input_wait = 0.0
        self.chunks = 0
        self.rows = 0
        self.spans = spans
        self.room = room  # the run's span budget, shared ([spans left]); approximate under threads

    def add(self, t_slot: float, t_pull: float, t_work: float, t_end: float, cpu: float | None, rows: int) -> None:
        self.slot_wait += t_pull - t_slot
        self.input_wait += t_work - t_pull
        self.work += t_end - t_work
        if cpu is not None:
            self.cpu_sampled += cpu
            self.work_sampled += t_end - t_work
        self.chunks += 1
        self.rows += rows
        spans = self.spans
        if spans is not None and self.room[0] > 0:
            self.room[0] -= 1
            spans.append((t_slot, t_pull, t_work, t_end, rows))

    def alive(self, now: float) -> float:
        return (self.end if self.end is not None else now) - self.start

    @property
    def cpu(self) -> float:
        """Estimated CPU seconds spent working."""
        return self.work * self.cpu_sampled / self.work_sampled if self.work_sampled > 0 else 0.0


class OpTimer:
    """Time per op of a map, from one chunk in ``EVERY`` per thread (ops of a microsecond would
    otherwise pay a fifth of their time for the clock). Each thread adds into its own list:
    ``[seconds of op 0, ..., seconds of op n-1, rows timed, chunks seen]``."""

    EVERY = 8

    def __init__(self, names: list[str]):
        self.names = names
        self._per_thread: dict[int, list[float]] = {}

    def sample(self) -> list[float] | None:
        """This thread's accumulator if this chunk is one to time, else None."""
        ident = threading.get_ident()
        acc = self._per_thread.get(ident)
        if acc is None:
            # One list per thread: the owner is the only writer, so no lock is needed.
            acc = self._per_thread.setdefault(ident, [0.0] * (len(self.names) + 2))
        acc[-1] += 1
        return acc if acc[-1] % self.EVERY == 1 else None

    def current(self) -> list[float] | None:
        """This thread's accumulator if the chunk it last sampled is being timed, else None: for work
        on that chunk done after the map's ops (a normalize into the batch, ``BatchSlots``)."""
        acc = self._per_thread.get(threading.get_ident())
        return acc if acc is not None and acc[-1] % self.EVERY == 1 else None

    def per_row(self) -> list[float]:
        """Seconds per row of each op, over the rows timed."""
        n = len(self.names)
        out = [0.0] * n
        rows = 0.0
        for acc in list(self._per_thread.values()):
            rows += acc[n]
            for i in range(n):
                out[i] += acc[i]
        return [v / rows if rows else 0.0 for v in out]


def chunk_nbytes(chunk: Any) -> int:
    """Approximate bytes held by a chunk's rows (arrays and bytes); 0 for what it cannot size."""
    total = 0
    for row in chunk.rows:
        if type(row) is not tuple:
            continue
        for value in row:
            if isinstance(value, np.ndarray):
                total += value.nbytes
            elif isinstance(value, (bytes, bytearray)):
                total += len(value)
    return total


class StageProfile:
    """Counters of one stage in one run.

    The stage's generator is only ever advanced by one thread at a time (its consumer, or one of its
    parent's workers under the pull lock), so the plain ``+=`` updates below need no lock.
    """

    def __init__(self, run: RunProfile, stage: Any, index: int, parent: int | None, name: str, internal: bool):
        self.run = run
        self.stage = stage
        self.index = index
        self.parent = parent
        self.name = name
        self.internal = internal
        self.label = stage.label
        self.parallel = hasattr(stage, "num_workers") and hasattr(stage, "resize")
        self.inclusive = 0.0
        self.rows_out = 0
        self.chunks_out = 0
        self.bytes_sampled = 0
        self.chunks_sampled = 0
        self.workers: list[WorkerRecord] = []
        self.spans: list | None = [] if run.record_spans else None
        self.op_timer: OpTimer | None = None
        self.ops_extra: str | None = None  # e.g. "read ImageFolderDataset": work that is not an op
        node = getattr(stage, "node", None)
        self.node_type = type(node).__name__ if node is not None else ""
        # Plain Python callables (not op specs) may hold the GIL: the advice differs.
        self.python_ops = any(not hasattr(op, "device_target") for op in getattr(node, "operations", None) or ())

    def new_worker(self, name: str) -> WorkerRecord:
        record = WorkerRecord(name, [] if self.run.record_spans else None, self.run.span_room)
        self.workers.append(record)  # list.append is atomic: workers start from several threads
        return record

    def wrap(self, gen: Generator[Any, None, None]) -> Generator[Any, None, None]:
        perf = _perf
        spans = self.spans
        room = self.run.span_room
        names = self.run.thread_names
        ident = threading.get_ident
        size_chunks = self.parallel and self.run.size_chunks
        try:
            while True:
                t0 = perf()
                try:
                    chunk = next(gen)
                except StopIteration:
                    self.inclusive += perf() - t0
                    return
                t1 = perf()
                self.inclusive += t1 - t0
                self.chunks_out += 1
                self.rows_out += len(chunk)
                if spans is not None and room[0] > 0:
                    room[0] -= 1
                    tid = ident()
                    if tid not in names:
                        names[tid] = threading.current_thread().name
                    spans.append((tid, t0, t1))
                # Chunk sizes are for autotune's memory budget only; one chunk in 16 is enough for an
                # average, and sizing costs a pass over the rows.
                if size_chunks and self.chunks_out & 15 == 1:
                    self.bytes_sampled += chunk_nbytes(chunk)
                    self.chunks_sampled += 1
                yield chunk
        finally:
            gen.close()

    # Window sums, for autotune.
    def totals(self, now: float) -> dict[str, float]:
        work = cpu = slot = inp = alive = 0.0
        rows = chunks = 0
        for w in list(self.workers):
            work += w.work
            cpu += w.cpu
            slot += w.slot_wait
            inp += w.input_wait
            alive += w.alive(now)
            rows += w.rows
            chunks += w.chunks
        return {
            "work": work, "cpu": cpu, "slot_wait": slot, "input_wait": inp, "alive": alive,
            "rows": rows, "chunks": chunks, "inclusive": self.inclusive, "rows_out": self.rows_out,
        }

    def chunk_bytes(self) -> float:
        return self.bytes_sampled / self.chunks_sampled if self.chunks_sampled else 0.0


def _walk(stage: Any, parent: int | None, out: list[tuple[Any, int | None]]) -> None:
    out.append((stage, parent))
    me = len(out) - 1
    for child in stage.children:
        _walk(child, me, out)


def _display_name(stage: Any) -> tuple[str, bool, str | None]:
    """(user-facing name, internal helper stage?, what the work holds besides ops)."""
    if getattr(stage, "profile_internal", False):
        # A stage whose work is reported by the stages it adds to the table (a Ray segment's operators).
        return stage.label, True, None
    node = getattr(stage, "node", None)
    if node is None:
        # Stages the compiler adds around a node (a source's sampler, a batch's grouping).
        label = stage.label
        if label.endswith(".sampler"):
            return f"{label[: -len('.sampler')]} sampler", True, None
        if label.endswith(".group"):
            return f"{label[: -len('.group')]} grouping", True, None
        return label, False, None
    ops = getattr(node, "operations", None)
    if ops is not None:
        names: list[str] = []
        for op in ops:
            parts = getattr(op, "parts", None)
            if parts:
                names.extend(p.name for p in parts)
            elif type(op).__name__ == "NormalizeInputCheck":
                if stage.batch_slots is not None:  # normalized here, into the batch
                    names.extend(["Normalize", "HWC2CHW"] if stage.batch_slots.chw else ["Normalize"])
                continue  # otherwise Normalize itself moved into the batch; the check is not the user's op
            else:
                names.append(op_label(op, timings=True))
        name = f"{node.name}[{', '.join(names)}]"
        extra = None
        if getattr(node, "reads_source", False):
            source = node.children[0].name
            name += f" reading {source}"
            extra = f"read {source}"
        return name, False, extra
    epilogues = getattr(node, "epilogues", None)
    if epilogues and stage.batch_slots is None:
        moved = ["Normalize"] + (["HWC2CHW"] if any(chw for _, chw, _ in epilogues.values()) else [])
        return f"{node.label} (with {', '.join(moved)} from the map)", False, None
    return node.label, False, None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class RunProfile:
    """Everything recorded about one iterator's run. Created when the run starts (first ``next``).

    ``record_spans``/``sample_interval``: timeline detail, on for profiling, off when only autotune
    needs the counters.
    """

    def __init__(self, root: Any, prefetch_capacity: int, *, record_spans: bool, sample_interval: float | None):
        self.record_spans = record_spans
        self.span_room = [MAX_SPANS]
        self.sample_interval = sample_interval
        # Set by autotune, which needs the bytes a stage's queued chunks hold.
        self.size_chunks = False
        self.t0 = _perf()
        self.started_at = time.time()
        self.cores = _cores()
        self.label = root.label
        self.thread_names: dict[int, str] = {}
        self.stages: list[StageProfile] = []
        walked: list[tuple[Any, int | None]] = []
        _walk(root, None, walked)
        for index, (stage, parent) in enumerate(walked):
            name, internal, extra = _display_name(stage)
            prof = StageProfile(self, stage, index, parent, name, internal)
            prof.ops_extra = extra
            self.stages.append(prof)
        self.prefetch_capacity = prefetch_capacity
        self.prefetch_convert = 0.0
        self.prefetch_put_wait = 0.0
        self.prefetch_chunks = 0
        self.prefetch_spans: list | None = [] if record_spans else None
        self.prefetch_tid: int | None = None
        # Steps: parallel arrays (compact: 8 bytes a value).
        self._step_epoch = array.array("l")
        self._step_request = array.array("d")
        self._step_ready = array.array("d")
        self.steps_total = 0
        self.wait_total = 0.0
        # When the consumer started waiting for the item it is waiting for now (None: not waiting).
        self.waiting_since: float | None = None
        # [epoch, t_begin, t_end or -1, and once ended: when the consumer asked past its last item]
        self.epochs: list[list[float]] = []
        self.epoch = 0
        self.step_in_epoch = 0
        self._epoch_open = False
        self._pending_step: tuple[int, int, float, float] | None = None
        self.hooks: dict[str, list[Callable[[dict], Any]]] = {e: [] for e in HOOK_EVENTS}
        self.samples_t = array.array("d")
        self.samples: dict[int, list[tuple]] = {p.index: [] for p in self.stages if p.parallel}
        self.samples_prefetch: list[tuple[int, int]] = []
        self.decisions: list[dict[str, Any]] = []
        self.end: float | None = None
        self.autotune: dict[str, Any] | None = None
        self._queue_len: Callable[[], int] | None = None
        # The run's DeviceStats (rows moved between devices, rows a device op ran on the CPU instead).
        self.device_stats: Any = None
        self._lock = threading.Lock()

    # -- attaching -----------------------------------------------------------------------------

    def attach(self) -> None:
        """Point every stage at its profile; stages check ``stage.prof`` when they start a pass."""
        for prof in self.stages:
            prof.stage.prof = prof
            timer_names = getattr(prof.stage, "op_names", None)
            fn = getattr(prof.stage, "map_function", None)
            if timer_names is not None and fn is not None and getattr(prof.stage, "remotes", None) is None:
                prof.op_timer = OpTimer(list(timer_names))
                fn.op_timer = prof.op_timer

    def add_hook(self, event: str, fn: Callable[[dict], Any]) -> None:
        self.hooks[event].append(fn)

    def _fire(self, event: str, info: dict) -> None:
        for fn in self.hooks[event]:
            fn(info)

    # -- the consumer side ---------------------------------------------------------------------

    def request(self, t_request: float) -> None:
        """The consumer asked for the next item: the previous step (its compute included) ends here."""
        pending = self._pending_step
        if pending is not None:
            self._pending_step = None
            self._end_step(pending, t_request)
        if not self._epoch_open:
            self._epoch_open = True
            self.epochs.append([self.epoch, t_request - self.t0, -1.0])
            if self.hooks["epoch_begin"]:
                self._fire("epoch_begin", {"epoch": self.epoch})
        self.waiting_since = t_request

    def step_ready(self, t_request: float, t_ready: float) -> None:
        self.wait_total += t_ready - t_request
        self.waiting_since = None
        self.steps_total += 1
        if len(self._step_ready) < MAX_STEPS:
            self._step_epoch.append(self.epoch)
            self._step_request.append(t_request - self.t0)
            self._step_ready.append(t_ready - self.t0)
        self._pending_step = (self.epoch, self.step_in_epoch, t_request, t_ready)
        if self.hooks["step_begin"]:
            # Fired once the item arrived, so an epoch's end-of-data request is not taken for a step.
            self._fire("step_begin", {"epoch": self.epoch, "step": self.step_in_epoch, "begin": t_request - self.t0,
                                      "data_wait": t_ready - t_request})
        self.step_in_epoch += 1

    def _end_step(self, pending: tuple[int, int, float, float], t_next: float) -> None:
        if self.hooks["step_end"]:
            epoch, step, t_request, t_ready = pending
            self._fire("step_end", {
                "epoch": epoch, "step": step, "data_wait": t_ready - t_request, "compute": t_next - t_ready,
                "begin": t_request - self.t0, "end": t_next - self.t0,
            })

    def epoch_end(self, t_request: float, t_ready: float) -> None:
        """The consumer got the end-of-epoch marker."""
        self.wait_total += t_ready - t_request
        self.waiting_since = None
        pending = self._pending_step
        if pending is not None:
            self._pending_step = None
            self._end_step(pending, t_request)
        if self._epoch_open:
            self.epochs[-1][2] = t_ready - self.t0
            self.epochs[-1].append(t_request - self.t0)
        self._epoch_open = False
        if self.hooks["epoch_end"]:
            self._fire("epoch_end", {"epoch": self.epoch, "steps": self.step_in_epoch,
                                     "seconds": self.epochs[-1][2] - self.epochs[-1][1] if self.epochs else 0.0})
        self.epoch += 1
        self.step_in_epoch = 0

    def prefetched(self, t0: float, t1: float, t2: float) -> None:
        self.prefetch_convert += t1 - t0
        self.prefetch_put_wait += t2 - t1
        self.prefetch_chunks += 1
        if self.prefetch_tid is None:
            self.prefetch_tid = threading.get_ident()
            self.thread_names[self.prefetch_tid] = threading.current_thread().name
        spans = self.prefetch_spans
        if spans is not None and self.span_room[0] > 0:
            self.span_room[0] -= 1
            spans.append((t0, t1, t2))

    # -- sampling ------------------------------------------------------------------------------

    def set_queue_len(self, fn: Callable[[], int]) -> None:
        self._queue_len = fn

    def sample(self) -> None:
        now = _perf()
        self.samples_t.append(now - self.t0)
        for prof in self.stages:
            if not prof.parallel:
                continue
            state = getattr(prof.stage, "_live", None)
            counts = [0, 0, 0, 0, 0]
            for w in list(prof.workers):
                counts[w.state] += 1
            if state is None:
                self.samples[prof.index].append((0, 0, prof.stage.slots, 0, 0, 0, 0))
                continue
            ready = len(state.results)
            holding = counts[WAIT_INPUT] + counts[WORKING]
            active = counts[WAIT_SLOT] + counts[WAIT_INPUT] + counts[WORKING]
            self.samples[prof.index].append(
                (ready, ready + holding, state.capacity, active, counts[WORKING], counts[WAIT_INPUT], counts[WAIT_SLOT])
            )
        queue_len = self._queue_len
        self.samples_prefetch.append((queue_len() if queue_len else 0, self.prefetch_capacity))
        if len(self.samples_t) > MAX_SAMPLES:
            self._thin()

    def _thin(self) -> None:
        # Keep every other sample and sample half as often: bounded memory over any run length.
        self.samples_t = array.array("d", self.samples_t[::2])
        for key in self.samples:
            self.samples[key] = self.samples[key][::2]
        self.samples_prefetch = self.samples_prefetch[::2]
        if self.sample_interval:
            self.sample_interval *= 2

    def sampler_loop(self, stop: threading.Event) -> None:
        while self.end is None and not stop.wait(self.sample_interval or 0.01):
            self.sample()

    def record_decision(self, decision: dict[str, Any]) -> None:
        with self._lock:
            self.decisions.append(decision)

    def finish(self) -> None:
        if self.end is None:
            self.end = _perf()

    # -- the frozen view -----------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The profile as plain data (JSON-able), times in seconds from the run's start."""
        now = self.end if self.end is not None else _perf()
        t0 = self.t0
        stages = []
        for prof in self.stages:
            stage = prof.stage
            entry: dict[str, Any] = {
                "index": prof.index,
                "parent": prof.parent,
                "label": prof.label,
                "name": prof.name,
                "internal": prof.internal,
                "kind": "parallel" if prof.parallel else "inline",
                "inclusive": prof.inclusive,
                "rows_out": prof.rows_out,
                "chunks_out": prof.chunks_out,
                "chunk_bytes": prof.chunk_bytes(),
                "node_type": prof.node_type,
                "python_ops": prof.python_ops,
            }
            if prof.parallel:
                entry.update(
                    workers_now=stage.num_workers,
                    slots_now=stage.slots,
                    autotune=bool(getattr(stage, "autotune", False)),
                    process_workers=getattr(stage, "remotes", None) is not None,
                    workers=[
                        {"name": w.name, "start": w.start - t0, "end": (w.end if w.end is not None else now) - t0,
                         "work": w.work, "cpu": w.cpu, "slot_wait": w.slot_wait, "input_wait": w.input_wait,
                         "chunks": w.chunks, "rows": w.rows}
                        for w in list(prof.workers)
                    ],
                )
            if prof.op_timer is not None:
                rows = sum(w.rows for w in list(prof.workers))
                entry["ops"] = [{"name": n, "seconds": per_row * rows}
                                for n, per_row in zip(prof.op_timer.names, prof.op_timer.per_row(), strict=True)]
                entry["ops_extra"] = prof.ops_extra
            stages.append(entry)
        for prof in list(self.stages):
            extra_entries = getattr(prof.stage, "profile_entries", None)
            if extra_entries is not None:
                # Work done elsewhere (a Ray cluster's operators), as parallel stages under this one.
                stages.extend(extra_entries(len(stages), prof.index, t0))
        spans: dict[str, Any] = {"threads": {}, "stages": {}, "workers": {}, "prefetch": []}
        if self.record_spans:
            spans["threads"] = {str(k): v for k, v in self.thread_names.items()}
            for prof in self.stages:
                if prof.spans:
                    spans["stages"][str(prof.index)] = [[tid, a - t0, b - t0] for tid, a, b in list(prof.spans)]
                if prof.parallel:
                    spans["workers"][str(prof.index)] = {
                        w.name: [[a - t0, b - t0, c - t0, d - t0, r] for a, b, c, d, r in list(w.spans or ())]
                        for w in list(prof.workers)
                    }
            spans["prefetch"] = [[a - t0, b - t0, c - t0] for a, b, c in list(self.prefetch_spans or ())]
            spans["prefetch_thread"] = self.thread_names.get(self.prefetch_tid or -1)
        n_samples = len(self.samples_t)
        return {
            "version": SNAPSHOT_VERSION,
            "label": self.label,
            "started_at": self.started_at,
            "duration": now - t0,
            "finished": self.end is not None,
            "cores": self.cores,
            "sample_interval": self.sample_interval,
            "stages": stages,
            "prefetch": {
                "convert": self.prefetch_convert, "put_wait": self.prefetch_put_wait,
                "chunks": self.prefetch_chunks, "capacity": self.prefetch_capacity,
            },
            "steps": {
                "count": self.steps_total,
                "wait_total": self.wait_total,
                "epoch": list(self._step_epoch),
                "request": list(self._step_request),
                "ready": list(self._step_ready),
            },
            "epochs": [list(e) for e in self.epochs],
            "samples": {
                "t": list(self.samples_t)[:n_samples],
                "stages": {str(k): [list(s) for s in v[:n_samples]] for k, v in self.samples.items()},
                "prefetch": [list(s) for s in self.samples_prefetch[:n_samples]],
            },
            "spans": spans,
            "decisions": list(self.decisions),
            "spans_dropped": self.span_room[0] <= 0,
            "autotune": self.autotune,
            "devices": _device_counts(self.device_stats),
        }


def _device_counts(stats: Any) -> dict[str, dict[str, int]]:
    return {"transfers": {}, "cpu_rows": {}} if stats is None else stats.counts()
