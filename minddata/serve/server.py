"""``minddata serve``: set up the pipeline, the model and the batcher, print what runs where, and
serve HTTP with uvicorn until SIGTERM/SIGINT (then drain: stop accepting, finish in-flight
requests, exit 0).

Set-up problems (a pipeline that fails on a test image, a model that does not fit the pipeline's
output, a port in use) are found before the server listens, and reported as one line (exit 2).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import io
import socket
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from minddata.serve.model import ServedModel, TensorInfo, infer_signature, load_model
from minddata.serve.pipeline import INPUT_COLUMN, ServePipeline

__all__ = ["ServeSettings", "Service", "require_extra", "serve"]

# Two test images of different sizes: dims of the output that follow the input show up as dynamic.
_PROBE_SIZES = ((97, 61), (160, 128))


def require_extra() -> None:
    """Raise ImportError naming the extra to install when the web stack is missing."""
    missing = []
    for module in ("fastapi", "uvicorn", "httptools", "prometheus_client"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise ImportError(f"minddata serve needs {', '.join(missing)}: pip install 'minddata[serve]'")


@dataclass(frozen=True)
class ServeSettings:
    """The command line's settings (see ``minddata serve --help``)."""

    name: str
    host: str = "127.0.0.1"
    port: int = 8000
    max_batch: int = 32
    max_delay_ms: float = 5.0
    max_queue: int = 256
    timeout_s: float = 30.0
    workers: int = 2
    pipeline_nice: int = 10
    max_body_bytes: int = 16 << 20
    max_inflight: int = 4
    # Limits for a server facing clients it doesn't trust (docs/serve.md, "What the server defends
    # against"); the pipeline library's own pixel limit (about 179 MP) is meant for datasets.
    max_json_bytes: int = 4 << 20
    max_json_answer_bytes: int = 64 << 20
    max_body_memory_bytes: int = 256 << 20
    max_image_pixels: int | None = 24_000_000
    max_header_bytes: int = 32 << 10
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 4096
    keep_alive_s: float = 5.0


