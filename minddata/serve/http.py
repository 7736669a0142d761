"""The service's HTTP/1.1 connections: uvicorn's httptools protocol with limits a public server needs
and uvicorn lacks.

* the request line and headers together at most ``max_header_bytes`` (431), counted as they arrive,
  so that a client sending an endless header line is cut off at the cap instead of being buffered;
* the headers must arrive within ``header_timeout_s`` of the connection's opening or the request's
  first byte (408), which also closes connections that never send anything;
* the body must arrive within ``body_timeout_s`` of the headers (408);
* at most ``max_connections`` connections at once; the next ones get 503 with ``Retry-After`` and are
  closed;
* uvicorn's own plain-text 400 for a request it can't parse is answered as JSON ``{"error": ...}``;
* a request the service sheds (an inference request while its queue is full) is answered 503 as soon
  as its headers are parsed, by the connection itself: no app task, no routing, and its body, if
  any, is read and dropped so the connection stays open for the client's retry; a request let in
  takes its place in the queue (``admit``) as soon as its body is in, so the queue's places count
  the requests on their way to it.

An idle kept-alive connection is closed after uvicorn's ``timeout_keep_alive``. These answers are
written by the connection itself (the app never sees the request) and counted in
``minddata_serve_connections_closed_total`` by reason.
"""

from __future__ import annotations

import asyncio
import http
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["ARRIVED_KEY", "ConnectionLimits", "PLACE_KEY", "REFUSED_KEY", "guarded_protocol", "raw_response"]

# Where a connection that answers a request itself (a body deadline) tells the app, in the ASGI scope:
# the app then counts the request with that status instead of "the client left" (499).
REFUSED_KEY = "minddata.refused"
# When the request's first bytes were read off the connection (``time.perf_counter()``), in the ASGI
# scope: the server's own measure of a request's time, from its arrival rather than from the moment
# the app's task got to run (under overload the event loop's lag lies between the two).
ARRIVED_KEY = "minddata.arrived"
# A request's place in the batcher's queue (``minddata.serve.batcher.Place``), in the ASGI scope: taken
# by ``admit`` once the body is in, given up at submit, at a refusal, or when the request ends; a
# request that never gets to run (pipelined behind one whose client left) gives it up here.
PLACE_KEY = "minddata.place"


@dataclass(frozen=True)
class ConnectionLimits:
    max_header_bytes: int = 32 << 10
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 4096


