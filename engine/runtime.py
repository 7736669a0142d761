"""State shared by every stage of one running pipeline: stop signal, seed, error counts, resources."""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from minddata import config
from minddata.config import RunOptions
from minddata.errors import PipelineError
from minddata.ops import kernel_threads

__all__ = ["Runtime", "PipelineStopped", "ErrorStats", "DeviceStats", "POLL_SECONDS"]

_logger = logging.getLogger("minddata")

# How often a blocked thread looks at the stop signal: bounds shutdown latency.
POLL_SECONDS = 0.05


class PipelineStopped(PipelineError):
    """Raised inside stages when the pipeline is being shut down; never reaches the user."""


@dataclass
class ErrorStats:
    """Rows dropped (``skip``) or replaced (``replace``) because an op failed on them."""

    skipped: int = 0
    replaced: int = 0
    # The first few failures, as one-line messages, for the end-of-epoch log.
    samples: list[str] = field(default_factory=list)
    max_samples: int = 5

    def merge(self, skipped: int, replaced: int, samples: list[str]) -> None:
        """Add counts and first messages recorded elsewhere (a Ray worker's share of the pass)."""
        self.skipped += skipped
        self.replaced += replaced
        self.samples.extend(samples[: max(0, self.max_samples - len(self.samples))])

    def record(self, kind: str, message: str) -> None:
        if kind == "skip":
            self.skipped += 1
        else:
            self.replaced += 1
        if len(self.samples) < self.max_samples:
            self.samples.append(message)


@dataclass
class DeviceStats:
    """What crossed between devices, in rows (DESIGN.md §5).

    ``transfers``: ``"CPU->GPU"``-style boundary -> rows that crossed it (a row crosses each boundary
    between its map's device parts once). ``cpu_rows``: op name -> rows a device op ran on the CPU
    instead (Dvpp's ``set_dvpp_policy("cpu")``, images the GPU decoder refused).
    """

    transfers: dict[str, int] = field(default_factory=dict)
    cpu_rows: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, transfers: dict[str, int] | None = None, cpu_rows: dict[str, int] | None = None) -> None:
        with self._lock:
            for key, n in (transfers or {}).items():
                self.transfers[key] = self.transfers.get(key, 0) + n
            for key, n in (cpu_rows or {}).items():
                self.cpu_rows[key] = self.cpu_rows.get(key, 0) + n

    def counts(self) -> dict[str, dict[str, int]]:
        """A consistent copy, ``{"transfers": ..., "cpu_rows": ...}``, while workers may still add."""
        with self._lock:
            return {"transfers": dict(self.transfers), "cpu_rows": dict(self.cpu_rows)}


class Runtime:
    """One per iterator. Stages read ``seed`` and ``stopped``; resources register a closer here.

    ``options`` are the run's settings: the iterator's :class:`~minddata.config.RunOptions` snapshot,
    or one shipped from elsewhere (a Ray worker runs its share of a plan in a ``Runtime`` made with
    the driver's snapshot); without one, the settings now, as an iterator created now would take them.
    Run-time code learns a setting only from them: kernels through ``KernelContext.options``, stages
    and workers through ``rt.options``, and every thread :meth:`start_thread` starts runs inside
    ``config.running(options)``, so Python code there (a map's function, a generator, a source's reads)
    sees them through ``minddata.config`` too.

    ``shard_seed`` keys what every rank of a data-parallel job must draw alike (a sharded sampler's
    permutation, a sharded stream's file order): ``config.get_seed()``, which without
    ``config.set_seed`` is the fixed default, so ranks agree without being told a seed (MindSpore's
    samplers do the same). ``seed`` keys the rest, and is drawn from the OS when no seed is set.
    """

    def __init__(self, seed: int, error_mode: str, options: RunOptions | None = None,
                 shard_seed: int | None = None):
        self.seed = seed
        self.shard_seed = seed if shard_seed is None else shard_seed
        self.error_mode = error_mode
        # The settings frozen when the iterator was created; kernels get them through KernelContext.
        self.options: RunOptions = options if options is not None else config.snapshot()
        self.stop_event = threading.Event()
        self.errors = ErrorStats()
        self.device_stats = DeviceStats()
        self._lock = threading.Lock()
        self._closers: list[Callable[[], Any]] = []
        self._threads: list[threading.Thread] = []
        self.closed = False
        self._thread_nice: int | None = None  # the nice value of every thread started from now on
        # OpenCV's own pool at one thread while this runs (the stages' workers are the parallelism);
        # also let go if the runtime is dropped unclosed.
        self._release_kernel_threads = kernel_threads.hold()
        weakref.finalize(self, self._release_kernel_threads)

    def lower_thread_priority(self, increment: int) -> None:
        """Run the threads this runtime starts ``increment`` steps nicer than the calling thread (Linux,
        where nice is per thread): a server lowers its pipeline below its request handling. A value,
        not a step per thread: threads that start threads would otherwise add it up."""
        if increment and sys.platform.startswith("linux"):
            self._thread_nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + increment)

    @property
    def stopped(self) -> bool:
        return self.stop_event.is_set()

    def check(self) -> None:
        if self.stop_event.is_set():
            raise PipelineStopped("pipeline stopped")

    def record_error(self, kind: str, message: str) -> None:
        with self._lock:
            self.errors.record(kind, message)

    def on_close(self, closer: Callable[[], Any]) -> None:
        with self._lock:
            if self.closed:
                closer()
                return
            self._closers.append(closer)

    def start_thread(self, target: Callable[..., Any], name: str, *args: Any) -> threading.Thread:
        target = functools.partial(_run_with, self.options, target)
        if self._thread_nice is not None:
            target = functools.partial(_run_at_nice, self._thread_nice, target)
        # Daemon: a user callable stuck forever must not keep the interpreter alive at exit.
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return thread

    def close(self, timeout: float = 2.0) -> None:
        """Stop every stage, join threads, release resources. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            closers, self._closers = self._closers, []
            threads = list(self._threads)
        self.stop_event.set()
        current = threading.current_thread()
        # One deadline for all: threads stop in parallel, so the wait is the slowest one, not the sum.
        deadline = time.monotonic() + timeout
        for thread in threads:
            if thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))
        for closer in reversed(closers):
            try:
                closer()
            except Exception:  # noqa: BLE001 - closing must go on for the other resources
                _logger.exception("minddata: error while releasing a pipeline resource")
        self._release_kernel_threads()

    def alive_threads(self) -> list[threading.Thread]:
        with self._lock:
            return [t for t in self._threads if t.is_alive()]


def _run_with(options: RunOptions, target: Callable[..., Any], *args: Any) -> Any:
    """``target`` in this thread, with the run's settings answering ``minddata.config``'s getters."""
    with config.running(options):
        return target(*args)


def _run_at_nice(nice: int, target: Callable[..., Any], *args: Any) -> Any:
    """Run ``target`` in this thread at OS nice value ``nice`` (Linux: ``setpriority(PRIO_PROCESS, 0)``
    is the calling thread's there), never raising its priority."""
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:  # pragma: no cover - a sandbox that forbids it: run at the usual priority
        pass
    return target(*args)
