"""Training callbacks with ``mindspore.train``'s names and hooks.

A callback overrides any of ``on_train_begin``, ``on_train_epoch_begin``, ``on_train_step_begin``,
``on_train_step_end``, ``on_train_epoch_end``, ``on_train_end`` and the ``on_eval_*`` ones; each gets a
:class:`RunContext` whose ``original_args()`` are the run's :class:`CallbackParams`
(``cur_epoch_num``, ``cur_step_num``, ``batch_num``, ``net_outputs`` (the loss), ``network``,
``optimizer``, ...) and whose ``request_stop()`` ends training after the current step. MindSpore 1.x's
``begin/epoch_begin/step_begin/step_end/epoch_end/end`` are what the ``on_train_*`` hooks call by
default, so old callbacks work too.

Unlike MindSpore's dataset sink mode, which runs ``sink_size`` steps on the device and calls the step
hooks once per sink, the step hooks here run after every step in both modes.

Examples:
    >>> from minddata.trainer import LambdaCallback, RunContext, CallbackParams
    >>> seen = []
    >>> cb = LambdaCallback(on_train_step_end=lambda ctx: seen.append(ctx.original_args().cur_step_num))
    >>> cb.on_train_step_end(RunContext(CallbackParams(cur_step_num=3)))
    >>> seen
    [3]
"""

from __future__ import annotations

import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from minddata.errors import ArgumentError

__all__ = [
    "BackupAndRestore",
    "Callback",
    "CallbackList",
    "CallbackParams",
    "CheckpointConfig",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "LossMonitor",
    "ModelCheckpoint",
    "OnRequestExit",
    "ProgressBar",
    "ReduceLROnPlateau",
    "RunContext",
    "TimeMonitor",
]

TRAIN_HOOKS = ("on_train_begin", "on_train_epoch_begin", "on_train_step_begin", "on_train_step_end",
               "on_train_epoch_end", "on_train_end")
EVAL_HOOKS = ("on_eval_begin", "on_eval_epoch_begin", "on_eval_step_begin", "on_eval_step_end",
              "on_eval_epoch_end", "on_eval_end")


class CallbackParams:
    """The run's state as callbacks see it (MindSpore's ``cb_params``): any attribute may be read or set.

    Set by ``Model``: ``model``, ``network``, ``train_network``, ``loss_fn``, ``optimizer``,
    ``train_dataset``/``valid_dataset``, ``epoch_num``, ``batch_num`` (steps per epoch),
    ``cur_epoch_num`` (1-based), ``cur_step_num`` (global, 1-based), ``cur_step_in_epoch`` (1-based),
    ``net_outputs`` (the step's loss, a float), ``eval_results`` (after evaluation), ``mode``
    (``"train"``/``"eval"``), ``list_callback``, ``step_trace`` (the last step's phases).
    """

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        # Unset attributes read as None, as MindSpore's _InternalCallbackParam.
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    if TYPE_CHECKING:
        # Any attribute may be set (a callback may keep its own on the run's state).
        def __setattr__(self, name: str, value: Any) -> None: ...

    def __repr__(self) -> str:
        keys = ", ".join(sorted(k for k in self.__dict__ if not k.startswith("_")))
        return f"CallbackParams({keys})"


class RunContext:
    """What a hook receives: ``original_args()`` gives the :class:`CallbackParams`; ``request_stop()``
    asks the run to end after the current step (or evaluation batch)."""

    def __init__(self, params: CallbackParams) -> None:
        self._params = params
        self._stop = False

    def original_args(self) -> CallbackParams:
        return self._params

    def request_stop(self) -> None:
        self._stop = True

    def get_stop_requested(self) -> bool:
        return self._stop


