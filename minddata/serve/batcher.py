"""Dynamic batching in front of an online session.

Requests (each one or more encoded images) wait in a bounded queue until ``max_batch`` images are
there or the oldest has waited ``max_delay_s``; then they leave as one batch: every image is pushed
into the online session, and a worker thread collects the batch's rows, runs the model once on the
rows that succeeded, and hands each request its slice. Up to ``max_inflight`` batches run at once;
meanwhile the next requests queue (and batch up). A row that fails fails only its own request.

The batcher lives on the event loop (``submit`` is a coroutine); the pipeline and the model run on
the session's workers and the batcher's threads, so the loop only moves bytes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minddata.errors import RowError
from minddata.serve.metrics import ServeMetrics
from minddata.serve.model import NoModel, ServedModel
from minddata.serve.pipeline import Postprocess

__all__ = ["Batcher", "Place", "Rejected"]

log = logging.getLogger("minddata.serve")


class Rejected(Exception):
    """A request the service answers with an error status instead of a result."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


@dataclass(eq=False)
class _Request:
    images: list[bytes]
    future: asyncio.Future
    arrived: float
    deadline: float
    cancelled: bool = False
    timings: dict[str, float] = field(default_factory=dict)


def _request_tensors(rows: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray] | Rejected:
    """One request's rows as ``{column: tensor}`` with the images on the first axis (a view for one
    image), or the 422 for images that differ in shape after preprocessing."""
    if len(rows) == 1:
        return {name: np.asarray(value)[np.newaxis] for name, value in rows[0].items()}
    try:
        return {name: np.stack([row[name] for row in rows]) for name in rows[0]}
    except ValueError as exc:
        return Rejected(422, f"the images of this request differ in shape after preprocessing and cannot form "
                        f"one tensor: {exc}")


def row_reason(error: BaseException, index: int, count: int) -> str:
    """The 422 message for an image the pipeline could not process: the short reason only ("truncated
    image", "not a JPEG or PNG", ...). The engine's full account (op, row, file, advice meant for the
    server's operator) is for the server's log, not for the client: see :func:`log_row_error`."""
    text = str(error)
    detail = text.split(": ValueError: ", 1)[-1] if isinstance(error, RowError) else text
    lowered = detail.lower()
    if "truncated" in lowered or "premature end" in lowered or "ends before the image" in lowered:
        reason = "truncated image"
    elif "over the limit" in lowered or "exceeds" in lowered or "decompression" in lowered:
        size = re.search(r"(\d+)x(\d+)", detail)
        reason = f"image of {size.group(0)} pixels exceeds the limit" if size else "image exceeds the pixel limit"
    elif "not a decodable image" in lowered or "can't be decoded" in lowered:
        reason = "not a JPEG or PNG"
    else:
        reason = "the pipeline failed on this image"
    where = f"image {index} of {count}: " if count > 1 else ""
    return f"{where}{reason}"


def log_row_error(error: BaseException, reason: str) -> None:
    """The server's log line for an image answered with 422: the short reason the client got, then the
    engine's full message (one line, no traceback: the client's image, not the server, is at fault)."""
    log.warning("422 %s; pipeline: %s", reason, " ".join(str(error).split()))


class Place:
    """A request's place in the queue (:meth:`Batcher.hold`); :meth:`release` gives it up, once."""

    __slots__ = ("_batcher",)

    def __init__(self, batcher: Batcher):
        self._batcher: Batcher | None = batcher
        batcher._held += 1
        batcher.metrics.places_held.set(batcher._held)

    @property
    def held(self) -> bool:
        return self._batcher is not None

    def release(self) -> None:
        if self._batcher is not None:
            self._batcher._held -= 1
            self._batcher.metrics.places_held.set(self._batcher._held)
            self._batcher = None


