"""HTTP/1.1 requests and answers on a kept connection's socket, for the S3 client (:mod:`._s3`).

``http.client`` opens the connections (TLS, a proxy's CONNECT tunnel); requests and answers on them
go through this module. ``http.client``'s answers parse their headers with the ``email`` package: on
a 100 KB object that was two thirds of the client's CPU per GET (0.2 of 0.3 ms, profiled against a
local S3 server), for the few headers an S3 answer has. Here the status line and headers are split
from the first bytes read, and the body is read as ``http.client`` reads it: by ``Content-Length``,
chunked, or to the connection's end. The errors are ``http.client``'s own
(``RemoteDisconnected``, ``BadStatusLine``, ``IncompleteRead``, ``LineTooLong``), so retries and
messages classify them as before.
"""

from __future__ import annotations

import http.client
from typing import Any

__all__ = ["Response", "send_request"]

_RECEIVE = 64 << 10
_MAX_HEAD = 64 << 10  # http.client's limits: 65,536 bytes a line, 100 header lines
_MAX_HEADERS = 100
_MAX_CHUNK_LINE = 1 << 10


def send_request(sock: Any, method: str, target: str, headers: dict[str, str], body: bytes = b"") -> None:
    """Write one request: ``headers`` as given (``host`` among them), ``Accept-Encoding: identity``
    unless given, and ``Content-Length`` for a body (0 for an empty PUT or POST)."""
    lines = [f"{method} {target} HTTP/1.1"]
    names = set()
    for name, value in headers.items():
        text = str(value)
        if "\r" in text or "\n" in text or "\r" in name or "\n" in name or ":" in name:
            raise ValueError(f"an HTTP header must be one line without a colon in its name. Found: {name!r}")
        lines.append(f"{name}: {text}")
        names.add(name.lower())
    if "accept-encoding" not in names:
        lines.append("Accept-Encoding: identity")
    if "content-length" not in names and (body or method in ("PUT", "POST")):
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if body and len(body) <= _RECEIVE:
        sock.sendall(head + body)  # one segment for a small body
        return
    sock.sendall(head)
    if body:
        sock.sendall(body)


