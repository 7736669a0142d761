"""The HTTP application: Open Inference Protocol v2 routes, ``POST /v1/preprocess`` and ``/metrics``.

Handlers only move bytes: they check limits (413, 415), parse the request, await the batcher, and
encode the answer. Errors are JSON ``{"error": "..."}`` as the protocol specifies.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from minddata._version import __version__
from minddata.serve.batcher import Rejected
from minddata.serve.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from minddata.serve.protocol import HEADER_LENGTH, ProtocolError, encode_infer_response, parse_infer_request

__all__ = ["create_app"]

_IMAGE_TYPES = ("image/jpeg", "image/png")
_INFER_TYPES = ("", "application/json", "application/octet-stream")
_ERROR = {"content": {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}},
                                                          "required": ["error"]}}}}


def npy_bytes(array: np.ndarray) -> bytes:
    """``array`` as the bytes ``np.save`` writes (format 1.0), with its data copied once: saving into a
    BytesIO and reading it back copied a 2 MB tensor two or three times on the event loop."""
    array = array if array.flags.c_contiguous else np.array(array, order="C")  # keeps a 0-d array 0-d
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    data = memoryview(array.reshape(-1)).cast("B") if array.size else b""
    return b"".join((header.getvalue(), data))


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _is_image(data: bytes) -> bool:
    return data[:3] == b"\xff\xd8\xff" or data[:8] == b"\x89PNG\r\n\x1a\n"


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise Rejected(413, f"the body is {int(declared)} bytes, over the limit of {limit} (--max-body-mb)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Rejected(413, f"the body is over the limit of {limit} bytes (--max-body-mb)")
        chunks.append(chunk)
    return b"".join(chunks)


async def _until_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _await_result(service: Any, request: Request, images: list[bytes]) -> dict[str, np.ndarray] | None:
    """The batcher's answer, or None when the client left first (its work is then cancelled)."""
    work = asyncio.ensure_future(service.batcher.submit(images, service.settings.timeout_s))
    gone = asyncio.ensure_future(_until_disconnect(request))
    try:
        await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not work.done():
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        return None
    return work.result()


def _check_images(images: list[bytes]) -> None:
    for i, data in enumerate(images):
        if not _is_image(data):
            where = f"image {i} of {len(images)}: " if len(images) > 1 else ""
            raise Rejected(422, f"{where}not a JPEG or PNG (first bytes {data[:8].hex(' ') or 'none'}, "
                                f"{len(data)} bytes); send a JPEG or PNG file")


_INFER_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": {
            "type": "object",
            "required": ["inputs"],
            "properties": {
                "id": {"type": "string"},
                "parameters": {"type": "object"},
                "inputs": {"type": "array", "items": {
                    "type": "object",
                    "required": ["name", "shape", "datatype"],
                    "properties": {
                        "name": {"type": "string"},
                        "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                        "datatype": {"type": "string", "enum": ["BYTES", "UINT8"]},
                        "parameters": {"type": "object"},
                        "data": {"type": "array"},
                    },
                }},
                "outputs": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "parameters": {"type": "object"}}}},
            },
        }},
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
    },
}

_IMAGE_BODY = {"required": True, "content": {t: {"schema": {"type": "string", "format": "binary"}} for t in _IMAGE_TYPES}}