class Batcher:
    """See the module docstring. ``session`` is an :class:`~minddata.engine.online.OnlineSession`
    over the pipeline (``submit(row) -> Future``); close the batcher before the session."""

    def __init__(
        self,
        session: Any,
        model: ServedModel,
        postprocess: Postprocess | None,
        metrics: ServeMetrics,
        *,
        max_batch: int,
        max_delay_s: float,
        max_queue: int,
        max_inflight: int,
        retry_after_s: int = 1,
    ):
        self.session = session
        self.model = model
        self.postprocess = postprocess
        self.metrics = metrics
        self.max_batch = max_batch
        self.max_delay_s = max_delay_s
        self.max_queue = max_queue
        self.retry_after_s = retry_after_s
        self._queue: collections.deque[_Request] = collections.deque()
        self._queued_images = 0
        self._held = 0  # places of requests whose body is in, on their way to submit (see hold())
        self._executor = ThreadPoolExecutor(max_inflight, thread_name_prefix="minddata-serve-batch")
        self._slots = asyncio.Semaphore(max_inflight)
        self._arrived = asyncio.Event()
        self._full = asyncio.Event()
        self._inflight: set[asyncio.Future] = set()
        self._closing = False
        self._task: asyncio.Task | None = None

    # --- requests ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._collect(), name="minddata-serve-batcher")

    def hold(self) -> Place:
        """A place in the queue for a request whose body has arrived, until it is submitted (or
        released: it failed before, its client left). Under overload many requests are let in before
        any of them reaches :meth:`submit`; counting their places refuses the next ones at the door,
        in microseconds, instead of after their bodies were read and their tasks ran (tens of ms)."""
        return Place(self)

    def refusal(self, images: int = 1, place: Place | None = None) -> Rejected | None:
        """The 503 a request of ``images`` images gets now (the service stopping, the queue full), or
        None; ``place``: the request's own (not counted against it). Checked by the batcher itself
        and, before the body is read, by the app's load shedding."""
        retry = {"Retry-After": str(self.retry_after_s)}
        if self._closing:
            return Rejected(503, "the service is shutting down", retry)
        taken = self._queued_images + self._held - (1 if place is not None and place.held else 0)
        if taken + images > self.max_queue:
            self.metrics.cancelled.labels("queue full").inc()
            return Rejected(503, f"the queue is full ({taken} of {self.max_queue} places taken by images waiting "
                            "or on their way); retry later", retry)
        return None

    async def submit(self, images: list[bytes], timeout_s: float, place: Place | None = None) -> dict[str, np.ndarray]:
        """This request's outputs (batch first, one row per image); ``place``: the one it holds (from
        :meth:`hold`), given up here for its images' own. Raises :class:`Rejected` (503 when the queue
        is full or the service is stopping, 504 past the deadline, 422 for a bad image)."""
        try:
            if not images:
                raise Rejected(400, "a request must hold at least one image. Found: none")
            if len(images) > self.max_queue and not self._closing:
                raise Rejected(413, f"a request may hold at most {self.max_queue} images (--max-queue). Found: {len(images)}")
            refused = self.refusal(len(images), place)
        finally:
            if place is not None:
                place.release()
        if refused is not None:
            raise refused
        now = time.perf_counter()
        request = _Request(images, asyncio.get_running_loop().create_future(), now, now + timeout_s)
        self._queue.append(request)
        self._queued_images += len(images)
        self.metrics.queue_depth.set(self._queued_images)
        self._arrived.set()
        if self._queued_images >= self.max_batch:
            self._full.set()
        self.metrics.in_progress.inc()
        try:
            return await asyncio.wait_for(asyncio.shield(request.future), timeout=timeout_s)
        except TimeoutError:
            self._cancel(request, "deadline")
            raise Rejected(504, f"no result within the request deadline of {timeout_s:g} s (--timeout-s)") from None
        except asyncio.CancelledError:
            self._cancel(request, "client left")
            raise
        finally:
            self.metrics.in_progress.dec()

    def _cancel(self, request: _Request, reason: str) -> None:
        """Drop a request that nobody waits for: out of the queue if it is still there (its images are
        never preprocessed), else its rows are left out of the model's batch."""
        if request.cancelled or request.future.done():
            return
        request.cancelled = True
        self.metrics.cancelled.labels(reason).inc()
        try:
            self._queue.remove(request)
        except ValueError:
            return
        self._queued_images -= len(request.images)
        self.metrics.queue_depth.set(self._queued_images)

    # --- batches ----------------------------------------------------------------------------------

    async def _collect(self) -> None:
        while True:
            if not self._queue:
                if self._closing:
                    return
                self._arrived.clear()
                await self._arrived.wait()
                continue
            wait = self._queue[0].arrived + self.max_delay_s - time.perf_counter()
            if self._queued_images < self.max_batch and wait > 0 and not self._closing:
                self._full.clear()
                try:
                    await asyncio.wait_for(self._full.wait(), timeout=wait)
                except TimeoutError:
                    pass
            await self._slots.acquire()
            batch = self._take()
            if not batch:
                self._slots.release()
                continue
            self._launch(batch)

    def _take(self) -> list[_Request]:
        batch, rows, now = [], 0, time.perf_counter()
        while self._queue and (rows == 0 or rows + len(self._queue[0].images) <= self.max_batch):
            request = self._queue.popleft()
            self._queued_images -= len(request.images)
            if request.deadline <= now:
                self.metrics.cancelled.labels("deadline").inc()
                request.future.set_exception(Rejected(504, "the request waited in the queue past its deadline"))
                continue
            request.timings["queued"] = now - request.arrived
            batch.append(request)
            rows += len(request.images)
        if self._queued_images < self.max_batch:
            self._full.clear()
        self.metrics.queue_depth.set(self._queued_images)
        return batch

    def _launch(self, batch: list[_Request]) -> None:
        started = time.perf_counter()
        futures = [[self.session.submit((np.frombuffer(b, dtype=np.uint8),)) for b in r.images] for r in batch]
        self.metrics.batch_size.observe(sum(len(f) for f in futures))
        self.metrics.inflight.inc()
        done = asyncio.get_running_loop().run_in_executor(self._executor, self._finish, batch, futures, started)
        self._inflight.add(done)
        done.add_done_callback(lambda d: self._resolve(batch, d))

    def _finish(self, batch: list[_Request], futures: list[list[Future]], started: float) -> list[Any]:
        """Worker thread: wait for the batch's rows, run the model once on the good ones, slice."""
        outcomes: list[Any] = []
        good: list[tuple[int, list[dict[str, np.ndarray]]]] = []
        for i, (request, row_futures) in enumerate(zip(batch, futures)):
            rows: list[dict[str, np.ndarray]] = []
            error: Exception | None = None
            for j, f in enumerate(row_futures):
                try:
                    rows.append(f.result())
                except Exception as exc:  # noqa: BLE001 - the row's own error, for its own request
                    if error is None and isinstance(exc, RowError):
                        reason = row_reason(exc, j, len(row_futures))
                        log_row_error(exc, reason)
                        error = Rejected(422, reason)
                    elif error is None:
                        error = exc
            self.metrics.images_done(len(row_futures))
            outcomes.append(error)
            if error is None and not request.cancelled:
                good.append((i, rows))
        preprocessed = time.perf_counter()
        for request in batch:
            request.timings["preprocess"] = preprocessed - started
        if good:
            try:
                self._run_model(good, outcomes)
            except Exception as exc:  # noqa: BLE001 - a model failure fails its batch, not the service
                log.error("the model failed on a batch of %d request(s)", len(good), exc_info=exc)
                for i, _ in good:
                    outcomes[i] = Rejected(500, "the model failed on this batch")
        finished = time.perf_counter()
        for request in batch:
            request.timings["model"] = finished - preprocessed
        return outcomes

    def _run_model(self, good: list[tuple[int, list[dict[str, np.ndarray]]]], outcomes: list[Any]) -> None:
        if isinstance(self.model, NoModel) and self.postprocess is None:
            # The answer is each request's own rows: no batch tensor to build and slice back apart.
            for i, request_rows in good:
                outcomes[i] = _request_tensors(request_rows)
            self.metrics.model_runs.inc()
            return
        rows = [row for _, request_rows in good for row in request_rows]
        try:
            stacked = {name: np.stack([row[name] for row in rows]) for name in rows[0]}
        except ValueError:
            # Rows of different shapes (a pipeline without a fixed output size) cannot share a batch:
            # each request then runs on its own.
            for i, request_rows in good:
                tensors = _request_tensors(request_rows)
                if isinstance(tensors, Rejected):
                    outcomes[i] = tensors
                    continue
                try:
                    outcomes[i] = self._predict(tensors)
                except Exception as exc:  # noqa: BLE001 - run on its own, it fails on its own
                    log.error("the model failed on a request", exc_info=exc)
                    outcomes[i] = Rejected(500, "the model failed on this request")
            return
        outputs = self._predict(stacked)
        start = 0
        for i, request_rows in good:
            end = start + len(request_rows)
            outcomes[i] = {name: array[start:end] for name, array in outputs.items()}
            start = end

    def _predict(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        outputs = self.model.predict(batch)
        if self.postprocess is not None:
            outputs = self.postprocess(outputs)
        self.metrics.model_runs.inc()
        return outputs

    def _resolve(self, batch: list[_Request], done: asyncio.Future) -> None:
        self._inflight.discard(done)
        self._slots.release()
        self.metrics.inflight.dec()
        error = done.exception() if not done.cancelled() else asyncio.CancelledError()
        outcomes = done.result() if error is None else [error] * len(batch)
        for request, outcome in zip(batch, outcomes):
            if request.cancelled or request.future.done():
                continue
            for stage in ("queued", "preprocess", "model"):
                if stage in request.timings:
                    self.metrics.latency.labels(stage).observe(request.timings[stage])
            if isinstance(outcome, BaseException):
                request.future.set_exception(outcome)
            else:
                request.future.set_result(outcome)

    # --- shutdown ---------------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop taking requests, finish every queued and running batch, stop the threads."""
        self._closing = True
        self._arrived.set()
        self._full.set()
        if self._task is not None:
            await self._task
        while self._inflight:
            await asyncio.gather(*self._inflight, return_exceptions=True)
        self._executor.shutdown(wait=True)
