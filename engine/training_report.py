"""A training run's step trace (plain data from ``minddata.trainer``'s ``StepTrace.snapshot``) joined
to the profile of the pipeline that fed it: where step time went, and whether training is data-bound.

The verdict is one sentence a user can act on. A run is data-bound when its steps spent at least
``CONSUMER_BOUND_WAIT`` (10%) of their steady-state time waiting for the next batch; the sentence then
names the pipeline's bottleneck stage with its evidence and advice (from the pipeline profile's own
verdict). Otherwise the model is the bottleneck, and the sentence says which phase of the step costs
most. The first step (warm-up: the pipeline starting, lazy initialisation) is left out of the shares.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from minddata.engine.profile_report import CONSUMER_BOUND_WAIT, ProfileSummary

__all__ = ["TrainingSummary", "render_training", "summarize_training", "training_trace_events"]

# Phases that add up to a step's time; the all-reduce overlaps backward, so it is reported apart.
STEP_PHASES = ("data_wait", "h2d", "forward", "backward", "optimizer", "callbacks")
PHASE_TITLES = {"data_wait": "waiting for data", "h2d": "host-to-device copy", "forward": "forward",
                "backward": "backward", "optimizer": "optimizer", "allreduce": "gradient all-reduce",
                "callbacks": "callbacks"}


@dataclass
class TrainingSummary:
    """What :meth:`minddata.Profiler.training_summary` returns: ``phase_ms`` the mean milliseconds per
    step of each phase, ``phase_share`` its share of step time (steady state), ``wait_fraction`` the
    share spent waiting for data, ``verdict`` the sentence; ``network_ops`` / ``network_modules`` the
    network's operator types and layers from ``Profiler(network=True)`` (seconds, heaviest first)."""

    label: str
    steps: int
    seconds: float
    steps_per_second: float
    phase_ms: dict[str, float]
    phase_share: dict[str, float]
    wait_fraction: float
    data_bound: bool
    verdict: str
    pipeline: str | None = None
    network_ops: list[dict[str, Any]] = field(default_factory=list)
    network_modules: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return render_training(self)


def summarize_training(snap: dict[str, Any], pipeline: ProfileSummary | None) -> TrainingSummary:
    steps = snap["steps"]
    count = len(steps["begin"])
    first = 1 if count > 1 else 0  # leave the warm-up step out
    sums = {name: sum(steps[name][first:]) for name in (*STEP_PHASES, "allreduce")}
    measured = max(count - first, 1)
    step_time = sum(sums[name] for name in STEP_PHASES)
    share = {name: (sums[name] / step_time if step_time > 0 else 0.0) for name in (*STEP_PHASES, "allreduce")}
    wait = share["data_wait"]
    duration = max(float(snap["duration"]), 1e-9)
    total_steps = int(snap.get("steps_total", count))
    summary = TrainingSummary(
        label=snap["label"], steps=total_steps, seconds=duration, steps_per_second=total_steps / duration,
        phase_ms={name: sums[name] / measured * 1e3 for name in (*STEP_PHASES, "allreduce")},
        phase_share=share, wait_fraction=wait, data_bound=wait >= CONSUMER_BOUND_WAIT and count > 0,
        verdict="", pipeline=pipeline.pipeline if pipeline is not None else None,
        network_ops=list(snap.get("network_ops", [])), network_modules=list(snap.get("network_modules", [])),
    )
    summary.verdict = _verdict(summary, pipeline)
    return summary


