"""The S3 client's HTTP/1.1 framing (minddata.dataset._http1) on real sockets: what a server writes
is read back as http.client reads it (lengths, chunks, bodies that end with the connection, interim
answers), and a connection cut short is reported, never taken for a whole body."""

from __future__ import annotations

import http.client
import socket
import threading
from typing import Any, NamedTuple

import pytest

from minddata.dataset._http1 import Response, send_request


@pytest.fixture
def pair():
    ours, theirs = socket.socketpair()
    ours.settimeout(10)
    reader = ours.makefile("rb")  # the connection's reader, kept across its answers
    yield Ends(ours, reader), theirs
    reader.close()
    ours.close()
    theirs.close()


class Ends(NamedTuple):
    """Our end of the connection: its socket (for writing) and its reader (for answers)."""

    sock: socket.socket
    reader: Any


def answer(theirs: socket.socket, data: bytes, close: bool = False) -> threading.Thread:
    """The server's side: ``data``'s first KiB written in small pieces (so every read boundary of a
    head or a chunk line is crossed), the rest at once, then the connection closed if asked. Join it
    before reading only where ``data`` fits the socket's buffer."""

    def write() -> None:
        try:
            for i in range(0, min(len(data), 1024), 7):
                theirs.sendall(data[i:min(i + 7, 1024)])
            if len(data) > 1024:
                theirs.sendall(data[1024:])
            if close:
                theirs.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the reader closed the connection (a refused head): nothing more to write

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_body_of_content_length_is_read_whole_and_leaves_the_connection_reusable(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nETag: \"x\"\r\n\r\nhello world").join()
    response = Response(ours.reader, "GET")
    assert (response.status, response.reason, response.length) == (200, "OK", 11)
    assert response.getheader("etag") == '"x"' and response.getheader("ETAG") == '"x"'
    assert response.read() == b"hello world"
    assert response.isclosed() and not response.will_close
    answer(theirs, b"HTTP/1.1 206 Partial Content\r\ncontent-length: 3\r\n\r\nabc").join()
    second = Response(ours.reader, "GET")  # the next answer on the same connection
    buffer = bytearray(8)
    assert second.readinto(buffer) == 3 and bytes(buffer[:3]) == b"abc" and second.isclosed()


def test_a_chunked_body_is_joined_and_its_trailer_read(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n").join()
    response = Response(ours.reader, "GET")
    assert response.length is None
    assert response.read(3) == b"hel"
    assert response.read() == b"lo world"
    assert response.isclosed() and not response.will_close


def test_a_body_without_length_ends_with_the_connection(pair):
    ours, theirs = pair
    writer = answer(theirs, b"HTTP/1.0 200 OK\r\n\r\n" + b"z" * 300_000, close=True)
    response = Response(ours.reader, "GET")
    assert response.will_close
    assert response.read() == b"z" * 300_000 and response.isclosed()
    writer.join()


def test_interim_answers_are_skipped_and_a_head_has_no_body(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 512\r\n"
                   b"Connection: close\r\n\r\n").join()
    response = Response(ours.reader, "HEAD")
    assert response.status == 200 and response.length == 0 and response.isclosed() and response.will_close
    assert response.read() == b""
    assert dict(response.getheaders())["Content-Length"] == "512"


def test_a_body_cut_short_is_reported(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabcd", close=True).join()
    response = Response(ours.reader, "GET")
    with pytest.raises(http.client.IncompleteRead):
        response.read()
    assert not response.isclosed()  # not a whole body: the connection is not given back


def test_a_read_of_a_body_cut_short_returns_what_came_then_nothing(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabcd", close=True).join()
    response = Response(ours.reader, "GET")
    buffer = bytearray(10)
    assert response.readinto(buffer) == 4
    assert response.readinto(buffer) == 0 and not response.isclosed()


def test_a_connection_closed_before_an_answer_is_remote_disconnected(pair):
    ours, theirs = pair
    theirs.shutdown(socket.SHUT_WR)
    with pytest.raises(http.client.RemoteDisconnected):
        Response(ours.reader, "GET")


@pytest.mark.parametrize("head", [b"garbage\r\n\r\n", b"HTTP/1.1 2x0 OK\r\n\r\n"])
def test_a_malformed_status_line_is_refused(pair, head):
    ours, theirs = pair
    answer(theirs, head).join()
    with pytest.raises(http.client.BadStatusLine):
        Response(ours.reader, "GET")


def test_a_length_sent_twice_is_one(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcd").join()
    assert Response(ours.reader, "GET").read() == b"abcd"


@pytest.mark.parametrize("lengths", [b"4, 5", b"-4", b"four"])
def test_a_wrong_length_is_refused(pair, lengths):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 200 OK\r\nContent-Length: " + lengths + b"\r\n\r\nabcd").join()
    with pytest.raises(http.client.HTTPException, match="not one count of bytes"):
        Response(ours.reader, "GET")


def test_repeated_headers_are_joined_and_an_endless_head_is_refused(pair):
    ours, theirs = pair
    answer(theirs, b"HTTP/1.1 204 No Content\r\nVary: a\r\nvary: b\r\n\r\n").join()
    assert Response(ours.reader, "GET").getheader("Vary") == "a, b"
    writer = answer(theirs, b"HTTP/1.1 200 OK\r\n" + b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n")
    with pytest.raises(http.client.LineTooLong):
        Response(ours.reader, "GET")
    theirs.close()  # ends the writer, whose rest no one reads
    writer.join(timeout=10)


def test_a_request_is_written_as_http_client_writes_it(pair):
    ours, theirs = pair
    send_request(ours.sock, "PUT", "/b/k?x=1", {"host": "h:9", "x-amz-date": "d"})
    send_request(ours.sock, "GET", "/b/k", {"host": "h:9", "range": "bytes=0-1"}, b"")
    theirs.settimeout(10)
    data = b""
    while data.count(b"\r\n\r\n") < 2:
        data += theirs.recv(4096)
    put, get = data.split(b"\r\n\r\n")[:2]
    assert put.split(b"\r\n") == [b"PUT /b/k?x=1 HTTP/1.1", b"host: h:9", b"x-amz-date: d", b"Accept-Encoding: identity",
                                  b"Content-Length: 0"]
    assert get.split(b"\r\n") == [b"GET /b/k HTTP/1.1", b"host: h:9", b"range: bytes=0-1", b"Accept-Encoding: identity"]
    with pytest.raises(ValueError, match="value of HTTP header 'x-bad' must be one line"):
        send_request(ours.sock, "GET", "/", {"host": "h", "x-bad": "a\r\nInjected: 1"})
    with pytest.raises(ValueError, match="name must be one line without a colon. Found: 'x:bad'"):
        send_request(ours.sock, "GET", "/", {"host": "h", "x:bad": "a"})


def test_small_and_large_reads_of_one_body_give_its_bytes_in_order(pair):
    ours, theirs = pair
    body = bytes(range(256)) * 2000  # 512,000 bytes
    writer = answer(theirs, b"HTTP/1.1 200 OK\r\nContent-Length: 512000\r\n\r\n" + body)
    response = Response(ours.reader, "GET")
    got = bytearray()
    sizes = [512, 3, 100_000, 1, 40_000]
    while not response.isclosed():
        size = sizes[len(got) % len(sizes)]
        part = response.read(size) if len(got) % 2 else bytearray(size)
        if isinstance(part, bytearray):
            part = part[:response.readinto(part)]
        got += part
    writer.join()
    assert got == body
