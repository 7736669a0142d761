"""A local S3 API server for benchmarks and tests, and a fault-injecting proxy in front of it, both on
127.0.0.1 only.

:class:`MotoServer` runs moto's S3 server in a child process on a free port. Its lifetime is bounded
twice over: :meth:`MotoServer.stop` (or leaving the ``with`` block) ends it, and the child ends itself
when the process that started it is gone or after ``max_lifetime_s``, so an interrupted benchmark
leaves no server behind.

:class:`FaultProxy` forwards each request to the server and, for a deterministic share of requests (a
seeded draw per request, in arrival order), answers instead with a fault:

- ``"503"``: ``503 Slow Down`` with S3's XML error body (``<Code>SlowDown</Code>``), as S3 throttles;
- ``"drop"``: closes the connection without an answer (a reset);
- ``"cut"``: forwards the request, sends the status line, the headers and half of the body, then closes
  (a connection lost in the middle of a read);
- a request whose target (path and query) contains one of ``deny``: ``403 AccessDenied``, always;
- ``"delay"``: waits ``delay_s`` before forwarding (latency; ``{"delay": 1.0}`` delays every request).

Every connection is answered with ``Connection: close``, so one request is one connection and a fault
never leaves half a response for the next request to read; with ``keep_alive=True`` (a latency proxy
for benchmarks) connections whose answer was forwarded whole stay open, to the client and upstream,
as they would to S3. ``counts`` records what was done.

Examples:
    >>> from minddata.bench.s3server import FaultProxy
    >>> proxy = FaultProxy(9, {"delay": 1.0}, delay_s=0.02).start()  # upstream port 9: nothing is sent yet
    >>> proxy.url.startswith("http://127.0.0.1:")
    True
    >>> proxy.stop()
"""

from __future__ import annotations

import http.client
import os
import random
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from typing import Any

__all__ = ["FaultProxy", "MotoServer", "end_child", "free_port"]

SLOWDOWN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message><RequestId>FAULT</RequestId></Error>"
)
DENIED_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
    b"<Message>Access Denied</Message><RequestId>FAULT</RequestId></Error>"
)
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
_STREAM_PIECE = 256 << 10  # what the proxy forwards at a time of a streamed answer


