"""``minddata.Profiler``: what the pipeline did, where the time went, and which stage limits it.

Examples:
    >>> import minddata as md
    >>> ds = md.NumpySlicesDataset({"x": list(range(64))}, shuffle=False).batch(8)
    >>> with md.Profiler() as prof:
    ...     for batch in ds.create_dict_iterator(num_epochs=1, output_numpy=True):
    ...         pass
    >>> prof.summary().rows
    8
    >>> print(prof)  # doctest: +ELLIPSIS
    minddata profile of Batch(8)
    ...
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from minddata.engine import profiling
from minddata.engine.profile_report import (
    Bottleneck,
    OpStats,
    ProfileSummary,
    QueueStats,
    StageStats,
    StepStats,
    chrome_trace,
    render,
    summarize,
)
from minddata.engine.training_report import TrainingSummary, summarize_training

__all__ = ["Bottleneck", "OpStats", "ProfileSummary", "Profiler", "QueueStats", "StageStats", "StepStats",
           "TrainingSummary"]

_FORMAT = "minddata-profile"
_FILE = "profile.json"


class Profiler:
    """Records every pipeline run that starts (an iterator's first ``next``) while it is active.

    Per stage of the plan as built (after fusion, named with the ops the user wrote): rows in and out,
    time per row, workers' busy / CPU / waiting fractions, queue occupancy sampled every
    ``sample_interval`` seconds, time per op of each map; per consumer step: the time it waited for the
    item and the time it spent before asking for the next one. When no profiler is active (and
    ``config.set_profiling`` is off) pipelines pay nothing for any of this.

    Use it as a context manager, or :meth:`start` / :meth:`stop`. A run's profile ends when the
    profiler stops, the run's last epoch is read, or its iterator is closed.

    ``Model.train`` (``minddata.trainer``) run while it is active adds its step trace: see
    :meth:`training_summary` (joined to the pipeline's profile, with a data-bound verdict),
    :meth:`train_steps`, and the Chrome trace. ``network=True`` also profiles the network's operators
    with ``torch.profiler``.

    Hooks (:meth:`on`) receive each event as a dict, in the consumer's thread:
    ``epoch_begin {epoch}``, ``step_begin {epoch, step, begin, data_wait}`` (when the item arrives),
    ``step_end {epoch, step, begin, end, data_wait, compute}`` (when the consumer asks for the next
    item, so ``compute`` is the time it spent on this one: the step trace), ``epoch_end {epoch, steps,
    seconds}``.

    Examples:
        >>> import minddata as md
        >>> ds = md.NumpySlicesDataset({"x": list(range(8))}, shuffle=False)
        >>> prof = md.Profiler()
        >>> waits = []
        >>> prof.on("step_end", lambda step: waits.append(step["data_wait"]))
        >>> with prof:
        ...     rows = [row for row in ds.create_dict_iterator(num_epochs=1)]
        >>> len(waits), prof.summary().rows
        (8, 8)
    """

    def __init__(self, sample_interval: float | None = None, network: bool = False):
        if sample_interval is not None and (isinstance(sample_interval, bool) or not isinstance(sample_interval, (int, float))
                                            or not 0.001 <= sample_interval <= 10):
            raise ValueError(
                f"Profiler: sample_interval must be a number of seconds in [0.001, 10]. Found: {sample_interval!r}"
            )
        # None: config.set_monitor_sampling_interval's value when each run starts (default 10 ms).
        self.sample_interval = None if sample_interval is None else float(sample_interval)
        self.network = bool(network)
        # Training runs (minddata.trainer's Model.train) joined to the pipeline run that fed them:
        # [live step trace or None, index of that run in self._live or None, frozen snapshot or None].
        self._training: list[list[Any]] = []
        self._live: list[profiling.RunProfile | None] = []
        self._frozen: list[dict[str, Any] | None] = []
        self._hooks: list[tuple[str, Callable[[dict], Any]]] = []
        self._lock = threading.Lock()
        self._active = False

    # -- recording -----------------------------------------------------------------------------

    def start(self) -> Profiler:
        """Record runs that start from now on."""
        self._active = True
        profiling.register_sink(self)
        return self

    def stop(self) -> None:
        """Stop recording; the profiles of runs recorded so far end now."""
        profiling.unregister_sink(self)
        self._active = False
        with self._lock:
            for i, live in enumerate(self._live):
                if live is not None and self._frozen[i] is None:
                    live.finish()
                    self._frozen[i] = live.snapshot()
                # The frozen copy is all that is read from now on; the live one holds the pipeline's stages.
                self._live[i] = None
            for entry in self._training:
                if entry[0] is not None:
                    entry[2], entry[0] = entry[0].snapshot(), None

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _add_run(self, run: profiling.RunProfile) -> None:
        with self._lock:
            self._live.append(run)
            self._frozen.append(None)
            for event, fn in self._hooks:
                run.add_hook(event, fn)

    def _add_training(self, trace: Any, pipeline_run: profiling.RunProfile | None) -> None:
        """Called by ``minddata.trainer.Model.train``: its step trace (an object with ``snapshot()``),
        and the pipeline run that fed it, if this profiler recorded that run."""
        with self._lock:
            index = next((i for i, live in enumerate(self._live) if live is not None and live is pipeline_run), None)
            frozen = trace.snapshot() if not self._active else None
            self._training.append([trace if self._active else None, index, frozen])

    @classmethod
    def _of_run(cls, run: profiling.RunProfile) -> Profiler:
        prof = cls()
        prof._add_run(run)
        return prof

    def on(self, event: str, fn: Callable[[dict], Any]) -> None:
        """Call ``fn(info)`` on ``event``: ``"epoch_begin"``, ``"epoch_end"``, ``"step_begin"``, ``"step_end"``.

        Applies to runs recorded from now on and to those already running.
        """
        if event not in profiling.HOOK_EVENTS:
            raise ValueError(f"Profiler.on: event must be one of {', '.join(profiling.HOOK_EVENTS)}. Found: {event!r}")
        if not callable(fn):
            raise TypeError(f"Profiler.on: fn must be callable. Found: {fn!r}")
        with self._lock:
            self._hooks.append((event, fn))
            for live in self._live:
                if live is not None:
                    live.add_hook(event, fn)

    # -- reading -------------------------------------------------------------------------------

    @property
    def runs(self) -> list[dict[str, Any]]:
        """Each recorded run's raw profile (plain data; see :mod:`minddata.engine.profiling`)."""
        with self._lock:
            out = []
            for live, frozen in zip(self._live, self._frozen, strict=True):
                out.append(frozen if frozen is not None else live.snapshot())  # type: ignore[union-attr]  # a run is live until it is frozen
            return out

    def summary(self, run: int = -1) -> ProfileSummary:
        """The summary of one run (default: the latest), with the bottleneck named.

        See :class:`~minddata.engine.profile_report.ProfileSummary`; ``summary().to_dict()`` is plain data.
        """
        runs = self.runs
        if not runs:
            raise LookupError(
                "Profiler.summary: no pipeline run was recorded. Iterate a dataset inside `with Profiler():` "
                "(an iterator is recorded when its first item is read while the profiler is active)."
            )
        try:
            return summarize(runs[run])
        except IndexError:
            raise IndexError(f"Profiler.summary: run {run} does not exist; {len(runs)} run(s) recorded") from None

    def step_trace(self, run: int = -1) -> list[dict[str, float]]:
        """The consumer's steps of one run: ``{epoch, step, begin, data_wait, compute}`` each, times in
        seconds from the run's start. ``compute`` is the time until the consumer asked for the next item
        (None for a last step whose successor was never asked for).

        Examples:
            >>> import time
            >>> import minddata as md
            >>> with md.Profiler() as prof:
            ...     for batch in md.NumpySlicesDataset({"x": list(range(4))}).batch(2).create_dict_iterator(num_epochs=1):
            ...         time.sleep(0.01)
            >>> [(s["step"], s["compute"] >= 0.01) for s in prof.step_trace()]
            [(0, True), (1, True)]
        """
        runs = self.runs
        if not runs:
            raise LookupError("Profiler.step_trace: no pipeline run was recorded")
        snap = runs[run]
        steps = snap["steps"]
        epoch_ends = {int(e[0]): e[3] for e in snap["epochs"] if len(e) > 3}
        out: list[dict[str, float]] = []
        epochs, request, ready = steps["epoch"], steps["request"], steps["ready"]
        step = 0
        for i in range(len(ready)):
            if i and epochs[i] != epochs[i - 1]:
                step = 0
            if i + 1 < len(ready) and epochs[i + 1] == epochs[i]:
                nxt: float | None = request[i + 1]
            else:
                nxt = epoch_ends.get(int(epochs[i]))
            out.append({"epoch": epochs[i], "step": step, "begin": request[i], "data_wait": ready[i] - request[i],
                        "compute": None if nxt is None else nxt - ready[i]})
            step += 1
        return out

    @property
    def training_runs(self) -> list[dict[str, Any]]:
        """Each ``Model.train`` run's step trace recorded while this profiler was active (plain data)."""
        return [t for t, _ in self._training_pairs()]

    def _training_pairs(self) -> list[tuple[dict[str, Any], int | None]]:
        with self._lock:
            return [(frozen if frozen is not None else live.snapshot(), index)
                    for live, index, frozen in self._training]

    def training_summary(self, run: int = -1) -> TrainingSummary:
        """Where the steps of one ``Model.train`` run (default: the latest) spent their time, joined to
        the profile of the pipeline that fed it, with a one-sentence verdict: data-bound (and which
        stage to fix, how) or model-bound.

        Example (needs torch, so not run as a doctest; ``tests/trainer/test_step_trace.py`` covers it)::

            model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
            with md.Profiler() as prof:
                model.train(1, dataset)
            print(prof.training_summary().verdict)
            # e.g. "31% of step time waiting for data; the pipeline's bottleneck is Map[Decode, ...] ..."
        """
        pairs = self._training_pairs()
        if not pairs:
            raise LookupError(
                "Profiler.training_summary: no training run was recorded; call Model.train inside `with Profiler():`"
            )
        try:
            snap, index = pairs[run]
        except IndexError:
            raise IndexError(f"Profiler.training_summary: run {run} does not exist; {len(pairs)} recorded") from None
        runs = self.runs
        pipeline = summarize(runs[index]) if index is not None and index < len(runs) else None
        return summarize_training(snap, pipeline)

    def train_steps(self, run: int = -1) -> list[dict[str, float]]:
        """The steps of one ``Model.train`` run: ``{epoch, step, begin, data_wait, h2d, forward,
        backward, optimizer, allreduce, callbacks}`` each, in seconds (``begin`` from the run's start)."""
        pairs = self._training_pairs()
        if not pairs:
            raise LookupError("Profiler.train_steps: no training run was recorded")
        steps = pairs[run][0]["steps"]
        keys = [k for k in steps if k != "epoch" and k != "step"]
        return [{"epoch": steps["epoch"][i], "step": steps["step"][i], **{k: steps[k][i] for k in keys}}
                for i in range(len(steps["begin"]))]

    def summaries(self) -> list[ProfileSummary]:
        return [summarize(r) for r in self.runs]

    def __str__(self) -> str:
        runs = self.runs
        pairs = self._training_pairs()
        if not runs and not pairs:
            return "minddata profile: no pipeline run was recorded"
        parts = [render(summarize(r)) for r in runs]
        parts += [str(self.training_summary(i)) for i in range(len(pairs))]
        return "\n\n".join(parts)

    def __repr__(self) -> str:
        return f"<Profiler {'active' if self._active else 'stopped'}, {len(self._frozen)} run(s)>"

    # -- files ---------------------------------------------------------------------------------

    def export_chrome_trace(self, path: str | os.PathLike) -> Path:
        """Write a Chrome-trace/Perfetto JSON timeline (open in ui.perfetto.dev or chrome://tracing):
        one track per worker thread, the prefetch thread and the consumer; queue sizes as counters."""
        target = Path(path).expanduser()
        if not target.parent.is_dir():
            raise FileNotFoundError(
                f"Profiler.export_chrome_trace: folder {target.parent} does not exist; create it first"
            )
        target.write_text(json.dumps(chrome_trace(self.runs, self._training_pairs())))
        return target

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the profile to ``directory`` (created if needed): ``profile.json`` (what
        :meth:`load` reads), ``trace.json`` (the timeline) and ``summary.txt`` (the table)."""
        folder = Path(directory).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        runs = self.runs
        training = self._training_pairs()
        (folder / _FILE).write_text(json.dumps({"format": _FORMAT, "version": profiling.SNAPSHOT_VERSION, "runs": runs,
                                                "training": [[t, i] for t, i in training]}))
        (folder / "trace.json").write_text(json.dumps(chrome_trace(runs, training)))
        (folder / "summary.txt").write_text(str(self) + "\n")
        return folder

    @classmethod
    def load(cls, directory: str | os.PathLike) -> Profiler:
        """A stopped profiler holding the runs saved by :meth:`save` in ``directory``."""
        folder = Path(directory).expanduser()
        path = folder / _FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"Profiler.load: {path} not found; pass a folder written by Profiler.save(folder)"
            )
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"Profiler.load: {path} is not valid JSON ({exc}); was it written by Profiler.save?") from None
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ValueError(f"Profiler.load: {path} is not a minddata profile (no format={_FORMAT!r} field)")
        if not isinstance(data.get("version"), int) or data["version"] > profiling.SNAPSHOT_VERSION:
            raise ValueError(
                f"Profiler.load: {path} has profile version {data.get('version')!r}; this minddata reads up to "
                f"version {profiling.SNAPSHOT_VERSION}: upgrade minddata"
            )
        prof = cls()
        prof._frozen = list(data["runs"])
        prof._live = [None] * len(prof._frozen)
        prof._training = [[None, index, snap] for snap, index in data.get("training", [])]
        return prof
