"""A proxy in front of the object storage tests' S3 server that records, for every request, the process
that sent it: the process owning the client end of the connection, looked up while the request is
being served (not by timing), with the byte range asked for and the bytes of the body sent back. The
Ray tests tell the driver's reads from the Ray workers' by it.

Test modules take the fixture as they take tests/s3kit.py's (``recording_proxy =
request_log.recording_proxy``), next to its ``s3_server``.
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from typing import NamedTuple

import psutil
import pytest

from minddata.bench.s3server import FaultProxy


class Request(NamedTuple):
    pid: int | None  # the process that sent it
    method: str
    path: str  # /bucket/key
    query: str
    start: int  # the first byte asked for (0 without a Range header)
    end: int | None  # one past the last byte asked for (None: to the end)
    body_bytes: int  # the bytes of the body sent back
    status: int | None  # the answer's status code (None: no answer was written)


class _Tap:
    """A request stream whose first line was already read, keeping the header lines read after it."""

    def __init__(self, line: bytes, rest):
        self.line, self.rest = line, rest
        self.headers: list[bytes] = []

    def readline(self, limit: int = -1) -> bytes:
        if self.line is not None:
            line, self.line = self.line, None
            return line
        line = self.rest.readline(limit)
        self.headers.append(line)
        return line

    def read(self, size: int = -1) -> bytes:
        return self.rest.read(size)


class _Counter:
    """A response stream counting the body bytes written after the headers."""

    def __init__(self, out):
        self.out = out
        self.head = b""
        self.body_bytes = 0

    def write(self, data: bytes) -> int:
        if b"\r\n\r\n" not in self.head:
            self.head += data
            at = self.head.find(b"\r\n\r\n")
            if at >= 0:
                self.body_bytes += len(self.head) - at - 4
        else:
            self.body_bytes += len(data)
        return self.out.write(data)

    def flush(self) -> None:
        self.out.flush()

    @property
    def status(self) -> int | None:
        parts = self.head.split(b"\r\n", 1)[0].split(b" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


class RecordingProxy(FaultProxy):
    """A fault proxy (with no faults) that logs a :class:`Request` for every request."""

    def __init__(self, upstream_port: int):
        super().__init__(upstream_port)
        self.log: list[Request] = []
        self._log_lock = threading.Lock()

    def _sender(self, client_port: int) -> int | None:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.raddr and conn.laddr.port == client_port and conn.raddr.port == self.port:
                return conn.pid
        return None

    def _handle(self, h) -> None:
        line = h.rfile.readline(65537)
        if not line:
            return
        pid = self._sender(h.client_address[1])
        method, target, _ = line.decode("latin-1").split(" ", 2)
        rfile, wfile = h.rfile, h.wfile
        tap, counter = _Tap(line, rfile), _Counter(wfile)
        h.rfile, h.wfile = tap, counter
        try:
            super()._handle(h)
        finally:
            h.rfile, h.wfile = rfile, wfile  # the handler closes its own streams
            start, end = 0, None
            for raw in tap.headers:
                name, _, value = raw.decode("latin-1").partition(":")
                found = _RANGE.fullmatch(value.strip()) if name.strip().lower() == "range" else None
                if found:
                    start, end = int(found[1]), int(found[2]) + 1 if found[2] else None
            parts = urllib.parse.urlsplit(target)
            with self._log_lock:
                self.log.append(Request(pid, method, urllib.parse.unquote(parts.path), parts.query, start, end,
                                        counter.body_bytes, counter.status))


@pytest.fixture
def recording_proxy(s3_server):
    proxy = RecordingProxy(s3_server).start()
    yield proxy
    proxy.stop()
