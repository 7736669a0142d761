"""The HTTP application: Open Inference Protocol v2 routes, ``POST /v1/preprocess`` and ``/metrics``.

Handlers only move bytes: they check limits (413, 415), parse the request, await the batcher, and
encode the answer. Every error, 404 and 405 included, is JSON ``{"error": "..."}`` as the protocol
specifies, with a short reason for the client; details meant for the operator go to the server's log.

Nothing slow runs on the event loop: bodies over 64 KB are parsed, and answers over 64 KB encoded,
on a small thread pool, within the request's deadline (``--timeout-s`` from the handler's start);
JSON numbers are written slice by slice so that the loop's thread gets the GIL between slices.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import math
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from minddata._version import __version__
from minddata.serve.batcher import Rejected
from minddata.serve.http import ARRIVED_KEY, PLACE_KEY, REFUSED_KEY
from minddata.serve.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from minddata.serve.protocol import (
    HEADER_LENGTH,
    DeadlinePassed,
    ProtocolError,
    datatype_dtype,
    encode_infer_response_pieces,
    header_length_value,
    json_chars_per_element,
    json_number_bytes,
    parse_infer_request,
    whole_number,
)

log = logging.getLogger("minddata.serve")

# JSON to parse or write larger than this goes to the codec threads.
OFF_LOOP_BYTES = 64 << 10
# Binary tensor data is only sliced and copied (no per-byte Python), 20-30x cheaper a byte than JSON:
# a request's binary part goes to the codec threads only past this. Handing a request to a thread
# and back costs the loop more than copying a JPEG.
OFF_LOOP_BINARY_BYTES = 1 << 20

__all__ = ["create_app"]

_IMAGE_TYPES = ("image/jpeg", "image/png")
_INFER_TYPES = ("", "application/json", "application/octet-stream")
_ERROR = {"content": {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}},
                                                          "required": ["error"]}}}}


def npy_bytes(array: np.ndarray) -> bytes:
    """``array`` as the bytes ``np.save`` writes (format 1.0), with its data copied once: saving into a
    BytesIO and reading it back copied a 2 MB tensor two or three times on the event loop."""
    array = array if array.flags.c_contiguous else np.array(array, order="C")  # keeps a 0-d array 0-d
    data = array.reshape(-1).data.cast("B") if array.size else b""
    return b"".join((npy_header(array), data))


def npy_header(array: np.ndarray) -> bytes:
    """The header ``np.save`` writes (format 1.0) before a C-contiguous ``array``'s data."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(array))
    return header.getvalue()