def _probe_image(width: int, height: int) -> bytes:
    from PIL import Image

    y, x = np.mgrid[0:height, 0:width]
    pixels = np.stack([x * 255 // width, y * 255 // height, (x + y) % 256], axis=-1).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


class Service:
    """The pipeline's online session, the model and (once started on the event loop) the batcher."""

    input_name = INPUT_COLUMN

    def __init__(self, pipeline: ServePipeline, model: ServedModel, settings: ServeSettings, parity: Any = None):
        from minddata.serve.metrics import ServeMetrics

        self.pipeline = pipeline
        self.parity = parity
        self.model = model
        self.settings = settings
        self.metrics = ServeMetrics(settings.max_batch)
        self.batcher: Any = None
        self.ready = False
        self.session = self._open_session()
        try:
            self.outputs = self._probe()
            if parity is not None:
                from minddata.serve.parity import model_runner, session_runner

                parity.check(list(pipeline.ops), session_runner(self.session), model_runner(model, INPUT_COLUMN))
                self.metrics.record_parity(parity)
        except BaseException:
            self.session.close()
            raise
        self.output_names = [t.name for t in self.outputs]

    def _open_session(self) -> Any:
        """The pipeline's online session, under the service's pixel limit: the session runs with a
        snapshot of the settings in which only that limit differs; the process's settings stay as they are."""
        import dataclasses

        from minddata import config

        options = dataclasses.replace(config.snapshot(), max_image_pixels=self.settings.max_image_pixels)
        return self.pipeline.dataset(self.settings.workers).serve(thread_nice=self.settings.pipeline_nice,
                                                                  options=options)

    def _probe(self) -> list[TensorInfo]:
        """Run test images through the pipeline and the model: fails here, at start, rather than on the
        first request; and tells the outputs' shapes."""
        samples = []
        for width, height in _PROBE_SIZES:
            future = self.session.submit((np.frombuffer(_probe_image(width, height), dtype=np.uint8),))
            try:
                row = future.result(timeout=60)
            except Exception as exc:
                raise ValueError(f"pipeline {self.pipeline.name} fails on a {width}x{height} test JPEG: {exc}") from exc
            batch = {k: v[np.newaxis] for k, v in row.items()}
            try:
                out = self.model.predict(batch)
                if self.pipeline.postprocess is not None:
                    out = self.pipeline.postprocess(out)
            except Exception as exc:
                shapes = ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in batch.items())
                raise ValueError(f"the model or postprocess fails on the pipeline's output ({shapes}): "
                                 f"{type(exc).__name__}: {exc}") from exc
            if not isinstance(out, dict) or not out:
                raise ValueError(f"postprocess must return a non-empty {{name: array}}. Found: {type(out).__name__}")
            samples.append({k: np.asarray(v) for k, v in out.items()})
        return infer_signature(samples)

    def start(self) -> None:
        from minddata.serve.batcher import Batcher

        s = self.settings
        self.batcher = Batcher(self.session, self.model, self.pipeline.postprocess, self.metrics,
                               max_batch=s.max_batch, max_delay_s=s.max_delay_ms / 1000, max_queue=s.max_queue,
                               max_inflight=s.max_inflight)
        self.batcher.start()
        self.ready = True

    async def drain(self) -> None:
        self.ready = False
        if self.batcher is not None:
            await self.batcher.close()
        self.session.close()

    def close(self) -> None:
        """Stop the session (for a service that never started serving)."""
        self.session.close()

    def metadata(self) -> dict[str, Any]:
        meta = {
            "name": self.settings.name,
            "versions": ["1"],
            "platform": f"minddata_{self.model.kind}",
            "inputs": [{"name": self.input_name, "datatype": "BYTES", "shape": [-1]}],
            "outputs": [t.to_json() for t in self.outputs],
        }
        if self.parity is not None:
            meta["pipeline"] = self.parity.to_json()  # train/serve parity (docs/parity.md)
        return meta

    def banner(self, url: str) -> list[str]:
        s = self.settings
        model = "none (answers with the preprocessed tensors)" if self.model.path is None else \
            f"{self.model.kind} {self.model.path}"
        lines = [
            f"minddata serve: model {s.name!r}",
            f"  pipeline: {self.pipeline.describe()}  ({s.workers} worker(s), nice +{s.pipeline_nice})",
            f"  model:    {model}",
        ]
        for t in self.model.inputs or []:
            lines.append(f"    model input  {t.name} {t.datatype} {list(t.shape)}")
        lines.append(f"  input:    {self.input_name} BYTES [-1] (encoded JPEG or PNG, one per row)")
        for t in self.outputs:
            lines.append(f"  output:   {t.name} {t.datatype} {list(t.shape)}")
        if self.parity is not None:
            lines += self.parity.banner()
        lines += [
            f"  batching: max-batch {s.max_batch}, max-delay {s.max_delay_ms:g} ms, max-queue {s.max_queue} images, "
            f"timeout {s.timeout_s:g} s, up to {s.max_inflight} batches in flight",
            f"  limits:   body {_mb(s.max_body_bytes)} MB (JSON {_mb(s.max_json_bytes)} MB, JSON answer "
            f"{_mb(s.max_json_answer_bytes)} MB, all bodies {_mb(s.max_body_memory_bytes)} MB), headers "
            f"{s.max_header_bytes >> 10} KB in {s.header_timeout_s:g} s, body in {s.body_timeout_s:g} s, "
            f"{s.max_connections} connections, images of "
            + (f"{s.max_image_pixels:,} pixels" if s.max_image_pixels else "any size"),
            f"  routes:   POST {url}/v2/models/{s.name}/infer  POST {url}/v1/preprocess  GET {url}/metrics  "
            f"GET {url}/docs",
            # Last, so that whoever waits for this line has read everything above it.
            f"minddata serve: listening on {url}",
        ]
        return lines


def _mb(size: int) -> str:
    return f"{size / (1 << 20):g}"


def _drain_server_class(uvicorn: Any) -> type:
    class DrainingServer(uvicorn.Server):
        """uvicorn re-raises a caught SIGTERM after its graceful shutdown, so the process would die of
        the signal; a drain is this service's normal way to stop, so it exits 0 instead."""

        @contextlib.contextmanager
        def capture_signals(self):
            with super().capture_signals():
                yield
                captured = getattr(self, "_captured_signals", None)
                if isinstance(captured, list):
                    captured.clear()

    return DrainingServer


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror}; choose another --port or --host") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(pipeline: ServePipeline, model_path: str | None, settings: ServeSettings, out: Any = None,
          err: Any = None, parity: Any = None) -> int:
    """Run the service until SIGTERM/SIGINT; returns the exit status (2 for a set-up problem)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        require_extra()
    except ImportError as exc:
        print(f"minddata serve: error: {exc}", file=err)
        return 2
    import uvicorn

    from minddata.serve.app import admission, create_app, load_shedding

    _log_to(err)  # before the start-up checks, whose warnings go to the log
    try:
        model = load_model(model_path)
        service = Service(pipeline, model, settings, parity)
    except (ValueError, OSError) as exc:
        print(f"minddata serve: error: {exc}", file=err)
        return 2
    except Exception as exc:  # a pipeline build error (device missing, bad graph): still one line
        print(f"minddata serve: error: {type(exc).__name__}: {exc}", file=err)
        return 2
    try:
        sock = _bind(settings.host, settings.port)
    except ValueError as exc:
        service.close()
        print(f"minddata serve: error: {exc}", file=err)
        return 2
    host, port = sock.getsockname()[:2]
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    for line in service.banner(url):
        print(line, file=out)
    out.flush()
    from minddata.serve.http import ConnectionLimits, guarded_protocol

    limits = ConnectionLimits(max_header_bytes=settings.max_header_bytes, header_timeout_s=settings.header_timeout_s,
                              body_timeout_s=settings.body_timeout_s, max_connections=settings.max_connections)
    config = uvicorn.Config(create_app(service), log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=max(1, int(settings.timeout_s)), server_header=False,
                            http=guarded_protocol(limits, service.metrics, load_shedding(service), admission(service)), ws="none",
                            timeout_keep_alive=settings.keep_alive_s)  # type: ignore[arg-type]  # uvicorn takes float seconds
    server = _drain_server_class(uvicorn)(config)
    _tune_gc()
    _tune_allocator()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        service.close()
    if not server.started:
        print("minddata serve: error: the server did not start (see the message above)", file=err)
        return 1
    print("minddata serve: stopped (drained)", file=out, flush=True)
    return 0


def _log_to(stream: Any) -> None:
    """The service's own log (``minddata.serve``: a 422's full reason, a model failure) to ``stream``,
    one line each, at warning level and above (uvicorn configures only its own loggers)."""
    import logging

    logger = logging.getLogger("minddata.serve")
    if not logger.handlers:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter("%(levelname)s:     minddata.serve: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False


# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def _tune_allocator() -> None:
    """Keep answer-sized arrays in the allocator's free lists (glibc; this process only serves).

    Each answer is a fresh array (2 MB for a 3x416x416 float32 tensor), freed once it is written.
    With glibc's default, self-adjusting thresholds, freed memory at the top of a heap went back to
    the kernel (madvise) and the next answer's pages faulted in and were zeroed again: about 6% of
    the server's CPU under load (perf, yolo416). Fixed thresholds keep it: allocations up to 32 MiB
    come from the heaps, and a heap keeps up to 64 MiB of free memory at its top. Nothing happens
    where the C library has no ``mallopt`` (musl, macOS).
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 64 << 20)


def _tune_gc() -> None:
    """Keep the collector's full passes off the request path (this process only serves).

    Every request leaves cyclic garbage (the server's per-request objects), and with a few thousand
    open connections a full collection walked them all, holding the GIL for 35-60 ms every two
    seconds under load: the slowest answers, refusals included, waited for it. Objects alive at start
    (imports, the compiled pipeline) are frozen out of every pass, and a full pass runs after 100
    middle-generation passes instead of 10; the young generations, whose passes are short, are
    collected as usual.
    """
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)