def raw_response(status: int, message: str, retry_after: int | None = None, *, headers: dict[str, str] | None = None,
                 close: bool = True) -> bytes:
    """A complete HTTP/1.1 answer with a JSON ``{"error": message}`` body, and ``headers``; it closes the
    connection unless ``close`` is False."""
    body = json.dumps({"error": message}).encode()
    phrase = http.HTTPStatus(status).phrase
    head = [f"HTTP/1.1 {status} {phrase}", "content-type: application/json", f"content-length: {len(body)}"]
    head += [f"{name.lower()}: {value}" for name, value in (headers or {}).items()]
    if close:
        head.append("connection: close")
    if retry_after is not None:
        head.append(f"retry-after: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


# A request's refusal decided from its scope alone (method and path): ``(route, refusal)``, where the
# refusal has ``status``, ``message`` and ``headers``; None lets the app run.
Shedding = Callable[[dict], "tuple[str, Any] | None"]
# Called with a request's scope once its whole body has been read off the connection.
Admission = Callable[[dict], None]


def guarded_protocol(limits: ConnectionLimits, metrics: Any, shedding: Shedding | None = None,
                     admit: Admission | None = None) -> type:
    """The protocol class to give ``uvicorn.Config(http=...)``; ``shedding`` (e.g.
    :func:`minddata.serve.app.load_shedding`) names the requests it answers itself, before the app;
    ``admit`` (:func:`minddata.serve.app.admission`) sees each request let in once its body is in."""

    class GuardedHttpToolsProtocol(_Guarded):
        pass

    GuardedHttpToolsProtocol.limits = limits
    GuardedHttpToolsProtocol.metrics = metrics
    GuardedHttpToolsProtocol.shedding = staticmethod(shedding) if shedding is not None else None
    GuardedHttpToolsProtocol.admit = staticmethod(admit) if admit is not None else None
    return GuardedHttpToolsProtocol


class _Guarded(HttpToolsProtocol):
    limits: ConnectionLimits = ConnectionLimits()
    metrics: Any = None
    shedding: Shedding | None = None
    admit: Admission | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # a server transport is a Transport, as uvicorn declares
        super().connection_made(transport)
        self._refused = False
        self._in_headers = True
        self._received_at = time.perf_counter()
        self._header_bytes = 0
        self._chunk = 0
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        if len(self.connections) > self.limits.max_connections:
            self._refuse(503, f"too many connections (the server takes {self.limits.max_connections} at once); "
                         "retry later", "too many connections", retry_after=1)
            return
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timers()
        # Requests pipelined behind the current one never start now: their places go back.
        for cycle, _ in self.pipeline:
            place = cycle.scope.pop(PLACE_KEY, None)  # type: ignore[misc]  # an extension key in the ASGI scope
            if place is not None:
                place.release()
        super().connection_lost(exc)

    # --- timers -----------------------------------------------------------------------------------

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._header_timeout)

    def _cancel_timers(self) -> None:
        for timer in (self._header_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self._in_headers and not self._refused:
            self._refuse(408, f"the request's headers did not arrive within {self.limits.header_timeout_s:g} s",
                         "header timeout")

    def _body_timeout(self) -> None:
        self._body_timer = None
        if self.cycle is not None and self.cycle.response_complete:
            # Answered already (e.g. 413 or 503 before the body): the rest of the body is not awaited.
            if self.metrics is not None:
                self.metrics.connections_closed.labels("body timeout").inc()
            self._refused = True
            self.transport.close()
            return
        if not self._refused:
            self._refuse(408, f"the request's body did not arrive within {self.limits.body_timeout_s:g} s",
                         "body timeout")

    # --- refusing ---------------------------------------------------------------------------------

    def _refuse(self, status: int, message: str, reason: str, retry_after: int | None = None) -> None:
        """Answer ``status`` and close, or, while an earlier request's answer is being written, close once
        it is (reading stops now)."""
        self._refused = True
        self._cancel_timers()
        if self.metrics is not None:
            self.metrics.connections_closed.labels(reason).inc()
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            cycle.keep_alive = False
            self.flow.pause_reading()
            return
        if cycle is not None and not cycle.response_complete:
            # The app is still reading this request: it sees the client leave, and counts `status`.
            cycle.scope[REFUSED_KEY] = status  # type: ignore[literal-required]  # an extension key in the ASGI scope
            cycle.disconnected = True
            cycle.message_event.set()
        if not self.transport.is_closing():
            self.transport.write(raw_response(status, message, retry_after))
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        if not self._refused:
            self._refuse(400, f"invalid HTTP request: {msg.rstrip('.')}", "invalid HTTP")

    # --- parsing ----------------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        self._received_at = time.perf_counter()
        self._unset_keepalive_if_required()
        self._chunk = len(data)
        if self._in_headers:
            self._header_bytes += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except httptools.HttpParserError:
            if not self._refused:
                self.send_400_response("the request is malformed")
            return
        if self._in_headers and not self._refused and self._header_bytes > self.limits.max_header_bytes:
            self._too_large()

    def _too_large(self) -> None:
        self._refuse(431, f"the request's headers are over the limit of {self.limits.max_header_bytes} bytes "
                     "(--max-header-kb)", "headers too large")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope[ARRIVED_KEY] = self._received_at  # type: ignore[literal-required]  # an extension key in the ASGI scope
        self._in_headers = True
        # The chunk being parsed may hold the end of an earlier request too: counting all of it errs on
        # the side of the cap (it matters only to pipelined requests with headers near the cap).
        self._header_bytes = self._chunk
        self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self._in_headers = False
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        size = len(self.url) + sum(len(n) + len(v) + 4 for n, v in self.headers)
        if size > self.limits.max_header_bytes:
            self._too_large()
            raise _Stop  # httptools turns it into a parser error, which is then ignored
        super().on_headers_complete()
        self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_timeout)

    # --- shedding ---------------------------------------------------------------------------------

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        # Called by uvicorn once a request's headers are parsed (or, for a pipelined request, once the
        # answer before it is complete): the last moment before an app task exists.
        found = self.shedding(cycle.scope) if self.shedding is not None else None
        if found is None:
            super()._start_asgi_task(cycle, app)
            return
        route, refused = found
        self._answer_now(cycle, refused.status, refused.message, refused.headers)
        if self.metrics is not None:
            self.metrics.requests.labels(route, str(refused.status)).inc()
            self.metrics.refusal.observe(time.perf_counter() - cycle.scope.get(ARRIVED_KEY, time.perf_counter()))

    def _answer_now(self, cycle: Any, status: int, message: str, headers: dict[str, str]) -> None:
        """Complete ``cycle`` with a JSON error answer written here, keeping the connection open where
        the request allows it (uvicorn then drops the rest of its body as it arrives)."""
        self.transport.write(raw_response(status, message, headers=headers, close=not cycle.keep_alive))
        cycle.response_started = cycle.response_complete = True
        cycle.message_event.set()
        if not cycle.keep_alive:
            self.transport.close()
        cycle.on_response()

    def on_message_complete(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        if self.admit is not None and not self._refused and not self.cycle.response_complete:
            self.admit(self.cycle.scope)  # type: ignore[arg-type]  # an ASGI scope is a dict; before the app can see the body's end
        super().on_message_complete()


class _Stop(Exception):
    """Stops the parser after a refusal from inside one of its callbacks."""
