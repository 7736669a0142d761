"""A small S3 API server over a local folder, for benchmarks: the read side of S3 at the cost of a
file server, on 127.0.0.1 only.

moto answers every GET from a Python object it rebuilds per request (about 3 ms of CPU for an 85 KB
image here, 25 ms before the first byte of a 4 MB shard). On a 2-core machine that CPU comes out of
the pipeline being measured, as no remote store's would. This server answers GET bodies with
``sendfile`` from the folder, so what a benchmark measures is the reading client, as it would be
against S3, MinIO or OBS on other machines. moto stays the server of the tests: it checks what this
one does not (signatures, IAM, writes).

What it serves, from ``root/<bucket>/<key>``: ``GET``/``HEAD`` of an object (``Range: bytes=a-b``,
``a-`` and ``-n``; 206 with ``Content-Range``; 416 out of range), ``ListObjectsV2`` (``prefix``,
``start-after``, ``continuation-token``, ``max-keys`` up to 1,000, ``encoding-type=url``), and S3's
XML errors (``NoSuchBucket``, ``NoSuchKey``, ``InvalidRange``). Anything else (writes, ListObjects v1,
``delimiter``) is answered ``501 NotImplemented``. Connections stay open between requests (HTTP/1.1).
Credentials are not checked. ETags are the object's size and modification time (opaque to clients,
as S3's are).

:class:`FileS3Server` runs it in a child process on a free port; the child ends when its parent is
gone or after ``max_lifetime_s``.

Examples:
    >>> import tempfile, urllib.request
    >>> from pathlib import Path
    >>> from minddata.bench.s3files import FileS3Server
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "bucket" / "a").mkdir(parents=True)
    >>> _ = (root / "bucket" / "a" / "x.bin").write_bytes(b"minddata")
    >>> with FileS3Server(root) as server:
    ...     request = urllib.request.Request(server.url + "/bucket/a/x.bin", headers={"Range": "bytes=4-"})
    ...     with urllib.request.urlopen(request) as answer:
    ...         print(answer.status, answer.read())
    206 b'data'
"""

from __future__ import annotations

import argparse
import email.utils
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from minddata.bench.s3server import end_child, free_port

__all__ = ["FileS3Server", "main"]

_MAX_KEYS = 1000
_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as S3's connections are
    server_version = "minddata-bench-s3files"
    # The headers and the body go out in separate writes: with Nagle's algorithm a body's last short
    # segment waits for the client's delayed ACK of the headers (40 ms a GET on Linux loopback).
    disable_nagle_algorithm = True
    root: Path

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _not_implemented(self) -> None:
        self._drain()
        self._error(501, "NotImplemented", f"this benchmark server only reads: {self.command} is not served")

    do_PUT = do_POST = do_DELETE = do_PATCH = _not_implemented

    def _drain(self) -> None:
        # The request's body, read and dropped, so that the connection can carry the next request.
        left = int(self.headers.get("Content-Length") or 0)
        while left > 0:
            piece = self.rfile.read(min(left, 1 << 20))
            if not piece:
                break
            left -= len(piece)

    def _answer(self, send_body: bool) -> None:
        target = urllib.parse.urlsplit(self.path)
        bucket, _, key = urllib.parse.unquote(target.path).lstrip("/").partition("/")
        query = dict(urllib.parse.parse_qsl(target.query, keep_blank_values=True))
        folder = self.root / bucket
        if not bucket or "/" in bucket or bucket in (".", "..") or not folder.is_dir():
            return self._error(404, "NoSuchBucket", "The specified bucket does not exist", send_body)
        if not key:
            if query.get("list-type") != "2" or "delimiter" in query:
                return self._error(501, "NotImplemented", "only ListObjectsV2 without a delimiter is served",
                                   send_body)
            return self._list(bucket, folder, query, send_body)
        if any(part in ("", ".", "..") for part in key.split("/")):
            return self._error(400, "InvalidArgument", "a key with an empty, '.' or '..' segment", send_body)
        try:
            f = open(folder / key, "rb")  # noqa: SIM115 - closed below, after sendfile
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return self._error(404, "NoSuchKey", "The specified key does not exist.", send_body)
        with f:
            stat = os.fstat(f.fileno())
            size = stat.st_size
            span = _byte_range(self.headers.get("Range"), size)
            if span is None:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                return self._error(416, "InvalidRange", "The requested range is not satisfiable", send_body,
                                   started=True)
            start, end = span if span != () else (0, size)
            self.send_response(206 if span != () else 200)
            if span != ():
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
            self.send_header("Content-Length", str(end - start))
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", _etag(stat))
            self.send_header("Last-Modified", email.utils.formatdate(stat.st_mtime, usegmt=True))
            self.end_headers()
            if send_body and end > start:
                self.connection.sendfile(f, start, end - start)

    def _list(self, bucket: str, folder: Path, query: dict[str, str], send_body: bool) -> None:
        prefix = query.get("prefix", "")
        try:
            max_keys = min(_MAX_KEYS, max(0, int(query.get("max-keys", _MAX_KEYS))))
        except ValueError:
            return self._error(400, "InvalidArgument", "max-keys must be an integer", send_body)
        after = query.get("continuation-token") or query.get("start-after") or ""
        url_encoded = query.get("encoding-type") == "url"
        keys = sorted(k for k in _keys(folder) if k.startswith(prefix) and k > after)
        page, truncated = keys[:max_keys], len(keys) > max_keys

        def shown(key: str) -> str:
            return escape(urllib.parse.quote(key, safe="/") if url_encoded else key)

        parts = [f'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="{_NAMESPACE}">',
                 f"<Name>{escape(bucket)}</Name><Prefix>{shown(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>",
                 f"<MaxKeys>{max_keys}</MaxKeys><IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"]
        if url_encoded:
            parts.append("<EncodingType>url</EncodingType>")
        for key in page:
            stat = os.stat(folder / key)
            modified = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(stat.st_mtime))
            parts.append(f"<Contents><Key>{shown(key)}</Key><LastModified>{modified}</LastModified>"
                         f"<ETag>{escape(_etag(stat))}</ETag><Size>{stat.st_size}</Size>"
                         "<StorageClass>STANDARD</StorageClass></Contents>")
        if truncated:
            parts.append(f"<NextContinuationToken>{escape(page[-1])}</NextContinuationToken>")
        parts.append("</ListBucketResult>")
        self._send(200, "".join(parts).encode(), "application/xml", send_body)

    def _error(self, status: int, code: str, message: str, send_body: bool = True, started: bool = False) -> None:
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                f"<Message>{escape(message)}</Message><Resource>{escape(self.path)}</Resource></Error>").encode()
        self._send(status, body, "application/xml", send_body, started)

    def _send(self, status: int, body: bytes, content_type: str, send_body: bool, started: bool = False) -> None:
        if not started:
            self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)


