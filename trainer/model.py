"""``Model``: MindSpore's ``mindspore.train.Model`` over a PyTorch network, fed by a minddata pipeline.

Examples:
    >>> import numpy as np, torch
    >>> import minddata as md
    >>> from minddata.trainer import Model, History
    >>> md.config.set_seed(0); _ = torch.manual_seed(0)
    >>> x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    >>> y = (x[:, 0] > 0).astype(np.int32)
    >>> ds = md.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
    >>> net = torch.nn.Linear(4, 2)
    >>> model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.5), metrics={"accuracy"})
    >>> history = History()
    >>> model.train(5, ds, callbacks=[history])
    >>> len(history.history["loss"]), model.eval(ds)["accuracy"] > 0.8
    (5, True)
"""

from __future__ import annotations

import contextlib
import os
import pickle
import random
import re
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minddata.dataset.iterators import import_torch
from minddata.errors import ArgumentError
from minddata.trainer.callbacks import CallbackList, CallbackParams, RunContext
from minddata.trainer.columns import ColumnMap, Signature, map_columns
from minddata.trainer.metrics import Loss, get_metrics
from minddata.trainer.sink import EPOCH_END, BatchFeed
from minddata.trainer.step_trace import PHASES, StepTrace

torch = import_torch("minddata.trainer.Model")

__all__ = ["AMP_LEVELS", "CheckpointMismatchError", "InputDtypeError", "Model", "UnsafeCheckpointError"]

CHECKPOINT_FORMAT = "minddata-checkpoint"
# 2: the NumPy RNG state is stored in plain types. Version 1 stored it as NumPy's tuple with an array,
# which loads through _LEGACY_SAFE_GLOBALS.
CHECKPOINT_VERSION = 2

AMP_LEVELS = {
    "O0": "float32 throughout",
    "O1": "forward and loss under torch.autocast (float16 on CUDA, bfloat16 on the CPU); weights stay float32",
    "O2": "O1 plus dynamic loss scaling (torch.amp.GradScaler) where the low precision is float16 (CUDA)",
    "O3": "the whole network cast to float16 (CUDA) / bfloat16 (CPU), floating inputs too; no autocast",
}

# Reused every step when no mixed precision is asked for (nullcontext keeps no state).
_NO_AUTOCAST = contextlib.nullcontext()

# What torch.load(weights_only=True) must rebuild beyond tensors and plain values: only the NumPy
# array (and its dtype) of a version-1 checkpoint's NumPy RNG state. These globals build an array
# from its shape, dtype and bytes, and run no other code. A version-2 checkpoint needs none of them:
# the iterator position (data_state), the RNG states, callbacks' and optimizer states are all
# tensors, numbers, strings, lists, tuples and dicts.
_RECONSTRUCT = np.zeros(1).__reduce__()[0]  # numpy(._)core.multiarray._reconstruct, as pickles name it
_LEGACY_SAFE_GLOBALS: list[Any] = [
    (_RECONSTRUCT, "numpy._core.multiarray._reconstruct"),
    (_RECONSTRUCT, "numpy.core.multiarray._reconstruct"),  # written under NumPy 1.x
    np.ndarray,
    np.dtype,
    type(np.dtype("uint32")),  # some NumPy versions pickle the dtype's class (numpy.dtypes.UInt32DType)
]


class CheckpointMismatchError(ArgumentError):
    """A checkpoint's weights do not belong to this network (missing or unexpected keys, shapes)."""


class UnsafeCheckpointError(ArgumentError):
    """A checkpoint file holds objects other than tensors and plain values, which loading refuses to
    build (unpickling them could run code the file names)."""


class InputDtypeError(ArgumentError, RuntimeError):
    """The network's forward failed on an integer input column (e.g. uint8 pixels) while its
    parameters are floating point. A RuntimeError too, as the torch error it replaces."""


# Words of torch's dtype-mismatch errors ("mat1 and mat2 must have the same dtype", "Input type
# (unsigned char) and bias type (float) should be the same", '"batch_norm" not implemented for 'Byte'').
_DTYPE_WORDS = ("dtype", "type", "not implemented for")


def _device(device: Any) -> Any:
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ArgumentError(f"Model: `device` must be 'auto', 'cpu', 'cuda' or 'cuda:N'. Found: {device!r}") from exc
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ArgumentError("Model: device='cuda' was asked for, but torch sees no CUDA GPU; use device='auto' or 'cpu'")
    return chosen


def _distributed() -> tuple[int, int] | None:
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None


def _rank_data_state(state: Any) -> Any:
    """The ``state=`` for this process's iterator from a checkpoint's data state: a list of every rank's
    states gives this rank its own on the same number of ranks, and the whole list (an elastic resume,
    docs/data.md) on another; a single state (a checkpoint of one process) is used as it is."""
    if not isinstance(state, list):
        return state
    dist = _distributed()
    rank, world = dist if dist is not None else (0, 1)
    if len(state) == world:
        return state[rank]
    return state


