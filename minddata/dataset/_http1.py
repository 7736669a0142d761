"""HTTP/1.1 requests and answers on kept connections, for the S3 client (:mod:`._s3`).

``http.client`` opens the connections (TLS, a proxy's CONNECT tunnel); requests and answers on them
go through this module. ``http.client``'s answers parse their headers with the ``email`` package: on
a 100 KB object that was two thirds of the client's CPU per GET (0.2 of 0.3 ms, profiled against a
local S3 server), for the few headers an S3 answer has. Here the head is read line by line and split
at the colons, and the body is read as ``http.client`` reads it, through a buffered reader of the
socket: by ``Content-Length``, chunked, or to the connection's end. The errors are ``http.client``'s own
(``RemoteDisconnected``, ``BadStatusLine``, ``IncompleteRead``, ``LineTooLong``), so retries and
messages classify them as before.
"""

from __future__ import annotations

import http.client
from typing import Any

__all__ = ["Response", "send_request"]

_MAX_LINE = 65536  # http.client's limits: 65,536 bytes a line, 100 header lines
_MAX_HEADERS = 100
_CHUNK_READ = 64 << 10  # a chunked body read whole is read this much at a time
_SMALL_BODY = 64 << 10  # a request body up to this size is sent with its head, in one write


def send_request(sock: Any, method: str, target: str, headers: dict[str, str], body: bytes = b"") -> None:
    """Write one request: ``headers`` as given (``host`` among them), ``Accept-Encoding: identity``
    unless given, and ``Content-Length`` for a body (0 for an empty PUT or POST)."""
    lines = [f"{method} {target} HTTP/1.1"]
    names = set()
    for name, value in headers.items():
        text = str(value)
        if "\r" in name or "\n" in name or ":" in name:
            raise ValueError(f"an HTTP header's name must be one line without a colon. Found: {name!r}")
        if "\r" in text or "\n" in text:
            raise ValueError(f"the value of HTTP header {name!r} must be one line; it has a line break (not shown: "
                             "it may hold a secret). Remove the line break where the value is set.")
        lines.append(f"{name}: {text}")
        names.add(name.lower())
    if "accept-encoding" not in names:
        lines.append("Accept-Encoding: identity")
    if "content-length" not in names and (body or method in ("PUT", "POST")):
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if body and len(body) <= _SMALL_BODY:
        sock.sendall(head + body)  # one segment for a small body
        return
    sock.sendall(head)
    if body:
        sock.sendall(body)


