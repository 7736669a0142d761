"""Profile analysis: from a run's snapshot (:meth:`RunProfile.snapshot`) to a summary that names the
bottleneck, a readable table, and a Chrome-trace/Perfetto timeline.

How the bottleneck is found
---------------------------
Every stage has a *busy* fraction: for a parallel stage, the share of its workers' time spent working
(not waiting for a slot or for input); for an inline stage (which runs serially, in the thread that
pulls it), its own time (inclusive time minus its children's) over the run. The prefetch thread's row
conversion counts as one more inline step.

1. If the consumer hardly waited for data (under 10% of its steady-state time), the pipeline is not
   the bottleneck: the consumer is.
2. Otherwise the stage with the highest busy fraction is the bottleneck: nothing downstream of it can
   go faster than it produces, and whatever is upstream of it waits on it (its input queue fills up,
   its output queue is empty). The queue figures in the message come from the sampler, and are
   evidence for the verdict, not the rule: the rule uses only time measured in the stages.

This is what MindSpore's analyzer gets wrong when it reads queue sizes alone: a saturated Map (input
full, output empty) followed by a cheap Batch makes Batch's input look empty, which it blames.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "Bottleneck",
    "OpStats",
    "ProfileSummary",
    "QueueStats",
    "StageStats",
    "StepStats",
    "chrome_trace",
    "render",
    "summarize",
    "CONSUMER_BOUND_WAIT",
]

# Below this share of its time waiting for data, the consumer is what limits the loop.
CONSUMER_BOUND_WAIT = 0.10


@dataclass
class QueueStats:
    """A queue's occupancy over the sampled run: ``mean`` (fraction of capacity), and the fraction of
    samples in which it was ``empty`` (nothing ready) or ``full`` (no free slot)."""

    mean: float
    empty: float
    full: float
    capacity: int
    samples: int


@dataclass
class OpStats:
    """One op of a map: total seconds, seconds per row, and its ``share`` of the stage's work."""

    name: str
    seconds: float
    seconds_per_row: float
    share: float


@dataclass
class StageStats:
    """One stage of the plan as built (after fusion), named with the user's op names.

    ``busy``: parallel stages, the fraction of worker time spent working; inline stages, the fraction
    of the run spent in the stage itself. ``cpu``: CPU time over busy time (parallel only; low means
    the work sleeps, waits on I/O or on the GIL). ``input_wait`` / ``output_wait``: fraction of worker
    time waiting for input, or for a free slot because the consumer has not taken results.
    ``waited_on``: fraction of the run the stage's consumer spent waiting for this stage's output.
    ``thread``: where an inline stage runs (``"prefetch"`` or the parallel stage whose workers pull it).
    """

    index: int
    parent: int | None
    depth: int
    name: str
    label: str
    kind: str
    internal: bool
    thread: str
    workers: float
    workers_now: int | None
    slots_now: int | None
    rows_in: int
    rows_out: int
    chunks: int
    seconds: float
    seconds_per_row: float
    busy: float
    cpu: float | None
    input_wait: float | None
    output_wait: float | None
    waited_on: float
    output_queue: QueueStats | None
    input_queue: QueueStats | None
    ops: list[OpStats] = field(default_factory=list)
    python_ops: bool = False
    node_type: str = ""
    process_workers: bool = False


@dataclass
class StepStats:
    """The consumer's steps (one per item it took): ``first_seconds`` is the first item's latency from
    the run's start; ``wait_fraction`` the steady-state share of the consumer's time spent waiting for
    data (after the first item); mean data-wait and compute per step."""

    count: int
    first_seconds: float
    wait_seconds: float
    wait_fraction: float
    mean_wait: float
    mean_compute: float


@dataclass
class Bottleneck:
    """The verdict: ``stage`` is the limiting stage's name, or None when the pipeline is not the
    bottleneck (``pipeline_bound`` False); ``reason`` the evidence; ``advice`` what to do."""

    stage: str | None
    pipeline_bound: bool
    reason: str
    advice: str
    # In a stage running several ops (adjacent maps merged into one), the op taking most of its time.
    op: str | None = None

    def __str__(self) -> str:
        if self.stage is None:
            return f"{self.reason}{': ' + self.advice if self.advice else ''}"
        where = f"{self.op} in {self.stage}" if self.op else self.stage
        return f"{where} {self.reason}: {self.advice}"