def _atomic_save(obj: Any, path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.remove(temp)


def _rng_state(device: Any) -> dict[str, Any]:
    # NumPy's state in plain types (its key array as a list), so that loading needs no NumPy globals.
    name, key, pos, has_gauss, cached_gaussian = np.random.get_state()
    numpy_state = {"bit_generator": str(name), "key": [int(k) for k in key], "pos": int(pos),
                   "has_gauss": int(has_gauss), "cached_gaussian": float(cached_gaussian)}
    state = {"torch": torch.get_rng_state(), "numpy": numpy_state, "python": random.getstate()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    numpy_state = state["numpy"]
    if isinstance(numpy_state, dict):
        numpy_state = (numpy_state["bit_generator"], np.asarray(numpy_state["key"], dtype=np.uint32),
                       numpy_state["pos"], numpy_state["has_gauss"], numpy_state["cached_gaussian"])
    np.random.set_state(numpy_state)  # a version-1 checkpoint holds NumPy's own tuple
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class _Run:
    """The state of one ``train`` call that a checkpoint must hold."""

    def __init__(self, epoch: int, step_in_epoch: int, global_step: int, data_state: dict | None,
                 callbacks: CallbackList) -> None:
        self.epoch = epoch  # 0-based epoch in progress
        self.step_in_epoch = step_in_epoch  # steps done in it
        self.global_step = global_step
        self.data_state = data_state
        self.callbacks = callbacks
        self.micro_step = 0  # gradient-accumulation micro-steps since the last optimizer step
        self.input_names: tuple[str, ...] = ()  # the dataset columns that feed forward, in order


class Model:
    """Trains, evaluates and predicts with a ``torch.nn.Module`` on minddata pipelines.

    Args:
        network: the ``torch.nn.Module``; its ``forward`` takes the input columns in order.
        loss_fn: ``loss_fn(output, *labels)``; needed for ``train`` and the Loss metric.
        optimizer: a ``torch.optim.Optimizer`` over the network's parameters.
        metrics: names (``{"accuracy"}``), Metric objects or ``{name: Metric}`` for ``eval``.
        eval_network: a network to use in ``eval``/``predict`` instead of ``network``.
        amp_level: ``"O0"`` .. ``"O3"`` (see ``AMP_LEVELS``; MindSpore's levels mapped to torch.autocast).
        device: ``"auto"`` (CUDA when there is one), ``"cpu"``, ``"cuda"``, ``"cuda:N"``.
        input_columns / label_columns: which dataset columns feed ``forward`` and the loss; by default
            the last column is the label and the others are inputs.
        clip_grad_norm / clip_grad_value: clip gradients (by global norm / by value) before each update.
        grad_accumulation_steps: accumulate this many batches' gradients per optimizer step.
        prefetch: batches the sink stages ahead.
        int64_labels: cast integer label columns to int64 (what CrossEntropyLoss wants).

    Input columns are not cast: an integer input (uint8 pixels, say) that a floating-point network
    cannot take raises :class:`InputDtypeError` naming the column, its dtype, the network's dtype and
    the fix (``vision.Normalize`` or ``transforms.TypeCast(np.float32)`` on that column in the
    pipeline), instead of torch's bare "mat1 and mat2 must have the same dtype". Casting silently
    would be the surprise: 0..255 values fed to a network made for normalised inputs train badly
    without any error, and only the pipeline knows the right mean, std or scale. A network that
    takes integers on purpose (token ids, or one that converts pixels itself) is never affected:
    nothing is checked until its forward fails.
    """

    def __init__(
        self,
        network: Any,
        loss_fn: Any = None,
        optimizer: Any = None,
        metrics: Any = None,
        eval_network: Any = None,
        amp_level: str = "O0",
        device: Any = "auto",
        *,
        input_columns: str | Sequence[str] | None = None,
        label_columns: str | Sequence[str] | None = None,
        clip_grad_norm: float | None = None,
        clip_grad_value: float | None = None,
        grad_accumulation_steps: int = 1,
        prefetch: int = 2,
        int64_labels: bool = True,
    ) -> None:
        if not isinstance(network, torch.nn.Module):
            raise ArgumentError(f"Model: `network` must be a torch.nn.Module. Found: {type(network).__name__}")
        if amp_level not in AMP_LEVELS:
            raise ArgumentError(f"Model: `amp_level` must be one of {', '.join(AMP_LEVELS)}. Found: {amp_level!r}")
        if isinstance(grad_accumulation_steps, bool) or not isinstance(grad_accumulation_steps, int) \
                or grad_accumulation_steps < 1:
            raise ArgumentError(
                f"Model: `grad_accumulation_steps` must be an int of 1 or more. Found: {grad_accumulation_steps!r}"
            )
        for name, value in (("clip_grad_norm", clip_grad_norm), ("clip_grad_value", clip_grad_value)):
            if value is not None and not value > 0:
                raise ArgumentError(f"Model: `{name}` must be greater than 0. Found: {value!r}")
        self.device = _device(device)
        self.network = network.to(self.device)
        self.eval_network = eval_network.to(self.device) if eval_network is not None else None
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.metrics = get_metrics(metrics)
        self.amp_level = amp_level
        self.input_columns, self.label_columns = input_columns, label_columns
        self.clip_grad_norm, self.clip_grad_value = clip_grad_norm, clip_grad_value
        self.grad_accumulation_steps = grad_accumulation_steps
        self.prefetch = prefetch
        self.int64_labels = int64_labels
        self._low = torch.float16 if self.device.type == "cuda" else torch.bfloat16
        if amp_level == "O3":
            self.network.to(self._low)
        self._scaler = (
            torch.amp.GradScaler(self.device.type) if amp_level == "O2" and self._low == torch.float16 else None
        )
        self._train_network: Any = None
        self._run: _Run | None = None
        self.signature = Signature.of_callable(network.forward, f"{type(network).__name__}.forward")

    # -- pieces --------------------------------------------------------------------------------

    def _autocast(self) -> Any:
        if self.amp_level in ("O1", "O2"):
            return torch.autocast(self.device.type, dtype=self._low)
        return _NO_AUTOCAST

    def _cast_inputs(self, inputs: list[Any]) -> list[Any]:
        if self.amp_level != "O3":
            return inputs
        return [t.to(self._low) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]

    def _columns(self, dataset: Any, labels: str, where: str) -> ColumnMap:
        return map_columns(dataset.get_col_names(), self.signature, input_columns=self.input_columns,
                           label_columns=self.label_columns, labels=labels, where=where)

    def _feed(self, dataset: Any, cmap: ColumnMap, *, threaded: bool, state: dict | None = None,
              num_epochs: int = -1, sink: bool = False) -> BatchFeed:
        inputs, labels = cmap.indices(dataset.get_col_names())
        return BatchFeed(dataset, self.device, inputs, labels, threaded=threaded, prefetch=self.prefetch,
                         state=state, int64_columns=cmap.labels if self.int64_labels else (),
                         num_epochs=num_epochs, sink=sink, lockstep=_distributed() is not None)

    def _forward(self, network: Any, inputs: list[Any], names: Sequence[str], where: str) -> Any:
        """``network(*inputs)``; a dtype error of torch's caused by an integer input becomes an
        :class:`InputDtypeError` naming the column and the fix."""
        try:
            return network(*inputs)
        except RuntimeError as exc:
            owner = self.network if network is self._train_network else network  # not the DDP wrapper
            run = self._run
            if run is not None and where == "Model.train":
                where = f"{where} (epoch {run.epoch + 1}, step {run.step_in_epoch + 1})"
            message = _integer_input_error(owner, inputs, names, where, exc)
            if message is None:
                raise
            raise InputDtypeError(message) from exc

    def _loss(self, output: Any, labels: list[Any]) -> Any:
        if isinstance(output, torch.Tensor) and output.dtype in (torch.float16, torch.bfloat16):
            output = output.float()  # the loss in float32, as MindSpore's mixed precision does
        return self.loss_fn(output, *labels)

    def _sharded(self, dataset: Any) -> Any:
        dist = _distributed()
        if dist is None or dataset._is_sharded():
            return dataset
        rank, world = dist
        return dataset._shard(world, rank, "Model.train under torch.distributed")

    def _wrap_ddp(self, trace: StepTrace) -> Any:
        if _distributed() is None:
            return self.network
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index if self.device.index is not None else torch.cuda.current_device()] \
            if self.device.type == "cuda" else None
        ddp = DistributedDataParallel(self.network, device_ids=ids)

        # No annotations: DDP checks them, and this module's are strings (from __future__ import annotations).
        def timed_allreduce(state, bucket):  # noqa: ANN001
            start = time.perf_counter()

            def done(fut):  # noqa: ANN001
                trace.add_allreduce(time.perf_counter() - start)
                return fut.value()[0] if isinstance(fut.value(), list) else fut.value()

            return allreduce_hook(state, bucket).then(done)

        ddp.register_comm_hook(None, timed_allreduce)
        return ddp

    # -- training ------------------------------------------------------------------------------

    def train(
        self,
        epoch: int,
        train_dataset: Any,
        callbacks: Any = None,
        dataset_sink_mode: bool = True,
        sink_size: int = -1,
        initial_epoch: int = 0,
        *,
        resume_from: str | os.PathLike | None = None,
        valid_dataset: Any = None,
        valid_frequency: int = 1,
        valid_dataset_sink_mode: bool = True,
    ) -> None:
        """Train for ``epoch`` epochs (counting ``initial_epoch`` as already done).

        ``dataset_sink_mode`` stages batches on the device in a background thread (and applies
        ``config.set_sending_batches`` and ``config.set_dynamic_shape``); ``sink_size > 0``
        makes each epoch that many steps, drawn from the pipeline's stream across its passes (as
        MindSpore's sink size). ``resume_from`` continues a checkpoint written by ModelCheckpoint
        exactly where it was, mid-epoch included; a :class:`BackupAndRestore` callback does that by
        itself. Under ``torch.distributed`` the network is wrapped in DistributedDataParallel and the
        dataset reads shard ``rank`` of ``world_size`` unless it is sharded already; a checkpoint holds
        every rank's data position, and ``resume_from`` on another number of ranks reads exactly the
        samples of the epoch that the saving ranks had not consumed (docs/data.md, "Resuming on a
        different number of ranks"; step counts then follow the new world's batches). A shuffled source
        needs no ``config.set_seed`` for that: as for a source given ``num_shards``, the sharded
        shuffle draws from the seed every rank shares (``config.get_seed()``), so the shards are
        disjoint and cover each epoch.
        """
        self._check_train(epoch, sink_size, initial_epoch)
        cbs = CallbackList(callbacks)
        if resume_from is None:
            resume_from = next((cb.resume_path() for cb in cbs if hasattr(cb, "resume_path") and cb.resume_path()),
                               None)
        checkpoint = self.load_checkpoint(resume_from) if resume_from is not None else None
        dataset = self._sharded(train_dataset)
        cmap = self._columns(dataset, "required", "Model.train")
        per_epoch = sink_size if sink_size > 0 else dataset._node.static_size()
        if checkpoint is not None:
            run = _Run(checkpoint["epoch"], checkpoint["step_in_epoch"], checkpoint["global_step"],
                       checkpoint["data_state"], cbs)
            _restore_callbacks(cbs, checkpoint.get("callbacks", []))
            _set_rng_state(checkpoint["rng"])
        else:
            run = _Run(initial_epoch, 0, initial_epoch * (per_epoch or 0), None, cbs)
        run.input_names = cmap.inputs
        trace = StepTrace(f"Model.train of {type(self.network).__name__}")
        self._train_network = self._wrap_ddp(trace)
        params = CallbackParams(
            model=self, network=self.network, train_network=self._train_network, loss_fn=self.loss_fn,
            optimizer=self.optimizer, train_dataset=train_dataset, valid_dataset=valid_dataset, epoch_num=epoch,
            batch_num=per_epoch, cur_epoch_num=run.epoch + 1, cur_step_num=run.global_step,
            cur_step_in_epoch=run.step_in_epoch, mode="train", list_callback=cbs.callbacks, dataset_sink_mode=dataset_sink_mode,
        )
        context = RunContext(params)
        from minddata.trainer.profiling import TrainingProfile

        profile = TrainingProfile(self, trace)
        feed = self._feed(dataset, cmap, threaded=dataset_sink_mode, state=_rank_data_state(run.data_state),
                          sink=dataset_sink_mode)
        profile.bind(feed)
        self._run = run
        self.network.train()
        try:
            with profile:
                cbs.call("on_train_begin", context)
                while run.epoch < epoch and not context.get_stop_requested():
                    params.cur_epoch_num = run.epoch + 1
                    params.cur_step_in_epoch = run.step_in_epoch
                    cbs.call("on_train_epoch_begin", context)
                    self._train_epoch(feed, sink_size, params, context, profile)
                    if context.get_stop_requested() and (sink_size <= 0 or run.step_in_epoch < sink_size) \
                            and not profile.epoch_done:
                        break  # stopped mid-epoch: no epoch end
                    if valid_dataset is not None and ((run.epoch + 1) % valid_frequency == 0 or run.epoch + 1 == epoch):
                        params.eval_results = self._evaluate(valid_dataset, cbs, valid_dataset_sink_mode, params)
                        params.eval_epoch = run.epoch + 1
                    cbs.call("on_train_epoch_end", context)
                    run.epoch += 1
                    run.step_in_epoch = 0
                    self._after(cbs, "after_epoch_end", context)
                cbs.call("on_train_end", context)
        except BaseException:
            params.failed = True
            raise
        finally:
            feed.close()
            self._run = None
            # The DDP wrapper holds the process group and gloo's threads: drop it with the run (here and
            # in the callbacks' parameters, which a callback or a traceback may keep), so a
            # destroy_process_group after train frees them while the interpreter is fully alive.
            self._train_network = params.train_network = None

    def _train_epoch(self, feed: BatchFeed, sink_size: int, params: CallbackParams, context: RunContext,
                     profile: Any) -> None:
        run = self._run
        assert run is not None
        cbs = run.callbacks
        step_begin_hooks = cbs.has("on_train_step_begin")
        perf = time.perf_counter
        profile.epoch_done = False
        while sink_size <= 0 or run.step_in_epoch < sink_size:
            t_begin = perf()
            item = feed.get()
            if item is EPOCH_END:
                if sink_size > 0:
                    continue  # a pass over the data ended inside a sink-sized epoch
                if run.data_state is not None:
                    # The end of the pass is consumed: a checkpoint from here starts the next pass.
                    from minddata.engine.elastic import next_epoch

                    run.data_state = next_epoch(run.data_state)
                profile.epoch_done = True
                return
            t_data = perf()
            if step_begin_hooks:
                cbs.call("on_train_step_begin", context)
            loss, h2d, forward, backward, optimizer, allreduce = self._train_step(item, profile, t_data)
            run.data_state = item.state
            run.step_in_epoch += 1
            run.global_step += 1
            params.cur_step_num = run.global_step
            params.cur_step_in_epoch = run.step_in_epoch
            params.net_outputs = loss
            t_cb = perf()
            cbs.call("on_train_step_end", context)
            self._after(cbs, "after_step_end", context)
            phases = (t_data - t_begin, h2d, forward, backward, optimizer, allreduce, perf() - t_cb)  # PHASES' order
            profile.trace.record(run.epoch, run.step_in_epoch - 1, t_begin, phases)
            params.step_trace = dict(zip(PHASES, phases, strict=True))
            if context.get_stop_requested():
                return
        profile.epoch_done = True

    def _train_step(self, batch: Any, profile: Any, t_data: float) -> tuple[float, ...]:
        """One step; returns the loss and the times of the phases h2d, forward, backward, optimizer
        and allreduce."""
        run = self._run
        assert run is not None
        sync = profile.sync
        perf = time.perf_counter
        inputs = self._cast_inputs(batch.inputs)
        if sync:
            sync()
        t_copy = perf()
        accumulate = self.grad_accumulation_steps
        run.micro_step += 1
        update = run.micro_step >= accumulate
        network = self._train_network
        no_sync = network.no_sync() if (not update and hasattr(network, "no_sync")) else None
        if no_sync is not None:
            no_sync.__enter__()
        try:
            with self._autocast():
                output = self._forward(network, inputs, run.input_names, "Model.train")
                loss = self._loss(output, batch.labels)
            if sync:
                sync()
            t_forward = perf()
            scaled = loss / accumulate if accumulate > 1 else loss
            (self._scaler.scale(scaled) if self._scaler is not None else scaled).backward()
            if sync:
                sync()
        finally:
            if no_sync is not None:
                no_sync.__exit__(None, None, None)
        t_backward = perf()
        if update:
            self._optimizer_step()
            run.micro_step = 0
            if sync:
                sync()
        t_optimizer = perf()
        return (float(loss.detach()), batch.copy + (t_copy - t_data), t_forward - t_copy, t_backward - t_forward,
                t_optimizer - t_backward, profile.trace.take_allreduce())

    def _optimizer_step(self) -> None:
        opt = self.optimizer
        if self._scaler is not None:
            self._scaler.unscale_(opt)
        if self.clip_grad_norm is not None or self.clip_grad_value is not None:
            params = [p for group in opt.param_groups for p in group["params"] if p.grad is not None]
            if self.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(params, self.clip_grad_norm)
            if self.clip_grad_value is not None:
                torch.nn.utils.clip_grad_value_(params, self.clip_grad_value)
        if self._scaler is not None:
            self._scaler.step(opt)
            self._scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)

    @staticmethod
    def _after(cbs: CallbackList, hook: str, context: RunContext) -> None:
        # Checkpoints are written after every callback's hook ran, so that a resumed run does not
        # replay (or miss) what later callbacks did at that step.
        for cb in cbs:
            fn = getattr(cb, hook, None)
            if fn is not None:
                fn(context)

    def _check_train(self, epoch: int, sink_size: int, initial_epoch: int) -> None:
        if self.loss_fn is None or self.optimizer is None:
            raise ArgumentError("Model.train needs loss_fn and optimizer: Model(network, loss_fn, optimizer, ...)")
        for name, value, low in (("epoch", epoch, 1), ("initial_epoch", initial_epoch, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ArgumentError(f"Model.train: `{name}` must be an int of {low} or more. Found: {value!r}")
        if isinstance(sink_size, bool) or not isinstance(sink_size, int) or sink_size == 0 or sink_size < -1:
            raise ArgumentError(f"Model.train: `sink_size` must be -1 (whole dataset) or greater than 0. Found: {sink_size!r}")
        if initial_epoch >= epoch:
            raise ArgumentError(f"Model.train: `initial_epoch` ({initial_epoch}) must be below `epoch` ({epoch})")

    def fit(self, epoch: int, train_dataset: Any, valid_dataset: Any = None, valid_frequency: int = 1,
            callbacks: Any = None, dataset_sink_mode: bool = True, valid_dataset_sink_mode: bool = True,
            sink_size: int = -1, initial_epoch: int = 0, *, resume_from: str | os.PathLike | None = None) -> None:
        """``train`` with an evaluation on ``valid_dataset`` every ``valid_frequency`` epochs (and after
        the last); callbacks see the results as ``eval_results`` at the epoch's end."""
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, int) or valid_frequency < 1:
            raise ArgumentError(f"Model.fit: `valid_frequency` must be an int of 1 or more. Found: {valid_frequency!r}")
        if valid_dataset is not None and not self.metrics:
            raise ArgumentError("Model.fit: evaluating needs metrics: Model(..., metrics={'accuracy'})")
        self.train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch,
                   resume_from=resume_from, valid_dataset=valid_dataset, valid_frequency=valid_frequency,
                   valid_dataset_sink_mode=valid_dataset_sink_mode)

    # -- evaluation and inference --------------------------------------------------------------

    def _inference_network(self) -> Any:
        return self.eval_network if self.eval_network is not None else self.network

    def eval(self, valid_dataset: Any, callbacks: Any = None, dataset_sink_mode: bool = True) -> dict[str, Any]:
        """``{metric name: value}`` over one pass of ``valid_dataset``. The network runs in eval mode
        without gradients; each metric gets ``update(output, label)``, Loss gets ``update(loss)``."""
        return self._evaluate(valid_dataset, CallbackList(callbacks), dataset_sink_mode, None)

    def _evaluate(self, dataset: Any, cbs: CallbackList, sink: bool, train_params: CallbackParams | None) -> dict:
        if not self.metrics:
            raise ArgumentError("Model.eval needs metrics: Model(..., metrics={'accuracy'})")
        needs_loss = any(isinstance(m, Loss) for m in self.metrics.values())
        if needs_loss and self.loss_fn is None:
            raise ArgumentError("Model.eval: the Loss metric needs a loss_fn: Model(network, loss_fn, ...)")
        cmap = self._columns(dataset, "required", "Model.eval")
        network = self._inference_network()
        params = CallbackParams(model=self, network=network, valid_dataset=dataset, mode="eval", cur_step_num=0,
                                metrics=self.metrics)
        context = RunContext(params)
        for metric in self.metrics.values():
            metric.clear()
        was_training = network.training
        network.eval()
        feed = self._feed(dataset, cmap, threaded=sink, num_epochs=1)
        try:
            cbs.call("on_eval_begin", context)
            cbs.call("on_eval_epoch_begin", context)
            with torch.no_grad():
                while not context.get_stop_requested():
                    batch = feed.get()
                    if batch is EPOCH_END:
                        break
                    cbs.call("on_eval_step_begin", context)
                    with self._autocast():
                        output = self._forward(network, self._cast_inputs(batch.inputs), cmap.inputs, "Model.eval")
                    prediction = output[0] if isinstance(output, (tuple, list)) else output
                    label = batch.labels[0] if len(batch.labels) == 1 else batch.labels
                    loss = self._loss(output, batch.labels) if needs_loss else None
                    for metric in self.metrics.values():
                        if isinstance(metric, Loss):
                            metric.update(loss)
                        else:
                            metric.update(prediction, label)
                    params.cur_step_num += 1
                    params.net_outputs = prediction
                    cbs.call("on_eval_step_end", context)
            results = {name: metric.eval() for name, metric in self.metrics.items()}
            params.eval_results = results
            cbs.call("on_eval_epoch_end", context)
            cbs.call("on_eval_end", context)
            return results
        finally:
            feed.close()
            network.train(was_training)

    def predict(self, *inputs: Any) -> Any:
        """The network's output for one batch (tensors or arrays, in ``forward``'s order), without
        gradients, in eval mode. With a dataset as the only argument: an iterator over the outputs
        of its batches, streamed (labels, if the dataset has them, are left out)."""
        from minddata.dataset import Dataset

        if len(inputs) == 1 and isinstance(inputs[0], Dataset):
            return self._predict_dataset(inputs[0])
        network = self._inference_network()
        tensors = [self._as_tensor(x) for x in inputs]
        was_training = network.training
        network.eval()
        try:
            with torch.no_grad(), self._autocast():
                return self._forward(network, self._cast_inputs(tensors), (), "Model.predict")
        finally:
            network.train(was_training)

    def _as_tensor(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.to(self.device)
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)
        return value

    def _predict_dataset(self, dataset: Any) -> Iterator[Any]:
        cmap = self._columns(dataset, "none", "Model.predict")
        feed = self._feed(dataset, cmap, threaded=True, num_epochs=1)
        network = self._inference_network()
        was_training = network.training
        try:
            network.eval()
            while True:
                batch = feed.get()
                if batch is EPOCH_END:
                    return
                with torch.no_grad(), self._autocast():
                    output = self._forward(network, self._cast_inputs(batch.inputs), cmap.inputs, "Model.predict")
                yield output
        finally:
            feed.close()
            network.train(was_training)

    def _example_inputs(self, example_batch: Any, where: str) -> tuple[tuple[Any, ...], list[str]]:
        from minddata.dataset import Dataset

        names: list[str] | None = None
        if isinstance(example_batch, Dataset):
            cmap = self._columns(example_batch, "none", where)
            names = list(cmap.inputs)
            feed = self._feed(example_batch, cmap, threaded=False, num_epochs=1)
            try:
                batch = feed.get()
            finally:
                feed.close()
            if batch is EPOCH_END:
                raise ArgumentError(f"{where}: the example dataset is empty")
            args = tuple(batch.inputs)
        else:
            values = example_batch if isinstance(example_batch, (tuple, list)) else (example_batch,)
            args = tuple(self._as_tensor(v) for v in values)
        if names is None:
            names = ["input"] + [f"input_{i}" for i in range(1, len(args))]
        return args, names

    def _pipeline_of(self, pipeline: Any, names: list[str], where: str) -> tuple[str, list[Any]]:
        """The served column and ops of ``pipeline`` (an evaluation dataset), for a one-input model."""
        from minddata._parity import pipeline_ops
        from minddata.dataset import Dataset

        if not isinstance(pipeline, Dataset):
            raise ArgumentError(f"{where}: `pipeline` must be the evaluation dataset. Found: {type(pipeline).__name__}")
        if len(names) != 1:
            raise ArgumentError(f"{where}: `pipeline` embeds a pipeline for a one-input model; this one takes {names}")
        column = names[0] if names[0] != "input" else None
        try:
            return pipeline_ops(pipeline, column)
        except ArgumentError as exc:
            raise ArgumentError(f"{where}: {exc}") from None

    def export_onnx(self, path: str | os.PathLike, example_batch: Any, opset_version: int = 17, *,
                    pipeline: Any = None) -> str:
        """Write the network as an ONNX file with a dynamic batch dimension, for :class:`OnnxModel`.

        ``example_batch``: one input tensor/array, a tuple of them, or a dataset (its first batch's
        input columns). Inputs are named after the dataset's columns (else ``input``, ``input_1``...).

        ``pipeline``: the evaluation dataset. Its ops after the source on the model's input column
        (decode, resize, crop, normalize, layout) go into the file's ``metadata_props`` with their
        digest, the library versions that define their pixels, reference images and the golden
        outputs of the pipeline and of the model (computed by ONNX Runtime on the written file), so
        that ``minddata serve net.onnx`` serves that pipeline and checks it at start-up
        (docs/parity.md).
        """
        args, names = self._example_inputs(example_batch, "Model.export_onnx")
        served = self._pipeline_of(pipeline, names, "Model.export_onnx") if pipeline is not None else None
        network = self._inference_network()
        was_training = network.training
        network.eval()
        try:
            with torch.no_grad():
                sample = network(*args)
            count = len(sample) if isinstance(sample, (tuple, list)) else 1
            outputs = ["output"] + [f"output_{i}" for i in range(1, count)]
            path = os.fspath(path)
            # The TorchScript exporter needs only torch (the dynamo one also needs onnxscript); torch
            # warns that it is the legacy path, which is what the user did not choose and cannot act on.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                torch.onnx.export(network, args, path, dynamo=False, input_names=names, output_names=outputs,
                                  opset_version=opset_version,
                                  dynamic_axes={n: {0: "batch"} for n in names + outputs})
        finally:
            network.train(was_training)
        if served is not None:
            from minddata.trainer.onnx import embed_pipeline

            embed_pipeline(path, *served)
        return path

    def export_torchscript(self, path: str | os.PathLike, example_batch: Any, *, pipeline: Any = None) -> str:
        """Write the network traced to TorchScript (``torch.jit.trace`` in eval mode, on the CPU), for
        ``minddata serve`` or ``torch.jit.load``. ``pipeline`` embeds the evaluation pipeline as
        :meth:`export_onnx` does, in the archive's ``_extra_files``."""
        from minddata._parity import build_card

        args, names = self._example_inputs(example_batch, "Model.export_torchscript")
        served = self._pipeline_of(pipeline, names, "Model.export_torchscript") if pipeline is not None else None
        network = self._inference_network()
        was_training = network.training
        network.eval()
        try:
            # torch deprecates TorchScript in favour of torch.export; TorchScript is what was asked for.
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore", torch.jit.TracerWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                traced = torch.jit.trace(network, args)
        finally:
            network.train(was_training)
        path = os.fspath(path)
        extra: dict[str, str] = {}
        if served is not None:
            def predict(x: np.ndarray) -> list[np.ndarray]:
                with torch.inference_mode():
                    out = traced(torch.from_numpy(np.ascontiguousarray(x)).to(args[0].device))
                return [t.cpu().numpy() for t in (out if isinstance(out, (tuple, list)) else [out])]

            extra = build_card(*served, predict, np.dtype(np.float32)).to_metadata()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.jit.save(traced, path, _extra_files=extra)
        return path

    # -- checkpoints ---------------------------------------------------------------------------

    def save_checkpoint(self, path: str | os.PathLike) -> str:
        """Write the training state (network, optimizer, loss scaler, callbacks' state, RNG states,
        epoch/step, the data iterator's position) to ``path`` atomically. Outside ``train`` only the
        network and optimizer are saved. Under torch.distributed only rank 0 writes, and during
        ``train`` every rank must call it (as ModelCheckpoint and BackupAndRestore do): the ranks'
        data positions are gathered into the checkpoint, so it resumes on any number of ranks."""
        path = os.fspath(path)
        dist = _distributed()
        run = self._run
        data_state: dict | list[Any] | None = run.data_state if run is not None else None
        if dist is not None and run is not None:
            # Every rank's data position, so that the run can resume on another number of ranks.
            states: list[Any] = [None] * dist[1]
            torch.distributed.all_gather_object(states, data_state)
            data_state = states if all(isinstance(one, dict) for one in states) else data_state
        if dist is not None and dist[0] != 0:
            return path
        state: dict[str, Any] = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "network_class": type(self.network).__name__,
            "network": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict() if self.optimizer is not None else None,
            "scaler": self._scaler.state_dict() if self._scaler is not None else None,
            "rng": _rng_state(self.device),
        }
        if run is not None:
            state.update(
                epoch=run.epoch, step_in_epoch=run.step_in_epoch, global_step=run.global_step,
                data_state=data_state, micro_step=run.micro_step,
                callbacks=[[type(cb).__name__, cb.state_dict()] for cb in run.callbacks if hasattr(cb, "state_dict")],
            )
            if run.micro_step:
                state["grads"] = [p.grad for p in self.network.parameters()]
        _atomic_save(state, path)
        return path

    def load_checkpoint(self, path: str | os.PathLike) -> dict[str, Any]:
        """Load a checkpoint's network, optimizer and scaler state into this model; returns it all.

        A checkpoint of another network raises :class:`CheckpointMismatchError` naming the missing and
        unexpected keys (and mismatched shapes), before anything is changed.

        The file is read with ``torch.load(weights_only=True)``: tensors, numbers, strings and
        containers only, which is all a checkpoint written here holds. Unpickling anything else could
        run code that the file names, so a file that holds other objects raises
        :class:`UnsafeCheckpointError` naming them, and none of them is built. A checkpoint whose
        callbacks store types of your own loads inside ``with torch.serialization.safe_globals([...]):``
        listing those types, once you trust the file. ``train(resume_from=...)`` and
        ``BackupAndRestore`` load through here.
        """
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Model.load_checkpoint: no checkpoint at {path!r}")
        state = _safe_load(path, self.device)
        if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
            raise ArgumentError(f"Model.load_checkpoint: {path!r} is not a minddata checkpoint (written by ModelCheckpoint)")
        self._check_keys(state["network"], path, state.get("network_class"))
        self.network.load_state_dict(state["network"])
        if self.optimizer is not None and state.get("optimizer") is not None:
            self.optimizer.load_state_dict(state["optimizer"])
        if self._scaler is not None and state.get("scaler") is not None:
            self._scaler.load_state_dict(state["scaler"])
        grads = state.get("grads")
        if grads:
            for p, g in zip(self.network.parameters(), grads):
                p.grad = g
        if self._run is not None:
            self._run.micro_step = state.get("micro_step", 0)
        return state

    def _check_keys(self, saved: dict[str, Any], path: str, saved_class: str | None) -> None:
        own = self.network.state_dict()
        missing = sorted(set(own) - set(saved))
        unexpected = sorted(set(saved) - set(own))
        shapes = [f"{k}: checkpoint {tuple(saved[k].shape)} vs network {tuple(own[k].shape)}"
                  for k in sorted(set(own) & set(saved))
                  if hasattr(saved[k], "shape") and tuple(saved[k].shape) != tuple(own[k].shape)]
        if missing or unexpected or shapes:
            parts = []
            if missing:
                parts.append(f"missing keys (in the network, not the checkpoint): {_few(missing)}")
            if unexpected:
                parts.append(f"unexpected keys (in the checkpoint, not the network): {_few(unexpected)}")
            if shapes:
                parts.append(f"shape mismatches: {_few(shapes)}")
            raise CheckpointMismatchError(
                f"Model.load_checkpoint: {path!r} holds a {saved_class or 'different'} network that does not fit "
                f"{type(self.network).__name__}: " + "; ".join(parts)
            )