class Response:
    """The answer to a request just sent, read from ``reader``, the connection's buffered reader of
    its socket (``sock.makefile("rb")``, kept with the connection: bytes it read ahead belong to the
    next answer); ``method``: a HEAD's answer has no body. Its status, reason and headers are read
    when it is made; the body as asked, with the interface of ``http.client.HTTPResponse`` that the
    S3 client uses: ``status``, ``reason``, ``length`` (body
    bytes left, None where unknown), ``will_close``, ``getheader``, ``getheaders``, ``read``,
    ``readinto``, ``isclosed`` and ``close``. Through the buffered reader many small reads cost one
    ``recv``, and large ones go straight into the caller's buffer."""

    def __init__(self, reader: Any, method: str):
        self._fp = reader
        while True:
            status_line, fields = self._read_head()
            self.status, self.reason, version = _status(status_line)
            if not 100 <= self.status < 200 or self.status == 101:
                break  # 1xx answers (100 Continue) come before the real one
        self._headers = fields
        self._names = _joined(fields)
        connection = self._names.get("connection", "").lower()
        self.will_close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        self._chunked = False
        self._chunk_left = 0
        self.length: int | None = None
        if method == "HEAD" or self.status in (204, 304):
            self.length = 0
        elif "chunked" in self._names.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in self._names:
            text = self._names["content-length"]
            values = {value.strip() for value in text.split(",")}  # a length sent twice is one (RFC 9110)
            if len(values) != 1 or not next(iter(values)).isdigit():
                raise http.client.HTTPException(f"the answer's Content-Length is not one count of bytes: {text!r}")
            self.length = int(values.pop())
        else:
            self.will_close = True  # the body ends with the connection
        self._done = self.length == 0

    # -- the head

    def _line(self, what: str) -> bytes:
        line: bytes = self._fp.readline(_MAX_LINE + 1)
        if len(line) > _MAX_LINE:
            raise http.client.LineTooLong(what)
        return line

    def _read_head(self) -> tuple[bytes, list[tuple[str, str]]]:
        status_line = self._line("status line")
        if not status_line:
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        fields: list[tuple[str, str]] = []
        while True:
            line = self._line("header line")
            if line in (b"\r\n", b"\n", b""):
                break
            if len(fields) >= _MAX_HEADERS:
                raise http.client.HTTPException(f"got more than {_MAX_HEADERS} headers")
            name, colon, value = line.partition(b":")
            if colon:  # a line that is not a header is skipped, as http.client's parser skips it
                fields.append((name.decode("latin-1").strip(), value.decode("latin-1").strip()))
        return status_line.rstrip(b"\r\n"), fields

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self._names.get(name.lower(), default)

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self._headers)

    # -- the body

    def isclosed(self) -> bool:
        """Whether the body was read to its end (or the answer closed)."""
        return self._done

    def close(self) -> None:
        """Stop reading (an unfinished body leaves the connection unusable: its owner closes it)."""
        self._done = True

    def _took(self, got: int, asked: int) -> None:
        """``got`` of ``asked`` plain (not chunked) body bytes were read: fewer only at the
        connection's end, which ends a body without a length (one with a length is then cut short)."""
        if self.length is None:
            self._done = got < asked
        else:
            self.length -= got
            self._done = self.length == 0

    def readinto(self, buffer: Any) -> int:
        """Body bytes into ``buffer``: as many as fit, fewer only at the body's end, or where the
        connection ended before it (0 then: the caller sees a body cut short)."""
        if self._done:
            return 0
        if self._chunked:
            return self._chunks_into(memoryview(buffer).cast("B"))
        if self.length is not None and len(buffer) > self.length:  # (bytes, or memoryviews cast to them)
            buffer = memoryview(buffer).cast("B")[:self.length]
        got: int = self._fp.readinto(buffer)  # as many as fit, fewer only at the connection's end
        self._took(got, len(buffer))
        return got

    def read(self, n: int | None = None) -> bytes:
        """``n`` body bytes, fewer only at the body's end (or a cut connection's); with None, all that
        is left (``IncompleteRead`` if the connection ends first)."""
        if self._done:
            return b""
        if n is None or n < 0:
            return self._read_all()
        if self._chunked:
            out = bytearray(n)
            got = self._chunks_into(memoryview(out))
            return bytes(out) if got == n else bytes(out[:got])
        want = n if self.length is None else min(n, self.length)
        data: bytes = self._fp.read(want)  # as asked, fewer only at the connection's end
        self._took(len(data), want)
        return data

    def _read_all(self) -> bytes:
        if self._chunked:
            parts: list[bytes] = []
            while not self._done:
                part = self.read(_CHUNK_READ)
                if not part and not self._done:
                    raise http.client.IncompleteRead(b"".join(parts))
                parts.append(part)
            return b"".join(parts)
        if self.length is None:  # the body ends with the connection
            self._done = True
            return bytes(self._fp.read())
        want = self.length
        data: bytes = self._fp.read(want)
        self._took(len(data), want)
        if not self._done:
            raise http.client.IncompleteRead(data, self.length)
        return data

    def _chunks_into(self, view: memoryview) -> int:
        """``view`` filled from a chunked body, its framing read past: fewer bytes only at the last
        chunk, or where the connection ends first (the body then stays unfinished)."""
        filled = 0
        while filled < len(view):
            if self._chunk_left == 0 and not self._next_chunk():
                break
            part = view[filled:filled + self._chunk_left]
            got = self._fp.readinto(part)
            filled += got
            self._chunk_left -= got
            if got < len(part):
                break  # the connection ended inside the chunk
            if self._chunk_left == 0 and self._line("chunk end") not in (b"\r\n", b"\n"):
                raise http.client.HTTPException("a chunk of the answer's body is longer than its size says")
        return filled

    def _next_chunk(self) -> bool:
        """Start the next chunk; False at the last (its trailer read: the body is done)."""
        size_text = self._line("chunk size").split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise http.client.IncompleteRead(b"") from None
        if size == 0:
            while self._line("trailer line") not in (b"\r\n", b"\n", b""):
                pass
            self._done = True
            return False
        self._chunk_left = size
        return True


def _status(line: bytes) -> tuple[int, str, str]:
    text = line.decode("latin-1")
    version, _, rest = text.partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
        raise http.client.BadStatusLine(text[:200])
    return int(code), reason.strip(), version


def _joined(fields: list[tuple[str, str]]) -> dict[str, str]:
    """Fields by their names lower-cased, a name given twice joined by ", " (as RFC 9110 reads it)."""
    joined: dict[str, str] = {}
    for name, value in fields:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    return joined
