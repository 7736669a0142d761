"""WebDataset shards in object storage: how many GETs a pass costs, counted at the proxy in front of
the S3 server (deterministic counts of requests, not timings)."""

from __future__ import annotations

import io
import math
import random
import tarfile

import pytest
from s3kit import BUCKET, options

import minddata as md

SHARDS = 3
SAMPLES = 40  # per shard
CHUNK_ROWS = 32  # WebDataset's rows per chunk of shards in object storage
IMAGE_BYTES = 30_000  # a shard is about 1.3 MB: more than one 1 MiB block


def _shard(s: int, samples: int, image_bytes: int) -> bytes:
    rng = random.Random(s)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(samples):
            for ext, data in (("jpg", rng.randbytes(image_bytes)), ("cls", str(i % 5).encode())):
                info = tarfile.TarInfo(f"s{s}_{i:03d}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(scope="module")
def counted_shards(s3_client):
    """``s3://data/counted/shard-{0..2}.tar``: 40 samples each (30 KB ``jpg``, ``cls``); their bytes."""
    shards = [_shard(s, SAMPLES, IMAGE_BYTES) for s in range(SHARDS)]
    for s, data in enumerate(shards):
        s3_client.put_object(Bucket=BUCKET, Key=f"counted/shard-{s}.tar", Body=data)
    return shards


def _gets(proxy) -> list[tuple[str, str]]:
    """(target, Range) of the GETs of the shards, listings left out."""
    return [(target, ranged) for method, target, ranged in list(proxy.requests)
            if method == "GET" and "/counted/" in target and "list-type" not in target]


def _keys(ds) -> list[str]:
    return [str(r["__key__"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def _dataset(faults, **kw):
    kw.setdefault("columns_list", ["__key__", "jpg", "cls"])
    kw.setdefault("num_parallel_workers", 2)
    return md.WebDataset("s3://data/counted/shard-*.tar", storage_options=options(faults.url), **kw)


def test_indexing_reads_each_shard_with_one_get_and_no_head(counted_shards, faults):
    ds = _dataset(faults, columns_list=None, shuffle=False)  # no columns_list: indexed now
    assert ds.get_col_names() == ["__key__", "cls", "jpg"]
    assert sorted(_gets(faults)) == [(f"/{BUCKET}/counted/shard-{s}.tar", "bytes=0-") for s in range(SHARDS)]
    assert [m for m, _, _ in faults.requests if m == "HEAD"] == []


def test_in_order_pass_costs_one_get_per_chunk_of_a_shard(counted_shards, faults):
    ds = _dataset(faults, shuffle=False)
    keys = _keys(ds)
    assert keys == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    sample_gets = [g for g in _gets(faults) if g[1] != "bytes=0-"]
    assert 0 < len(sample_gets) <= SHARDS * math.ceil(SAMPLES / CHUNK_ROWS)


def test_in_order_pass_streams_each_shard_with_one_get(counted_shards, faults):
    ds = _dataset(faults, shuffle=False, num_parallel_workers=1)  # one worker: its chunks come strictly in order
    assert _keys(ds) == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    sample_gets = [g for g in _gets(faults) if g[1] != "bytes=0-"]
    assert sorted(sample_gets) == [(f"/{BUCKET}/counted/shard-{s}.tar", "bytes=512-") for s in range(SHARDS)]


def test_in_order_pass_sends_each_next_shards_get_ahead(counted_shards, faults, monkeypatch):
    import threading

    from minddata.dataset import _storage

    opened_by: dict[str, list[str]] = {}  # shard → the threads that sent its samples' streaming GETs
    original = _storage.ObjectStore.open_body

    def recorded(store, url, start):
        if start:  # from the first sample (512), not the index's read from byte 0
            opened_by.setdefault(url.key, []).append(threading.current_thread().name)
        return original(store, url, start)

    monkeypatch.setattr(_storage.ObjectStore, "open_body", recorded)
    ds = _dataset(faults, shuffle=False, num_parallel_workers=1)
    assert _keys(ds) == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    # every shard after the first was asked for ahead, by the thread that sends GETs ahead, and read
    # through that one GET: no shard's first chunk sent its own
    streamed = {key: threads for key, threads in opened_by.items() if key.startswith("counted/")}
    assert [len(streamed[f"counted/shard-{s}.tar"]) for s in range(SHARDS)] == [1] * SHARDS
    assert all(streamed[f"counted/shard-{s}.tar"] == ["minddata-shard-open"] for s in range(1, SHARDS))
    sample_gets = [g for g in _gets(faults) if g[1] != "bytes=0-"]
    assert sorted(sample_gets) == [(f"/{BUCKET}/counted/shard-{s}.tar", "bytes=512-") for s in range(SHARDS)]


def test_a_pass_after_one_left_a_shard_half_read_streams_it_again(counted_shards, faults):
    ds = _dataset(faults, shuffle=False, num_parallel_workers=1)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    assert [str(next(it)["__key__"]) for _ in range(SAMPLES + 5)][-1] == "s1_004"  # shard 1 left half read
    it.close()
    before = len(_gets(faults))
    assert _keys(ds) == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    again = _gets(faults)[before:]
    # shards 0 and 1 stream again; shard 2's GET may have been sent ahead in the first pass, near
    # shard 1's end, and serves this pass from its first byte
    streamed = [(f"/{BUCKET}/counted/shard-{s}.tar", "bytes=512-") for s in range(SHARDS)]
    assert sorted(again) in (streamed, streamed[:2])


def test_files_shuffled_pass_streams_each_shard_with_one_get(counted_shards, faults):
    md.config.set_seed(7)
    ds = _dataset(faults, shuffle=md.Shuffle.FILES, num_parallel_workers=1)
    assert sorted(_keys(ds)) == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    sample_gets = [g for g in _gets(faults) if g[1] != "bytes=0-"]
    assert sorted(sample_gets) == [(f"/{BUCKET}/counted/shard-{s}.tar", "bytes=512-") for s in range(SHARDS)]


def test_globally_shuffled_pass_reads_by_ranges(counted_shards, faults):
    md.config.set_seed(7)
    ds = _dataset(faults, shuffle=md.Shuffle.GLOBAL, num_parallel_workers=1)
    assert sorted(_keys(ds)) == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    sample_ranges = [r for _, r in _gets(faults) if r != "bytes=0-"]
    assert sample_ranges and all(not r.endswith("-") for r in sample_ranges)  # closed ranges, no stream


def test_files_shuffled_pass_costs_one_get_per_chunk_of_a_shard(counted_shards, faults):
    md.config.set_seed(7)
    ds = _dataset(faults, shuffle=md.Shuffle.FILES)
    assert sorted(_keys(ds)) == [f"s{s}_{i:03d}" for s in range(SHARDS) for i in range(SAMPLES)]
    sample_gets = [g for g in _gets(faults) if g[1] != "bytes=0-"]
    assert 0 < len(sample_gets) <= SHARDS * math.ceil(SAMPLES / CHUNK_ROWS)


def test_samples_read_while_the_index_is_cached_cost_no_get(counted_shards, faults, tmp_path):
    ds = md.WebDataset("s3://data/counted/shard-*.tar", shuffle=False, num_parallel_workers=2,
                       storage_options=options(faults.url), cache_dir=str(tmp_path / "cache"))  # indexed now
    indexed = len(_gets(faults))
    assert indexed > 0
    assert len(_keys(ds)) == SHARDS * SAMPLES
    assert len(_gets(faults)) == indexed


def test_a_long_member_is_skipped_by_a_new_get_while_indexing(s3_client, faults):
    big = 9 << 20  # more than the 8 MiB a streamed index reads on through
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in (("a.bin", bytes(big)), ("a.cls", b"1"), ("b.bin", b"xyz"), ("b.cls", b"2")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    s3_client.put_object(Bucket=BUCKET, Key="counted-big/one.tar", Body=out.getvalue())
    try:
        ds = md.WebDataset("s3://data/counted-big/one.tar", shuffle=False, storage_options=options(faults.url))
        gets = [r for m, t, r in faults.requests if m == "GET" and t.endswith("/counted-big/one.tar")]
        assert gets[0] == "bytes=0-" and len(gets) == 2
        assert int(gets[1][len("bytes="):-1]) >= big  # the second starts past the long member's data
        rows = [(str(r["__key__"]), int(r["cls"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
        assert rows == [("a", 1), ("b", 2)]
    finally:
        s3_client.delete_object(Bucket=BUCKET, Key="counted-big/one.tar")


def test_index_read_through_cut_connections_matches_the_local_index(counted_shards, faults, tmp_path):
    for s, data in enumerate(counted_shards):
        (tmp_path / f"shard-{s}.tar").write_bytes(data)
    faults.set_rates({"cut": 0.3, "drop": 0.1, "503": 0.1}, seed=4)
    remote = _keys(_dataset(faults, columns_list=None, shuffle=False))
    assert faults.counts.get("cut", 0) > 0
    faults.set_rates({})
    assert remote == _keys(md.WebDataset(str(tmp_path / "shard-*.tar"), shuffle=False))


# -- the kept index -------------------------------------------------------------------------------


def _index_gets(proxy, prefix="/counted/") -> int:
    return sum(1 for method, target, ranged in list(proxy.requests)
               if method == "GET" and prefix in target and ranged == "bytes=0-")


def _kept_entries(root) -> list:
    folder = root / "shard-index"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_later_run_reads_the_kept_index_instead_of_the_shards(counted_shards, faults, tmp_path):
    first = _keys(_dataset(faults, shuffle=False))
    assert _index_gets(faults) == SHARDS
    assert len(_kept_entries(tmp_path / "minddata-cache")) == SHARDS  # $MINDDATA_CACHE (tests/s3kit.py)
    faults.set_rates({})  # forgets the requests so far
    assert _keys(_dataset(faults, shuffle=False)) == first
    assert _index_gets(faults) == 0


_INDEX_ONCE_READY = """
import os, sys, time
import minddata as md
ready, go = sys.argv[1], sys.argv[2]
open(ready, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.001)
ds = md.WebDataset("s3://data/counted/shard-*.tar", storage_options={"endpoint_url": sys.argv[3]})
print(ds.get_dataset_size())
"""


def test_processes_that_start_together_index_each_shard_once(counted_shards, faults, tmp_path):
    import subprocess
    import sys
    import time

    faults.set_rates({"delay": 1.0})  # 50 ms a request: both processes find no kept index, then index
    go = tmp_path / "go"
    children = [subprocess.Popen([sys.executable, "-c", _INDEX_ONCE_READY, str(tmp_path / f"ready-{i}"), str(go), faults.url],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"ready-{i}").exists() for i in range(2)) and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()  # both imported and waiting: they start within milliseconds of each other
        outputs = [child.communicate(timeout=60) for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert [c.returncode for c in children] == [0, 0], [err[-2000:] for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == [str(SHARDS * SAMPLES)] * 2
    assert _index_gets(faults) == SHARDS  # one walk of each shard, not one per process


def test_index_cache_false_indexes_every_run_and_keeps_nothing(counted_shards, faults, tmp_path):
    for _ in range(2):
        faults.set_rates({})
        ds = md.WebDataset("s3://data/counted/shard-*.tar", shuffle=False,
                           storage_options=options(faults.url, index_cache=False))
        assert ds.get_dataset_size() == SHARDS * SAMPLES
        assert _index_gets(faults) == SHARDS
    assert _kept_entries(tmp_path / "minddata-cache") == []


def test_with_a_cache_dir_the_index_is_kept_there(counted_shards, faults, tmp_path):
    md.WebDataset("s3://data/counted/shard-*.tar", storage_options=options(faults.url), cache_dir=str(tmp_path / "mine"))
    assert len(_kept_entries(tmp_path / "mine")) == SHARDS
    assert _kept_entries(tmp_path / "minddata-cache") == []


def _named_shard(prefix: str) -> bytes:
    """Two samples ``<prefix>0``, ``<prefix>1``: shards of prefixes of one length have one size."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(2):
            info = tarfile.TarInfo(f"{prefix}{i}.cls")
            info.size = 1
            tar.addfile(info, io.BytesIO(str(i).encode()))
    return out.getvalue()


def test_a_shard_changed_in_the_bucket_is_indexed_again(s3_client, faults):
    key = "changing/shard.tar"
    before, after = _named_shard("old"), _named_shard("new")
    assert len(before) == len(after)  # only the version tag (ETag) tells them apart
    try:
        for data, want in ((before, ["old0", "old1"]), (after, ["new0", "new1"])):
            s3_client.put_object(Bucket=BUCKET, Key=key, Body=data)
            faults.set_rates({})
            ds = md.WebDataset(f"s3://data/{key}", shuffle=False, storage_options=options(faults.url))
            assert _keys(ds) == want
            assert _index_gets(faults, "/changing/") == 1
    finally:
        s3_client.delete_object(Bucket=BUCKET, Key=key)


@pytest.mark.parametrize("damage", ["garbage", "cut short", "offsets past the end"])
def test_a_damaged_kept_index_is_rebuilt(counted_shards, faults, tmp_path, damage):
    from minddata.dataset import webdataset as impl

    first = _keys(_dataset(faults, shuffle=False))
    for path in _kept_entries(tmp_path / "minddata-cache"):
        data = path.read_bytes()
        if damage == "garbage":
            data = b"not an index" * 10
        elif damage == "cut short":
            data = data[: len(data) // 2]
        else:
            kept = impl._decode_index("kept", data, 1 << 62)
            kept.offsets = kept.offsets + (1 << 40)
            data = impl._encode_index(kept)
        path.write_bytes(data)
    faults.set_rates({})
    assert _keys(_dataset(faults, shuffle=False)) == first
    assert _index_gets(faults) == SHARDS


def test_index_cache_must_be_true_or_false():
    with pytest.raises(md.errors.ArgumentError, match=r"storage_options\['index_cache'\]` must be True or False. Found: 'no'"):
        md.WebDataset("s3://data/counted/shard-*.tar", storage_options={"index_cache": "no"})


def test_the_kept_indexes_stay_within_their_bound_over_runs(counted_shards, faults, tmp_path, monkeypatch):
    import os

    from minddata.dataset import webdataset as impl

    # Room for what survives the trim plus this run's three indexes (~5 KB each), so that no later
    # eviction, whenever the writing threads trigger it, takes an earlier entry too.
    monkeypatch.setattr(impl, "_INDEX_CACHE_BYTES", 128 << 10)
    monkeypatch.setattr(impl, "_INDEX_FOLDERS", {})  # as in a new process
    old = tmp_path / "minddata-cache" / "shard-index" / "00"
    old.mkdir(parents=True)
    for n in range(4):  # an earlier run's entries, 200 KiB in all, least recently used
        entry = old / f"{n:064x}"
        entry.write_bytes(bytes(50 << 10))
        os.utime(entry, (1, 1))
    _keys(_dataset(faults, shuffle=False))
    entries = _kept_entries(tmp_path / "minddata-cache")
    earlier = [p for p in entries if p.stat().st_size == 50 << 10]
    # The earlier entries were trimmed, oldest first, to 90% of the bound before this run kept its own.
    assert 0 < len(earlier) < 4 and sum(p.stat().st_size for p in earlier) <= 0.9 * (128 << 10)
    assert len(entries) - len(earlier) == SHARDS


def test_a_shard_minddata_wrote_is_indexed_from_its_first_bytes(s3_client, faults, tmp_path, monkeypatch):
    from minddata.dataset import webdataset as impl

    rows = md.NumpySlicesDataset({"__key__": [f"w{i:03d}" for i in range(12)], "cls": list(range(12))}, shuffle=False)
    rows.save(str(tmp_path / "w.tar"), num_files=2, file_type="webdataset")
    for path in sorted(tmp_path.glob("w-*.tar")):
        s3_client.put_object(Bucket=BUCKET, Key=f"written/{path.name}", Body=path.read_bytes())

    def walked(*args):
        raise AssertionError("the header walk ran")

    monkeypatch.setattr(impl, "_plain_members", walked)
    ds = md.WebDataset("s3://data/written/w-*.tar", shuffle=False, storage_options=options(faults.url, index_cache=False))
    assert [str(r["__key__"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)] == [
        f"w{i:03d}" for i in (*range(0, 12, 2), *range(1, 12, 2))]
    # per shard: the stream its index was read from (closed after the index member) and a read of the
    # 512-byte end-of-archive block after the last member; no walk through the shard's headers
    gets = [r for m, t, r in faults.requests if m == "GET" and "/written/" in t and "list-type" not in t]
    blocks = [r for r in gets if not r.endswith("-") and r.startswith("bytes=")
              and int(r[6:].split("-")[1]) - int(r[6:].split("-")[0]) == 511]
    assert gets.count("bytes=0-") == 2 and len(blocks) == 2