def _restore_callbacks(cbs: CallbackList, saved: list[list[Any]]) -> None:
    """Give each saved callback state to the resumed run's callback of the same class, in order (the
    n-th saved EarlyStopping to the n-th EarlyStopping), so the list may be reordered or extended."""
    unused = [cb for cb in cbs if hasattr(cb, "load_state_dict")]
    for class_name, state in saved:
        match = next((cb for cb in unused if type(cb).__name__ == class_name), None)
        if match is not None:
            match.load_state_dict(state)
            unused.remove(match)


def _safe_load(path: str, device: Any) -> Any:
    """``torch.load(path, weights_only=True)`` with :data:`_LEGACY_SAFE_GLOBALS` allowed; a file that
    needs anything else raises :class:`UnsafeCheckpointError` naming what it would build."""
    serialization = torch.serialization
    # Allow only what is not allowed already, so that leaving the context removes nothing the caller
    # (an enclosing safe_globals, add_safe_globals) allowed.
    allowed = serialization.get_safe_globals()
    extra = [g for g in _LEGACY_SAFE_GLOBALS if g not in allowed]
    try:
        with serialization.safe_globals(extra):
            return torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError as exc:
        raise UnsafeCheckpointError(
            f"Model.load_checkpoint: refused to load {path!r}: it holds what is not tensors or plain values "
            f"({_refused(path, exc)}), and unpickling that could run code the file names, so checkpoints are loaded "
            "with torch.load(weights_only=True). A checkpoint written by ModelCheckpoint or save_checkpoint holds "
            "nothing else; if this file is yours, you trust it and its callbacks store types of your own, load it "
            "inside `with torch.serialization.safe_globals([YourType, ...]):`."
        ) from None
    except Exception as exc:  # weights_only runs no code of the file's: this is a damaged or foreign file
        raise ArgumentError(
            f"Model.load_checkpoint: {path!r} is not a readable checkpoint ({type(exc).__name__}: {exc}); point at "
            "a file written by ModelCheckpoint or Model.save_checkpoint"
        ) from exc


