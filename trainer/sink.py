"""Feeding a training loop: batches from a pipeline as torch tensors on the training device.

MindSpore's "dataset sink mode" keeps the data on the device ahead of the step. Here a background
thread (the sink) pulls batches from the pipeline, which already made them torch tensors without a
copy (``torch.from_numpy`` on the pipeline's prefetch thread), and stages up to ``prefetch`` of them:
on a GPU it pins them and copies them with ``non_blocking`` on its own CUDA stream, so the copy of
batch n+1 overlaps the step on batch n; rows a GPU map produced are on the device already and stay
there. Without sink mode, and on the CPU (where there is nothing to copy and the pipeline's prefetch
thread is already ahead), the same staging runs inline in the training thread.

Each staged batch carries the iterator's state after it, so a checkpoint names exactly the batches
the model consumed (not those the sink read ahead).

Training in sink mode also applies two of MindSpore's settings, read from the iterator's settings
snapshot: ``config.set_sending_batches(n)`` lets at most ``n`` batches per pass be sent (the limit is
read again from ``config`` whenever it is reached, so a callback can raise it as training goes), and
unless ``config.set_dynamic_shape(True)``, every batch must have the first batch's shapes (a
remainder batch may be shorter in its first dimension), as a sink that compiles the step for one
shape needs.
"""

from __future__ import annotations

import dataclasses
import enum
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from minddata import config
from minddata.config import RunOptions
from minddata.dataset.iterators import TorchIterator, import_torch
from minddata.errors import PipelineError

torch = import_torch("minddata.trainer")

__all__ = ["EPOCH_END", "BatchFeed", "StagedBatch", "device_options"]


class _End(enum.Enum):
    """The type of the end-of-pass marker: an enum, so that ``item is EPOCH_END`` narrows for type checkers."""

    EPOCH_END = "EPOCH_END"


EPOCH_END: Final = _End.EPOCH_END  # the pipeline finished a pass over the data
_POLL = 0.05  # every blocking wait wakes this often to notice a stop or a dead thread


@dataclass(slots=True)
class StagedBatch:
    """One batch on the device: ``inputs`` and ``labels`` tensors, the iterator ``state`` after it, the
    time the feed waited for the pipeline (``pipeline_wait``) and spent staging it (``copy``)."""

    inputs: list[Any]
    labels: list[Any]
    state: dict
    pipeline_wait: float
    copy: float
    ready: Any = None  # a CUDA event the consumer's stream waits on, or None


def device_options(device: Any, options: RunOptions | None = None) -> RunOptions:
    """The settings an iterator for training on ``device`` runs with: ``options`` (default: the
    settings now), with ``framework="torch"`` on a CUDA device, so GPU maps hand their rows on as
    torch CUDA tensors (placement reads the run's framework) and rows made on the GPU are not copied
    GPU -> host -> GPU. Only that iterator's snapshot says so: the global settings are not touched.

    Examples:
        >>> from minddata import config
        >>> device_options("cuda:0").framework
        'torch'
        >>> device_options("cpu").framework, config.get_framework()
        ('numpy', 'numpy')
    """
    if options is None:
        options = config.snapshot()
    if torch.device(device).type != "cuda" or options.framework == "torch":
        return options
    return dataclasses.replace(options, framework="torch")


