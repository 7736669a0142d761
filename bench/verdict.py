"""The one-line verdict ``minddata bench`` gives each pipeline, and the details printed below it.

The profiler names the limiting step and what it measured there; this module words that for someone
new to data pipelines and checks its advice against the machine: a low CPU share means workers waiting
on I/O only when the machine had cores to spare. When other processes loaded the machine (the load
check's warning), or the pipeline and the rest already used every core, the workers were waiting for a
CPU, and more workers would not help; the verdict then says so instead of advising ``--workers``.

Examples:
    >>> from minddata.bench.runner import BenchResult
    >>> r = BenchResult("train", 100, 1.0, 100.0, 2.0, 50.0, 300.0, 0.1, 2, 8, 1,
    ...                 bottleneck_stage="Decode in Map[Decode, Resize]", bottleneck="...",
    ...                 neck={"pipeline_bound": True, "stage": "Map[Decode, Resize]", "op": "Decode",
    ...                       "kind": "parallel", "cpu": 0.95, "workers": 2, "busy": 0.99, "reason": "is busy 99%",
    ...                       "advice": "the 2 cores are saturated (2 workers): make its ops cheaper"})
    >>> verdict(r, cores=2, other_cores=0.0, busy=False).line
    'CPU-bound: Decode is the slowest step and its 2 workers kept the 2 cores busy; more workers would not help'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Verdict", "verdict", "plain_fusion_notes", "in_command_terms", "SPARE_CORES"]

#: A run left fewer idle cores than this on average (its own CPU use plus other processes'): the
#: machine was saturated, and a worker off the CPU was waiting for a core, not for I/O.
SPARE_CORES = 0.5
#: Below this share of their busy time on a CPU, a stage's workers are mostly waiting (the profiler's
#: own threshold for "waiting on I/O or sleeping").
LOW_CPU_SHARE = 0.6


@dataclass
class Verdict:
    """``label``: a word or two for the table; ``line``: one sentence a newcomer can act on;
    ``details``: the evidence and the finer points, one per line."""

    label: str
    line: str
    details: list[str] = field(default_factory=list)


def in_command_terms(advice: str) -> str:
    """The profiler's advice in terms of the command: "add workers (num_parallel_workers=2 → 3)"
    becomes "rerun with --workers 3".

    Examples:
        >>> in_command_terms("add workers (num_parallel_workers=2 → 3) or make Resize cheaper")
        'rerun with --workers 3 or make Resize cheaper'
    """
    return re.sub(r"add workers \(num_parallel_workers=\d+ → (\d+)\)", r"rerun with --workers \1", advice)


_ADD_WORKERS = re.compile(r"^add workers \(num_parallel_workers=\d+ → \d+\)(?:: .*|,? or (?P<rest>.*))?$")
_SATURATED = re.compile(r"^the \d+ cores are saturated \(\d+ workers\): ")


def _other_remedies(advice: str) -> str:
    """The profiler's advice without "add workers" and without its own saturation preamble: what is
    left to do when more workers would not help ("" when nothing is).

    Examples:
        >>> _other_remedies("add workers (num_parallel_workers=2 → 3): its workers are on the CPU only 43%")
        ''
        >>> _other_remedies("add workers (num_parallel_workers=2 → 3) or make Resize (40% of its time) cheaper")
        'make Resize (40% of its time) cheaper'
        >>> _other_remedies("the 2 cores are saturated (2 workers): make its ops cheaper")
        'make its ops cheaper'
    """
    match = _ADD_WORKERS.match(advice)
    if match:
        return match.group("rest") or ""
    return _SATURATED.sub("", advice)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _plain_step(facts: dict) -> str:
    """The limiting step in the user's words: the op when one takes most of the stage, else the stage.

    Examples:
        >>> _plain_step({"op": "Decode+RandomResizedCrop", "stage": "Map[Decode, RandomResizedCrop]"})
        'Decode and RandomResizedCrop (done as one step)'
        >>> _plain_step({"stage": "Map[Decode, Resize] reading ImageFolderDataset"})
        'the map (Decode, Resize)'
        >>> _plain_step({"stage": "Batch(16) (with Normalize, HWC2CHW from the map)"})
        'batching (with Normalize and HWC2CHW)'
    """
    op, stage = facts.get("op"), facts.get("stage") or "the pipeline"
    if op:
        parts = op.split("+")
        return parts[0] if len(parts) == 1 else f"{_and(parts)} (done as one step)"
    if stage.startswith("Map[") and "]" in stage:
        return f"the map ({stage[4:stage.index(']')]})"
    batch = re.match(r"Batch\(\d+\)(?: \(with (.+) from the map\))?", stage)
    if batch:
        return f"batching (with {_and(batch.group(1).split(', '))})" if batch.group(1) else "batching"
    return stage


def verdict(result: Any, *, cores: int, other_cores: float, busy: bool) -> Verdict:
    """The verdict on ``result`` (an aggregated :class:`~minddata.bench.runner.BenchResult`), given the
    machine's ``cores``, the cores ``other_cores`` other processes used during the benchmark and
    whether the load check found the machine ``busy`` (then no setting is advised: rerun first).
    Rows that a device op ran on the CPU instead (a GPU decoder's refusals, Dvpp's CPU policy) are
    named in the details: a device run with fallbacks measured partly the CPU."""
    found = _verdict(result, cores=cores, other_cores=other_cores, busy=busy)
    fallbacks = (result.neck or {}).get("cpu_fallback_rows") or {}
    if fallbacks:
        rows = ", ".join(f"{op} {n:,} rows" for op, n in sorted(fallbacks.items()))
        found.details.append(f"ran on the CPU instead of their device: {rows}")
    return found


def _verdict(result: Any, *, cores: int, other_cores: float, busy: bool) -> Verdict:
    facts = result.neck or {}
    if not result.bottleneck:
        return Verdict("n/a", "not profiled")
    if not result.bottleneck_agreed:
        where = " on an idle machine" if busy else ""
        counts = result.bottleneck[result.bottleneck.find("(") + 1:result.bottleneck.find(");")]
        return Verdict("unclear", f"unclear: the rounds disagree on the slowest step; rerun with more --rounds{where}",
                       [f"slowest step per round: {counts}"] if counts else [])
    if not facts:  # a result without the profiler's measurements: its text is all there is
        return Verdict("see below", in_command_terms(result.bottleneck))
    if not facts.get("pipeline_bound"):
        return Verdict("keeps up", "keeps up: the pipeline delivers batches faster than they were taken, "
                       "so its speed is not the limit", [f"profiler: {facts['reason']}"])
    what = _plain_step(facts)
    where = f"{facts['op']} in {facts['stage']}" if facts.get("op") else facts["stage"]
    details = [f"profiler: {where} {facts['reason']}"]
    own = result.cpu_seconds / result.seconds if result.seconds > 0 else 0.0
    spare = cores - own - other_cores
    cpu, workers = facts.get("cpu"), facts.get("workers", 1)
    ray = facts.get("node_type") == "RayOperator"  # its workers are the cluster's: not in this run's CPU time
    if facts.get("kind") == "parallel" and not ray:
        on_cpu = f"its {workers} worker(s) were on a CPU {cpu:.0%} of the time they had work; " if cpu is not None else ""
        details.append(f"CPU: {on_cpu}this pipeline used {own:.1f} of the {cores} cores, other processes "
                       f"{other_cores:.1f}")
    remedies = _other_remedies(facts.get("advice", ""))
    if busy:
        line = (f"slowed by other work: {what} is the slowest step, but other processes used {other_cores:.1f} of "
                f"the {cores} cores, so its workers waited for a CPU; rerun on an idle machine before changing "
                "settings")
        return Verdict("machine busy", line, details)
    if ray:
        return Verdict("Ray CPUs", f"{what} is the slowest step, in Ray tasks: {facts.get('advice', '')}", details)
    if facts.get("kind") != "parallel":
        advice = in_command_terms(facts.get("advice", ""))
        return Verdict("one thread", f"{what} is the slowest step and runs in one thread: {advice}", details)
    starved = cpu is not None and cpu < LOW_CPU_SHARE
    if spare < SPARE_CORES or (workers >= cores and not starved):
        if starved:
            line = (f"CPU-bound: {what} is the slowest step and the {cores} cores were all in use, so its workers "
                    "waited for a CPU (not for disk); more workers would not help")
        else:
            line = (f"CPU-bound: {what} is the slowest step and its {workers} workers kept the {cores} cores busy; "
                    "more workers would not help")
        if remedies:
            details.append(f"to go faster: {remedies}")
        return Verdict("CPU-bound", line, details)
    if starved:
        line = (f"waiting: {what} is the slowest step and its workers were off the CPU {1 - cpu:.0%} of the time "
                f"they had work while {spare:.1f} cores were free (reading files, or a lock); try --workers "
                f"{workers + 1}")
        return Verdict("waiting", line, details)
    line = f"{what} is the slowest step and {spare:.1f} of the {cores} cores were free: try --workers {workers + 1}"
    if remedies:
        details.append(f"or: {remedies}")
    return Verdict("more workers", line, details)


# --- what the optimizer changed, in plain words ------------------------------------------------------

_PLAIN_PAIRS = {
    ("Decode", "RandomResizedCrop"): "only the cropped region of each JPEG is decoded, at reduced size",
    ("Decode", "Resize"): "JPEGs are decoded at reduced size, then resized",
}


def _bound(note: str) -> str:
    return note.split("; bound: ", 1)[1] if "; bound: " in note else ""


def _plain_note(note: str) -> tuple[str, str]:
    """(key, text): one plain sentence for one of ``explain()``'s fusion notes; notes about the same
    rewrite (seen from the map and from the batch) share a key."""
    head = note.split("; bound: ", 1)[0]
    bound = _bound(note)
    moved = re.match(r"^(.+?)(?: on '.+?')? moved into the (?:following )?batch", head)
    if moved:
        ops = moved.group(1).split(" → ")
        return (f"batch:{moved.group(1)}",
                f"{_and(ops)} write each image straight into its slot of the batch (same numbers, one copy "
                "fewer per image)")
    kept = re.match(r"^(\w+)\+(\w+) kept as two ops", head)
    if kept:
        tip = re.search(r"\((config\.\w+\(True\)) fuses them for (.+?), at (.+?) of mean difference\)", bound)
        text = f"{kept.group(1)} and {kept.group(2)} run as written (exact pixels)"
        if tip:
            text += f"; {tip.group(1)} would fuse them, faster, with pixels off by {tip.group(3)} on average"
        return (f"pair:{kept.group(1)}+{kept.group(2)}", text)
    pair = re.match(r"^(\w+)\+(\w+)(?: on (\w+))?: ", head)
    if pair:
        first, second, device = pair.groups()
        how = f"on {device}" if device else _PLAIN_PAIRS.get((first, second), head.split(": ", 1)[1])
        pixels = bound.replace("unfused", "separate ops").replace("; ", ", ") if "bit-exact" not in bound else ""
        return (f"pair:{first}+{second}", f"{first} and {second} run as one step: {how}"
                + (f"; {pixels}" if pixels and not device else ""))
    if head.startswith("Normalize → HWC2CHW: one pass per row"):
        return ("normalize_hwc2chw", "Normalize and HWC2CHW run as one pass per image (same numbers)")
    reads = re.match(r"^reads (.+?)'s rows in its own workers", head)
    if reads:
        return ("reads", f"the map's workers also read the files of {reads.group(1)} (no separate reading step)")
    merged = re.match(r"^merged the adjacent map over ('.+?') into this one", head)
    if merged:
        return ("merged", f"two consecutive maps over {merged.group(1)} run as one")
    return (head, head)


def plain_fusion_notes(notes: list[str]) -> list[str]:
    """What the graph optimizer changed, one plain sentence per rewrite (each once), from the notes
    ``Dataset.explain()`` prints.

    Examples:
        >>> plain_fusion_notes([
        ...     "Normalize → HWC2CHW on 'image' moved into the batch: each image into its slot; bound: bit-exact",
        ...     "Normalize → HWC2CHW moved into the following batch; a row check stays here; bound: bit-exact",
        ... ])
        ['Normalize and HWC2CHW write each image straight into its slot of the batch (same numbers, one copy fewer per image)']
    """
    seen: dict[str, str] = {}
    for note in notes:
        key, text = _plain_note(note)
        seen.setdefault(key, text)
    return list(seen.values())
