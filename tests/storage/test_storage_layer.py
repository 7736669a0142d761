"""minddata.dataset._storage: URLs, settings, reads and the retry loop, against the local S3 server."""

from __future__ import annotations

import pickle
import time

import pytest
from s3kit import SECRET, options

from minddata.dataset import _storage as st
from minddata.errors import ArgumentError

BLOB = bytes(range(256)) * 64  # 16 KiB


@pytest.fixture(scope="module")
def blob_url(s3_client):
    s3_client.put_object(Bucket="data", Key="layer/blob.bin", Body=BLOB)
    return st.split_url("s3://data/layer/blob.bin")


def store(endpoint, **extra):
    return st.ObjectStore("s3", st.StorageOptions("test", options(endpoint, **extra)))


@pytest.mark.parametrize("text, want", [
    ("s3://bucket/a/b.tar", st.ObjectURL("s3", "bucket", "a/b.tar")),
    ("gs://bucket/", st.ObjectURL("gs", "bucket", "")),
    ("S3A://bucket/k", st.ObjectURL("s3", "bucket", "k")),
    ("https://host/x.tar?v=1", st.ObjectURL("https", "", "https://host/x.tar?v=1")),
    ("file:///tmp/x", "/tmp/x"),
    ("relative/path", "relative/path"),
])
def test_split_url(text, want):
    assert st.split_url(text) == want


def test_unknown_scheme_is_refused():
    with pytest.raises(ArgumentError, match="ftp:// is not one minddata reads"):
        st.split_url("ftp://host/x")


def test_options_repr_and_errors_hide_secrets():
    opts = st.StorageOptions("test", {"aws_secret_access_key": SECRET, "token": SECRET + "t", "key": "AKID"})
    assert SECRET not in repr(opts) and "<redacted>" in repr(opts)
    assert pickle.loads(pickle.dumps(opts)) == opts
    with pytest.raises(ArgumentError) as info:
        st.StorageOptions("test", {"secret": 12345})
    assert "12345" not in str(info.value)
    assert st.redact_options({"secret": SECRET, "endpoint_url": "x"}) == {"secret": "<redacted>", "endpoint_url": "x"}


def test_ranged_and_whole_reads(s3_server, blob_url):
    s = store(s3_server)
    assert s.read(blob_url) == BLOB
    assert s.read(blob_url, 100, 5000) == BLOB[100:5000]
    assert s.size(blob_url) == len(BLOB)


def test_ranged_file_reads_like_a_local_file(s3_server, blob_url):
    f = st.RangedFile(store(s3_server), blob_url, block=1000)
    f.seek(3000)
    assert f.read(10) == BLOB[3000:3010]
    f.seek(-20, 2)
    assert f.read() == BLOB[-20:]


def _ahead_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name == "minddata-storage-ahead" and t.is_alive()]


def test_a_file_read_front_to_back_reads_its_next_block_ahead(s3_server, blob_url):
    f = st.RangedFile(store(s3_server), blob_url, block=1000, read_ahead=True)
    got = bytearray(f.read(10))
    assert (f._ahead.start, f._ahead.end) == (1000, 2000)  # the next block's GET, started on entering the first
    while piece := f.read(333):
        got += piece
        assert f._ahead is None or f._ahead.start == f._cached_at + len(f._cached)
    assert bytes(got) == BLOB
    f.close()
    assert f._ahead is None and not _ahead_threads()


def test_reads_across_block_ends_keep_the_blocks_in_step(s3_server, blob_url):
    # Reads of 700 bytes over blocks of 1000: most run past a block's end; the next block is joined to
    # the tail, so every block wanted is the one read ahead.
    f = st.RangedFile(store(s3_server), blob_url, block=1000, read_ahead=True)
    got, starts = bytearray(), []
    while piece := f.read(700):
        got += piece
        if f._ahead is not None:
            starts.append(f._ahead.start)
    assert bytes(got) == BLOB
    assert sorted(set(starts)) == list(range(1000, len(BLOB), 1000))
    f.close()


def test_a_seek_elsewhere_drops_the_block_read_ahead(s3_server, blob_url):
    f = st.RangedFile(store(s3_server), blob_url, block=1000, read_ahead=True)
    assert f.read(600) + f.read(600) == BLOB[:1200]  # two blocks in order: the third read ahead
    assert f._ahead.start == 2000
    f.seek(9000)
    assert f.read(100) == BLOB[9000:9100]  # not where the last block ended: nothing read ahead
    assert f._ahead is None
    f.close()
    assert not _ahead_threads()