@dataclass
class ProfileSummary:
    """What :meth:`minddata.Profiler.summary` returns for one run. ``rows``: items the consumer took
    (batches, after ``batch``); ``rows_per_second`` over the run's duration."""

    pipeline: str
    seconds: float
    rows: int
    rows_per_second: float
    epochs: int
    cores: int
    steps: StepStats
    prefetch_queue: QueueStats | None
    prefetch_busy: float
    stages: list[StageStats]
    bottleneck: Bottleneck
    autotune: list[dict[str, Any]]
    autotune_settings: dict[str, Any] | None
    # Rows that crossed between devices ("CPU->GPU": n), and rows a device op ran on the CPU instead
    # (op name: n: Dvpp's CPU policy, images a GPU decoder refused).
    device_transfers: dict[str, int] = field(default_factory=dict)
    device_cpu_rows: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-able), e.g. for ``json.dumps(summary.to_dict())``."""
        return asdict(self)

    def stage(self, name: str) -> StageStats:
        """The stage whose name (or plan label) starts with ``name``; KeyError listing names if none."""
        for s in self.stages:
            if s.name.startswith(name) or s.label.startswith(name):
                return s
        raise KeyError(f"no stage named {name!r}; stages: {[s.name for s in self.stages]}")

    def __str__(self) -> str:
        return render(self)


# --- analysis -------------------------------------------------------------------------------------


def _queue(samples: list[list[float]], ready_at: int, used_at: int, cap_at: int) -> QueueStats | None:
    if not samples:
        return None
    n = len(samples)
    mean = sum(s[ready_at] / s[cap_at] for s in samples if s[cap_at] > 0) / n
    empty = sum(1 for s in samples if s[ready_at] <= 0) / n
    full = sum(1 for s in samples if s[cap_at] > 0 and s[used_at] >= s[cap_at]) / n
    return QueueStats(mean, empty, full, int(samples[-1][cap_at]), n)


def _steps(snap: dict[str, Any]) -> StepStats:
    steps = snap["steps"]
    count = int(steps["count"])
    request, ready = steps["request"], steps["ready"]
    wait_total = float(steps["wait_total"])
    duration = max(snap["duration"], 1e-9)
    if not ready:
        return StepStats(count, 0.0, wait_total, min(1.0, wait_total / duration) if count else 0.0, 0.0, 0.0)
    first = ready[0]
    ends = [e[2] for e in snap["epochs"] if e[2] >= 0]
    last = max([ready[-1], *ends])
    steady = last - first
    first_wait = ready[0] - request[0]
    if len(ready) >= 2 and steady > 0:
        fraction = max(0.0, wait_total - first_wait) / steady
    else:
        fraction = wait_total / duration
    computes = [request[i + 1] - ready[i] for i in range(len(ready) - 1)]
    waits = [ready[i] - request[i] for i in range(len(ready))]
    return StepStats(
        count=count,
        first_seconds=first,
        wait_seconds=wait_total,
        wait_fraction=min(1.0, fraction),
        mean_wait=sum(waits) / len(waits),
        mean_compute=sum(computes) / len(computes) if computes else 0.0,
    )


def summarize(snap: dict[str, Any]) -> ProfileSummary:
    """The summary of one run's snapshot."""
    duration = max(float(snap["duration"]), 1e-9)
    raw = snap["stages"]
    by_index = {s["index"]: s for s in raw}
    children: dict[int, list[int]] = {s["index"]: [] for s in raw}
    for s in raw:
        if s["parent"] is not None:
            children[s["parent"]].append(s["index"])
    samples = snap["samples"]["stages"]

    def thread_of(index: int) -> str:
        parent = by_index[index]["parent"]
        while parent is not None:
            if by_index[parent]["kind"] == "parallel":
                return by_index[parent]["name"]
            parent = by_index[parent]["parent"]
        return "prefetch"

    def depth_of(index: int) -> int:
        depth, parent = 0, by_index[index]["parent"]
        while parent is not None:
            depth, parent = depth + 1, by_index[parent]["parent"]
        return depth

    stages: list[StageStats] = []
    for s in raw:
        kids = children[s["index"]]
        rows_in = sum(by_index[k]["rows_out"] for k in kids) if kids else s["rows_out"]
        out_q = None
        if s["kind"] == "parallel":
            workers = s.get("workers", [])
            work = sum(w["work"] for w in workers)
            alive = sum(w["end"] - w["start"] for w in workers)
            cpu_s = sum(w["cpu"] for w in workers)
            seconds = work
            busy = work / alive if alive > 0 else 0.0
            cpu = cpu_s / work if work > 0 else None
            input_wait = sum(w["input_wait"] for w in workers) / alive if alive > 0 else 0.0
            output_wait = sum(w["slot_wait"] for w in workers) / alive if alive > 0 else 0.0
            avg_workers = alive / duration
            rows_in = sum(w["rows"] for w in workers) or rows_in
            out_q = _queue(samples.get(str(s["index"]), []), 0, 1, 2)
        else:
            own = s["inclusive"] - sum(by_index[k]["inclusive"] for k in kids)
            seconds = max(0.0, own)
            busy = min(1.0, seconds / duration)
            cpu = input_wait = output_wait = None
            avg_workers = 0.0
        ops: list[OpStats] = []
        if s.get("ops"):
            total_ops = sum(o["seconds"] for o in s["ops"])
            base = max(seconds, total_ops)
            for o in s["ops"]:
                ops.append(OpStats(o["name"], o["seconds"], o["seconds"] / rows_in if rows_in else 0.0,
                                   o["seconds"] / base if base > 0 else 0.0))
            if s.get("ops_extra"):
                # Listed even when the ops' own timers account for all of the stage's time (a busy
                # machine's preemptions land in either): the stage does that work, at about 0%.
                rest = max(0.0, base - total_ops)
                ops.append(OpStats(s["ops_extra"], rest, rest / rows_in if rows_in else 0.0,
                                   rest / base if base > 0 else 0.0))
        stages.append(StageStats(
            index=s["index"], parent=s["parent"], depth=depth_of(s["index"]), name=s["name"], label=s["label"],
            kind=s["kind"], internal=s["internal"], thread="" if s["kind"] == "parallel" else thread_of(s["index"]),
            workers=avg_workers, workers_now=s.get("workers_now"), slots_now=s.get("slots_now"),
            rows_in=rows_in, rows_out=s["rows_out"], chunks=s["chunks_out"], seconds=seconds,
            seconds_per_row=seconds / rows_in if rows_in else 0.0, busy=busy, cpu=cpu,
            input_wait=input_wait, output_wait=output_wait, waited_on=min(1.0, s["inclusive"] / duration),
            output_queue=out_q, input_queue=None, ops=ops, python_ops=bool(s.get("python_ops")),
            node_type=s.get("node_type", ""), process_workers=bool(s.get("process_workers")),
        ))
    stats_by_index = {st.index: st for st in stages}
    for st in stages:
        feeder = _feeding_queue(st.index, children, stats_by_index)
        st.input_queue = stats_by_index[feeder].output_queue if feeder is not None else None

    pre = snap["prefetch"]
    prefetch_queue = _queue([[n, n, c] for n, c in snap["samples"]["prefetch"]], 0, 1, 2)
    prefetch_busy = min(1.0, pre["convert"] / duration)
    steps = _steps(snap)
    summary = ProfileSummary(
        pipeline=snap["label"],
        seconds=duration,
        rows=steps.count,
        rows_per_second=steps.count / duration,
        epochs=sum(1 for e in snap["epochs"] if e[2] >= 0),
        cores=int(snap.get("cores", 1)),
        steps=steps,
        prefetch_queue=prefetch_queue,
        prefetch_busy=prefetch_busy,
        stages=stages,
        bottleneck=Bottleneck(None, False, "", ""),
        autotune=list(snap.get("decisions", [])),
        autotune_settings=snap.get("autotune"),
        device_transfers=dict(snap.get("devices", {}).get("transfers", {})),
        device_cpu_rows=dict(snap.get("devices", {}).get("cpu_rows", {})),
    )
    summary.bottleneck = _bottleneck(summary)
    return summary