class PiecesResponse(Response):
    """An answer sent as its pieces, one after the other (a header, then arrays' own memory): no
    answer-sized bytes object is made. Joining them allocated a fresh 2 MB object for every 416x416
    answer, whose pages the kernel zeroed and unmapped again each time (with the copy, about 14% of
    the server's CPU under load here). The pieces (the tensors' own memory) stay referenced until
    they are written."""

    def __init__(self, pieces: list[bytes | memoryview], media_type: str, headers: dict[str, str] | None = None):
        self.pieces = pieces
        super().__init__(None, media_type=media_type, headers=headers)
        self.headers["content-length"] = str(sum(len(piece) for piece in pieces))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        pieces = [] if scope.get("method") == "HEAD" else [p for p in self.pieces if len(p)]
        for i, piece in enumerate(pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": i < len(pieces) - 1})
        if not pieces:
            await send({"type": "http.response.body", "body": b""})


class NpyResponse(PiecesResponse):
    """An ``.npy`` answer: its header, then the array's own memory (see :class:`PiecesResponse`)."""

    media_type = "application/x-npy"

    def __init__(self, array: np.ndarray):
        self.array = array if array.flags.c_contiguous else np.array(array, order="C")  # keeps 0-d 0-d
        self.header = npy_header(self.array)
        data = self.array.reshape(-1).data.cast("B") if self.array.size else b""
        super().__init__([self.header, data], self.media_type)


def npz_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    """``tensors`` as the ``.npz`` archive ``np.savez`` writes, each as ``<name>.npy``. Written member by
    member rather than through ``np.savez(buf, **tensors)``, which would take an output named
    ``allow_pickle`` as its own flag instead of a tensor."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in tensors.items():
            archive.writestr(f"{name}.npy", npy_bytes(np.asarray(array)))
    return buf.getvalue()


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _is_image(data: bytes) -> bool:
    return data[:3] == b"\xff\xd8\xff" or data[:8] == b"\x89PNG\r\n\x1a\n"


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


class BodyBudget:
    """The bytes of request bodies the server holds at once, in all (``--max-body-memory-mb``): a body
    that would go over it gets 503 with Retry-After. Requests hold their share until answered."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0

    def hold(self) -> _Held:
        return _Held(self)


class _Held:
    def __init__(self, budget: BodyBudget):
        self.budget = budget
        self.size = 0

    def take(self, size: int) -> None:
        if self.budget.used + size > self.budget.limit:
            raise Rejected(503, "the server holds too many request bodies at once (--max-body-memory-mb); "
                           "retry later", {"Retry-After": "1", "Connection": "close"})
        self.budget.used += size
        self.size += size

    def release(self) -> None:
        self.budget.used -= self.size
        self.size = 0


async def _read_body(request: Request, limit: int, held: _Held, what: str = "the body",
                     option: str = "--max-body-mb") -> bytes:
    declared = whole_number(request.headers.get("content-length"))
    if declared is not None and declared > limit:
        raise Rejected(413, f"{what} is {declared} bytes, over the limit of {limit} ({option})",
                       {"Connection": "close"})
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Rejected(413, f"{what} is over the limit of {limit} bytes ({option})", {"Connection": "close"})
        held.take(len(chunk))
        chunks.append(chunk)
    return b"".join(chunks)


async def _until_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _await_result(service: Any, request: Request, images: list[bytes],
                        deadline: float) -> dict[str, np.ndarray] | None:
    """The batcher's answer, or None when the client left first (its work is then cancelled)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise _deadline_passed(service)
    work = asyncio.ensure_future(service.batcher.submit(images, remaining, request.scope.get(PLACE_KEY)))
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


def _deadline_passed(service: Any) -> Rejected:
    return Rejected(504, f"no result within the request deadline of {service.settings.timeout_s:g} s (--timeout-s)")


_BASE64_OF = {b"/9j/": "a JPEG", b"iVBORw0KGgo": "a PNG"}


def _check_images(images: list[bytes], fix: str = "send a JPEG or PNG file") -> None:
    for i, data in enumerate(images):
        if not _is_image(data):
            where = f"image {i} of {len(images)}: " if len(images) > 1 else ""
            encoded = next((kind for prefix, kind in _BASE64_OF.items() if data.startswith(prefix)), None)
            if encoded is not None:
                raise Rejected(422, f"{where}not a JPEG or PNG: these bytes are the base64 text of {encoded}; {fix}")
            raise Rejected(422, f"{where}not a JPEG or PNG (first bytes {data[:8].hex(' ') or 'none'}, "
                                f"{len(data)} bytes); send a JPEG or PNG file")


_BASE64_FIX_V2 = ('add "parameters": {"content_type": "base64"} to the input, or send the image as binary '
                  "(the binary tensor data extension)")


_JSON_FIX_V2 = 'ask for binary outputs ("parameters": {"binary_data_output": true}) or send fewer images per request'
_JSON_FIX_V1 = "drop Accept: application/json to get the tensors as .npy"


def _json_within_limit(estimate: int, limit: int, fix: str) -> int:
    """``estimate`` (the JSON answer's size in bytes), or 413 naming ``fix`` when it is over ``limit``."""
    if estimate > limit:
        raise Rejected(413, f"the answer would be about {estimate / (1 << 20):.0f} MB of JSON, over the limit of "
                            f"{limit / (1 << 20):g} MB (--max-json-answer-mb); {fix}")
    return estimate


def _json_estimate(tensors: dict[str, np.ndarray]) -> int:
    return sum(int(v.size) * json_chars_per_element(v.dtype) for v in tensors.values())


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


_INFER_ROUTES = ("/v1/preprocess", "/v2/models/{model_name}/infer")
# Every inference route template (the versioned v2 form is counted under its unversioned one above).
_INFER_PATHS = (*_INFER_ROUTES, "/v2/models/{model_name}/versions/{model_version}/infer")


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
            place = scope.get(PLACE_KEY)
            if place is not None:  # it ended before it was submitted (a 4xx, its client left, a bug)
                place.release()
            route = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.requests.labels(route, str(status)).inc()
            now = time.perf_counter()
            self.metrics.latency.labels("total").observe(now - start)
            if status == 503 and route in _INFER_ROUTES:
                self.metrics.refusal.observe(now - scope.get(ARRIVED_KEY, start))


def load_shedding(service: Any) -> Callable[[dict], tuple[str, Rejected] | None]:
    """The refusal a request gets before its body is read: ``(route, Rejected)`` for an inference
    request while the queue is full or the service is stopping, else None. Used by the connection
    (:func:`minddata.serve.http.guarded_protocol`, which answers without running the app) and by the
    app's own middleware (for servers that run the app on another protocol)."""

    def refusal(scope: dict) -> tuple[str, Rejected] | None:
        route = _inference_route(scope)
        batcher = service.batcher  # it exists once the app's lifespan has started it
        if route is None or batcher is None:
            return None
        place = scope.get(PLACE_KEY)
        refused = batcher.refusal(place=place)
        if refused is None:
            return None
        if place is not None:
            place.release()
        return route, refused

    return refusal


def admission(service: Any) -> Callable[[dict], None]:
    """What the connection does once an inference request's body is in: the request takes a place in
    the batcher's queue (``scope[PLACE_KEY]``), so that the requests after it are refused at the door
    while the places are taken, not after their bodies were read (see ``Batcher.hold``)."""

    def admit(scope: dict) -> None:
        batcher = service.batcher
        if batcher is not None and _inference_route(scope) is not None and PLACE_KEY not in scope:
            scope[PLACE_KEY] = batcher.hold()

    return admit


def _inference_route(scope: dict) -> str | None:
    """The inference route template a POST goes to, or None."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path = scope["path"]
    v1, v2 = _INFER_ROUTES
    return v1 if path == v1 else v2 if path.startswith("/v2/models/") and path.endswith("/infer") else None


class _ShedLoad:
    """Pure ASGI middleware: while the queue is full, refuse new inference requests with 503 before
    their body is read or routed, so that an overloaded server spends almost nothing per refusal and
    answers it at once. Requests that get past it still meet the batcher's own exact check. (The
    service's own connections refuse such requests before the app runs; this covers other servers.)"""

    def __init__(self, app: Any, service: Any, metrics: Any):
        self.app = app
        self.refusal = load_shedding(service)
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        found = self.refusal(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        route, refused = found
        self.metrics.requests.labels(route, str(refused.status)).inc()
        body = json.dumps({"error": refused.message}).encode()
        # The connection stays open: the server discards the unread body, and a client that
        # retries reuses it instead of paying a TCP handshake per refusal on both sides.
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        headers += [(k.lower().encode(), v.encode()) for k, v in (refused.headers or {}).items()]
        await send({"type": "http.response.start", "status": refused.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        self.metrics.refusal.observe(time.perf_counter() - scope.get(ARRIVED_KEY, time.perf_counter()))


class _DirectRoute:
    """Pure ASGI middleware: a POST to one of ``paths`` (route templates) goes straight to its
    route's endpoint, past FastAPI's routing, dependency solving and exception middlewares: they were
    about a fifth of the event loop thread's CPU per image at concurrency 32, and that thread is the
    service's own cost. It sits inside the load shedding and the request metrics, as the router does.
    The endpoints are the routes' own (found in ``routes`` at the first request), called with the
    request and the path's parameters; they answer their own errors, and anything they raise is
    logged and answered 500, as the app's handler does. Other methods, other paths and the OpenAPI
    description go through FastAPI as before."""

    def __init__(self, app: Any, paths: tuple[str, ...], routes: list[Any]):
        self.app = app
        self.paths = paths
        self.routes = routes
        self.direct: list[Any] | None = None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        route = self._route(scope) if scope["type"] == "http" and scope["method"] == "POST" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        route, params = route
        scope["route"] = route  # what the request metrics label it with, as routing would
        try:
            response = await route.endpoint(request=Request(scope, receive), **params)
        except Exception:
            log.exception("%s failed", route.path)
            response = _error(500, "internal server error")
        await response(scope, receive, send)

    def _route(self, scope: dict) -> tuple[Any, dict[str, str]] | None:
        if self.direct is None:
            self.direct = [r for r in self.routes if getattr(r, "path", None) in self.paths and "POST" in r.methods]
        for route in self.direct:
            match, child = route.matches(scope)  # the router's own test: root path, converted parameters
            if match is Match.FULL:
                return route, child["path_params"]
        return None


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
            codec.shutdown(wait=True)

    app = FastAPI(title="minddata serve", version=__version__, lifespan=lifespan,
                  description="Inference preprocessing on the Open Inference Protocol (v2), with dynamic batching.")
    settings, metrics = service.settings, service.metrics
    name = settings.name
    limit = settings.max_body_bytes
    json_limit = min(settings.max_json_bytes, limit)
    answer_limit = settings.max_json_answer_bytes
    budget = BodyBudget(settings.max_body_memory_bytes)
    codec = ThreadPoolExecutor(2, thread_name_prefix="minddata-serve-codec")
    app.state.codec = codec

    async def off_loop(deadline: float, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on a codec thread, within the request's deadline (504 past it)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _deadline_passed(service)
        try:
            return await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(codec, fn, *args), remaining)
        except (TimeoutError, DeadlinePassed):
            raise _deadline_passed(service) from None

    async def maybe_off_loop(size: int, deadline: float, fn: Callable[..., Any], *args: Any) -> Any:
        if size <= OFF_LOOP_BYTES:
            try:
                return fn(*args)
            except DeadlinePassed:
                raise _deadline_passed(service) from None
        return await off_loop(deadline, fn, *args)

    def client_left(request: Request) -> Response:
        """The client closed the connection (or the connection's own body deadline closed it): 499,
        or the status the connection answered with, counted without a traceback."""
        return Response(status_code=request.scope.get(REFUSED_KEY, 499))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        headers = dict(exc.headers or {})
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return _error(400, f"the request is invalid: {exc.errors()[:1]}"[:300])

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        # A bug of the server's: the traceback is logged by the server stack; the client gets JSON.
        return _error(500, "internal server error")

    # Middleware added first runs last: the direct route runs after the shedding and the metrics.
    app.add_middleware(_DirectRoute, paths=_INFER_PATHS, routes=app.routes)
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

    infer_doc: dict[str, Any] = {"summary": "Inference (JSON tensors or binary tensor data)",
                                 "responses": infer_responses, "openapi_extra": {"requestBody": _INFER_BODY}}

    def json_answer_estimate(images: int, outputs: list[str] | None) -> int:
        """An upper bound of the JSON answer's size from the outputs' declared shapes (0 when a
        dimension other than the batch's is dynamic: then it is checked on the result)."""
        total = 0
        for info in service.outputs:
            if outputs is not None and info.name not in outputs:
                continue
            dims = info.shape[1:]
            dtype = datatype_dtype(info.datatype)
            if dtype is None or any(d < 0 for d in dims):
                return 0
            total += images * math.prod(dims) * json_chars_per_element(dtype)
        return total

    @app.post("/v2/models/{model_name}/infer", **infer_doc)
    @app.post("/v2/models/{model_name}/versions/{model_version}/infer", **infer_doc)
    async def infer(model_name: str, request: Request, model_version: str | None = None) -> Any:
        missing = _model_or_404(model_name, model_version)
        if missing is not None:
            return missing
        deadline = time.monotonic() + settings.timeout_s
        held = budget.hold()
        try:
            if _media_type(request) not in _INFER_TYPES:
                raise Rejected(415, f"infer takes application/json (with binary tensors after it when "
                                    f"{HEADER_LENGTH} is set). Found: {_media_type(request)[:80]}")
            header_length = request.headers.get(HEADER_LENGTH)
            if header_length is None:
                body = await _read_body(request, json_limit, held, "the JSON body", "--max-json-mb")
            else:
                try:
                    header_size = header_length_value(header_length)
                except ProtocolError as exc:
                    raise Rejected(400, str(exc)) from None
                if header_size > json_limit:
                    raise Rejected(413, f"the JSON header is {header_size} bytes, over the limit of {json_limit} "
                                        "(--max-json-mb)", {"Connection": "close"})
                body = await _read_body(request, limit, held)
            json_bytes = len(body) if header_length is None else header_size
            binary_bytes = len(body) - json_bytes
            parse_size = json_bytes if binary_bytes <= OFF_LOOP_BINARY_BYTES else len(body)
            try:
                parsed = await maybe_off_loop(parse_size, deadline, parse_infer_request, body, header_length,
                                              service.input_name, settings.max_queue)
            except ProtocolError as exc:
                raise Rejected(exc.status, str(exc)) from None
            unknown = [o for o in parsed.outputs or [] if o not in service.output_names]
            if unknown:
                raise Rejected(400, f"unknown output(s) {unknown}"[:200] + f"; this model has {service.output_names}")
            _check_images(parsed.images, _BASE64_FIX_V2)
            json_outputs = [n for n in (parsed.outputs or service.output_names)
                            if not parsed.binary_outputs.get(n, parsed.binary_default)]
            _json_within_limit(json_answer_estimate(len(parsed.images), json_outputs), answer_limit, _JSON_FIX_V2)
            result = await _await_result(service, request, parsed.images, deadline)
            if result is None:
                return client_left(request)
            chosen = {k: v for k, v in result.items() if parsed.outputs is None or k in parsed.outputs}
            estimate = _json_within_limit(_json_estimate({k: v for k, v in chosen.items() if k in json_outputs}),
                                          answer_limit, _JSON_FIX_V2)
            # binary outputs are sent from the tensors' own memory: only the JSON is written here
            content, header_length_out = await maybe_off_loop(estimate, deadline, encode_infer_response_pieces, name,
                                                              parsed, chosen, "1", deadline)
        except Rejected as exc:
            return _error(exc.status, exc.message, exc.headers)
        except ClientDisconnect:
            return client_left(request)
        finally:
            held.release()
        if header_length_out is None:
            return Response(content[0], media_type="application/json")
        return PiecesResponse(content, "application/octet-stream", {HEADER_LENGTH: str(header_length_out)})

    def encode_preprocessed(tensors: dict[str, np.ndarray], as_json: bool, deadline: float) -> tuple[bytes, str]:
        if as_json:
            doc = [b'{"outputs":[']
            for i, (k, v) in enumerate(tensors.items()):
                doc += [b"," if i else b"", f'{{"name":{json.dumps(k)},"shape":{json.dumps(list(v.shape))},'
                        f'"dtype":{json.dumps(v.dtype.name)},"data":'.encode(), json_number_bytes(v, deadline), b"}"]
            doc.append(b"]}")
            return b"".join(doc), "application/json"  # joined once: a tensor's numbers are megabytes
        return npz_bytes(tensors), "application/x-npz"  # one tensor is sent as .npy, by NpyResponse

    @app.post("/v1/preprocess", summary="One raw image in, its tensor out (.npy, or JSON with Accept: "
              "application/json)", openapi_extra={"requestBody": _IMAGE_BODY},
              responses={200: {"content": {"application/x-npy": {}, "application/x-npz": {}, "application/json": {}}},
                         **{code: _ERROR for code in (413, 415, 422, 503, 504)}})
    async def preprocess(request: Request) -> Any:
        deadline = time.monotonic() + settings.timeout_s
        held = budget.hold()
        as_json = "application/json" in request.headers.get("accept", "")
        try:
            if _media_type(request) not in _IMAGE_TYPES:
                raise Rejected(415, f"send the image as the body with Content-Type image/jpeg or image/png. "
                                    f"Found: {_media_type(request)[:80] or 'none'}")
            body = await _read_body(request, limit, held)
            _check_images([body], "decode the base64 text and send the image's own bytes")
            if as_json:
                _json_within_limit(json_answer_estimate(1, None), answer_limit, _JSON_FIX_V1)
            result = await _await_result(service, request, [body], deadline)
            if result is None:
                return client_left(request)
            tensors = {k: np.asarray(v[0]) for k, v in result.items()}
            if not as_json and len(tensors) == 1:
                return NpyResponse(next(iter(tensors.values())))
            estimate = _json_within_limit(_json_estimate(tensors), answer_limit, _JSON_FIX_V1) if as_json else 0
            size = estimate + sum(v.nbytes for v in tensors.values())
            content, media_type = await maybe_off_loop(size, deadline, encode_preprocessed, tensors, as_json, deadline)
        except Rejected as exc:
            return _error(exc.status, exc.message, exc.headers)
        except ClientDisconnect:
            return client_left(request)
        finally:
            held.release()
        return Response(content, media_type=media_type)

    @app.get("/metrics", summary="Prometheus metrics", responses={200: {"content": {"text/plain": {}}}})
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=METRICS_CONTENT_TYPE)

    return app