def test_without_read_ahead_no_block_is_read_ahead(s3_server, blob_url):
    f = st.RangedFile(store(s3_server), blob_url, block=1000)
    assert f.read(2500) == BLOB[:2500] and f._ahead is None


def test_open_file_reads_ahead_for_large_blocks_only(s3_server, blob_url, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{s3_server}")
    with st.open_file("s3://data/layer/blob.bin", "rb") as f:
        assert f.raw._read_ahead and f.read() == BLOB
    with st.open_file("s3://data/layer/blob.bin", "rb", block=64 << 10) as f:
        assert not f.raw._read_ahead and f.read(5) == BLOB[:5]
    assert not _ahead_threads()


def test_neighbouring_ranges_are_one_request(blob_url, faults):
    s = store(faults.url)
    want = [(blob_url, 100 * i, 100 * i + 50) for i in range(10)]
    assert s.read_many(want) == [BLOB[a:b] for _, a, b in want]
    assert faults.counts["requests"] == 1


def test_retries_are_bounded_in_count(blob_url, faults):
    faults.set_rates({"503": 1.0})
    with pytest.raises(st.StorageError) as info:
        store(faults.url, max_attempts=4).read(blob_url, 0, 10)
    assert info.value.attempts == 4 and info.value.status == 503 and faults.counts["503"] == 4
    assert "s3://data/layer/blob.bin" in str(info.value) and "4 tries" in str(info.value)


def test_retries_are_bounded_in_time(blob_url, faults):
    faults.set_rates({"drop": 1.0})
    began = time.monotonic()
    with pytest.raises(st.StorageError) as info:
        store(faults.url, max_attempts=10_000, retry_time_s=0.5, retry_base_s=0.05, retry_max_delay_s=0.1).read(blob_url)
    assert time.monotonic() - began < 5
    assert 1 < info.value.attempts < 10_000 and info.value.status is None


def test_cut_bodies_are_retried_to_the_exact_bytes(blob_url, faults):
    faults.set_rates({"cut": 0.3, "503": 0.1}, seed=1)
    s = store(faults.url)
    for i in range(10):
        assert s.read(blob_url, 1000 * i, 1000 * i + 3000) == BLOB[1000 * i:1000 * i + 3000]


def _walk(f, offsets, piece):
    """What ``read_on`` gives at each offset, read to ``piece`` bytes (or the object's end)."""
    out = []
    for offset in offsets:
        buffer = bytearray(piece)
        filled = 0
        while filled < piece:
            got = f.read_on(offset + filled, memoryview(buffer)[filled:])
            if not got:
                break
            filled += got
        out.append(bytes(buffer[:filled]))
    return out


def test_a_ranged_files_positional_read_leaves_its_position(s3_server, blob_url):
    f = st.RangedFile(store(s3_server), blob_url, block=1000)
    f.seek(100)
    assert _walk(f, [3000, 16_300], 200) == [BLOB[3000:3200], BLOB[16_300:]]
    assert f.tell() == 100 and f.read(10) == BLOB[100:110]


def test_a_streamed_walk_reads_on_over_short_skips_with_one_get(blob_url, faults):
    f = st.StreamedFile(store(faults.url), blob_url, len(BLOB), window=1000, skip=4000)
    offsets = [0, 700, 3000, 6500, 10_000, 13_500, 16_300]  # forward skips of at most 3,300 bytes; the last piece ends at the end
    assert _walk(f, offsets, 200) == [BLOB[o:o + 200] for o in offsets]
    assert f.gets == 1 and faults.counts["requests"] == 1


def test_a_streamed_walk_starts_a_new_get_past_a_long_skip_and_behind_the_window(blob_url, faults):
    f = st.StreamedFile(store(faults.url), blob_url, len(BLOB), window=1000, skip=4000)
    assert _walk(f, [0, 9000, 100], 50) == [BLOB[0:50], BLOB[9000:9050], BLOB[100:150]]
    assert f.gets == 3


def test_a_streamed_walk_takes_what_the_window_holds_without_a_get(blob_url, faults):
    f = st.StreamedFile(store(faults.url), blob_url, len(BLOB), window=4096)
    assert f.read(3000) == BLOB[:3000]  # kept in the window
    assert _walk(f, [0, 2500, 2900], 100) == [BLOB[0:100], BLOB[2500:2600], BLOB[2900:3000]]
    assert f.gets == 1


def test_a_streamed_walk_is_retried_to_the_exact_bytes(blob_url, faults):
    faults.set_rates({"cut": 0.3, "503": 0.1}, seed=1)
    f = st.StreamedFile(store(faults.url), blob_url, len(BLOB), window=1000, skip=4000)
    offsets = list(range(0, len(BLOB), 1500))
    assert _walk(f, offsets, 512) == [BLOB[o:o + 512] for o in offsets]
    assert faults.counts.get("cut", 0) + faults.counts.get("503", 0) > 0


def test_missing_object_is_not_retried_and_hides_the_secret(s3_server, s3_client):
    s = store(s3_server, access_key_id="AKIDTESTING0000", secret_access_key=SECRET)
    with pytest.raises(st.StorageError) as info:
        s.read(st.split_url("s3://data/layer/none.bin"))
    assert info.value.attempts == 1 and info.value.status == 404
    assert "no such object" in str(info.value) and SECRET not in str(info.value) and SECRET not in repr(s)


def test_a_read_is_one_signed_get(blob_url, faults):
    # signed in its headers: the target is the object's path alone, no presigned query
    assert store(faults.url).read(blob_url, 5, 25) == BLOB[5:25]
    assert faults.requests == [("GET", "/data/layer/blob.bin", "bytes=5-24")]


def test_a_missing_object_is_one_request_named_by_its_code(blob_url, faults):
    with pytest.raises(st.StorageError) as info:
        store(faults.url).read(st.split_url("s3://data/layer/none.bin"))
    assert info.value.attempts == 1 and info.value.status == 404 and "NoSuchKey" in str(info.value)
    assert faults.requests == [("GET", "/data/layer/none.bin", "")]


def test_a_session_token_never_reaches_an_error(blob_url, faults):
    faults.set_rates({"drop": 0.5, "503": 0.5})
    s = store(faults.url, access_key_id="AKIDTESTING0000", secret_access_key=SECRET, session_token=SECRET + "-token",
              max_attempts=3)
    with pytest.raises(st.StorageError) as info:
        s.read(blob_url, 0, 10)
    text = f"{info.value}\n{info.value!r}"
    assert SECRET not in text and "X-Amz-" not in text and info.value.attempts == 3


def test_http_store_reads_ranges(s3_server, s3_client, blob_url):
    s3_client.put_object_acl(Bucket="data", Key="layer/blob.bin", ACL="public-read")
    url = st.split_url(f"http://127.0.0.1:{s3_server}/data/layer/blob.bin")
    s = st.get_store(url, st.StorageOptions("test", options(s3_server)))
    assert s.size(url) == len(BLOB) and s.read(url, 10, 20) == BLOB[10:20]


def test_http_store_streams_a_walk(s3_server, s3_client, blob_url):
    s3_client.put_object_acl(Bucket="data", Key="layer/blob.bin", ACL="public-read")
    url = st.split_url(f"http://127.0.0.1:{s3_server}/data/layer/blob.bin")
    f = st.StreamedFile(st.get_store(url, st.StorageOptions("test", options(s3_server))), url, len(BLOB), skip=4000)
    assert _walk(f, [5, 3000, 12_000], 700) == [BLOB[5:705], BLOB[3000:3700], BLOB[12_000:12_700]]
    assert f.gets == 2  # the third offset is past the skip


def test_concurrent_reads_leave_no_threads(s3_server, blob_url):
    import threading

    s = store(s3_server, requests_in_flight=4)
    want = [(blob_url, 5000 * i, 5000 * i + 10) for i in range(3)]  # too far apart to merge
    assert s.read_many(want, gap=0) == [BLOB[a:b] for _, a, b in want]
    assert not [t for t in threading.enumerate() if t.name.startswith("minddata-storage")]


def test_environment_secret_is_scrubbed_from_messages(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    assert SECRET not in st._scrub(f"signature for {SECRET} failed", [])


def test_a_changed_environment_gets_another_client(s3_server, monkeypatch):
    url = st.split_url("s3://data/x")
    first = st.get_store(url, st.StorageOptions("test"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{s3_server}")
    second = st.get_store(url, st.StorageOptions("test"))
    assert first is not second and second.endpoint() == f"http://127.0.0.1:{s3_server}"


@pytest.mark.parametrize("url", ["s3://data/x/a.bin", "gs://data/x/a.bin"])
def test_a_read_without_an_endpoint_option_goes_nowhere_in_these_tests(url):
    # The fixtures' default endpoints lead to a closed local port: a read that ignores its options
    # fails here, naming where it tried, and never reaches a public cloud.
    fast = {"retry_base_s": 0.005, "retry_max_delay_s": 0.05, "max_attempts": 2, "retry_time_s": 5}
    with pytest.raises(st.StorageError, match=r"127\.0\.0\.1:9"):
        st.get_store(st.split_url(url), st.StorageOptions("test", fast)).read(st.split_url(url))


def test_presigned_query_is_hidden_in_errors(s3_server):
    url = st.split_url(f"http://127.0.0.1:{s3_server}/data/layer/none.bin?X-Amz-Signature=abcdef123456")
    with pytest.raises(st.StorageError) as info:
        st.get_store(url, st.StorageOptions("test", options(s3_server))).read(url)
    assert "abcdef123456" not in str(info.value) and "/data/layer/none.bin?<query hidden>" in str(info.value)


def test_an_http_server_that_ignores_ranges_is_named_with_the_fix(tmp_path):
    import functools
    import http.server
    import threading

    (tmp_path / "whole.bin").write_bytes(BLOB)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))  # answers 200, never 206
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = st.split_url(f"http://127.0.0.1:{server.server_port}/whole.bin")
        http_store = st.get_store(url, st.StorageOptions("test"))
        assert http_store.read(url) == BLOB  # a whole-file read needs no range
        for read in (lambda: http_store.read(url, 10, 20), lambda: http_store.open_body(url, 10)):
            with pytest.raises(ArgumentError, match=r"whole.bin: the server ignores byte ranges \(status 200, not 206\)"
                                                    r".*server that answers Range requests, or download it"):
                read()
    finally:
        server.shutdown()
        server.server_close()


def test_a_files_first_block_read_ahead_is_the_one_its_reader_takes(s3_client, faults):
    s3_client.put_object(Bucket="data", Key="layer/ahead/a.bin", Body=BLOB)
    [path] = st.expand_remote("test", ["s3://data/layer/ahead/a*.bin"], st.StorageOptions("test", options(faults.url)))
    faults.set_rates({})
    forget = st.read_first_block_ahead(path)
    with st.open_file(path, "rb") as f:
        assert f.read(12) + f.read() == BLOB  # a record's header, then the rest: from the block read ahead
    forget()
    gets = [r for r in faults.requests if r[0] == "GET"]
    assert len(gets) == 1 and not [r for r in faults.requests if r[0] == "HEAD"]  # the size came from the listing
    assert not _ahead_threads()


def test_a_first_block_no_file_takes_is_waited_out_and_forgotten(s3_client, faults):
    s3_client.put_object(Bucket="data", Key="layer/ahead/b.bin", Body=BLOB)
    [path] = st.expand_remote("test", ["s3://data/layer/ahead/b*.bin"], st.StorageOptions("test", options(faults.url)))
    forget = st.read_first_block_ahead(path)
    forget()
    store, url = st.store_of(path)
    assert store._take_announced(url, 0, len(BLOB)) is None and not _ahead_threads()


def test_a_local_file_has_nothing_read_ahead(tmp_path):
    (tmp_path / "x").write_bytes(b"local")
    st.read_first_block_ahead(str(tmp_path / "x"))()
    assert not _ahead_threads()


def test_a_local_file_is_written_whole_or_not_at_all(tmp_path):
    target = tmp_path / "shard-000000.idx"
    st.write_file(str(target), b"v1.2 0\n")
    assert target.read_bytes() == b"v1.2 0\n" and sorted(p.name for p in tmp_path.iterdir()) == ["shard-000000.idx"]
    with pytest.raises(TypeError):
        st.write_file(str(target), "not bytes")  # fails while writing: the old file stays, no temporary file is left
    assert target.read_bytes() == b"v1.2 0\n" and sorted(p.name for p in tmp_path.iterdir()) == ["shard-000000.idx"]


def test_exists_asks_a_listing_first_then_a_head(s3_client, faults):
    s3_client.put_object(Bucket="data", Key="exists/a.bin", Body=b"x")
    settings = st.StorageOptions("test", options(faults.url))
    assert st.exists("s3://data/exists/a.bin", settings) and not st.exists("s3://data/exists/b.bin", settings)
    assert [m for m, _, _ in faults.requests] == ["HEAD", "HEAD"]
    st.get_store(st.split_url("s3://data/exists/"), settings).list(st.split_url("s3://data/exists/"))
    faults.set_rates({})  # forgets the requests so far
    assert st.exists("s3://data/exists/a.bin", settings) and not st.exists("s3://data/exists/c.bin", settings)
    assert list(faults.requests) == []  # the listing told both