class FaultProxy:
    """``FaultProxy(upstream_port, rates={"503": 0.2, "drop": 0.1}, seed=0)``; ``url`` once started."""

    def __init__(self, upstream_port: int, rates: dict[str, float] | None = None, seed: int = 0, delay_s: float = 0.05,
                 keep_alive: bool = False):
        self.upstream_port = upstream_port
        self.keep_alive = keep_alive
        self.deny: tuple[str, ...] = ()  # request targets containing one of these: 403 AccessDenied
        self.rates = dict(rates or {})
        self.delay_s = delay_s
        self.counts: Counter[str] = Counter()
        # (method, target, Range header or "") of every request, in arrival order: what tests count.
        self.requests: list[tuple[str, str, str]] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = 10
            # An answer goes out in several writes (headers, then pieces of the body): without this,
            # Nagle's algorithm holds a short last segment for the client's delayed ACK (up to 40 ms).
            disable_nagle_algorithm = True

            def handle(self) -> None:
                proxy._handle(self)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            block_on_close = True
            # socketserver's backlog of 5 drops a burst of new connections (a chunk's 8 GETs at once on
            # a busy machine); a dropped SYN is sent again after a second, which tests would see.
            request_queue_size = 128

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread: threading.Thread | None = None

    def start(self) -> FaultProxy:
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def set_rates(self, rates: dict[str, float], seed: int = 0) -> None:
        with self._lock:
            self.rates = dict(rates)
            self._rng = random.Random(seed)
            self.counts.clear()
            self.requests.clear()

    def _draw(self) -> str:
        with self._lock:
            x = self._rng.random()
            self.counts["requests"] += 1
            for kind, rate in self.rates.items():
                if x < rate:
                    self.counts[kind] += 1
                    return kind
                x -= rate
            return "ok"

    def _handle(self, h: socketserver.StreamRequestHandler) -> None:
        # One upstream connection per client connection (it connects on its first request).
        upstream = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=30)
        try:
            while self._handle_one(h, upstream) and self.keep_alive:
                pass
        finally:
            upstream.close()

    def _handle_one(self, h: socketserver.StreamRequestHandler, conn: http.client.HTTPConnection) -> bool:
        """Answer one request; True when its answer was forwarded whole (the connection may go on)."""
        try:
            line = h.rfile.readline(65537)
        except OSError:  # a kept connection idle past the handler's timeout, or reset by the client
            return False
        if not line:
            return False
        method, target, _ = line.decode("latin-1").split(" ", 2)
        headers: list[tuple[str, str]] = []
        while True:
            raw = h.rfile.readline(65537)
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers.append((name.strip(), value.strip()))
        length = int(next((val for key, val in headers if key.lower() == "content-length"), "0") or 0)
        body = h.rfile.read(length) if length else b""
        ranged = next((val for key, val in headers if key.lower() == "range"), "")
        with self._lock:
            self.requests.append((method, target, ranged))
        if self.deny and any(d in urllib.parse.unquote(target) for d in self.deny):
            body = DENIED_BODY
            h.wfile.write(
                b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/xml\r\nConnection: close\r\n"
                + f"Content-Length: {len(body) if method != 'HEAD' else 0}\r\n\r\n".encode() + (body if method != "HEAD" else b"")
            )
            return False
        kind = self._draw()
        if kind == "drop":
            h.connection.shutdown(socket.SHUT_RDWR)
            return False
        if kind == "503":
            body = SLOWDOWN_BODY if method != "HEAD" else b""
            h.wfile.write(
                b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
            )
            return False
        if kind == "delay":
            time.sleep(self.delay_s)
        keep = self.keep_alive and kind != "cut"
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for key, val in headers:
                if key.lower() not in _HOP:
                    conn.putheader(key, val)
            conn.endheaders(body or None)
            resp = conn.getresponse()
            if kind != "cut" and method != "HEAD" and resp.length is not None:
                return self._stream(h, resp, keep)
            data = resp.read()
            out = [f"HTTP/1.1 {resp.status} {resp.reason}\r\n".encode()]
            for key, val in resp.getheaders():
                if key.lower() not in _HOP and (key.lower() != "content-length" or method == "HEAD"):
                    out.append(f"{key}: {val}\r\n".encode("latin-1"))
            length = f"Content-Length: {len(data)}\r\n" if method != "HEAD" else ""
            close = "" if keep else "Connection: close\r\n"
            out.append(f"{length}{close}\r\n".encode())
            h.wfile.write(b"".join(out))
            if kind == "cut" and method != "HEAD" and len(data) > 1:
                h.wfile.write(data[: len(data) // 2])
                h.wfile.flush()
                h.connection.shutdown(socket.SHUT_RDWR)
                return False
            if method != "HEAD":
                h.wfile.write(data)
            return keep
        except (BrokenPipeError, ConnectionResetError):
            return False  # the client stopped reading (a stream it closed early): nothing left to answer

    @staticmethod
    def _stream(h: socketserver.StreamRequestHandler, resp: http.client.HTTPResponse, keep: bool) -> bool:
        """Forward an answer as its body arrives, as a network link does: the client's first bytes do
        not wait for the server's last (a shard's GET is megabytes)."""
        out = [f"HTTP/1.1 {resp.status} {resp.reason}\r\n".encode()]
        for key, val in resp.getheaders():
            if key.lower() not in _HOP:
                out.append(f"{key}: {val}\r\n".encode("latin-1"))
        out.append(b"\r\n" if keep else b"Connection: close\r\n\r\n")
        h.wfile.write(b"".join(out))
        left = resp.length or 0
        while left:
            piece = resp.read(min(left, _STREAM_PIECE))
            if not piece:
                return False  # the server cut its answer short: so does the proxy
            h.wfile.write(piece)
            left -= len(piece)
        return keep


def end_child(proc: subprocess.Popen | None) -> None:
    """End a server's child process: asked first, killed if it has not ended within 10 s."""
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a server about to start)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The child: moto's threaded server, ended when its parent is gone or its time is up.
_SERVER_MAIN = """
import os, sys, threading, time
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
port, parent, deadline = int(sys.argv[1]), int(sys.argv[2]), time.monotonic() + float(sys.argv[3])
app = DomainDispatcherApplication(create_backend_app)
if sys.argv[4] == "1":
    # waitress keeps connections open (werkzeug's server closes each one after its answer and reads
    # on to drain it); its output buffers hold a shard's ranged read in memory, not in a temp file.
    from waitress import create_server
    server = create_server(app, host="127.0.0.1", port=port, threads=8, outbuf_overflow=64 << 20,
                           channel_timeout=60)
    serve, stop = server.run, server.close
else:
    from werkzeug.serving import make_server
    server = make_server("127.0.0.1", port, app, True, request_handler=MotoRequestHandler)
    serve, stop = server.serve_forever, server.shutdown
threading.Thread(target=serve, daemon=True).start()
try:
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.2)
finally:
    stop()
"""


class MotoServer:
    """moto's S3 API server in a child process on ``127.0.0.1:<free port>`` (``url``), for at most
    ``max_lifetime_s`` seconds; ``client()`` is a botocore client for it (dummy credentials).

    moto's own server (werkzeug's) closes the connection after every answer. ``keep_alive=True``
    serves moto's application through waitress (``pip install waitress``), which keeps connections
    open as S3 and its peers do, so a benchmark's requests do not each pay a new connection.

    Needs ``moto[server]`` (``pip install 'moto[server]'``). Use as a context manager, or call
    :meth:`start` and :meth:`stop`.
    """

    def __init__(self, max_lifetime_s: float = 3600.0, log_path: str | None = None, keep_alive: bool = False):
        self.max_lifetime_s = float(max_lifetime_s)
        self.keep_alive = keep_alive
        self.log_path = log_path
        self.port = 0
        self.url = ""
        self._proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 60.0) -> MotoServer:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, AWS_EC2_METADATA_DISABLED="true", AWS_ACCESS_KEY_ID="testing",
                   AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")
        out = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115 - closed below
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _SERVER_MAIN, str(self.port), str(os.getpid()), str(self.max_lifetime_s),
                 "1" if self.keep_alive else "0"],
                stdout=out, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL,
            )
        finally:
            if out is not subprocess.DEVNULL:
                out.close()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(self.url + "/moto-api/", timeout=1):
                    return self
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    code = self._proc.poll()
                    self.stop()
                    why = f"it exited with code {code}" if code is not None else f"no answer within {timeout_s:g} s"
                    log = f"; its output is in {self.log_path}" if self.log_path else ""
                    raise RuntimeError(
                        f"the local S3 server (moto) did not start on {self.url} ({why}{log}); is moto[server] "
                        "installed? pip install 'moto[server]'"
                    ) from None
                time.sleep(0.1)

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs (for measuring its CPU time), else None."""
        return self._proc.pid if self._proc is not None else None

    def client(self) -> Any:
        import botocore.session
        from botocore.config import Config

        return botocore.session.get_session().create_client(
            "s3", endpoint_url=self.url, region_name="us-east-1", aws_access_key_id="testing",
            aws_secret_access_key="testing", config=Config(s3={"addressing_style": "path"}),
        )

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        end_child(proc)

    def __enter__(self) -> MotoServer:
        return self.start() if self._proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