class Response:
    """The answer to a request just sent on ``sock`` (``method``: a HEAD's has no body). Its status,
    reason and headers are read when it is made; the body as asked, with the interface of
    ``http.client.HTTPResponse`` that the S3 client uses: ``status``, ``reason``, ``length`` (body
    bytes left, None where unknown), ``will_close``, ``getheader``, ``getheaders``, ``read``,
    ``readinto``, ``isclosed`` and ``close``."""

    def __init__(self, sock: Any, method: str):
        self._sock = sock
        self._pending = b""
        while True:
            status_line, fields = self._read_head()
            self.status, self.reason, version = _status(status_line)
            if not 100 <= self.status < 200 or self.status == 101:
                break  # 1xx answers (100 Continue) come before the real one
        self._headers = fields
        self._names = {name.lower(): value for name, value in _joined(fields)}
        connection = self._names.get("connection", "").lower()
        self.will_close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        self._chunked = False
        self._chunk_left = 0
        self.length: int | None = None
        self._done = False
        if method == "HEAD" or self.status in (204, 304):
            self.length = 0
        elif "chunked" in self._names.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in self._names:
            try:
                self.length = int(self._names["content-length"])
            except ValueError:
                raise http.client.HTTPException(
                    f"the answer's Content-Length is not a number: {self._names['content-length']!r}") from None
            if self.length < 0:
                raise http.client.HTTPException(f"the answer's Content-Length is negative: {self.length}")
        else:
            self.will_close = True  # the body ends with the connection
        if self.length == 0:
            self._done = True

    # -- the head

    def _read_head(self) -> tuple[bytes, list[tuple[str, str]]]:
        data = self._pending
        searched = 0
        while True:
            end = data.find(b"\r\n\r\n", max(searched - 3, 0))
            if end >= 0:
                break
            if len(data) > _MAX_HEAD:
                raise http.client.LineTooLong("header line")
            searched = len(data)
            more = self._sock.recv(_RECEIVE)
            if not more:
                if not data:
                    raise http.client.RemoteDisconnected("Remote end closed connection without response")
                raise http.client.BadStatusLine(data[:200].decode("latin-1", "replace"))
            data = data + more if data else more
        self._pending = data[end + 4:]
        lines = data[:end].split(b"\r\n")
        if len(lines) - 1 > _MAX_HEADERS:
            raise http.client.HTTPException(f"got more than {_MAX_HEADERS} headers")
        fields = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                continue  # not a header (http.client's parser skips such a line too)
            fields.append((name.decode("latin-1").strip(), value.decode("latin-1").strip()))
        return lines[0], fields

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self._names.get(name.lower(), default)

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self._headers)

    # -- the body

    def isclosed(self) -> bool:
        """Whether the body was read to its end (or the answer closed)."""
        return self._done

    def close(self) -> None:
        self._done = True
        self._pending = b""

    def _receive_into(self, view: memoryview) -> int:
        """Bytes into ``view`` from what was read with the head, else one ``recv``; 0 at the
        connection's end."""
        if self._pending:
            got = min(len(self._pending), len(view))
            view[:got] = self._pending[:got]
            self._pending = self._pending[got:]
            return got
        return self._sock.recv_into(view, len(view))

    def _fill(self, view: memoryview) -> int:
        """``view`` filled from the body (its own framing aside): fewer bytes only at its end."""
        filled = 0
        while filled < len(view):
            if self._chunked:
                if self._chunk_left == 0 and not self._next_chunk():
                    break
                part = view[filled:filled + self._chunk_left]
            elif self.length is not None:
                if self.length == 0:
                    break
                part = view[filled:filled + self.length]
            else:
                part = view[filled:]
            got = self._receive_into(part)
            if got == 0:
                if self.length is None and not self._chunked:
                    self._done = True  # a body that ends with the connection: this is its end
                break
            filled += got
            if self._chunked:
                self._chunk_left -= got
                if self._chunk_left == 0:
                    self._expect_line_end()
            elif self.length is not None:
                self.length -= got
                if self.length == 0:
                    self._done = True
        return filled

    def _line(self) -> bytes:
        while b"\r\n" not in self._pending:
            if len(self._pending) > _MAX_CHUNK_LINE:
                raise http.client.LineTooLong("chunk size")
            more = self._sock.recv(_RECEIVE)
            if not more:
                raise http.client.IncompleteRead(b"")
            self._pending += more
        line, _, self._pending = self._pending.partition(b"\r\n")
        return line

    def _expect_line_end(self) -> None:
        if self._line():
            raise http.client.HTTPException("a chunk of the answer's body is longer than its size says")

    def _next_chunk(self) -> bool:
        """Start the next chunk; False at the last (its trailer read: the body is done)."""
        size_text = self._line().split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise http.client.IncompleteRead(b"") from None
        if size == 0:
            while self._line():  # the trailer's fields, up to a blank line
                pass
            self._done = True
            return False
        self._chunk_left = size
        return True

    def readinto(self, buffer: Any) -> int:
        """Body bytes into ``buffer``: as many as fit, fewer only at the body's end, or where the
        connection ended before it (0 then: the caller sees a body cut short)."""
        if self._done:
            return 0
        return self._fill(memoryview(buffer).cast("B"))

    def read(self, n: int | None = None) -> bytes:
        """``n`` body bytes, fewer only at the body's end (or a cut connection's); with None, all that
        is left (``IncompleteRead`` if the connection ends first)."""
        if self._done:
            return b""
        if n is not None and n >= 0:
            return self._read_up_to(n if self.length is None else min(n, self.length))
        if self.length is None:
            parts = []
            while not self._done:
                part = self._read_up_to(_RECEIVE)
                if not part and not self._done:
                    raise http.client.IncompleteRead(b"".join(parts))
                parts.append(part)
            return b"".join(parts)
        want = self.length
        if not self._chunked and len(self._pending) >= want:  # all of it came with the head
            data, self._pending = self._pending[:want], self._pending[want:]
            self.length = 0
            self._done = True
            return data
        data = self._read_up_to(want)
        if len(data) < want:
            raise http.client.IncompleteRead(data, want - len(data))
        return data

    def _read_up_to(self, n: int) -> bytes:
        out = bytearray(n)
        got = self._fill(memoryview(out))
        return bytes(out) if got == n else bytes(out[:got])


def _status(line: bytes) -> tuple[int, str, str]:
    text = line.decode("latin-1")
    version, _, rest = text.partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/") or len(code) != 3 or not code.isdigit():
        raise http.client.BadStatusLine(text[:200])
    return int(code), reason.strip(), version


def _joined(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Fields with their names lower-cased, a name given twice joined by ", " (as RFC 9110 reads it)."""
    joined: dict[str, str] = {}
    for name, value in fields:
        key = name.lower()
        joined[key] = f"{joined[key]}, {value}" if key in joined else value
    return list(joined.items())