def _verdict(s: TrainingSummary, pipeline: ProfileSummary | None) -> str:
    if s.steps == 0:
        return "no training step was recorded"
    wait = s.wait_fraction
    if s.data_bound:
        head = f"{wait:.0%} of step time waiting for data"
        bottleneck = pipeline.bottleneck if pipeline is not None else None
        if bottleneck is not None and bottleneck.stage is not None:
            return f"{head}; the pipeline's bottleneck is {bottleneck.stage} ({bottleneck.reason}): {bottleneck.advice}"
        if pipeline is None:
            return (f"{head}; the pipeline that fed it was not profiled: start the Profiler before Model.train to "
                    "see which stage limits it")
        copy = s.phase_ms["h2d"]
        return (f"{head}, though the pipeline kept up with the sink ({pipeline.bottleneck.reason}): staging the "
                f"batches is what is slow (host-to-device copy {copy:.2f} ms per step): use dataset_sink_mode=True, "
                "smaller batches of uint8 data, or normalise on the device")
    heaviest = max(("forward", "backward", "optimizer", "h2d", "callbacks"), key=lambda p: s.phase_share[p])
    parts = ", ".join(f"{PHASE_TITLES[p]} {s.phase_share[p]:.0%}" for p in ("forward", "backward", "optimizer",
                                                                               "callbacks"))
    advice = {
        "callbacks": "make the callbacks cheaper (print or checkpoint less often)",
        "h2d": "use dataset_sink_mode=True so that copies overlap the step",
    }.get(heaviest, "make the step cheaper (amp_level='O1', a GPU, a smaller network or larger batches)")
    return (f"the model is the bottleneck: only {wait:.0%} of step time waiting for data ({parts}): {advice}; "
            "more pipeline workers would not help")


def render_training(s: TrainingSummary) -> str:
    lines = [
        f"training steps of {s.label}" + (f" fed by {s.pipeline}" if s.pipeline else ""),
        f"{s.steps:,} steps in {s.seconds:.2f} s ({s.steps_per_second:,.2f} steps/s); per step (after the first):",
    ]
    for name in (*STEP_PHASES, "allreduce"):
        if name == "allreduce" and not s.phase_ms[name]:
            continue
        note = " (overlaps backward)" if name == "allreduce" else ""
        lines.append(f"  {PHASE_TITLES[name]:<22} {s.phase_ms[name]:9.3f} ms  {s.phase_share[name]:5.0%}{note}")
    if s.network_ops:
        lines.append("network operator types (torch.profiler, heaviest first):")
        for op in s.network_ops[:10]:
            lines.append(f"  {op['name']:<40} {op['calls']:8,} calls  self CPU {op['self_cpu'] * 1e3:10.2f} ms"
                         + (f"  device {op['device_total'] * 1e3:10.2f} ms" if op["device_total"] else ""))
    if s.network_modules:
        lines.append("network layers (forward, CPU time including their operators):")
        for m in s.network_modules[:10]:
            lines.append(f"  {m['name']:<40} {m['calls']:8,} calls  {m['cpu_total'] * 1e3:10.2f} ms")
    lines.append(f"training verdict: {s.verdict}")
    return "\n".join(lines)


def training_trace_events(snap: dict[str, Any], pid: int, offset: float, tid_for: Any) -> list[dict[str, Any]]:
    """Chrome-trace events of one training run: a span per step and per phase on a "training" track,
    the network's layers on another; ``offset`` (seconds) places them on the pipeline run's clock."""
    events: list[dict[str, Any]] = []
    steps = snap["steps"]
    track = tid_for("training step")
    phase_track = tid_for("training phases")

    def us(t: float) -> float:
        return round((t + offset) * 1e6, 3)

    for i, begin in enumerate(steps["begin"]):
        t = begin
        total = sum(steps[name][i] for name in STEP_PHASES)
        events.append({"ph": "X", "pid": pid, "tid": track, "name": f"step {steps['step'][i]}", "cat": "training",
                       "ts": us(t), "dur": round(total * 1e6, 3),
                       "args": {"epoch": steps["epoch"][i], **{n: steps[n][i] for n in (*STEP_PHASES, "allreduce")}}})
        for name in STEP_PHASES:
            seconds = steps[name][i]
            if seconds > 0:
                events.append({"ph": "X", "pid": pid, "tid": phase_track, "name": PHASE_TITLES[name],
                               "cat": "training", "ts": us(t), "dur": round(seconds * 1e6, 3)})
            t += seconds
    spans = snap.get("network_spans") or []
    if spans:
        layer_track = tid_for("network layers (forward)")
        for name, start, seconds in spans:
            events.append({"ph": "X", "pid": pid, "tid": layer_track, "name": name, "cat": "network",
                           "ts": us(start), "dur": round(seconds * 1e6, 3)})
    return events