def _feeding_queue(index: int, children: dict[int, list[int]], stats: dict[int, StageStats]) -> int | None:
    """The nearest parallel stage below ``index`` through inline stages: its output is this stage's
    input queue. None when the stage reads its input without a queue (a source, a map reading files)."""
    todo = list(children[index])
    while todo:
        k = todo.pop(0)
        if stats[k].kind == "parallel":
            return k
        todo.extend(children[k])
    return None


def _pct(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def _bottleneck(summary: ProfileSummary) -> Bottleneck:
    steps = summary.steps
    if steps.count == 0:
        return Bottleneck(None, False, "no data was taken from the pipeline while profiling", "")
    wait = steps.wait_fraction
    if wait < CONSUMER_BOUND_WAIT:
        held = f"; the prefetch queue held data {1 - summary.prefetch_queue.empty:.0%} of the time" \
            if summary.prefetch_queue else ""
        return Bottleneck(
            None, False,
            f"the pipeline is not the bottleneck: the consumer waited for data only {wait:.0%} of the time "
            f"({steps.mean_wait * 1e3:.2f} ms per step against {steps.mean_compute * 1e3:.2f} ms of its own "
            f"work){held}",
            "speed up the consumer (the training or inference step); more pipeline workers would not help",
        )
    candidates = [s for s in summary.stages if not s.internal]
    best = max(candidates, key=lambda s: s.busy, default=None)
    if best is None or summary.prefetch_busy > best.busy:
        return Bottleneck(
            "the iterator's row conversion", True,
            f"takes {summary.prefetch_busy:.0%} of the prefetch thread's time",
            "use create_tuple_iterator(output_numpy=True), or batch the rows so fewer items are converted",
        )
    reason = _reason(best, summary)
    if wait < 0.5:
        reason += f" (the consumer waited for data {wait:.0%} of the time)"
    return Bottleneck(best.name, True, reason, _advice(best, summary), _dominant_op(best))


def _dominant_op(s: StageStats) -> str | None:
    """The op that takes most of a multi-op stage's time (at least half of it), else None: merged
    maps are named by all their ops, and the verdict should point at the one to fix."""
    real = [o for o in s.ops if not o.name.startswith("read ")]
    if len(real) < 2:
        return None
    op = max(real, key=lambda o: o.seconds)
    return op.name if op.share >= 0.5 else None


def _reason(s: StageStats, summary: ProfileSummary) -> str:
    if s.kind == "parallel":
        text = f"is busy {s.busy:.0%}"
        if s.input_queue is not None:
            text += f" with {_input_phrase(s.input_queue)}"
        else:
            text += f", waiting for input only {s.input_wait:.0%} of the time"
        if s.output_queue is not None:
            text += f" and its output queue empty {s.output_queue.empty:.0%}"
        return text
    if s.thread == "prefetch":
        text = f"is busy {s.busy:.0%} of the time, running inline in the prefetch thread"
        if s.input_queue is not None:
            text += f", with {_input_phrase(s.input_queue)}"
        if summary.prefetch_queue is not None:
            text += f" and the prefetch queue empty {summary.prefetch_queue.empty:.0%}"
        return text
    puller = next((p for p in summary.stages if p.name == s.thread), None)
    text = f"is busy {s.busy:.0%} of the time, running serially inside the reads of {s.thread}"
    if puller is not None and puller.input_wait is not None:
        text += f", whose workers wait for it {puller.input_wait:.0%} of their time"
    return text


def _input_phrase(q: QueueStats) -> str:
    # "Full" is the strong evidence; a producer that ran out of data (end of epoch, a short run)
    # never fills its queue, and then data being there is the evidence.
    if q.full >= 0.5:
        return f"its input queue full {q.full:.0%} of the time"
    return f"data waiting in its input queue {1 - q.empty:.0%} of the time"


def _heaviest_op(s: StageStats) -> OpStats | None:
    real = [o for o in s.ops if not o.name.startswith("read ")]
    return max(real, key=lambda o: o.seconds, default=None)


def _reduced_decode_hint(s: StageStats) -> str:
    """How to decode fewer pixels: a Decode followed by Resize fuses only when asked (it changes pixels
    by a stated bound); RandomResizedCrop after Decode fuses by default."""
    names = [o.name for o in s.ops]
    if "Decode" in names and "Resize" in names:
        return (", or config.set_fast_decode_resize(True): a reduced-size decode for Decode → Resize (pixels "
                "within the bound explain() states)")
    return ", or a RandomResizedCrop right after Decode, which the optimizer turns into a cropped, reduced-size decode"


def _advice(s: StageStats, summary: ProfileSummary) -> str:
    cores = summary.cores
    if s.node_type == "RayOperator":
        workers = max(1, round(s.workers))
        return (f"give the Ray cluster more CPUs (its tasks kept {workers} busy on average) or make this "
                "operator's ops cheaper")
    if s.kind == "parallel":
        workers = s.workers_now or max(1, round(s.workers))
        more = f"add workers (num_parallel_workers={workers} → {workers + 1})"
        op = _heaviest_op(s)
        if s.cpu is not None and s.cpu < 0.6:
            if s.python_ops and not s.process_workers:
                return (f"{more}, or python_multiprocessing=True: its workers are on the CPU only {s.cpu:.0%} of "
                        "their busy time (sleeping, waiting on I/O or on the GIL)")
            return f"{more}: its workers are on the CPU only {s.cpu:.0%} of their busy time (waiting on I/O or sleeping)"
        if op is not None and op.share >= 0.3:
            first = op.name.split("+")[0]
            targets = _offload_targets()
            if "Decode" in op.name and targets:
                where = f"move {first} ({op.share:.0%} of its time) to another device ({' or '.join(targets)})"
            elif "Decode" in op.name:
                fused = "+" in op.name  # already a reduced-size/cropped decode
                where = (
                    f"{first} is {op.share:.0%} of its time and this machine has no GPU or media engine to move it "
                    "to: more cores or smaller images"
                    + ("" if fused else _reduced_decode_hint(s))
                )
            elif targets:
                where = f"make {op.name} ({op.share:.0%} of its time) cheaper or move it to another device"
            else:
                where = f"make {op.name} ({op.share:.0%} of its time) cheaper"
            if workers >= cores:
                return f"the {cores} cores are saturated ({workers} workers): {where}"
            return f"{more} or {where}"
        if workers >= cores:
            also = " or move them to another device" if _offload_targets() else ""
            return f"the {cores} cores are saturated ({workers} workers): make its ops cheaper{also}"
        return more
    if s.node_type == "IterableSourceNode":
        return ("its rows are produced serially: make the generator faster, or give the dataset random access "
                "(__getitem__ and __len__) so that num_parallel_workers read rows in parallel")
    if s.node_type == "BatchNode":
        return "give it workers: batch(..., num_parallel_workers=2) (or AUTOTUNE) collates batches in parallel"
    if s.node_type == "FilterNode":
        return "give it workers: filter(..., num_parallel_workers=2)"
    return "it runs inline in one thread: make it cheaper, or do its work in a map with workers"


# --- rendering ------------------------------------------------------------------------------------


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def render(summary: ProfileSummary) -> str:
    """The summary as a readable table, the bottleneck line and autotune's decisions."""
    steps = summary.steps
    lines = [
        f"minddata profile of {summary.pipeline}",
        f"{steps.count:,} items in {summary.seconds:.2f} s ({summary.rows_per_second:,.1f}/s) over "
        f"{summary.epochs} epoch(s); first item after {steps.first_seconds:.3f} s; the consumer waited for "
        f"data {steps.wait_fraction:.0%} of the time ({steps.mean_wait * 1e3:.2f} ms per step, "
        f"{steps.mean_compute * 1e3:.2f} ms of its own work per step)",
        "",
    ]
    header = ("stage", "workers", "rows in", "rows out", "ms/row", "busy", "CPU", "in-wait", "out-wait", "out-queue m/e/f")
    rows = []
    for s in summary.stages:
        name = "  " * s.depth + _short(s.name, 64)
        if s.kind == "parallel":
            workers = f"{s.workers_now}" if s.workers_now is not None else f"{s.workers:.1f}"
        else:
            workers = "inline"
        q = s.output_queue
        queue = f"{q.mean:.0%}/{q.empty:.0%}/{q.full:.0%}" if q else "-"
        rows.append((name, workers, f"{s.rows_in:,}", f"{s.rows_out:,}", f"{s.seconds_per_row * 1e3:.3f}",
                     _pct(s.busy), _pct(s.cpu), _pct(s.input_wait), _pct(s.output_wait), queue))
    pq = summary.prefetch_queue
    rows.append(("iterator (prefetch, row conversion)", "1", "", f"{steps.count:,}", "", _pct(summary.prefetch_busy),
                 "-", "-", "-", f"{pq.mean:.0%}/{pq.empty:.0%}/{pq.full:.0%}" if pq else "-"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells: tuple) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    lines.append(line(header))
    lines.append(line(tuple("-" * w for w in widths)))
    lines.extend(line(r) for r in rows)
    lines.append("(busy: share of worker time working, or of the run for inline stages; in-wait/out-wait: "
                 "workers waiting for input / for a free slot; out-queue: mean occupancy / empty / full)")
    for s in summary.stages:
        if s.ops:
            parts = ", ".join(f"{o.name} {o.share:.0%} ({o.seconds_per_row * 1e3:.3f} ms/row)" for o in s.ops)
            lines.append(f"ops of {_short(s.name, 60)}: {parts}")
    lines.append("")
    lines.append(f"bottleneck: {summary.bottleneck}")
    if summary.device_transfers:
        moved = ", ".join(f"{k} {n:,}" for k, n in sorted(summary.device_transfers.items()))
        lines.append(f"rows between devices: {moved}")
    if summary.device_cpu_rows:
        fell = ", ".join(f"{op} {n:,}" for op, n in sorted(summary.device_cpu_rows.items()))
        lines.append(f"device ops that ran on the CPU instead (rows): {fell}")
    if summary.autotune_settings:
        a = summary.autotune_settings
        lines.append(f"autotune: budget {a['cpu_budget']:g} cores, {a['memory_budget'] / 2**20:,.0f} MiB; "
                     f"tuning {', '.join(a['tunable']) or 'no stage'}")
    for d in summary.autotune:
        if d["action"] == "note":
            lines.append(f"  {d['t']:7.2f} s  {d['stage']}: {d['why']}")
        elif d["action"] == "kept":
            lines.append(f"  {d['t']:7.2f} s  {d['stage']}: keeps {d['workers_to']} workers ({d['why']})")
        else:
            slots = f", slots {d.get('old_slots')} → {d.get('slots')}" if "slots" in d else ""
            lines.append(f"  {d['t']:7.2f} s  {d['stage']}: workers {d['workers_from']} → {d['workers_to']}{slots} "
                         f"({d['why']})")
    return "\n".join(lines)


# --- timeline -------------------------------------------------------------------------------------


def chrome_trace(snapshots: list[dict[str, Any]],
                 training: Sequence[tuple[dict[str, Any], int | None]] = ()) -> dict[str, Any]:
    """A Chrome-trace/Perfetto JSON object: one process per run, one track per thread (each worker,
    the prefetch thread, the consumer), spans for work and waits, queue sizes as counters.

    ``training``: ``(step trace snapshot, index of the pipeline run that fed it or None)`` pairs; their
    steps and phases go on tracks of that run's process, on its clock (or a process of their own).
    """
    from minddata.engine.training_report import training_trace_events

    events: list[dict[str, Any]] = []

    def us(t: float) -> float:
        return round(t * 1e6, 3)

    for run_index, snap in enumerate(snapshots):
        pid = run_index + 1
        names = {s["index"]: s["name"] for s in snap["stages"]}
        events.append({"ph": "M", "pid": pid, "name": "process_name",
                       "args": {"name": f"minddata run {run_index}: {snap['label']}"}})
        tids: dict[str, int] = {}

        def tid_for(thread: str, pid: int = pid, tids: dict[str, int] = tids) -> int:
            if thread not in tids:
                tids[thread] = len(tids) + 1
                events.append({"ph": "M", "pid": pid, "tid": tids[thread], "name": "thread_name", "args": {"name": thread}})
            return tids[thread]

        consumer = tid_for("consumer")
        for train_snap, fed_by in training:
            if fed_by == run_index:
                offset = train_snap["started_at"] - snap["started_at"]
                events.extend(training_trace_events(train_snap, pid, offset, tid_for))
        steps = snap["steps"]
        request, ready = steps["request"], steps["ready"]
        for i in range(len(ready)):
            events.append({"ph": "X", "pid": pid, "tid": consumer, "name": "wait for data", "cat": "consumer",
                           "ts": us(request[i]), "dur": us(ready[i] - request[i]),
                           "args": {"epoch": steps["epoch"][i], "step": i}})
            if i + 1 < len(ready):
                events.append({"ph": "X", "pid": pid, "tid": consumer, "name": "consumer work", "cat": "consumer",
                               "ts": us(ready[i]), "dur": us(request[i + 1] - ready[i])})
        spans = snap["spans"]
        threads = spans.get("threads", {})
        prefetch_name = spans.get("prefetch_thread") or "minddata-prefetch"
        if spans.get("prefetch"):
            tid = tid_for(prefetch_name)
            for a, b, c in spans["prefetch"]:
                events.append({"ph": "X", "pid": pid, "tid": tid, "name": "convert rows", "cat": "iterator",
                               "ts": us(a), "dur": us(b - a)})
                if c - b > 20e-6:
                    events.append({"ph": "X", "pid": pid, "tid": tid, "name": "wait: prefetch queue full",
                                   "cat": "wait", "ts": us(b), "dur": us(c - b)})
        for key, stage_spans in spans.get("stages", {}).items():
            stage = next(s for s in snap["stages"] if str(s["index"]) == key)
            label = names[stage["index"]] + (" (waiting for output)" if stage["kind"] == "parallel" else "")
            for thread_id, a, b in stage_spans:
                tid = tid_for(threads.get(str(thread_id), f"thread {thread_id}"))
                events.append({"ph": "X", "pid": pid, "tid": tid, "name": label, "cat": "stage",
                               "ts": us(a), "dur": us(b - a)})
        for key, workers in spans.get("workers", {}).items():
            label = names[int(key)]
            for worker, chunks in workers.items():
                tid = tid_for(worker)
                for a, b, c, d, rows in chunks:
                    if b - a > 20e-6:
                        events.append({"ph": "X", "pid": pid, "tid": tid, "name": "wait: no free slot", "cat": "wait",
                                       "ts": us(a), "dur": us(b - a)})
                    if c - b > 20e-6:
                        events.append({"ph": "X", "pid": pid, "tid": tid, "name": "wait: input", "cat": "wait",
                                       "ts": us(b), "dur": us(c - b)})
                    events.append({"ph": "X", "pid": pid, "tid": tid, "name": label, "cat": "work",
                                   "ts": us(c), "dur": us(d - c), "args": {"rows": rows}})
        t = snap["samples"]["t"]
        for key, series in snap["samples"]["stages"].items():
            label = names[int(key)]
            for when, s in zip(t, series, strict=False):
                events.append({"ph": "C", "pid": pid, "name": f"queue {label}", "ts": us(when),
                               "args": {"ready": s[0], "in flight": s[1] - s[0], "free": max(0, s[2] - s[1])}})
                events.append({"ph": "C", "pid": pid, "name": f"workers {label}", "ts": us(when),
                               "args": {"working": s[4], "waiting for input": s[5], "waiting for a slot": s[6]}})
        for when, (n, cap) in zip(t, snap["samples"]["prefetch"], strict=False):
            events.append({"ph": "C", "pid": pid, "name": "prefetch queue", "ts": us(when),
                           "args": {"items": n, "free": max(0, cap - n)}})
        for d in snap.get("decisions", []):
            events.append({"ph": "i", "pid": pid, "tid": consumer, "s": "p", "name": f"autotune: {d['stage']}",
                           "ts": us(d["t"]), "args": {k: v for k, v in d.items() if k not in ("t", "stage")}})
    alone = [t for t, fed_by in training if fed_by is None or not 0 <= fed_by < len(snapshots)]
    for i, train_snap in enumerate(alone):
        pid = len(snapshots) + i + 1
        events.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": train_snap["label"]}})
        own: dict[str, int] = {}

        def own_tid(thread: str, pid: int = pid, own: dict[str, int] = own) -> int:
            if thread not in own:
                own[thread] = len(own) + 1
                events.append({"ph": "M", "pid": pid, "tid": own[thread], "name": "thread_name", "args": {"name": thread}})
            return own[thread]

        events.extend(training_trace_events(train_snap, pid, 0.0, own_tid))
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"producer": "minddata", "runs": len(snapshots), "training_runs": len(training)}}


@functools.lru_cache(maxsize=1)
def _offload_targets() -> tuple[str, ...]:
    """The devices this machine could take work to (those ``device="auto"`` may choose), as the
    placement calls that would do it."""
    from minddata.ops.devices import devices

    return tuple(f".device({d.name!r})" for d in devices() if not d.on_host and d.auto_eligible(d.probe()))
