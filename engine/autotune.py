"""Autotune: adjust parallel stages' workers and slots while the pipeline runs.

A controller thread wakes every ``interval`` seconds, reads the profiler's counters over the window
since its last look (:mod:`minddata.engine.profiling`) and makes at most one change:

- if the consumer waited on the pipeline and the stage limiting it is a tunable parallel stage whose
  workers are busy, add one worker as a *trial*: after one window to settle and two to measure, keep
  it if the stage's throughput rose by at least ``MIN_GAIN``, else take it back and never try that
  count again for this stage;
- a worker is added only while the CPU budget (cores) has room, unless the stage's workers mostly
  wait rather than compute (sleeps, I/O, the GIL), where threads help without using CPU;
- slots follow workers (``2 * workers + 2``), capped so that the chunks they hold fit the memory
  budget; a stage whose workers often wait for a free slot while its consumer waits on it gets
  two more (bursty work);
- if the process uses clearly more CPU than the budget for several windows, the least busy tunable
  stage gives back a worker.

Worker count never changes results (see :mod:`minddata.engine.parallel`). Worker processes
(``python_multiprocessing=True``) are not resized. Every decision is logged on the
``minddata.autotune`` logger and recorded in the run's profile, so it shows in the profiler summary.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any

from minddata.errors import warn

__all__ = ["AUTOTUNE", "AutotuneWorkers", "Autotuner", "is_autotune", "default_budget"]

_logger = logging.getLogger("minddata.autotune")

# A trial worker must raise its stage's throughput this much to stay: below it, the gain is within
# the noise of a shared machine and the worker only costs memory and CPU.
MIN_GAIN = 0.04
INTERVAL = 0.15


class AutotuneWorkers(int):
    """The type of :data:`AUTOTUNE`: an ``int`` equal to 1 (the starting worker count) that marks a
    stage for autotune. It prints, pickles and compares as the one ``AUTOTUNE`` value.

    Examples:
        >>> import minddata as md
        >>> ds = md.NumpySlicesDataset({"x": list(range(100))}, shuffle=False)
        >>> ds = ds.map(lambda x: x * 2, input_columns="x", num_parallel_workers=md.AUTOTUNE)
        >>> print(ds.explain())  # doctest: +ELLIPSIS
        fusion: on
        Map[<lambda>]  columns=['x']  workers=AUTOTUNE
        ...
        >>> sum(int(r["x"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True))
        9900
    """

    def __new__(cls) -> AutotuneWorkers:
        return super().__new__(cls, 1)

    def __repr__(self) -> str:
        return "AUTOTUNE"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return "AUTOTUNE" if not spec else int.__format__(int(self), spec)

    def __reduce__(self) -> tuple:
        return (AutotuneWorkers, ())


AUTOTUNE = AutotuneWorkers()


def is_autotune(value: Any) -> bool:
    """Whether a worker count is :data:`AUTOTUNE`."""
    return isinstance(value, AutotuneWorkers)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_budget(cpu: float | None, memory: int | None) -> tuple[float, int]:
    """The budgets in force: the given ones, else this process's usable cores and a quarter of RAM."""
    if cpu is None:
        try:
            cpu = float(len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            cpu = float(os.cpu_count() or 1)
    if memory is None:
        memory = _physical_memory() // 4
    return float(cpu), int(memory)


@dataclass
class _Trial:
    index: int
    old_workers: int
    old_slots: int
    rate_before: float
    ticks: int = 0


class _RateMeter:
    """A stage's throughput since its last change, over whole windows (the first after a change is
    skipped: threads start, queues refill). Rows count when a chunk completes, so a rate is trusted
    only once enough chunks completed for that quantization to be small."""

    def __init__(self, skip: int = 0):
        self.reset(skip)

    def reset(self, skip: int = 1) -> None:
        self.skip = skip
        self.seconds = 0.0
        self.rows = 0
        self.chunks = 0
        self.windows = 0

    def add(self, seconds: float, rows: float, chunks: float) -> None:
        if self.skip:
            self.skip -= 1
            return
        self.seconds += seconds
        self.rows += int(rows)
        self.chunks += int(chunks)
        self.windows += 1

    def rate(self, workers: int) -> float | None:
        # Up to one chunk per worker is in flight at each end of the measurement: with 12 chunks per
        # worker the count is off by a few per cent at most. A slow stage gets 12 windows instead.
        enough = self.windows >= 12 or (self.windows >= 1 and self.chunks >= 12 * workers)
        return self.rows / self.seconds if enough and self.seconds > 0 else None


class Autotuner:
    """Tunes the parallel stages of one run from its :class:`~minddata.engine.profiling.RunProfile`.

    ``tune_all``: every thread-backed parallel stage is tunable (``config.set_autotune(True)``);
    otherwise only stages created with ``num_parallel_workers=AUTOTUNE``.
    """

    def __init__(
        self,
        profile: Any,
        *,
        tune_all: bool,
        cpu_budget: float,
        memory_budget: int,
        interval: float | None = None,
        every_steps: int = 0,
        save_prefix: str | None = None,
        workers_only: bool = False,
    ):
        self.profile = profile
        # every_steps > 0: look only after the consumer took that many more steps (config.set_autotune_interval).
        self.every_steps = every_steps
        self._steps_at_last_look = 0
        self.save_prefix = save_prefix
        # config.set_auto_num_workers: worker counts only, no extra slots for bursty stages.
        self.workers_only = workers_only
        profile.size_chunks = True
        self.cpu_budget = cpu_budget
        self.memory_budget = memory_budget
        self.interval = interval if interval is not None else INTERVAL
        self.parallel = [p for p in profile.stages if p.parallel]
        self.tunable = {
            p.index for p in self.parallel if p.stage.resizable and (tune_all or p.stage.autotune)
        }
        self.max_workers = max(4, int(round(4 * cpu_budget)))
        self.ceiling: dict[int, int] = {}
        self.trial: _Trial | None = None
        self.last: tuple | None = None
        self.meters = {p.index: _RateMeter() for p in self.parallel}
        self.over_budget_ticks = 0
        self.noted: set[str] = set()
        profile.autotune = {
            "cpu_budget": cpu_budget,
            "memory_budget": memory_budget,
            "interval": self.interval,
            "tunable": [profile.stages[i].name for i in sorted(self.tunable)],
        }
        skipped = [p.name for p in self.parallel if not p.stage.resizable and (tune_all or p.stage.autotune)]
        for name in skipped:
            self._note(name, "runs in worker processes (python_multiprocessing=True), whose count autotune "
                             "does not change")

    # -- the loop ------------------------------------------------------------------------------

    def loop(self, stop: Any, running: Any) -> None:
        """Tick until ``stop`` is set or ``running()`` turns false (the pipeline has produced everything)."""
        try:
            while not stop.wait(self.interval):
                if not running():
                    return
                if self.every_steps:
                    steps = self.profile.steps_total
                    if steps - self._steps_at_last_look < self.every_steps:
                        continue
                    self._steps_at_last_look = steps
                try:
                    self.tick()
                except Exception:  # noqa: BLE001 - autotune must never break the pipeline it tunes
                    _logger.exception("minddata: autotune stopped after an internal error; the pipeline goes on")
                    return
        finally:
            if self.save_prefix is not None:
                self.save()

    def save(self) -> str:
        """Write the settled worker and slot counts and the decisions to ``{save_prefix}_{rank}.json``."""
        rank = os.environ.get("RANK_ID", "0")
        path = f"{self.save_prefix}_{rank}.json"
        tuned = {
            "stages": [{"name": p.name, "num_parallel_workers": p.stage.num_workers, "slots": p.stage.slots,
                        "tuned": p.index in self.tunable} for p in self.parallel],
            "decisions": [{k: v for k, v in d.items() if k != "t"} for d in self.profile.decisions],
            "cpu_budget": self.cpu_budget,
        }
        try:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                json.dump(tuned, f, indent=2, default=str)
            os.replace(path + ".tmp", path)
        except OSError as error:
            warn("autotune could not write %s: %s", path, error, logger="minddata.autotune")
        return path

    def _reading(self) -> tuple:
        profile = self.profile
        now = time.perf_counter()
        waiting = profile.waiting_since
        wait = profile.wait_total + (now - waiting if waiting is not None else 0.0)
        totals = {p.index: p.totals(now) for p in profile.stages}
        return now, time.process_time(), totals, wait

    def tick(self) -> None:
        """One look at the last window, and at most one change."""
        if self.profile.steps_total == 0 and self.profile.waiting_since is None:
            return  # not started: nothing to measure yet
        reading = self._reading()
        last, self.last = self.last, reading
        if last is None:
            return
        now, cpu_now, totals, wait = reading
        then, cpu_then, totals_then, wait_then = last
        dt = now - then
        if dt <= 0:
            return
        delta = {i: {k: totals[i][k] - totals_then[i][k] for k in totals[i]} for i in totals}
        cpu = (cpu_now - cpu_then) / dt
        consumer_wait = (wait - wait_then) / dt

        for p in self.parallel:
            d = delta[p.index]
            if d["alive"] > 0:
                self.meters[p.index].add(dt, d["rows"], d["chunks"])
        if self.trial is not None:
            self._evaluate()
            return

        if cpu > self.cpu_budget * 1.15:
            self.over_budget_ticks += 1
            if self.over_budget_ticks >= 3 and self._give_back(delta, cpu):
                self.over_budget_ticks = 0
                return
        else:
            self.over_budget_ticks = 0

        if self._fit_memory():
            return
        if consumer_wait < 0.05:
            return  # the consumer hardly waits: the pipeline keeps up
        index, util = self._bottleneck(delta, dt)
        if index is None:
            return
        prof = self.profile.stages[index]
        if index not in self.tunable:
            if prof.parallel:
                why = ("runs in worker processes, which autotune does not resize" if not prof.stage.resizable
                       else "was not given num_parallel_workers=AUTOTUNE (or use config.set_autotune(True))")
            else:
                why = ("runs inline, in the thread that reads it; give it num_parallel_workers=AUTOTUNE "
                       "to let autotune add workers")
            self._note(prof.name, f"limits the pipeline (busy {util:.0%}) but {why}")
            return
        d = delta[index]
        # Work is counted when a chunk completes, so a window can hold more than it lasted: cap at 1.
        busy = min(1.0, d["work"] / d["alive"]) if d["alive"] > 0 else 0.0
        if busy < 0.6:
            if not self.workers_only:
                self._tune_slots(delta, dt)
            return
        stage = prof.stage
        workers = stage.num_workers
        limit = min(self.max_workers, self.ceiling.get(index, self.max_workers))
        if workers >= limit:
            return
        cpu_per_worker = d["cpu"] / d["alive"] if d["alive"] > 0 else 0.0
        computing = cpu_per_worker >= 0.5
        if computing and self.cpu_budget - cpu < 0.1:
            self._note(prof.name, f"could use more workers but the CPU budget is spent "
                                  f"({cpu:.1f} of {self.cpu_budget:g} cores in use)")
            return
        slots = self._slots_for(index, workers + 1)
        if slots is None:
            self._note(prof.name, "could use more workers but their chunks would not fit the memory budget "
                                  f"({self.memory_budget / 2**20:.0f} MiB)")
            return
        rate = self.meters[index].rate(workers)
        if rate is None:
            return  # measure the stage as it is before changing it
        self.trial = _Trial(index, workers, stage.slots, rate)
        kind = "computing" if computing else "mostly waiting (sleep, I/O or the GIL)"
        self._change(prof, workers + 1, slots,
                     f"trial: busy {busy:.0%}, {kind}, consumer waited {min(consumer_wait, 1.0):.0%} of the "
                     f"window, CPU {cpu:.1f} of {self.cpu_budget:g} cores")

    # -- pieces --------------------------------------------------------------------------------

    def _bottleneck(self, delta: dict, dt: float) -> tuple[int | None, float]:
        best, best_util = None, 0.0
        stages = self.profile.stages
        for p in stages:
            d = delta[p.index]
            if p.internal:
                continue
            if p.parallel:
                util = d["work"] / d["alive"] if d["alive"] > 0 else 0.0
            else:
                children = sum(delta[c.index]["inclusive"] for c in stages if c.parent == p.index)
                util = max(0.0, d["inclusive"] - children) / dt
            if util > best_util:
                best, best_util = p.index, util
        return best, best_util

    def _evaluate(self) -> None:
        trial = self.trial
        assert trial is not None
        prof = self.profile.stages[trial.index]
        rate = self.meters[trial.index].rate(prof.stage.num_workers)
        if rate is None:
            return
        self.trial = None
        gain = rate / trial.rate_before - 1 if trial.rate_before > 0 else 1.0
        if gain >= MIN_GAIN:
            self._record(prof, "kept", prof.stage.num_workers, prof.stage.num_workers,
                         f"throughput {trial.rate_before:,.0f} → {rate:,.0f} rows/s ({gain:+.0%})")
            return
        self.ceiling[trial.index] = trial.old_workers
        self._change(prof, trial.old_workers, trial.old_slots,
                     f"reverted: throughput {trial.rate_before:,.0f} → {rate:,.0f} rows/s ({gain:+.0%}), "
                     f"under the {MIN_GAIN:.0%} a worker must add")

    def _give_back(self, delta: dict, cpu: float) -> bool:
        candidates = []
        for index in self.tunable:
            stage = self.profile.stages[index].stage
            d = delta[index]
            if stage.num_workers > 1 and d["alive"] > 0:
                candidates.append((d["work"] / d["alive"], index))
        if not candidates:
            return False
        busy, index = min(candidates)
        if busy > 0.8:
            return False
        prof = self.profile.stages[index]
        workers = prof.stage.num_workers - 1
        self.ceiling[index] = workers
        self._change(prof, workers, self._slots_for(index, workers) or workers + 1,
                     f"CPU over budget ({cpu:.1f} of {self.cpu_budget:g} cores) and this stage is busy only {busy:.0%}")
        return True

    def _tune_slots(self, delta: dict, dt: float) -> None:
        for index in sorted(self.tunable):
            prof = self.profile.stages[index]
            d = delta[index]
            if d["alive"] <= 0:
                continue
            slot_wait = d["slot_wait"] / d["alive"]
            consumer_waits = d["inclusive"] / dt  # the stage's consumer blocked on its output
            stage = prof.stage
            if slot_wait > 0.25 and consumer_waits > 0.1 and stage.slots < 4 * stage.num_workers + 4:
                slots = stage.slots + 2
                if self._fits(index, slots):
                    self._change(prof, stage.num_workers, slots,
                                 f"bursty: workers waited for a slot {slot_wait:.0%} of the time while their "
                                 f"consumer waited on them {min(consumer_waits, 1.0):.0%}")
                    return

    def _fit_memory(self) -> bool:
        """Over the memory budget: take slots from the tunable stage holding the most (down to
        workers + 1). True if something changed."""
        if self._memory_in_use(-1) <= self.memory_budget:
            return False
        held = [(p.stage.slots * p.chunk_bytes(), p.index) for p in self.parallel
                if p.index in self.tunable and p.stage.slots > p.stage.num_workers + 1 and p.chunk_bytes() > 0]
        if not held:
            return False
        _, index = max(held)
        prof = self.profile.stages[index]
        stage = prof.stage
        size = prof.chunk_bytes()
        room = int((self.memory_budget - self._memory_in_use(index)) // size)
        slots = max(stage.num_workers + 1, min(stage.slots - 1, room))
        self._change(prof, stage.num_workers, slots,
                     f"its queue held {stage.slots} chunks of {size / 2**20:.1f} MiB, over the memory budget "
                     f"({self.memory_budget / 2**20:.0f} MiB)")
        return True

    def _memory_in_use(self, but: int) -> float:
        total = 0.0
        for p in self.parallel:
            if p.index != but:
                total += p.stage.slots * p.chunk_bytes()
        return total

    def _fits(self, index: int, slots: int) -> bool:
        size = self.profile.stages[index].chunk_bytes()
        return size <= 0 or self._memory_in_use(index) + slots * size <= self.memory_budget

    def _slots_for(self, index: int, workers: int) -> int | None:
        """Slots for ``workers`` workers within the memory budget; None if not even ``workers + 1`` fit."""
        want = 2 * workers + 2
        size = self.profile.stages[index].chunk_bytes()
        if size <= 0:
            return want
        room = int((self.memory_budget - self._memory_in_use(index)) // size)
        if room < workers + 1:
            return None
        return min(want, room)

    def _change(self, prof: Any, workers: int, slots: int, why: str) -> None:
        stage = prof.stage
        old_workers, old_slots = stage.num_workers, stage.slots
        stage.resize(workers=workers, slots=slots)
        self.meters[prof.index].reset()
        self._record(prof, "resize", old_workers, workers, why, old_slots=old_slots, slots=slots)

    def _note(self, name: str, why: str) -> None:
        if name in self.noted:
            return
        self.noted.add(name)
        self.profile.record_decision({"t": self._t(), "stage": name, "action": "note", "why": why})
        _logger.info("minddata: autotune: %s %s", name, why)

    def _t(self) -> float:
        return time.perf_counter() - self.profile.t0

    def _record(self, prof: Any, action: str, old: int, new: int, why: str, **extra: Any) -> None:
        decision = {"t": self._t(), "stage": prof.name, "action": action, "workers_from": old,
                    "workers_to": new, "why": why, "steps": self.profile.steps_total, **extra}
        self.profile.record_decision(decision)
        if action == "resize":
            slots = f", slots {extra.get('old_slots')} → {extra.get('slots')}" if "slots" in extra else ""
            _logger.info("minddata: autotune: %s workers %d → %d%s (%s)", prof.name, old, new, slots, why)
        else:
            _logger.info("minddata: autotune: %s keeps %d workers (%s)", prof.name, new, why)