class Callback:
    """Base class: override the hooks you need. ``state_dict``/``load_state_dict`` (optional) are
    saved in checkpoints, so a resumed run's callbacks continue where they were."""

    def begin(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of ``on_train_begin``."""

    def epoch_begin(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of ``on_train_epoch_begin``."""

    def step_begin(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of ``on_train_step_begin``."""

    def step_end(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of ``on_train_step_end``."""

    def epoch_end(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of ``on_train_epoch_end``."""

    def end(self, run_context: RunContext) -> None:
        """MindSpore 1.x name of ``on_train_end``."""

    def on_train_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_train_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: RunContext) -> None:
        pass

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        pass

    def on_eval_step_begin(self, run_context: RunContext) -> None:
        pass

    def on_eval_step_end(self, run_context: RunContext) -> None:
        pass

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        pass

    def on_eval_end(self, run_context: RunContext) -> None:
        pass


class CallbackList(Callback):
    """Several callbacks called in order; only the hooks a callback overrides are called."""

    def __init__(self, callbacks: Any = None) -> None:
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback):
            callbacks = [callbacks]
        callbacks = list(callbacks)
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise ArgumentError(f"callbacks must be Callback instances. Found: {cb!r}")
        self.callbacks: list[Callback] = callbacks
        self._hooks: dict[str, list[Callable]] = {}
        for hook in TRAIN_HOOKS + EVAL_HOOKS:
            self._hooks[hook] = [getattr(cb, hook) for cb in callbacks if _overrides(cb, hook)]

    def __bool__(self) -> bool:
        return bool(self.callbacks)

    def __iter__(self):
        return iter(self.callbacks)

    def call(self, hook: str, run_context: RunContext) -> None:
        for fn in self._hooks[hook]:
            fn(run_context)

    def has(self, hook: str) -> bool:
        return bool(self._hooks[hook])


_LEGACY = {"on_train_begin": "begin", "on_train_epoch_begin": "epoch_begin", "on_train_step_begin": "step_begin",
           "on_train_step_end": "step_end", "on_train_epoch_end": "epoch_end", "on_train_end": "end"}


def _overrides(cb: Callback, hook: str) -> bool:
    if hook in cb.__dict__:  # LambdaCallback's hooks are set on the instance
        return True
    cls = type(cb)
    if getattr(cls, hook) is not getattr(Callback, hook):
        return True
    legacy = _LEGACY.get(hook)
    return legacy is not None and getattr(cls, legacy) is not getattr(Callback, legacy)


def _write(line: str) -> None:
    print(line, flush=True)


class LossMonitor(Callback):
    """Prints the loss every ``per_print_times`` steps (0: only at epoch ends), as MindSpore."""

    def __init__(self, per_print_times: int = 1) -> None:
        if isinstance(per_print_times, bool) or not isinstance(per_print_times, int) or per_print_times < 0:
            raise ArgumentError(f"LossMonitor: `per_print_times` must be an int of 0 or more. Found: {per_print_times!r}")
        self.per_print_times = per_print_times

    def on_train_step_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        loss = p.net_outputs
        if loss is not None and not math.isfinite(loss):
            raise ValueError(
                f"LossMonitor: the loss is {loss} at epoch {p.cur_epoch_num} step {p.cur_step_in_epoch}; "
                "lower the learning rate or check the data"
            )
        if self.per_print_times and p.cur_step_num % self.per_print_times == 0:
            _write(f"epoch: {p.cur_epoch_num} step: {p.cur_step_in_epoch}, loss is {loss}")

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        if self.per_print_times == 0:
            _write(f"epoch: {p.cur_epoch_num} step: {p.cur_step_in_epoch}, loss is {p.net_outputs}")


class TimeMonitor(Callback):
    """Prints each epoch's time and the mean step time."""

    def __init__(self, data_size: int | None = None) -> None:
        self.data_size = data_size
        self._start = 0.0
        self._steps = 0

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self._start = time.perf_counter()
        self._steps = 0

    def on_train_step_end(self, run_context: RunContext) -> None:
        self._steps += 1

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        seconds = time.perf_counter() - self._start
        steps = self.data_size or self._steps or 1
        _write(f"epoch time: {seconds * 1e3:.3f} ms, per step time: {seconds * 1e3 / steps:.3f} ms")


class History(Callback):
    """Records the last loss of each epoch (``history["loss"]``) and every evaluation result
    (``history[name]``); ``epoch`` lists the epochs recorded."""

    def __init__(self) -> None:
        self.epoch: list[int] = []
        self.history: dict[str, list[Any]] = {}

    def on_train_begin(self, run_context: RunContext) -> None:
        self.epoch, self.history = [], {}

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        self.epoch.append(p.cur_epoch_num)
        if p.net_outputs is not None:
            self.history.setdefault("loss", []).append(p.net_outputs)
        for name, value in (p.eval_results or {}).items():
            if p.eval_epoch == p.cur_epoch_num:
                self.history.setdefault(name, []).append(value)


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_train_epoch_end=fn, ...)``, each ``fn(run_context)``."""

    def __init__(self, **hooks: Callable[[RunContext], Any]) -> None:
        legacy = {v: k for k, v in _LEGACY.items()}
        for name, fn in hooks.items():
            hook = legacy.get(name, name)
            if hook not in TRAIN_HOOKS + EVAL_HOOKS:
                raise ArgumentError(f"LambdaCallback: unknown hook {name!r}; hooks: {', '.join(TRAIN_HOOKS + EVAL_HOOKS)}")
            if not callable(fn):
                raise ArgumentError(f"LambdaCallback: {name} must be callable. Found: {fn!r}")
            setattr(self, hook, fn)


# --- monitored quantities --------------------------------------------------------------------------


def _monitored(params: CallbackParams, monitor: str, who: str) -> float | None:
    """The value of ``monitor``: ``"loss"`` is the training loss; ``"eval_<metric>"`` or a metric name
    reads the latest evaluation results."""
    if monitor == "loss":
        return params.net_outputs
    results = params.eval_results or {}
    name = monitor[5:] if monitor.startswith("eval_") and monitor[5:] in results else monitor
    if name in results:
        return float(results[name])
    if not results:
        return None
    raise ArgumentError(f"{who}: monitor {monitor!r} is not among the evaluation results {sorted(results)} or 'loss'")


class _Plateau:
    """Shared best-value tracking of EarlyStopping and ReduceLROnPlateau."""

    def __init__(self, who: str, monitor: str, mode: str, min_delta: float, patience: int) -> None:
        if mode not in ("auto", "min", "max"):
            raise ArgumentError(f"{who}: `mode` must be 'auto', 'min' or 'max'. Found: {mode!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ArgumentError(f"{who}: `patience` must be an int of 0 or more. Found: {patience!r}")
        if mode == "auto":
            mode = "max" if any(k in monitor for k in ("acc", "f1", "precision", "recall", "auc")) else "min"
        self.who, self.monitor, self.mode = who, monitor, mode
        self.min_delta, self.patience = abs(float(min_delta)), patience
        self.best: float | None = None
        self.wait = 0

    def improved(self, value: float) -> bool:
        if self.best is None:
            return True
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def observe(self, value: float) -> bool:
        """Record ``value``; True when it is an improvement."""
        if self.improved(value):
            self.best, self.wait = value, 0
            return True
        self.wait += 1
        return False

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "wait": self.wait}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best, self.wait = state["best"], state["wait"]


class EarlyStopping(Callback):
    """Stops training when ``monitor`` (``"eval_loss"``, ``"eval_accuracy"``, an evaluation metric's
    name, or ``"loss"``) has not improved by ``min_delta`` for ``patience`` epochs. With
    ``restore_best_weights`` the network gets the best epoch's weights back at the end."""

    def __init__(self, monitor: str = "eval_loss", min_delta: float = 0.0, patience: int = 0, verbose: bool = False,
                 mode: str = "auto", baseline: float | None = None, restore_best_weights: bool = False) -> None:
        self._plateau = _Plateau("EarlyStopping", monitor, mode, min_delta, patience)
        self.baseline = baseline
        self.verbose = verbose
        self.restore_best_weights = restore_best_weights
        self.stopped_epoch = 0
        self._best_weights: dict[str, Any] | None = None

    def on_train_begin(self, run_context: RunContext) -> None:
        self.stopped_epoch = 0
        if self.baseline is not None and self._plateau.best is None:
            self._plateau.best = self.baseline

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        value = _monitored(p, self._plateau.monitor, "EarlyStopping")
        if value is None:
            return
        if self._plateau.observe(value):
            if self.restore_best_weights:
                self._best_weights = {k: v.detach().clone() for k, v in p.network.state_dict().items()}
        elif self._plateau.wait > self._plateau.patience - 1 or self._plateau.patience == 0:
            self.stopped_epoch = p.cur_epoch_num
            if self.verbose:
                _write(f"EarlyStopping: {self._plateau.monitor} has not improved for {self._plateau.wait} epoch(s); "
                       f"stopping at epoch {p.cur_epoch_num}")
            run_context.request_stop()

    def on_train_end(self, run_context: RunContext) -> None:
        if self.restore_best_weights and self._best_weights is not None and self.stopped_epoch:
            run_context.original_args().network.load_state_dict(self._best_weights)

    def state_dict(self) -> dict[str, Any]:
        return self._plateau.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._plateau.load_state_dict(state)


def _learning_rates(optimizer: Any, who: str) -> list[float]:
    if optimizer is None:
        raise ArgumentError(f"{who}: the Model has no optimizer whose learning rate it could change")
    return [group["lr"] for group in optimizer.param_groups]


def _set_learning_rates(optimizer: Any, rates: list[float]) -> None:
    for group, lr in zip(optimizer.param_groups, rates):
        group["lr"] = lr


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` has not improved for ``patience``
    epochs, then waits ``cooldown`` epochs; never below ``min_lr``."""

    def __init__(self, monitor: str = "eval_loss", factor: float = 0.1, patience: int = 10, verbose: bool = False,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0.0) -> None:
        if not 0 < factor < 1:
            raise ArgumentError(f"ReduceLROnPlateau: `factor` must be in (0, 1). Found: {factor!r}")
        self._plateau = _Plateau("ReduceLROnPlateau", monitor, mode, min_delta, patience)
        self.factor, self.verbose, self.cooldown, self.min_lr = factor, verbose, cooldown, min_lr
        self._cooldown_left = 0

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        value = _monitored(p, self._plateau.monitor, "ReduceLROnPlateau")
        if value is None:
            return
        if self._cooldown_left > 0:
            self._cooldown_left -= 1
            self._plateau.wait = 0
        if self._plateau.observe(value) or self._plateau.wait < self._plateau.patience:
            return
        old = _learning_rates(p.optimizer, "ReduceLROnPlateau")
        new = [max(lr * self.factor, self.min_lr) for lr in old]
        _set_learning_rates(p.optimizer, new)
        if self.verbose:
            _write(f"ReduceLROnPlateau: epoch {p.cur_epoch_num}: learning rate {old} -> {new}")
        self._cooldown_left, self._plateau.wait = self.cooldown, 0

    def state_dict(self) -> dict[str, Any]:
        return {**self._plateau.state_dict(), "cooldown_left": self._cooldown_left}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._plateau.load_state_dict(state)
        self._cooldown_left = state["cooldown_left"]


class LearningRateScheduler(Callback):
    """Changes the learning rate as training goes.

    ``schedule`` is either MindSpore's function ``fn(lr, cur_step_num) -> new lr``, called after
    every step, or a ``torch.optim.lr_scheduler`` object, stepped after every epoch (``interval=
    "step"``: after every step). A torch scheduler's state is saved in checkpoints.
    """

    def __init__(self, schedule: Any, interval: str | None = None) -> None:
        self.schedule = schedule
        self._is_torch = hasattr(schedule, "step") and hasattr(schedule, "state_dict")
        if not self._is_torch and not callable(schedule):
            raise ArgumentError(
                "LearningRateScheduler: `schedule` must be fn(lr, cur_step_num) or a torch.optim.lr_scheduler. "
                f"Found: {schedule!r}"
            )
        interval = interval or ("epoch" if self._is_torch else "step")
        if interval not in ("epoch", "step"):
            raise ArgumentError(f"LearningRateScheduler: `interval` must be 'epoch' or 'step'. Found: {interval!r}")
        self.interval = interval

    def _advance(self, params: CallbackParams) -> None:
        if self._is_torch:
            self.schedule.step()
            return
        rates = _learning_rates(params.optimizer, "LearningRateScheduler")
        _set_learning_rates(params.optimizer, [float(self.schedule(lr, params.cur_step_num)) for lr in rates])

    def on_train_step_end(self, run_context: RunContext) -> None:
        if self.interval == "step":
            self._advance(run_context.original_args())

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        if self.interval == "epoch":
            self._advance(run_context.original_args())

    def state_dict(self) -> dict[str, Any]:
        return {"scheduler": self.schedule.state_dict()} if self._is_torch else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self._is_torch and "scheduler" in state:
            self.schedule.load_state_dict(state["scheduler"])


class ProgressBar(Callback):
    """A tqdm progress bar per epoch, showing the loss (``pip install tqdm``)."""

    def __init__(self, file: Any = None, leave: bool = True, mininterval: float = 0.1) -> None:
        try:
            import tqdm  # noqa: F401
        except ImportError:
            raise ImportError("ProgressBar needs tqdm: pip install 'minddata[torch]' (or pip install tqdm)") from None
        self.file, self.leave, self.mininterval = file, leave, mininterval
        self._bar: Any = None

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        from tqdm.auto import tqdm

        p = run_context.original_args()
        self._bar = tqdm(total=p.batch_num or None, desc=f"epoch {p.cur_epoch_num}/{p.epoch_num}", file=self.file,
                         leave=self.leave, mininterval=self.mininterval, unit="step", dynamic_ncols=True)
        if p.cur_step_in_epoch:
            self._bar.update(p.cur_step_in_epoch)  # resumed mid-epoch

    def on_train_step_end(self, run_context: RunContext) -> None:
        if self._bar is not None:
            self._bar.update(1)
            loss = run_context.original_args().net_outputs
            if loss is not None:
                self._bar.set_postfix(loss=f"{loss:.4f}", refresh=False)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        if self._bar is not None:
            results = run_context.original_args().eval_results
            if results:
                self._bar.set_postfix({k: _short(v) for k, v in results.items()})
            self._bar.close()
            self._bar = None

    on_train_end = on_train_epoch_end


def _short(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


# --- checkpoints ----------------------------------------------------------------------------------


class CheckpointConfig:
    """When ModelCheckpoint saves: every ``save_checkpoint_steps`` steps (default 1) or, when set,
    every ``save_checkpoint_seconds``; at most ``keep_checkpoint_max`` files are kept (the oldest go),
    plus one every ``keep_checkpoint_per_n_minutes`` when set. ``save_on_epoch_end`` also saves at each
    epoch's end (ModelCheckpoint's files are then named for it)."""

    def __init__(self, save_checkpoint_steps: int = 1, save_checkpoint_seconds: float = 0,
                 keep_checkpoint_max: int = 5, keep_checkpoint_per_n_minutes: float = 0,
                 save_on_epoch_end: bool = False) -> None:
        for name, value in (("save_checkpoint_steps", save_checkpoint_steps),
                            ("keep_checkpoint_max", keep_checkpoint_max)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ArgumentError(f"CheckpointConfig: `{name}` must be an int of 0 or more. Found: {value!r}")
        if save_checkpoint_seconds < 0 or keep_checkpoint_per_n_minutes < 0:
            raise ArgumentError("CheckpointConfig: seconds and minutes must be 0 (off) or more")
        if not save_checkpoint_steps and not save_checkpoint_seconds and not save_on_epoch_end:
            raise ArgumentError(
                "CheckpointConfig: nothing would ever be saved: set save_checkpoint_steps, save_checkpoint_seconds "
                "or save_on_epoch_end"
            )
        self.save_checkpoint_steps = save_checkpoint_steps if not save_checkpoint_seconds else 0
        self.save_checkpoint_seconds = save_checkpoint_seconds
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        self.save_on_epoch_end = save_on_epoch_end


class ModelCheckpoint(Callback):
    """Saves checkpoints that resume exactly: network, optimizer, loss scaler, callbacks' state (LR
    schedulers, plateaus), every RNG state, the epoch and step, and the data iterator's position.

    Files are ``{directory}/{prefix}-{epoch}_{step}.ckpt`` (step within the epoch, as MindSpore), each
    written to a temporary name and renamed, so a crash never leaves a torn file. Resume with
    ``model.train(..., resume_from=path)``; :attr:`latest` is the newest file this callback wrote.
    """

    def __init__(self, prefix: str = "CKP", directory: str | os.PathLike | None = None,
                 config: CheckpointConfig | None = None) -> None:
        if not isinstance(prefix, str) or not prefix or re.search(r"[/\\]", prefix):
            raise ArgumentError(f"ModelCheckpoint: `prefix` must be a file name prefix without slashes. Found: {prefix!r}")
        self.prefix = prefix
        self.directory = os.fspath(directory) if directory is not None else os.getcwd()
        self.config = config or CheckpointConfig()
        self.saved: list[str] = []
        self._kept_for_minutes: list[str] = []
        self._last_save = time.monotonic()
        self._last_keep = time.monotonic()

    @property
    def latest(self) -> str | None:
        return self.saved[-1] if self.saved else None

    def on_train_begin(self, run_context: RunContext) -> None:
        os.makedirs(self.directory, exist_ok=True)
        self._last_save = self._last_keep = time.monotonic()

    # Model calls after_* once every callback's hook for the step (epoch) ran, so that the state
    # saved is the state a resumed run must start from.
    def after_step_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        cfg = self.config
        due = (cfg.save_checkpoint_steps and p.cur_step_num % cfg.save_checkpoint_steps == 0) or (
            cfg.save_checkpoint_seconds and time.monotonic() - self._last_save >= cfg.save_checkpoint_seconds
        )
        if due:
            self.save(p)

    def after_epoch_end(self, run_context: RunContext) -> None:
        if self.config.save_on_epoch_end:
            self.save(run_context.original_args())

    def save(self, params: CallbackParams) -> str:
        """Write a checkpoint of the run now; returns its path."""
        name = f"{self.prefix}-{params.cur_epoch_num}_{params.cur_step_in_epoch}.ckpt"
        path = os.path.join(self.directory, name)
        params.model.save_checkpoint(path)
        self._last_save = time.monotonic()
        if path in self.saved:
            self.saved.remove(path)
        self.saved.append(path)
        self._prune()
        return path

    def _prune(self) -> None:
        cfg = self.config
        minutes = cfg.keep_checkpoint_per_n_minutes
        if minutes and time.monotonic() - self._last_keep >= minutes * 60:
            self._kept_for_minutes.append(self.saved[-1])
            self._last_keep = time.monotonic()
        while cfg.keep_checkpoint_max and len(self.saved) > cfg.keep_checkpoint_max:
            old = self.saved.pop(0)
            if old not in self._kept_for_minutes:
                try:
                    os.remove(old)
                except FileNotFoundError:
                    pass


class BackupAndRestore(ModelCheckpoint):
    """Keeps one backup of the run in ``backup_dir`` (every ``save_freq`` steps, or each epoch with
    ``"epoch"``); a run started with the same callback after a crash resumes from it automatically.
    With ``delete_checkpoint`` the backup is removed when training finishes."""

    def __init__(self, backup_dir: str | os.PathLike, save_freq: int | str = "epoch",
                 delete_checkpoint: bool = True) -> None:
        if save_freq == "epoch":
            config = CheckpointConfig(save_checkpoint_steps=0, keep_checkpoint_max=1, save_on_epoch_end=True)
        elif isinstance(save_freq, int) and not isinstance(save_freq, bool) and save_freq > 0:
            config = CheckpointConfig(save_checkpoint_steps=save_freq, keep_checkpoint_max=1)
        else:
            raise ArgumentError(f"BackupAndRestore: `save_freq` must be 'epoch' or a positive int. Found: {save_freq!r}")
        super().__init__("backup", backup_dir, config)
        self.delete_checkpoint = delete_checkpoint

    def resume_path(self) -> str | None:
        """The backup to resume from, if a previous run left one."""
        path = os.path.join(self.directory, "backup.ckpt")
        return path if os.path.isfile(path) else None

    def save(self, params: CallbackParams) -> str:
        path = os.path.join(self.directory, "backup.ckpt")
        params.model.save_checkpoint(path)
        self.saved = [path]
        return path

    def on_train_end(self, run_context: RunContext) -> None:
        p = run_context.original_args()
        if self.delete_checkpoint and not p.stopped_by_signal and not p.failed:
            path = self.resume_path()
            if path is not None:
                os.remove(path)


class OnRequestExit(Callback):
    """On SIGTERM (or ``sig``), saves a checkpoint and stops training cleanly after the current step.

    ``save_ckpt`` writes ``{directory}/{file_name}.ckpt`` (resume with ``resume_from``). The handler is
    installed only while training runs, in the main thread, and the previous one is put back after.
    """

    def __init__(self, save_ckpt: bool = True, directory: str | os.PathLike = "./", file_name: str = "Model",
                 sig: int = signal.SIGTERM) -> None:
        self.save_ckpt = save_ckpt
        self.directory = os.fspath(directory)
        self.file_name = file_name
        self.sig = sig
        self.requested = threading.Event()
        self._previous: Any = None
        self.saved: str | None = None

    def _handler(self, signum: int, frame: Any) -> None:
        self.requested.set()

    def on_train_begin(self, run_context: RunContext) -> None:
        self.requested.clear()
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(self.sig, self._handler)

    def _check(self, run_context: RunContext) -> None:
        if not self.requested.is_set():
            return
        p = run_context.original_args()
        if self.save_ckpt:
            os.makedirs(self.directory, exist_ok=True)
            self.saved = os.path.join(self.directory, f"{self.file_name}.ckpt")
            p.model.save_checkpoint(self.saved)
        p.stopped_by_signal = True
        print(f"minddata: OnRequestExit: signal {self.sig} received; "
              f"{'checkpoint saved to ' + self.saved + ', ' if self.saved else ''}stopping", file=sys.stderr, flush=True)
        run_context.request_stop()

    after_step_end = _check

    def on_train_end(self, run_context: RunContext) -> None:
        if self._previous is not None:
            signal.signal(self.sig, self._previous)
            self._previous = None
