"""Joins a ``Model.train`` run to the active ``minddata.Profiler``s.

Inside ``with minddata.Profiler():`` training needs no other code: the run's step trace is handed to
each active profiler together with the pipeline run that fed it, so the profiler's summary says
whether training is data-bound and its Chrome trace shows the steps beside the pipeline's stages.
With ``Profiler(network=True)`` the network's operators are profiled by ``torch.profiler`` too:
time per operator type (``aten::convolution``...) and per module (``layer1.0.conv1 (Conv2d)``).
"""

from __future__ import annotations

import time
from typing import Any

from minddata.engine import profiling
from minddata.trainer.step_trace import StepTrace

MAX_MODULE_SPANS = 20_000


class TrainingProfile:
    """Context manager around one training run: synchronises CUDA between phases while profiling,
    runs torch.profiler for ``Profiler(network=True)``, and registers the trace on exit."""

    def __init__(self, model: Any, trace: StepTrace) -> None:
        import torch

        self.torch = torch
        self.model = model
        self.trace = trace
        self.sinks = [s for s in profiling.active_sinks() if hasattr(s, "_add_training")]
        cuda = model.device.type == "cuda"
        self.sync = (lambda: torch.cuda.synchronize(model.device)) if (cuda and self.sinks) else None
        self.network = any(getattr(s, "network", False) for s in self.sinks)
        self.epoch_done = False
        self.feed: Any = None
        self._torch_profiler: Any = None
        self._hooks: list[Any] = []
        self._t_profiler = 0.0

    def bind(self, feed: Any) -> None:
        self.feed = feed

    def __enter__(self) -> TrainingProfile:
        if self.network:
            self._start_network()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.trace.finish()
        if self._torch_profiler is not None:
            self._stop_network()
        if not self.sinks:
            return
        pipeline = None
        iterator = getattr(self.feed, "_iterator", None)
        if iterator is not None:
            pipeline = getattr(iterator._run, "profile", None)
        for sink in self.sinks:
            sink._add_training(self.trace, pipeline)

    # -- torch.profiler ------------------------------------------------------------------------

    def _start_network(self) -> None:
        torch = self.torch
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.model.device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        record = torch.autograd.profiler.record_function
        open_spans: dict[int, list[Any]] = {}

        # Each module's forward becomes a named range, so time is reported per layer as well as per op type.
        def pre(module: Any, args: Any, name: str) -> None:
            span = record(f"{name} ({type(module).__name__})")
            span.__enter__()
            open_spans.setdefault(id(module), []).append(span)

        def post(module: Any, args: Any, output: Any) -> None:
            stack = open_spans.get(id(module))
            if stack:
                stack.pop().__exit__(None, None, None)

        for name, module in self.model.network.named_modules():
            if name and not list(module.children()):  # leaf layers: they hold the operators
                self._hooks.append(module.register_forward_pre_hook(lambda m, a, name=name: pre(m, a, name)))
                self._hooks.append(module.register_forward_hook(post))
        self._torch_profiler = torch.profiler.profile(activities=activities)
        self._t_profiler = time.perf_counter()
        self._torch_profiler.__enter__()

    def _stop_network(self) -> None:
        prof = self._torch_profiler
        prof.__exit__(None, None, None)
        for handle in self._hooks:
            handle.remove()
        module_names = {f"{n} ({type(m).__name__})" for n, m in self.model.network.named_modules() if n}
        ops: list[dict[str, Any]] = []
        modules: list[dict[str, Any]] = []
        for event in prof.key_averages():
            device_time = getattr(event, "device_time_total", 0.0) or getattr(event, "cuda_time_total", 0.0) or 0.0
            entry = {"name": event.key, "calls": int(event.count), "self_cpu": event.self_cpu_time_total / 1e6,
                     "cpu_total": event.cpu_time_total / 1e6, "device_total": device_time / 1e6}
            (modules if event.key in module_names else ops).append(entry)
        ops.sort(key=lambda e: -(e["self_cpu"] + e["device_total"]))
        modules.sort(key=lambda e: -(e["cpu_total"] + e["device_total"]))
        self.trace.network_ops = [e for e in ops if not e["name"].startswith("ProfilerStep")]
        self.trace.network_modules = modules
        # The per-layer ranges on the timeline, shifted to the step trace's clock.
        offset = self._t_profiler - self.trace.t0
        spans: list[list[Any]] = []
        try:
            events = prof.events()
        except Exception:  # pragma: no cover - a torch build without event access
            events = []
        base = min((e.time_range.start for e in events), default=0.0)
        for e in events:
            if e.name in module_names and len(spans) < MAX_MODULE_SPANS:
                start = offset + (e.time_range.start - base) / 1e6
                spans.append([e.name, start, (e.time_range.end - e.time_range.start) / 1e6])
        self.trace.network_spans = spans
