"""MindDataset on minddata's Arrow record files in object storage: metadata and footer once, each
record batch by one ranged GET, rows equal to the local set's, exact under faults and on resume."""

from __future__ import annotations

import pytest
from s3kit import options

import minddata as md
from minddata.dataset._storage import StorageError
from minddata.errors import ArgumentError, DataFormatError

LOCAL = ["train.rec0", "train.rec1"]
URLS = ["s3://data/rec/train.rec0", "s3://data/rec/train.rec1"]


def rows(ds, **kw):
    return [(r["image"].tobytes(), int(r["label"]), r["grid"].tolist(), r["box"].tolist(), str(r["name"]))
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True, **kw)]


def test_one_url_reads_the_set_as_local(s3_server, s3_records):
    remote = md.MindDataset(URLS[0], shuffle=False, storage_options=options(s3_server))
    local = md.MindDataset(str(s3_records / LOCAL[0]), shuffle=False)
    want = rows(local)
    assert rows(remote) == want and len(want) == 2100


def test_batches_are_read_whole_not_row_by_row(s3_records, faults):
    ds = md.MindDataset(URLS, columns_list=["label", "name"], shuffle=False, storage_options=options(faults.url))
    labels = [int(r["label"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert sorted(labels) == list(range(2100))
    # telling the format: 3; per shard: the metadata at build, HEAD + footer at open, one GET per record batch (2)
    assert faults.counts["requests"] <= 3 + 2 * 5


def test_shuffled_shards_resume_exact_under_faults(s3_records, faults):
    md.config.set_seed(4)
    kw = dict(shuffle=True, num_shards=3, shard_id=1, num_parallel_workers=2)
    faults.set_rates({"503": 0.2, "drop": 0.1, "cut": 0.15, "delay": 0.05}, seed=3)
    remote = md.MindDataset(URLS, storage_options=options(faults.url), **kw)
    got = rows(remote)
    it = remote.create_dict_iterator(num_epochs=1, output_numpy=True)
    head = [int(next(it)["label"]) for _ in range(5)]
    tail = [label for _, label, *_ in rows(remote, state=it.get_state())]
    counts = dict(faults.counts)
    faults.set_rates({})
    want = rows(md.MindDataset([str(s3_records / name) for name in LOCAL], **kw))
    assert got == want and head + tail == [label for _, label, *_ in want] and len(want) == 700
    assert counts.get("503", 0) + counts.get("drop", 0) + counts.get("cut", 0) > 0


def test_second_epoch_reads_from_the_cache(s3_records, faults, tmp_path):
    ds = md.MindDataset(URLS, shuffle=False, storage_options=options(faults.url), cache_dir=tmp_path / "cache")
    first = rows(ds)
    before = faults.counts["requests"]
    again = md.MindDataset(URLS, columns_list=None, shuffle=False, storage_options=options(faults.url),
                           cache_dir=tmp_path / "cache")
    built = faults.counts["requests"]
    assert rows(again) == first and faults.counts["requests"] - built <= 2  # only the HEADs at open
    assert built > before


def test_missing_object_fails_at_build_with_the_url(s3_server, s3_records):
    with pytest.raises(StorageError, match=r"s3://data/rec/nope.rec failed: HTTP 404.*Fix: no such object"):
        md.MindDataset("s3://data/rec/nope.rec", storage_options=options(s3_server))


def test_missing_metadata_object_is_named(s3_server, s3_client, s3_records):
    s3_client.put_object(Bucket="data", Key="rec-nometa/train.rec0", Body=(s3_records / LOCAL[0]).read_bytes())
    with pytest.raises(DataFormatError, match=r"s3://data/rec-nometa/train.rec0.meta.json is missing"):
        md.MindDataset(["s3://data/rec-nometa/train.rec0"], storage_options=options(s3_server))


def test_shard_missing_from_the_set_is_named(s3_server, s3_client, s3_records):
    for suffix in ("", ".meta.json"):
        s3_client.put_object(Bucket="data", Key=f"rec-half/train.rec0{suffix}",
                             Body=(s3_records / (LOCAL[0] + suffix)).read_bytes())
    with pytest.raises(DataFormatError, match=r"s3://data/rec-half/train.rec1 does not exist, but train.rec0's set"):
        md.MindDataset("s3://data/rec-half/train.rec0", storage_options=options(s3_server))


def test_denied_access_names_the_url_and_the_fix(s3_records, faults):
    faults.deny = ("/data/rec/train.rec1",)
    with pytest.raises(StorageError, match=r"s3://data/rec/train.rec1.*403.*grant s3:GetObject"):
        md.MindDataset(URLS[0], storage_options=options(faults.url))


@pytest.mark.parametrize("scheme", ["http", "gs"])
def test_other_schemes_read_the_set(scheme, s3_server, s3_client, s3_records):
    for name in LOCAL:  # an http(s) URL is read without signing; one URL reads the whole set
        for key in (f"rec/{name}", f"rec/{name}.meta.json"):
            s3_client.put_object_acl(Bucket="data", Key=key, ACL="public-read")
    url = f"http://127.0.0.1:{s3_server}/data/rec/train.rec1" if scheme == "http" else "gs://data/rec/train.rec1"
    remote = md.MindDataset(url, columns_list=["label", "name"], shuffle=False, storage_options=options(s3_server))
    local = md.MindDataset(str(s3_records / LOCAL[1]), columns_list=["label", "name"], shuffle=False)
    got = [(int(r["label"]), str(r["name"])) for r in remote.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert got == [(int(r["label"]), str(r["name"])) for r in local.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert len(got) == 2100


def test_a_damaged_object_fails_its_checksum_naming_the_url(s3_server, s3_client, s3_records):
    data = bytearray((s3_records / LOCAL[0]).read_bytes())
    data[len(data) // 3] ^= 0xFF  # a byte of the first record batch's payload
    s3_client.put_object(Bucket="data", Key="rec-bad/train.rec0", Body=bytes(data))
    s3_client.put_object(Bucket="data", Key="rec-bad/train.rec0.meta.json",
                         Body=(s3_records / (LOCAL[0] + ".meta.json")).read_bytes())
    ds = md.MindDataset(["s3://data/rec-bad/train.rec0"], shuffle=False, storage_options=options(s3_server))
    with pytest.raises(DataFormatError, match=r"s3://data/rec-bad/train.rec0 is corrupted: .* fails its checksum"):
        rows(ds)


def test_a_truncated_object_is_refused_naming_the_url_and_the_fix(s3_server, s3_client, s3_records):
    data = (s3_records / LOCAL[0]).read_bytes()
    s3_client.put_object(Bucket="data", Key="rec-cut/train.rec0", Body=data[:-100])
    s3_client.put_object(Bucket="data", Key="rec-cut/train.rec0.meta.json",
                         Body=(s3_records / (LOCAL[0] + ".meta.json")).read_bytes())
    ds = md.MindDataset(["s3://data/rec-cut/train.rec0"], shuffle=False, storage_options=options(s3_server))
    with pytest.raises(DataFormatError, match=rf"s3://data/rec-cut/train.rec0 is truncated: {len(data) - 100} bytes, "
                                              rf"but its metadata says {len(data)}\. .*upload the set again"):
        rows(ds)


def test_an_object_listed_twice_is_refused_by_name(s3_server, s3_records):
    with pytest.raises(ArgumentError, match=r"`dataset_files` lists s3://data/rec/train.rec1 more than once"):
        md.MindDataset([URLS[1], URLS[0], URLS[1]], storage_options=options(s3_server))


def test_an_unreadable_metadata_object_is_named_with_the_fix(s3_server, s3_client, s3_records):
    s3_client.put_object(Bucket="data", Key="rec-badmeta/train.rec0", Body=(s3_records / LOCAL[0]).read_bytes())
    s3_client.put_object(Bucket="data", Key="rec-badmeta/train.rec0.meta.json", Body=b"{not json")
    with pytest.raises(DataFormatError, match=r"MindDataset: record file s3://data/rec-badmeta/train.rec0: its metadata "
                                              r"object s3://data/rec-badmeta/train.rec0.meta.json is not valid JSON .*Upload"):
        md.MindDataset(["s3://data/rec-badmeta/train.rec0"], storage_options=options(s3_server))
