"""What object storage errors say: the specific fix for a single object's HEAD that failed without an
error code (learned by a one-byte GET), no credential in any URL shown (a presigned URL's query, a
``user:password@``) in errors, ``serialize`` or ``to_json``, the status said once, and a host that
does not resolve named at once. Requests go to moto, the fault proxy or a small HTTP server, all on
127.0.0.1; name resolution failures are made by a patched ``socket.getaddrinfo`` (nothing is asked of
a DNS server).
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import socket

import pytest
from s3kit import options
from testkit import local_http_server

import minddata as md
from minddata.dataset import _storage as st
from minddata.errors import ArgumentError, MinddataError, redact_urls

TOKEN = "SESSIONTOKENinQUERY987"
SIGNATURE = "abcdef0123456789signature"
PASSWORD = "PASSWORD-never-shown-123"
CSV = b"name,age\np0,20\np1,21\n"


class _Files(http.server.BaseHTTPRequestHandler):
    """Serves ``FILES`` (path → bytes; the query is ignored) with HEAD and ranged GETs; records each
    request's (method, path, Authorization)."""

    protocol_version = "HTTP/1.1"
    FILES: dict[str, bytes] = {}
    seen: list[tuple[str, str, str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        type(self).seen.append((self.command, self.path, self.headers.get("Authorization", "")))
        data = self.FILES.get(self.path.split("?", 1)[0])
        if data is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, start, end = 200, 0, len(data)
        wanted = self.headers.get("Range")
        if wanted:
            first, _, last = wanted.removeprefix("bytes=").partition("-")
            status, start, end = 206, int(first), min(len(data), int(last) + 1 if last else len(data))
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.send_header("Content-Length", str(end - start))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(data[start:end])

    do_GET = do_HEAD = _answer


@contextlib.contextmanager
def _file_server(files: dict[str, bytes]):
    """An HTTP server of ``files`` on 127.0.0.1: (its base URL, the requests it saw)."""
    handler = type("Files", (_Files,), {"FILES": files, "seen": []})
    with local_http_server(handler) as port:
        yield f"127.0.0.1:{port}", handler.seen


def _presigned(host: str, path: str) -> str:
    return (f"http://{host}{path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDX%2F20250101%2Fus-east-1"
            f"&X-Amz-Security-Token={TOKEN}&X-Amz-Signature={SIGNATURE}")


def _rows(ds) -> int:
    return sum(1 for _ in ds.create_tuple_iterator(num_epochs=1))


# -- a single object's HEAD: the error code learned by a GET of one byte -------------------------


def test_a_missing_bucket_on_a_single_file_names_the_bucket(s3_server, s3_client):
    with pytest.raises(st.StorageError) as info:
        md.TFRecordDataset("s3://nobucket/x.tfrecord", storage_options=options(s3_server))
    text = str(info.value)
    assert "NoSuchBucket" in text and "the bucket 'nobucket' does not exist" in text, text
    assert info.value.status == 404 and info.value.attempts == 1


def test_a_missing_object_names_the_bucket_and_the_key(s3_server, s3_client):
    with pytest.raises(st.StorageError) as info:
        md.CSVDataset("s3://data/files/nope.csv", storage_options=options(s3_server))
    text = str(info.value)
    assert "NoSuchKey" in text and "the bucket 'data' has no object 'files/nope.csv'" in text, text


def test_a_failed_head_is_explained_by_one_get_of_a_byte(faults, s3_client):
    store = st.ObjectStore("s3", st.StorageOptions("test", options(faults.url)))
    before = faults.counts["requests"]
    with pytest.raises(st.StorageError, match="NoSuchKey"):
        store.size(st.split_url("s3://data/messages/none.bin"))
    assert faults.counts["requests"] - before == 2  # the HEAD, and the GET of bytes 0-0


def test_whether_an_object_exists_costs_one_head(faults, s3_client):
    before = faults.counts["requests"]
    assert not st.exists("s3://data/messages/none.idx", st.StorageOptions("test", options(faults.url)))
    assert faults.counts["requests"] - before == 1


def test_a_denied_head_still_names_the_permission(faults, s3_files):
    faults.deny = ("/data/files/",)
    store = st.ObjectStore("s3", st.StorageOptions("test", options(faults.url)))
    with pytest.raises(st.StorageError) as info:
        store.size(st.split_url("s3://data/files/lines-0.txt"))
    assert "AccessDenied" in str(info.value) and "grant s3:GetObject" in str(info.value)


# -- credentials in URLs --------------------------------------------------------------------------


def test_a_presigned_urls_query_is_absent_from_serialize_and_to_json():
    with _file_server({"/files/people.csv": CSV}) as (host, _):
        ds = md.CSVDataset(_presigned(host, "/files/people.csv"), shuffle=False)
        assert _rows(ds) == 2
        for text in (json.dumps(md.serialize(ds)), json.dumps(ds.to_json())):
            assert TOKEN not in text and SIGNATURE not in text and "AKIDX" not in text
            assert f"http://{host}/files/people.csv?<query hidden>" in text


def test_a_deserialized_presigned_url_asks_for_the_full_url():
    with _file_server({"/files/people.csv": CSV}) as (host, seen):
        described = md.serialize(md.CSVDataset(_presigned(host, "/files/people.csv"), shuffle=False))
        del seen[:]
        with pytest.raises(ArgumentError, match="hidden when the pipeline was serialized"):
            _rows(md.deserialize(input_dict=described))
    assert seen == []  # nothing sent with the placeholder


def test_a_urls_password_is_sent_as_basic_authentication():
    with _file_server({"/files/people.csv": CSV}) as (host, seen):
        assert _rows(md.CSVDataset(f"http://reader:{PASSWORD}@{host}/files/people.csv", shuffle=False)) == 2
    expected = "Basic " + base64.b64encode(f"reader:{PASSWORD}".encode()).decode()
    assert seen and all(auth == expected and path == "/files/people.csv" for _, path, auth in seen)


def test_a_urls_password_is_absent_from_the_error_which_is_not_retried():
    with _file_server({}) as (host, seen):
        with pytest.raises(st.StorageError) as info:
            md.CSVDataset(f"http://reader:{PASSWORD}@{host}/files/nope.csv")
    text = str(info.value)
    assert PASSWORD not in text and PASSWORD not in info.value.url
    assert f"http://reader:<redacted>@{host}/files/nope.csv" in text, text
    assert info.value.status == 404 and info.value.attempts == 1 and len(seen) == 1


def test_a_urls_password_is_absent_from_serialize():
    with _file_server({"/files/people.csv": CSV}) as (host, _):
        text = json.dumps(md.serialize(md.CSVDataset(f"http://reader:{PASSWORD}@{host}/files/people.csv")))
    assert PASSWORD not in text and f"http://reader:<redacted>@{host}/files/people.csv" in text


def test_an_endpoints_password_is_absent_from_serialize(s3_server, s3_files):
    endpoint = f"http://minio:{PASSWORD}@127.0.0.1:{s3_server}"
    text = json.dumps(md.serialize(md.TextFileDataset("s3://data/files/lines-0.txt",
                                                      storage_options=options(s3_server, endpoint_url=endpoint))))
    assert PASSWORD not in text and "minio:<redacted>@" in text


def test_every_minddata_error_redacts_url_passwords_and_signatures():
    error = MinddataError(f"reading https://u:{PASSWORD}@h/x.csv?X-Amz-Signature={SIGNATURE}&X-Amz-Security-Token={TOKEN} failed")
    assert PASSWORD not in str(error) and SIGNATURE not in str(error) and TOKEN not in str(error)
    assert redact_urls("s3://bucket/key and http://user@host/x") == "s3://bucket/key and http://user@host/x"


# -- retries: the status once, a name that does not resolve -------------------------------------


def test_retries_run_out_on_a_size_with_the_status_said_once(faults, s3_files):
    faults.set_rates({"503": 1.0})
    store = st.ObjectStore("s3", st.StorageOptions("test", options(faults.url, max_attempts=2)))
    with pytest.raises(st.StorageError) as info:
        store.size(st.split_url("s3://data/files/lines-0.txt"))
    text = str(info.value)
    assert "HTTP 503 Slow Down;" in text and "503 503" not in text and "gave up after 2 tries" in text, text


@pytest.fixture
def unresolvable(monkeypatch):
    """``socket.getaddrinfo`` failing for host names ending in ``.invalid`` with the error number set in
    the returned list (EAI_NONAME unless changed); others resolve as usual. Counts the lookups."""
    real = socket.getaddrinfo
    state = {"errno": socket.EAI_NONAME, "lookups": 0}

    def getaddrinfo(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(".invalid"):
            state["lookups"] += 1
            raise socket.gaierror(state["errno"], "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return state


def test_an_endpoint_that_does_not_resolve_fails_at_once_naming_it(unresolvable):
    store = st.ObjectStore("s3", st.StorageOptions("test", options("http://no-such-host.invalid:9000")))
    with pytest.raises(st.StorageError) as info:
        store.size(st.split_url("s3://data/x.bin"))
    text = str(info.value)
    assert "cannot resolve host 'no-such-host.invalid'" in text and "check the endpoint" in text, text
    assert "connection reset" not in text and info.value.attempts == 1 and unresolvable["lookups"] == 1


def test_a_temporary_resolution_failure_gets_a_few_tries(unresolvable):
    unresolvable["errno"] = socket.EAI_AGAIN
    store = st.ObjectStore("s3", st.StorageOptions("test", options("http://no-such-host.invalid:9000")))
    with pytest.raises(st.StorageError) as info:
        store.size(st.split_url("s3://data/x.bin"))
    assert info.value.attempts == 3 and "at most 3 for this failure" in str(info.value)


def test_an_http_urls_host_that_does_not_resolve_fails_at_once_naming_it(unresolvable):
    with pytest.raises(st.StorageError) as info:
        md.CSVDataset("http://files.invalid/people.csv")
    text = str(info.value)
    assert "cannot resolve host 'files.invalid'" in text and info.value.attempts == 1, text