class _Failure:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class BatchFeed:
    """Batches of ``dataset`` (columns ``input_idx`` then ``label_idx``) staged on ``device``.

    ``threaded`` runs the staging in a sink thread ``prefetch`` batches ahead; ``state`` resumes the
    pipeline where a checkpoint left it. :meth:`get` returns a :class:`StagedBatch` or ``EPOCH_END``.
    ``sink``: training in sink mode, which applies ``config.set_sending_batches`` and
    ``config.set_dynamic_shape`` (see the module's docstring). ``lockstep``: every rank of a
    data-parallel run must take the same number of steps, so an epoch resumed on another number of
    ranks is dealt in equal shares (``config.set_elastic_equal_shares``).
    """

    def __init__(self, dataset: Any, device: Any, input_idx: Sequence[int], label_idx: Sequence[int], *,
                 threaded: bool = True, prefetch: int = 2, state: dict | None = None,
                 int64_columns: Sequence[str] = (), num_epochs: int = -1, sink: bool = False,
                 lockstep: bool = False) -> None:
        self.device = torch.device(device)
        self.input_idx, self.label_idx = list(input_idx), list(label_idx)
        options = device_options(self.device)
        if lockstep and not options.elastic_equal_shares:
            options = dataclasses.replace(options, elastic_equal_shares=True)
        self._iterator = TorchIterator(dataset, num_epochs=num_epochs, state=state, int64_columns=int64_columns,
                                       options=options)
        options = self._iterator._run.rt.options
        self._names = dataset.get_col_names()
        self._sink = sink
        self._sending_limit = options.sending_batches if sink else 0  # 0: no limit
        self._sent = 0  # batches sent in this pass
        self._check_shapes = sink and not options.dynamic_shape
        self._first_shapes: list[tuple[int, ...]] | None = None
        self._batches = 0
        self._cuda = self.device.type == "cuda"
        # Without CUDA every tensor the pipeline makes is on the CPU already: nothing to check per tensor.
        self._on_cpu = self.device.type == "cpu" and not torch.cuda.is_available()
        self._stream = torch.cuda.Stream(self.device) if self._cuda and threaded else None
        self._stop = threading.Event()
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, prefetch))
        self._thread: threading.Thread | None = None
        # On the CPU there is nothing to stage: the pipeline's prefetch thread already keeps batches
        # ahead, and a sink thread would only add a hand-off (and GIL traffic) to every step.
        if threaded and self._cuda:
            self._thread = threading.Thread(target=self._run, name="minddata-sink", daemon=True)
            self._thread.start()

    # -- staging ------------------------------------------------------------------------------

    def _to_device(self, tensor: Any) -> Any:
        if not isinstance(tensor, torch.Tensor) or tensor.device == self.device:
            return tensor
        if self._cuda and tensor.device.type == "cpu":
            # Pinned host memory is what lets the copy run asynchronously to the compute.
            return tensor.pin_memory().to(self.device, non_blocking=True)
        return tensor.to(self.device)

    def _stage(self) -> StagedBatch | Literal[_End.EPOCH_END]:
        t0 = time.perf_counter()
        try:
            row = next(self._iterator)
        except StopIteration:
            self._sent = 0
            return EPOCH_END
        state = self._iterator.get_state()
        if self._check_shapes:
            self._check_static(row)
        if self._sending_limit and self._sent >= self._sending_limit:
            self._await_sending_room()
        self._sent += 1
        t1 = time.perf_counter()
        ready = None
        if self._stream is not None:
            # Rows a GPU map made are on the device already, written on this thread's current (the
            # default) stream: the sink's stream waits for that work before the event says "ready".
            self._stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(self._stream):
                inputs = [self._to_device(row[i]) for i in self.input_idx]
                labels = [self._to_device(row[i]) for i in self.label_idx]
                ready = torch.cuda.Event()
                ready.record(self._stream)
        elif self._on_cpu:
            # The pipeline's tensors are CPU tensors already (or plain values the network takes as they are).
            inputs = [row[i] for i in self.input_idx]
            labels = [row[i] for i in self.label_idx]
        else:
            inputs = [self._to_device(row[i]) for i in self.input_idx]
            labels = [self._to_device(row[i]) for i in self.label_idx]
        return StagedBatch(inputs, labels, state, t1 - t0, time.perf_counter() - t1, ready)

    def _check_static(self, row: list[Any]) -> None:
        """Raise unless ``row`` has the first batch's shapes (a remainder batch may be shorter)."""
        self._batches += 1
        # torch.Size and NumPy shapes are tuples; values without a shape (strings, scalars) count as ().
        shapes: list[tuple[int, ...]] = [value.shape if hasattr(value, "shape") else () for value in row]
        if shapes == self._first_shapes:
            return
        shapes = [tuple(shape) for shape in shapes]
        if self._first_shapes is None:
            self._first_shapes = shapes
            return
        for name, first, shape in zip(self._names, self._first_shapes, shapes, strict=False):
            if shape == first or (len(shape) == len(first) >= 1 and shape[1:] == first[1:] and shape[0] < first[0]):
                continue
            raise PipelineError(
                f"minddata.trainer: sink mode needs batches of one shape, but column {name!r} of batch "
                f"{self._batches} has shape {shape} where the first batch had {first}. Give every batch one "
                "shape (pad or resize the rows, padded_batch with pad_info sizes), or allow shapes to vary with "
                "minddata.config.set_dynamic_shape(True) (or train with dataset_sink_mode=False)."
            )

    def _await_sending_room(self) -> None:
        """Hold the batch until ``config.set_sending_batches`` allows more than were sent this pass."""
        while True:
            # The live setting, on purpose: MindSpore's way to hold the feed is a callback raising the
            # limit while training runs (the run's snapshot gave the first limit, in __init__).
            limit = config.snapshot().sending_batches
            if limit == 0 or limit > self._sent:
                self._sending_limit = limit
                return
            if self._thread is None or threading.current_thread() is not self._thread:
                # Staged in the training thread: nothing else runs to raise the limit while we wait.
                raise PipelineError(
                    f"minddata.trainer: config.set_sending_batches({limit}) lets {limit} batch(es) per pass be "
                    f"sent and all were; raise it (e.g. from a callback's on_train_step_end) before the next "
                    "step needs a batch, or set 0 for no limit."
                )
            if self._stop.wait(_POLL):
                return

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                item = self._stage()
                while not self._stop.is_set():
                    try:
                        self._queue.put(item, timeout=_POLL)
                        break
                    except queue.Full:
                        continue
        except BaseException as exc:  # handed to the training thread, which raises it
            self._put_failure(exc)

    def _put_failure(self, exc: BaseException) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(_Failure(exc), timeout=_POLL)
                return
            except queue.Full:
                continue

    # -- consuming ----------------------------------------------------------------------------

    def get(self) -> StagedBatch | Literal[_End.EPOCH_END]:
        """The next batch (ready for use on the current CUDA stream), or ``EPOCH_END``."""
        if self._thread is None:
            item = self._stage()
        else:
            while True:
                try:
                    item = self._queue.get(timeout=_POLL)
                    break
                except queue.Empty:
                    if not self._thread.is_alive():
                        raise RuntimeError("minddata.trainer: the sink thread ended without a batch or an error") from None
        if isinstance(item, _Failure):
            raise item.exc
        if isinstance(item, StagedBatch) and item.ready is not None:
            current = torch.cuda.current_stream(self.device)
            current.wait_event(item.ready)
            for t in item.inputs + item.labels:
                if isinstance(t, torch.Tensor) and t.is_cuda:
                    t.record_stream(current)  # the allocator must not reuse it while the step runs
        return item

    def close(self) -> None:
        """Stop the sink thread and the pipeline; idempotent."""
        self._stop.set()
        # Closing the pipeline first wakes a sink thread blocked waiting for its next batch.
        self._iterator.close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> BatchFeed:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
