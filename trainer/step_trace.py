"""The training step trace: where each step's time went, as MindSpore's profiler shows it.

Per step: the step interval (time blocked waiting for the next batch from the feed), the
host-to-device copy, forward (with the loss), backward, optimizer, the gradient all-reduce under DDP
(which overlaps backward: it is reported, not subtracted) and the callbacks. Recording costs a few
``perf_counter`` calls per step, into preallocated arrays; on a GPU the phases are timed exactly
(with a synchronize between them) only while a ``minddata.Profiler`` is active.

``snapshot()`` is plain data; :mod:`minddata.engine.profile_report` joins it to the pipeline's profile.
"""

from __future__ import annotations

import array
import threading
import time
from typing import Any

__all__ = ["PHASES", "StepTrace"]

PHASES = ("data_wait", "h2d", "forward", "backward", "optimizer", "allreduce", "callbacks")
MAX_STEPS = 200_000  # per-step records stop there (a long run's totals go on)
FORMAT = "minddata-step-trace"


class StepTrace:
    """Collects the phases of each training step of one ``Model.train`` run."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.t0 = time.perf_counter()
        self.started_at = time.time()
        # One flat array of records (epoch, step, begin, then each phase): one append per step.
        self._records = array.array("d")
        self._kept = 0
        self._totals = [0.0] * len(PHASES)
        self.steps_total = 0
        self.end: float | None = None
        self.network_ops: list[dict[str, Any]] = []
        self.network_modules: list[dict[str, Any]] = []
        self.network_spans: list[list[Any]] = []
        self._allreduce = 0.0
        self._lock = threading.Lock()

    def add_allreduce(self, seconds: float) -> None:
        """Called from DDP's communication thread when a gradient bucket's all-reduce completes."""
        with self._lock:
            self._allreduce += seconds

    def take_allreduce(self) -> float:
        if not self._allreduce:  # no DDP, or nothing since the last step: no lock needed to see 0
            return 0.0
        with self._lock:
            value, self._allreduce = self._allreduce, 0.0
        return value

    def record(self, epoch: int, step: int, begin: float, phases: tuple[float, ...]) -> None:
        """One step: ``phases`` holds a time per name of :data:`PHASES`, in that order."""
        self.steps_total += 1
        totals = self._totals
        for i, value in enumerate(phases):
            totals[i] += value
        if self._kept < MAX_STEPS:
            self._kept += 1
            self._records.extend((epoch, step, begin - self.t0, *phases))

    def _column(self, index: int) -> list[float]:
        return list(self._records[index::3 + len(PHASES)])

    def finish(self) -> None:
        if self.end is None:
            self.end = time.perf_counter()

    def snapshot(self) -> dict[str, Any]:
        """Plain data (JSON-able); times in seconds from the run's start (``started_at``, wall clock)."""
        now = self.end if self.end is not None else time.perf_counter()
        return {
            "format": FORMAT,
            "label": self.label,
            "started_at": self.started_at,
            "duration": now - self.t0,
            "steps_total": self.steps_total,
            "totals": dict(zip(PHASES, self._totals, strict=True)),
            "phases": list(PHASES),
            "steps": {
                "epoch": [int(v) for v in self._column(0)],
                "step": [int(v) for v in self._column(1)],
                "begin": self._column(2),
                **{name: self._column(3 + i) for i, name in enumerate(PHASES)},
            },
            "network_ops": list(self.network_ops),
            "network_modules": list(self.network_modules),
            "network_spans": list(self.network_spans),
        }