class _CountRequests:
    """Pure ASGI middleware (no body buffering, disconnects pass through): requests by route template
    and status, and the total latency."""

    def __init__(self, app: Any, metrics: Any):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.perf_counter(), 500

        async def send_and_note(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.requests.labels(route, str(status)).inc()
            self.metrics.latency.labels("total").observe(time.perf_counter() - start)


class _ShedLoad:
    """Pure ASGI middleware: while the queue is full, refuse new inference requests with 503 before
    their body is read or routed, so that an overloaded server spends almost nothing per refusal and
    answers it at once. Requests that get past it still meet the batcher's own exact check."""

    def __init__(self, app: Any, service: Any, metrics: Any):
        self.app = app
        self.service = service  # its batcher exists once the app's lifespan has started it
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path = scope["path"]
            route = "/v1/preprocess" if path == "/v1/preprocess" else (
                "/v2/models/{model_name}/infer" if path.startswith("/v2/models/") and path.endswith("/infer") else None)
            batcher = self.service.batcher
            refused = batcher.refusal() if route is not None and batcher is not None else None
            if refused is not None:
                self.metrics.requests.labels(route, "503").inc()
                body = json.dumps({"error": refused.message}).encode()
                # The connection stays open: the server discards the unread body, and a client that
                # retries reuses it instead of paying a TCP handshake per refusal on both sides.
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                headers += [(k.lower().encode(), v.encode()) for k, v in (refused.headers or {}).items()]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def create_app(service: Any) -> FastAPI:
    """The ASGI app for a :class:`~minddata.serve.server.Service` (started and stopped by the app's
    lifespan)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        service.start()
        try:
            yield
        finally:
            await service.drain()

    app = FastAPI(title="minddata serve", version=__version__, lifespan=lifespan,
                  description="Inference preprocessing on the Open Inference Protocol (v2), with dynamic batching.")
    settings, metrics = service.settings, service.metrics
    name = settings.name
    limit = settings.max_body_bytes

    app.add_middleware(_CountRequests, metrics=metrics)
    # Added last, so it runs first: a refusal under overload skips routing and the body entirely.
    app.add_middleware(_ShedLoad, service=service, metrics=metrics)

    @app.get("/v2/health/live", summary="Is the server process up", responses={200: {}})
    async def live() -> dict:
        return {"live": True}

    @app.get("/v2/health/ready", summary="Is the server ready for inference", responses={503: _ERROR})
    async def ready() -> Any:
        if not service.ready:
            return _error(503, "not ready: starting or shutting down", {"Retry-After": "1"})
        return {"ready": True}

    @app.get("/v2", summary="Server metadata")
    async def server_metadata() -> dict:
        return {"name": "minddata", "version": __version__, "extensions": ["binary_tensor_data"]}

    def _model_or_404(model_name: str, model_version: str | None = None) -> JSONResponse | None:
        if model_name != name:
            return _error(404, f"unknown model {model_name!r}; this server serves {name!r}")
        if model_version not in (None, "", "1"):
            return _error(404, f"model {name!r} has only version '1'. Found: {model_version!r}")
        return None

    @app.get("/v2/models/{model_name}", summary="Model metadata", responses={404: _ERROR})
    @app.get("/v2/models/{model_name}/versions/{model_version}", summary="Model metadata", responses={404: _ERROR})
    async def model_metadata(model_name: str, model_version: str | None = None) -> Any:
        return _model_or_404(model_name, model_version) or service.metadata()

    @app.get("/v2/models/{model_name}/ready", summary="Is the model ready", responses={404: _ERROR, 503: _ERROR})
    @app.get("/v2/models/{model_name}/versions/{model_version}/ready", summary="Is the model ready",
             responses={404: _ERROR, 503: _ERROR})
    async def model_ready(model_name: str, model_version: str | None = None) -> Any:
        missing = _model_or_404(model_name, model_version)
        if missing is not None:
            return missing
        if not service.ready:
            return _error(503, "not ready: starting or shutting down", {"Retry-After": "1"})
        return {"name": name, "ready": True}

    infer_responses = {code: _ERROR for code in (400, 404, 413, 415, 422, 503, 504)}

    infer_doc = {"summary": "Inference (JSON tensors or binary tensor data)", "responses": infer_responses,
                 "openapi_extra": {"requestBody": _INFER_BODY}}

    @app.post("/v2/models/{model_name}/infer", **infer_doc)
    @app.post("/v2/models/{model_name}/versions/{model_version}/infer", **infer_doc)
    async def infer(model_name: str, request: Request, model_version: str | None = None) -> Any:
        missing = _model_or_404(model_name, model_version)
        if missing is not None:
            return missing
        try:
            if _media_type(request) not in _INFER_TYPES:
                raise Rejected(415, f"infer takes application/json (with binary tensors after it when "
                                    f"{HEADER_LENGTH} is set). Found: {_media_type(request)}")
            body = await _read_body(request, limit)
            try:
                parsed = parse_infer_request(body, request.headers.get(HEADER_LENGTH), service.input_name)
            except ProtocolError as exc:
                raise Rejected(400, str(exc)) from None
            unknown = [o for o in parsed.outputs or [] if o not in service.output_names]
            if unknown:
                raise Rejected(400, f"unknown output(s) {unknown}; this model has {service.output_names}")
            _check_images(parsed.images)
            result = await _await_result(service, request, parsed.images)
        except Rejected as exc:
            return _error(exc.status, exc.message, exc.headers)
        if result is None:
            return Response(status_code=499)  # the client is gone; nobody reads this
        chosen = {k: v for k, v in result.items() if parsed.outputs is None or k in parsed.outputs}
        content, header_length = encode_infer_response(name, parsed, chosen)
        if header_length is None:
            return Response(content, media_type="application/json")
        return Response(content, media_type="application/octet-stream", headers={HEADER_LENGTH: str(header_length)})

    @app.post("/v1/preprocess", summary="One raw image in, its tensor out (.npy, or JSON with Accept: "
              "application/json)", openapi_extra={"requestBody": _IMAGE_BODY},
              responses={200: {"content": {"application/x-npy": {}, "application/x-npz": {}, "application/json": {}}},
                         **{code: _ERROR for code in (413, 415, 422, 503, 504)}})
    async def preprocess(request: Request) -> Any:
        try:
            if _media_type(request) not in _IMAGE_TYPES:
                raise Rejected(415, f"send the image as the body with Content-Type image/jpeg or image/png. "
                                    f"Found: {_media_type(request) or 'none'}")
            body = await _read_body(request, limit)
            _check_images([body])
            result = await _await_result(service, request, [body])
        except Rejected as exc:
            return _error(exc.status, exc.message, exc.headers)
        if result is None:
            return Response(status_code=499)
        tensors = {k: np.asarray(v[0]) for k, v in result.items()}
        if "application/json" in request.headers.get("accept", ""):
            return Response(json.dumps({"outputs": [
                {"name": k, "shape": list(v.shape), "dtype": v.dtype.name, "data": v.ravel().tolist()}
                for k, v in tensors.items()]}, separators=(",", ":")), media_type="application/json")
        if len(tensors) == 1:
            return Response(npy_bytes(next(iter(tensors.values()))), media_type="application/x-npy")
        buf = io.BytesIO()
        np.savez(buf, **tensors)
        return Response(buf.getvalue(), media_type="application/x-npz")

    @app.get("/metrics", summary="Prometheus metrics", responses={200: {"content": {"text/plain": {}}}})
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=METRICS_CONTENT_TYPE)

    return app
