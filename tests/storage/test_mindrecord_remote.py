"""MindDataset on MindRecord sets in object storage: header and .db once, rows by ranged GETs."""

from __future__ import annotations

import pytest
from s3kit import options

import minddata as md
from minddata.errors import ArgumentError, DataFormatError, MinddataError


def rows(ds, **kw):
    return [(r["image"].tobytes(), int(r["label"]), r["box"].tolist())
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True, **kw)]


def test_one_url_reads_the_set_as_local(s3_server, s3_mindrecord):
    remote = md.MindDataset("s3://data/mr/train.mindrecord0", shuffle=False, storage_options=options(s3_server))
    local = md.MindDataset(str(s3_mindrecord / "train.mindrecord0"), shuffle=False)
    assert rows(remote) == rows(local) and len(rows(local)) == 20


def test_shuffled_shards_resume_exact_under_faults(s3_mindrecord, faults):
    md.config.set_seed(2)
    kw = dict(shuffle=True, num_shards=2, shard_id=1, num_parallel_workers=2)
    faults.set_rates({"503": 0.2, "drop": 0.1, "cut": 0.15, "delay": 0.05}, seed=8)
    urls = ["s3://data/mr/train.mindrecord0", "s3://data/mr/train.mindrecord1"]
    remote = md.MindDataset(urls, storage_options=options(faults.url), **kw)
    got = rows(remote)
    it = remote.create_dict_iterator(num_epochs=1, output_numpy=True)
    head = [int(next(it)["label"]) for _ in range(4)]
    tail = [label for _, label, _ in rows(remote, state=it.get_state())]
    counts = dict(faults.counts)
    faults.set_rates({})
    want = rows(md.MindDataset([str(s3_mindrecord / "train.mindrecord0"), str(s3_mindrecord / "train.mindrecord1")], **kw))
    assert got == want and head + tail == [label for _, label, _ in want]
    assert counts.get("503", 0) + counts.get("drop", 0) + counts.get("cut", 0) > 0


def test_missing_index_names_the_db_url(s3_server, s3_client, s3_mindrecord):
    s3_client.put_object(Bucket="data", Key="mr-nodb/train.mindrecord0",
                         Body=(s3_mindrecord / "train.mindrecord0").read_bytes())
    with pytest.raises(DataFormatError, match=r"s3://data/mr-nodb/train.mindrecord0.db"):
        md.MindDataset(["s3://data/mr-nodb/train.mindrecord0"], storage_options=options(s3_server))


def test_missing_object_fails_at_build(s3_server, s3_mindrecord):
    with pytest.raises(MinddataError, match=r"s3://data/mr/nope.mindrecord.*404"):
        md.MindDataset("s3://data/mr/nope.mindrecord", storage_options=options(s3_server))


def test_a_prefix_is_refused(s3_server):
    with pytest.raises(ArgumentError, match="must name one record file"):
        md.MindDataset("s3://data/mr/", storage_options=options(s3_server))


def test_obs_mind_dataset_signature_reads_the_set(s3_server, s3_mindrecord):
    ds = md.OBSMindDataset(["obs://data/mr/train.mindrecord0", "s3://data/mr/train.mindrecord1"],
                           f"http://127.0.0.1:{s3_server}", "AKIDOBS", "OBS-SECRET-KEY-123", "s3://data/sync/",
                           shuffle=False)
    local = md.MindDataset([str(s3_mindrecord / "train.mindrecord0"), str(s3_mindrecord / "train.mindrecord1")],
                           shuffle=False)
    assert rows(ds) == rows(local)
    for text in (repr(ds), ds.explain(), str(md.serialize(ds))):
        assert "OBS-SECRET-KEY-123" not in text


def test_a_shard_encrypted_like_mindspores_is_named_as_such_in_object_storage(s3_server, s3_client):
    import struct

    block = bytes(range(256)) * 4
    s3_client.put_object(Bucket="data", Key="enc/e.mindrecord",
                         Body=struct.pack(">I", len(block)) + block + struct.pack(">I", 0) + b"AES-GCM" + b"ENCRYPT")
    with pytest.raises(DataFormatError, match=r"s3://data/enc/e\.mindrecord: it was encrypted by MindSpore"):
        md.MindDataset("s3://data/enc/e.mindrecord", storage_options=options(s3_server))
