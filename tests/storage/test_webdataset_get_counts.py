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
    return md.WebDataset("s3://data/counted/shard-*.tar", storage_options=options(faults.url), num_parallel_workers=2, **kw)


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