def _etag(stat: os.stat_result) -> str:
    return f'"{stat.st_size:x}-{stat.st_mtime_ns:x}"'


def _keys(folder: Path) -> list[str]:
    found = []
    for directory, _, files in os.walk(folder):
        base = os.path.relpath(directory, folder)
        for name in files:
            found.append(name if base == "." else f"{base.replace(os.sep, '/')}/{name}")
    return found


def _byte_range(header: str | None, size: int) -> tuple[int, int] | tuple[()] | None:
    """``[start, end)`` of a ``Range: bytes=...`` header; ``()`` for the whole object (no header, or
    one this server does not read: several ranges, another unit, as S3 then sends it all); None when
    the range lies outside the object (416)."""
    if not header or not header.startswith("bytes=") or "," in header:
        return ()
    first, _, last = header[6:].strip().partition("-")
    try:
        if not first:  # the last n bytes
            n = int(last)
            return (max(0, size - n), size) if n > 0 and size else None
        start = int(first)
        end = min(size, int(last) + 1) if last else size
    except ValueError:
        return ()
    return (start, end) if start < size and start < end else None


class FileS3Server:
    """:mod:`minddata.bench.s3files`' server in a child process on ``127.0.0.1:<free port>`` (``url``),
    serving ``root`` (bucket ``b`` is the folder ``root/b``) for at most ``max_lifetime_s`` seconds.
    Use as a context manager, or call :meth:`start` and :meth:`stop`."""

    def __init__(self, root: str | os.PathLike, max_lifetime_s: float = 3600.0):
        self.root = Path(root)
        self.max_lifetime_s = float(max_lifetime_s)
        self.port = 0
        self.url = ""
        self._proc: subprocess.Popen | None = None
        self._log: Any = None

    def start(self, timeout_s: float = 30.0) -> FileS3Server:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = tempfile.TemporaryFile()  # the child's errors, read if it fails to start
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "minddata.bench.s3files", "--root", str(self.root), "--port", str(self.port),
             "--parent", str(os.getpid()), "--max-lifetime-s", str(self.max_lifetime_s)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
        )
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(self.url + "/", timeout=1):
                    pass
            except urllib.error.HTTPError:
                return self  # it answers (404 for the bucket-less path)
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    code = self._proc.poll()
                    self._log.seek(0)
                    said = self._log.read()[-2000:].decode(errors="replace").strip()
                    self.stop()
                    why = f"it exited with code {code}" if code is not None else f"no answer within {timeout_s:g} s"
                    raise RuntimeError(f"the file-backed S3 server did not start on {self.url} ({why})"
                                       + (f": {said}" if said else "")) from None
                time.sleep(0.05)
            else:
                return self

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs (for measuring its CPU time), else None."""
        return self._proc.pid if self._proc is not None else None

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        end_child(proc)
        log, self._log = self._log, None
        if log is not None:
            log.close()

    def __enter__(self) -> FileS3Server:
        return self.start() if self._proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.s3files",
                                     description="an S3 API server (reads only) over a folder, on 127.0.0.1")
    parser.add_argument("--root", required=True, help="the folder; bucket b is its subfolder b")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--parent", type=int, default=0, help="end when this process is gone (0: never)")
    parser.add_argument("--max-lifetime-s", type=float, default=3600.0)
    args = parser.parse_args(argv)
    handler = type("Handler", (_Handler,), {"root": Path(args.root)})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    deadline = time.monotonic() + args.max_lifetime_s
    try:
        while (not args.parent or os.getppid() == args.parent) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
