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
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from minddata.dataset.iterators import TorchIterator, import_torch

torch = import_torch("minddata.trainer")

__all__ = ["EPOCH_END", "BatchFeed", "StagedBatch"]

EPOCH_END = object()  # the pipeline finished a pass over the data
_POLL = 0.05  # every blocking wait wakes this often to notice a stop or a dead thread


@dataclass
class StagedBatch:
    """One batch on the device: ``inputs`` and ``labels`` tensors, the iterator ``state`` after it, the
    time the feed waited for the pipeline (``pipeline_wait``) and spent staging it (``copy``)."""

    inputs: list[Any]
    labels: list[Any]
    state: dict
    pipeline_wait: float
    copy: float
    ready: Any = None  # a CUDA event the consumer's stream waits on, or None


class _Failure:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class BatchFeed:
    """Batches of ``dataset`` (columns ``input_idx`` then ``label_idx``) staged on ``device``.

    ``threaded`` runs the staging in a sink thread ``prefetch`` batches ahead; ``state`` resumes the
    pipeline where a checkpoint left it. :meth:`get` returns a :class:`StagedBatch` or ``EPOCH_END``.
    """

    def __init__(self, dataset: Any, device: Any, input_idx: Sequence[int], label_idx: Sequence[int], *,
                 threaded: bool = True, prefetch: int = 2, state: dict | None = None,
                 int64_columns: Sequence[str] = (), num_epochs: int = -1) -> None:
        self.device = torch.device(device)
        self.input_idx, self.label_idx = list(input_idx), list(label_idx)
        self._iterator = TorchIterator(dataset, num_epochs=num_epochs, state=state, int64_columns=int64_columns)
        self._cuda = self.device.type == "cuda"
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

    def _stage(self) -> StagedBatch | object:
        t0 = time.perf_counter()
        try:
            row = next(self._iterator)
        except StopIteration:
            return EPOCH_END
        state = self._iterator.get_state()
        t1 = time.perf_counter()
        ready = None
        if self._stream is not None:
            with torch.cuda.stream(self._stream):
                inputs = [self._to_device(row[i]) for i in self.input_idx]
                labels = [self._to_device(row[i]) for i in self.label_idx]
                ready = torch.cuda.Event()
                ready.record(self._stream)
        else:
            inputs = [self._to_device(row[i]) for i in self.input_idx]
            labels = [self._to_device(row[i]) for i in self.label_idx]
        return StagedBatch(inputs, labels, state, t1 - t0, time.perf_counter() - t1, ready)

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

    def get(self) -> StagedBatch | object:
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
