"""Dataset callbacks, as ``mindspore.dataset.callback``: :class:`DSCallback` and :class:`WaitedDSCallback`.

Give them to a map (``map(..., callbacks=[...])``). The map calls ``ds_begin`` once per iterator,
``ds_epoch_begin`` / ``ds_epoch_end`` around each epoch, and ``ds_step_begin`` / ``ds_step_end`` around
steps 1, 1 + step_size, ... of each epoch (a step is a row at the map). Each hook gets a run context
with ``cur_epoch_num``, ``cur_step_num_in_epoch`` and ``cur_step_num`` (counted from 1; ``ds_begin``
sees 0, as in MindSpore).

The hooks run in the pipeline's threads: ``ds_step_begin`` before the row enters the map, possibly
while earlier rows are still in it; ``ds_step_end`` once the map has produced the row.

Examples:
    >>> import minddata as md
    >>> from minddata.dataset.callback import DSCallback
    >>> class Steps(DSCallback):
    ...     def __init__(self):
    ...         super().__init__(step_size=2)
    ...         self.seen = []
    ...     def ds_step_begin(self, ds_run_context):
    ...         self.seen.append((ds_run_context.cur_epoch_num, ds_run_context.cur_step_num))
    >>> steps = Steps()
    >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3, 4, 5]}, shuffle=False).map(abs, callbacks=[steps])
    >>> _ = [r for r in ds.create_tuple_iterator(num_epochs=1)]
    >>> steps.seen
    [(1, 1), (1, 3), (1, 5)]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from minddata.engine.runtime import PipelineStopped
from minddata.errors import ArgumentError, PipelineError

__all__ = ["DSCallback", "WaitedDSCallback", "DSRunContext"]

# MindSpore's default callback timeout (config.get_callback_timeout).
CALLBACK_TIMEOUT = 60.0


class DSRunContext:
    """Where the pipeline is: ``cur_epoch_num``, ``cur_step_num_in_epoch``, ``cur_step_num`` (from 1)."""

    def __init__(self, stop_event: threading.Event | None = None, timeout: float = CALLBACK_TIMEOUT) -> None:
        self.cur_epoch_num = 0
        self.cur_step_num_in_epoch = 0
        self.cur_step_num = 0
        self._stop_event = stop_event
        self._timeout = timeout

    def _copy(self) -> DSRunContext:
        other = DSRunContext(self._stop_event, self._timeout)
        other.cur_epoch_num, other.cur_step_num_in_epoch, other.cur_step_num = (
            self.cur_epoch_num, self.cur_step_num_in_epoch, self.cur_step_num)
        return other

    def __repr__(self) -> str:
        return (f"DSRunContext(cur_epoch_num={self.cur_epoch_num}, cur_step_num_in_epoch="
                f"{self.cur_step_num_in_epoch}, cur_step_num={self.cur_step_num})")


class DSCallback:
    """Base class of dataset callbacks; override the hooks you need.

    Args:
        step_size: call the step hooks every ``step_size`` steps (steps 1, 1 + step_size, ...).
    """

    def __init__(self, step_size: int = 1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size < 1:
            raise ArgumentError(f"{type(self).__name__}: `step_size` must be an int of 1 or more. Found: {step_size!r}")
        self.step_size = step_size

    def ds_begin(self, ds_run_context: DSRunContext) -> None:
        """Called once, before the first row of an iterator."""

    def ds_epoch_begin(self, ds_run_context: DSRunContext) -> None:
        """Called at the start of each epoch."""

    def ds_epoch_end(self, ds_run_context: DSRunContext) -> None:
        """Called after the last row of each epoch has left the map."""

    def ds_step_begin(self, ds_run_context: DSRunContext) -> None:
        """Called before every ``step_size``-th row enters the map."""

    def ds_step_end(self, ds_run_context: DSRunContext) -> None:
        """Called after every ``step_size``-th row has left the map."""


class WaitedDSCallback(DSCallback):
    """A dataset callback that waits for the training loop: step ``n + step_size`` of the pipeline
    starts only after training has ended step ``n`` (and epoch ``e + 1`` after training epoch ``e``).

    It is also a training callback: the training loop calls :meth:`step_end` and :meth:`epoch_end`
    (MindSpore's ``Model.train`` does it for callbacks in its list) and :meth:`end` when it stops.
    Override :meth:`sync_step_begin` / :meth:`sync_epoch_begin`, which get the training run context
    too, e.g. to change an augmentation from the latest loss. A wait that lasts longer than 60 s
    raises an error (``config.set_callback_timeout``), and a wait ends at once when the pipeline is closed.

    Examples:
        >>> import minddata as md
        >>> from minddata.dataset.callback import WaitedDSCallback
        >>> class Follow(WaitedDSCallback):
        ...     def sync_step_begin(self, train_run_context, ds_run_context):
        ...         self.last = (train_run_context, ds_run_context.cur_step_num)
        >>> follow = Follow()
        >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).map(abs, callbacks=[follow])
        >>> it = ds.create_tuple_iterator(num_epochs=1)
        >>> for step, row in enumerate(it, start=1):
        ...     follow.step_end(f"train step {step}")
        >>> follow.last
        ('train step 2', 3)
    """

    def __init__(self, step_size: int = 1) -> None:
        super().__init__(step_size)
        self.step_event = threading.Event()
        self.step_run_context: Any = None
        self.epoch_event = threading.Event()
        self.epoch_run_context: Any = None
        self.training_ended = False

    def sync_epoch_begin(self, train_run_context: Any, ds_run_context: DSRunContext) -> None:
        """Called before each pipeline epoch after the first, once training ended the previous one."""

    def sync_step_begin(self, train_run_context: Any, ds_run_context: DSRunContext) -> None:
        """Called before pipeline step ``n + step_size``, once training ended step ``n``."""

    # -- training side -------------------------------------------------------------------------

    def step_end(self, run_context: Any) -> None:
        self.step_run_context = run_context
        self.step_event.set()

    def epoch_end(self, run_context: Any) -> None:
        self.epoch_run_context = run_context
        self.epoch_event.set()

    def end(self, run_context: Any) -> None:
        """Training stopped: release the pipeline for good."""
        self.epoch_end(run_context)
        self.step_end(run_context)
        self.training_ended = True

    # -- pipeline side -------------------------------------------------------------------------

    def ds_epoch_begin(self, ds_run_context: DSRunContext) -> None:
        if ds_run_context.cur_epoch_num > 1:
            self._wait(self.epoch_event, "ds_epoch_begin", ds_run_context)
            self.sync_epoch_begin(self.epoch_run_context, ds_run_context)

    def ds_step_begin(self, ds_run_context: DSRunContext) -> None:
        if ds_run_context.cur_step_num > self.step_size:
            self._wait(self.step_event, "ds_step_begin", ds_run_context)
            self.sync_step_begin(self.step_run_context, ds_run_context)

    def _wait(self, event: threading.Event, hook: str, ctx: DSRunContext) -> None:
        if self.training_ended:
            return
        timeout = ctx._timeout
        deadline = time.monotonic() + timeout
        stop = ctx._stop_event
        while not event.wait(0.05):
            if stop is not None and stop.is_set():
                raise PipelineStopped("pipeline stopped")
            if time.monotonic() >= deadline:
                raise PipelineError(
                    f"{type(self).__name__}.{hook}: training did not end its step/epoch within "
                    f"{timeout:g} s (config.set_callback_timeout; step_end/epoch_end were not called). Call them "
                    f"from the training loop, or use a DSCallback, which does not wait."
                )
        event.clear()


class CallbackRunner:
    """The callbacks of one map and their counters, shared by its two callback stages."""

    def __init__(self, callbacks: Sequence[DSCallback]):
        self.callbacks = list(callbacks)
        for cb in self.callbacks:
            if isinstance(cb, WaitedDSCallback) and not (_overrides(cb, "sync_step_begin") or _overrides(cb, "sync_epoch_begin")):
                raise ArgumentError(
                    f"map: {type(cb).__name__} overrides neither sync_step_begin nor sync_epoch_begin, so it would "
                    f"only make the pipeline wait; override one (as MindSpore requires), or use a DSCallback."
                )
        # MindSpore registers a waited callback's step/epoch hooks only when their sync_ method is overridden.
        self._skip = {
            (id(cb), hook)
            for cb in self.callbacks if isinstance(cb, WaitedDSCallback)
            for hook, sync in (("ds_step_begin", "sync_step_begin"), ("ds_epoch_begin", "sync_epoch_begin"))
            if not _overrides(cb, sync)
        }
        self.waits = any(
            isinstance(cb, WaitedDSCallback) and (id(cb), "ds_step_begin") not in self._skip for cb in self.callbacks
        )
        self._lock = threading.Lock()
        self._begin = DSRunContext()
        self._end = DSRunContext()
        self._steps_before = 0  # steps of the epochs before this one

    def epoch_begin(self, pass_index: int, skip: int, rt: Any) -> None:
        with self._lock:
            if pass_index == 0:
                self._steps_before = 0
            timeout = rt.options.callback_timeout
            ctx = self._begin = DSRunContext(rt.stop_event, timeout)
            self._end = DSRunContext(rt.stop_event, timeout)
            for c in (self._begin, self._end):
                c.cur_epoch_num = pass_index + 1
                c.cur_step_num_in_epoch = skip
                c.cur_step_num = self._steps_before + skip
        if pass_index == 0:
            start = DSRunContext(rt.stop_event, rt.options.callback_timeout)  # MindSpore: ds_begin sees epoch 0, step 0
            for cb in self.callbacks:
                cb.ds_begin(start._copy())
        for cb in self.callbacks:
            if (id(cb), "ds_epoch_begin") not in self._skip:
                cb.ds_epoch_begin(ctx._copy())

    def step_begin(self, rows: int, rt: Any) -> None:
        self._steps(self._begin, rows, "ds_step_begin")

    def step_end(self, rows: int, rt: Any) -> None:
        self._steps(self._end, rows, "ds_step_end")

    def epoch_end(self, rt: Any) -> None:
        self._steps_before = self._end.cur_step_num
        for cb in self.callbacks:
            cb.ds_epoch_end(self._end._copy())

    def _steps(self, ctx: DSRunContext, rows: int, hook: str) -> None:
        for _ in range(rows):
            ctx.cur_step_num_in_epoch += 1
            ctx.cur_step_num += 1
            for cb in self.callbacks:
                # MindSpore counts step_size within the epoch: steps 1, 1 + step_size, ... of each.
                if (ctx.cur_step_num_in_epoch - 1) % cb.step_size == 0 and (id(cb), hook) not in self._skip:
                    getattr(cb, hook)(ctx._copy())


def _overrides(cb: DSCallback, method: str) -> bool:
    return getattr(type(cb), method) is not getattr(WaitedDSCallback, method)


def check_callbacks(where: str, callbacks: Any) -> list[DSCallback]:
    items = [callbacks] if isinstance(callbacks, DSCallback) else callbacks
    if not isinstance(items, (list, tuple)) or not all(isinstance(cb, DSCallback) for cb in items):
        raise ArgumentError(f"{where}: `callbacks` must be a DSCallback or a list of them. Found: {callbacks!r}")
    return list(items)
