"""The benchmarks' file-backed S3 server (minddata.bench.s3files): minddata's own S3 client and
botocore read from it what they read from moto, and it answers S3's errors and ranges as S3 does."""

from __future__ import annotations

import http.client
import re
import shutil
import socket
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from s3kit import options

import minddata as md
from minddata.bench.s3files import FileS3Server


@pytest.fixture(scope="module")
def served(tmp_path_factory, s3_images, s3_shards):
    """A FileS3Server over a folder holding bucket ``data`` with s3kit's images and shards."""
    root = tmp_path_factory.mktemp("s3files")
    shutil.copytree(s3_images, root / "data" / "images")
    shutil.copytree(s3_shards, root / "data" / "shards")
    (root / "data" / "odd").mkdir()
    (root / "data" / "odd" / "a b+c é.bin").write_bytes(bytes(range(256)) * 4)
    with FileS3Server(root, max_lifetime_s=600) as server:
        yield server


def _get(server: FileS3Server, target: str, headers: dict | None = None, method: str = "GET",
         conn: http.client.HTTPConnection | None = None) -> tuple[int, dict, bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, target, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        if own:
            conn.close()


def _rows(dataset) -> list[tuple]:
    return [tuple(np.asarray(v).tobytes() for v in row) for row in dataset.create_tuple_iterator(output_numpy=True)]


def test_an_image_folder_reads_the_same_rows_as_from_local_files(served, s3_images):
    remote = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options(served.url))
    assert _rows(remote) == _rows(md.ImageFolderDataset(str(s3_images), shuffle=False))


def test_webdataset_shards_read_the_same_samples_as_local_shards(served, s3_shards):
    columns = ["__key__", "jpg", "cls", "txt"]
    remote = md.WebDataset("s3://data/shards/train-{000000..000002}.tar", columns_list=columns, shuffle=False,
                           storage_options=options(served.url))
    local = md.WebDataset(f"{s3_shards}/train-{{000000..000002}}.tar", columns_list=columns, shuffle=False)
    assert _rows(remote) == _rows(local)


def test_botocore_lists_pages_and_reads_ranges(served):
    import botocore.session

    client = botocore.session.get_session().create_client(
        "s3", endpoint_url=served.url, region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    try:
        pages = client.get_paginator("list_objects_v2").paginate(Bucket="data", Prefix="images/", MaxKeys=4)
        keys = [item["Key"] for page in pages for item in page.get("Contents", [])]
        assert keys == sorted(f"images/{p.relative_to(served.root / 'data' / 'images').as_posix()}"
                              for p in (served.root / "data" / "images").rglob("*") if p.is_file())
        got = client.get_object(Bucket="data", Key="odd/a b+c é.bin", Range="bytes=10-19")
        assert got["Body"].read() == bytes(range(10, 20)) and got["ContentRange"] == "bytes 10-19/1024"
        with pytest.raises(client.exceptions.NoSuchKey):
            client.get_object(Bucket="data", Key="odd/none")
    finally:
        client.close()


@pytest.mark.parametrize(("header", "status", "body"), [
    ("bytes=0-3", 206, bytes(range(4))),
    ("bytes=1020-", 206, bytes(range(252, 256))),
    ("bytes=-2", 206, bytes([254, 255])),
    ("bytes=1000-5000", 206, bytes(range(232, 256))),
    (None, 200, bytes(range(256)) * 4),
    ("bytes=1024-", 416, None),
])
def test_ranges_are_answered_as_s3_answers_them(served, header, status, body):
    target = "/data/" + urllib.parse.quote("odd/a b+c é.bin")
    got_status, headers, data = _get(served, target, {"Range": header} if header else {})
    assert got_status == status
    if body is not None:
        assert data == body and int(headers["content-length"]) == len(body)
    else:
        assert b"<Code>InvalidRange</Code>" in data and headers["content-range"] == "bytes */1024"


@pytest.mark.parametrize(("target", "status", "code"), [
    ("/nobucket/x", 404, "NoSuchBucket"),
    ("/data/images/none.jpg", 404, "NoSuchKey"),
    ("/data/images/../shards/train-000000.tar", 400, "InvalidArgument"),
    ("/data?list-type=2&delimiter=/", 501, "NotImplemented"),
    ("/data", 501, "NotImplemented"),
])
def test_errors_carry_s3s_codes(served, target, status, code):
    got_status, headers, data = _get(served, target)
    assert got_status == status and headers["content-type"] == "application/xml"
    assert f"<Code>{code}</Code>" in data.decode()


def test_writes_are_refused_and_the_connection_serves_on(served):
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    try:
        conn.request("PUT", "/data/new.bin", body=b"x" * 5000)
        answer = conn.getresponse()
        assert answer.status == 501 and b"NotImplemented" in answer.read()
        assert not (served.root / "data" / "new.bin").exists()
        status, _, data = _get(served, "/data/odd/" + urllib.parse.quote("a b+c é.bin"), {"Range": "bytes=0-0"}, conn=conn)
        assert (status, data) == (206, b"\x00")  # the same connection, kept open
    finally:
        conn.close()


def test_listing_pages_with_a_token_and_url_encoded_keys(served):
    first = _get(served, "/data?list-type=2&prefix=odd/&encoding-type=url&max-keys=1")[2].decode()
    assert "<IsTruncated>false</IsTruncated>" in first and "<EncodingType>url</EncodingType>" in first
    key = re.search(r"<Key>([^<]*)</Key>", first).group(1)
    assert urllib.parse.unquote_plus(key) == "odd/a b+c é.bin"
    paged = _get(served, "/data?list-type=2&prefix=shards/&max-keys=2")[2].decode()
    token = re.search(r"<NextContinuationToken>([^<]*)<", paged).group(1)
    rest = _get(served, "/data?list-type=2&prefix=shards/&continuation-token=" + urllib.parse.quote(token))[2].decode()
    assert re.findall(r"<Key>([^<]*)</Key>", paged) + re.findall(r"<Key>([^<]*)</Key>", rest) == [
        f"shards/train-{s:06d}.tar" for s in range(3)]


def test_the_server_is_gone_after_stop(tmp_path):
    (tmp_path / "b").mkdir()
    server = FileS3Server(tmp_path, max_lifetime_s=60).start()
    pid, port = server.pid, server.port
    server.stop()
    assert server.pid is None and _gone(pid)
    with socket.socket() as s, pytest.raises(OSError):
        s.settimeout(2)
        s.connect(("127.0.0.1", port))


def _gone(pid: int) -> bool:
    # stop() waits for the child, so its pid is free (or already another process's, not this server's)
    try:
        return "s3files" not in Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return True
