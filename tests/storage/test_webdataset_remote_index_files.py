"""WebDataset shards in object storage with their index files next to them (DALI's format, written by
``minddata index`` or DALI's ``wds2idx``): a first run reads the index files, not the shards whole.
Requests are counted at the proxy in front of the S3 server."""

from __future__ import annotations

import io
import logging
import random
import tarfile

import pytest
from s3kit import BUCKET, options

import minddata as md
from minddata.cli import main as cli_main
from minddata.dataset.webdataset import write_index_files

SHARDS = 3
SAMPLES = 12


def _shard(s: int) -> bytes:
    rng = random.Random(s)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(SAMPLES):
            for ext, data in (("jpg", rng.randbytes(rng.randrange(100, 3000))), ("cls", str(i % 4).encode())):
                info = tarfile.TarInfo(f"s{s}_{i:03d}.{ext}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture
def shards(s3_client, tmp_path, request):
    """Three shards under a prefix of this test's own, in the bucket and in a local folder."""
    prefix = f"indexed-{request.node.name.replace('[', '-').replace(']', '')}"
    for s in range(SHARDS):
        data = _shard(s)
        (tmp_path / f"shard-{s:06d}.tar").write_bytes(data)
        s3_client.put_object(Bucket=BUCKET, Key=f"{prefix}/shard-{s:06d}.tar", Body=data)
    yield prefix, tmp_path
    listed = s3_client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/").get("Contents", [])
    for item in listed:
        s3_client.delete_object(Bucket=BUCKET, Key=item["Key"])


def _rows(ds):
    return [(str(r["__key__"]), bytes(r["jpg"]), int(r["cls"]))
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def _local(folder):
    return md.WebDataset(str(folder / "shard-*.tar"), shuffle=False)


def _shard_gets(proxy, prefix):
    return [(target, ranged) for method, target, ranged in list(proxy.requests)
            if method == "GET" and f"/{prefix}/" in target and target.endswith(".tar")]


def _index_gets(proxy, prefix):
    return [target for method, target, _ in list(proxy.requests)
            if method == "GET" and f"/{prefix}/" in target and target.endswith(".idx")]


def test_a_first_run_reads_the_index_files_instead_of_the_shards(shards, faults):
    prefix, folder = shards
    written = write_index_files(f"s3://{BUCKET}/{prefix}/shard-*.tar", storage_options=options(faults.url))
    assert written == [f"s3://{BUCKET}/{prefix}/shard-{s:06d}.idx" for s in range(SHARDS)]
    faults.set_rates({})  # forgets the requests so far
    ds = md.WebDataset(f"s3://{BUCKET}/{prefix}/shard-*.tar", shuffle=False, storage_options=options(faults.url))
    assert ds.get_dataset_size() == SHARDS * SAMPLES
    assert len(_index_gets(faults, prefix)) == SHARDS
    # two 512-byte reads per shard check its index (its first header, its end); no read of a whole shard
    ranges = [r[len("bytes="):].split("-") for _, r in _shard_gets(faults, prefix)]
    assert len(ranges) == 2 * SHARDS and all(int(b) - int(a) + 1 == 512 for a, b in ranges)
    assert _rows(ds) == _rows(_local(folder))


def test_index_files_of_dalis_wds2idx_are_read(shards, s3_client, faults):
    wds2idx = pytest.importorskip("wds2idx", reason="DALI's wds2idx (in the nvidia-dali wheel, Linux x86_64 only) is not installed")
    prefix, folder = shards
    for s in range(SHARDS):
        tar = folder / f"shard-{s:06d}.tar"
        with wds2idx.IndexCreator(str(tar), str(folder / f"shard-{s:06d}.idx"), verbose=False) as creator:
            creator.create_index()
        s3_client.put_object(Bucket=BUCKET, Key=f"{prefix}/shard-{s:06d}.idx",
                             Body=(folder / f"shard-{s:06d}.idx").read_bytes())
    ds = md.WebDataset(f"s3://{BUCKET}/{prefix}/shard-*.tar", shuffle=False, storage_options=options(faults.url))
    assert _rows(ds) == _rows(_local(folder))
    assert not [r for _, r in _shard_gets(faults, prefix) if r == "bytes=0-"]  # no shard read whole


def test_an_index_file_of_another_shard_is_ignored_with_a_warning(shards, s3_client, faults, caplog):
    prefix, folder = shards
    write_index_files(str(folder / "shard-*.tar"))
    for s in range(SHARDS):  # shard 0's index next to shard 1 too: other names and offsets
        s3_client.put_object(Bucket=BUCKET, Key=f"{prefix}/shard-{s:06d}.idx",
                             Body=(folder / f"shard-{0 if s == 1 else s:06d}.idx").read_bytes())
    with caplog.at_level(logging.WARNING, logger="minddata"):
        ds = md.WebDataset(f"s3://{BUCKET}/{prefix}/shard-*.tar", shuffle=False, storage_options=options(faults.url))
        assert _rows(ds) == _rows(_local(folder))
    (message,) = [r.getMessage() for r in caplog.records if ".idx" in r.getMessage()]
    assert f"the index file s3://{BUCKET}/{prefix}/shard-000001.idx of s3://{BUCKET}/{prefix}/shard-000001.tar does not " \
           "match the shard: no header of its first member 's0_000.jpg' at byte 0" in message
    assert f"Fix: write it again with `minddata index s3://{BUCKET}/{prefix}/shard-000001.tar --overwrite`" in message
    assert [t for t, r in _shard_gets(faults, prefix) if r == "bytes=0-"] == [f"/{BUCKET}/{prefix}/shard-000001.tar"]


@pytest.mark.parametrize("damage", [
    b"",  # empty
    b"\xff\xfe",  # not text
    b"v1.1 1\njpg 512 10\n",  # DALI's older format: no member names, so no keys
    b"v1.2 2\njpg 512 10 s0_000.jpg\n",  # two samples announced, one listed
    b"v1.2 1\njpg 511 10 s0_000.jpg\n",  # data not at a block boundary
    b"v1.2 1\njpg 512 10 s0_000.jpg cls 1024 1 s0_000.cls\n",  # the second member inside the first one's block
    b"v1.2 1\njpg 512 99999999 s0_000.jpg\n",  # past the shard's end
    b"v1.2 1\njpg 512 10 s0_000.jpg\n",  # a member the shard does not have there
])
def test_a_damaged_index_file_is_ignored_with_a_warning(shards, s3_client, faults, caplog, damage):
    prefix, folder = shards
    s3_client.put_object(Bucket=BUCKET, Key=f"{prefix}/shard-000000.idx", Body=damage)
    with caplog.at_level(logging.WARNING, logger="minddata"):
        ds = md.WebDataset(f"s3://{BUCKET}/{prefix}/shard-*.tar", shuffle=False, storage_options=options(faults.url))
        assert _rows(ds) == _rows(_local(folder))
    (message,) = [r.getMessage() for r in caplog.records if ".idx" in r.getMessage()]
    assert f"the index file s3://{BUCKET}/{prefix}/shard-000000.idx of" in message and "--overwrite" in message


def test_shards_listed_without_index_files_cost_no_request_for_them(shards, faults):
    prefix, folder = shards
    ds = md.WebDataset(f"s3://{BUCKET}/{prefix}/shard-*.tar", shuffle=False, storage_options=options(faults.url))
    assert ds.get_dataset_size() == SHARDS * SAMPLES
    assert _index_gets(faults, prefix) == []


def test_an_index_file_is_read_for_a_shard_named_alone(shards, faults):
    prefix, folder = shards
    write_index_files(f"s3://{BUCKET}/{prefix}/shard-000002.tar", storage_options=options(faults.url))
    faults.set_rates({})
    ds = md.WebDataset(f"s3://{BUCKET}/{prefix}/shard-000002.tar", shuffle=False, storage_options=options(faults.url))
    assert _rows(ds) == [r for r in _rows(_local(folder)) if r[0].startswith("s2_")]
    assert len(_index_gets(faults, prefix)) == 1
    assert not [r for _, r in _shard_gets(faults, prefix) if r == "bytes=0-"]


def test_index_files_in_the_bucket_are_not_replaced_without_overwrite(shards, s3_client, faults, monkeypatch, capsys):
    prefix, _ = shards
    monkeypatch.setenv("AWS_ENDPOINT_URL", faults.url)
    pattern = f"s3://{BUCKET}/{prefix}/shard-*.tar"
    assert cli_main(["index", pattern]) == 0
    assert f"s3://{BUCKET}/{prefix}/shard-000000.idx" in capsys.readouterr().out
    first = s3_client.get_object(Bucket=BUCKET, Key=f"{prefix}/shard-000000.idx")["Body"].read()
    assert first.startswith(b"v1.2 12\n")
    assert cli_main(["index", pattern]) == 2
    assert "exist already" in capsys.readouterr().err
    assert cli_main(["index", pattern, "--overwrite"]) == 0
