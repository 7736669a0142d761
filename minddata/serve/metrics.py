"""The service's Prometheus metrics, in a registry of its own (several services can share a process).

``GET /metrics`` exposes: requests by route and status, latency histograms by stage (queued,
preprocess, model, total), the time to each 503 from the request's arrival, the batch-size histogram, queue depth, batches in flight, model runs,
cancelled requests, connections closed by the server's own limits, and images/s over the last 10
seconds.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["CONTENT_TYPE", "ServeMetrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
# 503s must be answered in well under 10 ms: fine buckets there.
_REFUSAL_BUCKETS = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.05, 0.1,
                    0.5, 1.0, 5.0)
_RATE_WINDOW_S = 10.0


class ServeMetrics:
    """Every metric the service records. Thread-safe (prometheus-client's metrics are)."""

    def __init__(self, max_batch: int):
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("minddata_serve_requests", "Requests answered, by route and status code",
                                ["route", "status"], registry=r)
        self.latency = Histogram("minddata_serve_latency_seconds", "Time per request and stage (queued, "
                                 "preprocess, model, total)", ["stage"], buckets=_LATENCY_BUCKETS, registry=r)
        self.refusal = Histogram("minddata_serve_refusal_seconds", "Inference requests answered 503 (overload): "
                                 "from the request's first bytes read off the connection to the answer handed to "
                                 "it", buckets=_REFUSAL_BUCKETS, registry=r)
        buckets = sorted({1, 2, 4, 8, 16, 32, 64, 128, 256, max_batch})
        self.batch_size = Histogram("minddata_serve_batch_size", "Images per batch sent through the pipeline",
                                    buckets=[b for b in buckets if b <= max_batch], registry=r)
        self.queue_depth = Gauge("minddata_serve_queue_depth", "Images waiting for a batch", registry=r)
        self.places_held = Gauge("minddata_serve_queue_places_held", "Queue places held by requests whose "
                                 "body is in, on their way to the queue", registry=r)
        self.in_progress = Gauge("minddata_serve_requests_in_progress", "Requests accepted and not yet answered",
                                 registry=r)
        self.inflight = Gauge("minddata_serve_batches_in_flight", "Batches being preprocessed or run", registry=r)
        self.model_runs = Counter("minddata_serve_model_runs", "Model (or post-processing) calls, one per batch",
                                  registry=r)
        self.images = Counter("minddata_serve_images", "Images preprocessed (successfully or not)", registry=r)
        self.cancelled = Counter("minddata_serve_cancelled", "Requests whose client left or whose deadline "
                                 "passed before they were answered", ["reason"], registry=r)
        self.connections_closed = Counter("minddata_serve_connections_closed", "Connections the server answered "
                                          "and closed itself (headers too large, header or body deadline, too many "
                                          "connections, unparseable HTTP), by reason", ["reason"], registry=r)
        rate = Gauge("minddata_serve_images_per_second", f"Images finished per second over the last "
                     f"{_RATE_WINDOW_S:g} s", registry=r)
        self._done: collections.deque[tuple[float, int]] = collections.deque()
        self._lock = threading.Lock()
        rate.set_function(self._rate)

    def record_parity(self, parity: Any) -> None:
        """The train/serve parity state (minddata.serve.parity): whether the model carries a pipeline,
        whether the served one differs, the golden check's result and each op's largest difference."""
        r = self.registry
        Gauge("minddata_serve_pipeline_embedded", "1 when the model file carries its evaluation pipeline",
              registry=r).set(1 if parity.card is not None else 0)
        Gauge("minddata_serve_pipeline_mismatch", "1 when the served pipeline differs from the model's embedded "
              "one (--allow-pipeline-mismatch)", registry=r).set(1 if parity.mismatch else 0)
        golden = parity.golden
        if golden is None:
            return
        status = Gauge("minddata_serve_golden_check", "The start-up golden check's result (1 for the status it "
                       "had: exact, within_tolerance, drift, skipped)", ["status"], registry=r)
        for name in ("exact", "within_tolerance", "drift", "skipped"):
            status.labels(name).set(1 if golden.status == name else 0)
        diff = Gauge("minddata_serve_golden_max_difference", "Largest difference of each op's output from its "
                     "exported golden output, in the output's units", ["position", "op"], registry=r)
        ok = Gauge("minddata_serve_golden_op_within_tolerance", "1 when the op's output is within its declared "
                   "tolerance of the exported golden output", ["position", "op"], registry=r)
        for check in golden.ops:
            diff.labels(str(check.position), check.op).set(check.max_difference)
            ok.labels(str(check.position), check.op).set(1 if check.ok else 0)
        if golden.model is not None:
            Gauge("minddata_serve_golden_model_max_difference", "Largest difference of the model's outputs from "
                  "the exported golden outputs", registry=r).set(golden.model["max_difference"])

    def images_done(self, count: int) -> None:
        now = time.monotonic()
        self.images.inc(count)
        with self._lock:
            self._done.append((now, count))
            self._trim(now)

    def _trim(self, now: float) -> None:
        while self._done and self._done[0][0] < now - _RATE_WINDOW_S:
            self._done.popleft()

    def _rate(self) -> float:
        now = time.monotonic()
        with self._lock:
            self._trim(now)
            return sum(n for _, n in self._done) / _RATE_WINDOW_S

    def render(self) -> bytes:
        return generate_latest(self.registry)