def _refused(path: str, exc: BaseException) -> str:
    """What a weights-only load refused: the globals the file names, else the unpickler's reason."""
    try:
        names = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    except Exception:  # not torch's zip format
        names = []
    if not names:
        names = re.findall(r"GLOBAL ([\w.]+)", str(exc))
    if names:
        return "it would call or build " + ", ".join(dict.fromkeys(names))
    reason = str(exc).split("WeightsUnpickler error:")[-1].strip().splitlines()
    return reason[0] if reason else type(exc).__name__


def _integer_input_error(network: Any, inputs: list[Any], names: Sequence[str], where: str,
                         exc: BaseException) -> str | None:
    """The message for a forward that failed with a dtype error while an input is an integer tensor and
    the network's parameters are floating point; None when the failure is something else."""
    text = str(exc)
    if not any(word in text for word in _DTYPE_WORDS):
        return None
    weights = next((p.dtype for p in network.parameters() if p.is_floating_point()), None)
    if weights is None:
        return None
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor) and not (value.is_floating_point() or value.is_complex()) \
                and value.dtype != torch.bool:
            name = names[i] if i < len(names) else None
            dtype, wdtype = str(value.dtype).replace("torch.", ""), str(weights).replace("torch.", "")
            if name:
                fix = (f"Make the column float in the pipeline: map vision.Normalize(mean=[...], std=[...]) "
                       f"(float32 out), or vision.Rescale(1 / 255, 0) or transforms.TypeCast(np.float32), with "
                       f"input_columns={name!r}")
            else:
                fix = ("Pass it as float, normalised as in training (or predict on the evaluation pipeline, "
                       "which does that)")
            return (
                f"{where}: {type(network).__name__}.forward failed on {f'input column {name!r}' if name else f'input {i}'}"
                f", a {dtype} tensor of shape {tuple(value.shape)}, because the network's parameters are {wdtype} "
                f"(torch: {text.strip()}). Model does not cast integer inputs to float: pixels of 0..255 fed to a "
                f"network made for normalised inputs would train badly without an error. {fix}; or convert it "
                f"in forward if the network takes integers on purpose."
            )
    return None


def _few(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
