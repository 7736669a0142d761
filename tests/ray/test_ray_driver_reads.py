"""What the driver reads when the Ray executor runs a file source over object storage: it lists, asks
sizes and reads metadata (headers, indexes, footers); the rows' bytes are read by the Ray workers.

The real local S3 server of the storage tests (moto, on 127.0.0.1) serves the objects through a proxy
that records, for every request, the process that sent it, the byte range asked for and the bytes of
the body sent back (request_log.py). A row's bytes are located in the local copy of its file (each
JPEG found where the writer put it), so a read is told apart from a metadata read by what it covers,
not by its size alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import request_log
import s3kit
from ray_cluster import ray_cluster  # noqa: F401 - the session's cluster
from testkit import exact_rows

import minddata as md
from minddata import vision

# The proxy recording which process sent each request (tests/ray/request_log.py).
recording_proxy = request_log.recording_proxy
# Ray Data copies its context, touching its own deprecated fields: not this project's warnings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
# The object storage fixtures this module uses (tests/s3kit.py).
_s3_env, s3_client, s3_files, s3_mindrecord, s3_server = s3kit._s3_env, s3kit.s3_client, s3kit.s3_files, s3kit.s3_mindrecord, s3kit.s3_server
s3_shards = s3kit.s3_shards


ARROW_ROWS = 3000


def _arrow_jpeg(i: int) -> bytes:
    from testkit import make_jpeg

    return make_jpeg(16 + i % 11, 12, seed=i % 11)


@pytest.fixture(scope="session")
def s3_arrow_records(s3_client, tmp_path_factory):
    """``s3://data/arrow-rec/train.rec{0,1}`` with their ``.meta.json``: minddata's Arrow record files
    (a JPEG and a label per row; 1,500 rows a shard, so each holds two record batches), and the same
    set locally."""
    from minddata.record import ArrowRecordWriter

    root = tmp_path_factory.mktemp("arrow-rec")
    with ArrowRecordWriter(str(root / "train.rec"), shard_num=2) as writer:
        writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}}, "test")
        writer.write_raw_data([{"image": _arrow_jpeg(i), "label": i} for i in range(ARROW_ROWS)])
    s3kit.upload_tree(s3_client, root, "arrow-rec")
    return root


def _options(proxy: request_log.RecordingProxy) -> dict:
    # The Ray workers have no AWS environment of their own: endpoint and (dummy) credentials travel
    # with the dataset.
    return s3kit.options(proxy.url, access_key_id=s3kit.KEY_ID, secret_access_key=s3kit.SECRET)


def _reads(log: list[request_log.Request], prefix: str, suffix: str) -> list[request_log.Request]:
    """The GETs of the objects under ``prefix`` whose names end in ``suffix`` (listings excluded)."""
    return [r for r in log if r.method == "GET" and r.path.startswith(prefix) and r.path.endswith(suffix)
            and "list-type" not in r.query]


def _spans(data: bytes, needles: list[bytes]) -> list[tuple[int, int]]:
    """Every place in ``data`` where one of ``needles`` occurs, as ``(start, end)`` byte ranges."""
    spans = []
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            spans.append((at, at + len(needle)))
            at = data.find(needle, at + 1)
    return sorted(spans)


def _covers(request: request_log.Request, span: tuple[int, int], size: int) -> tuple[bool, bool]:
    """(whether the request read any byte of ``span``, whether it read all of it)."""
    start, end = request.start, min(size, request.end if request.end is not None else size)
    return start < span[1] and span[0] < end, start <= span[0] and span[1] <= end


def _check_rows_read_by_workers(log: list[request_log.Request], files: dict[str, Path], row_bytes: list[bytes],
                                driver_reads_metadata: bool = True) -> None:
    """Every occurrence of a row's bytes in each file is read by a Ray worker, none by the driver, and
    (``driver_reads_metadata``) the driver read something (so it is seen by the proxy): metadata only."""
    driver = os.getpid()
    driver_reads = 0
    for key, local in files.items():
        data = local.read_bytes()
        spans = _spans(data, row_bytes)
        assert spans, f"no row bytes found in {local}: the test can't tell row reads from metadata reads"
        reads = [r for r in log if r.method == "GET" and r.path == key and "list-type" not in r.query]
        assert None not in {r.pid for r in reads}
        for request in reads:
            if request.pid != driver:
                continue
            driver_reads += 1
            touched = [span for span in spans if _covers(request, span, len(data))[0]]
            assert not touched, (
                f"the driver read bytes {request.start}-{request.end} of {key} ({request.body_bytes} bytes), "
                f"which hold row data at {touched[:3]}"
            )
        for span in spans:
            assert any(r.pid != driver and _covers(r, span, len(data))[1] for r in reads), (
                f"no Ray worker read the row data at bytes {span} of {key}"
            )
    assert driver_reads or not driver_reads_metadata, "the driver read no metadata at all: the proxy did not see the requests"


# -- TFRecord ---------------------------------------------------------------------------------------

TFRECORD_SCHEMA = {"image": {"type": "uint8", "shape": [-1]}, "label": {"type": "int64", "shape": [1]}}


@pytest.mark.parametrize("shuffle", [False, md.Shuffle.GLOBAL], ids=["in order", "shuffled"])
def test_tfrecord_bodies_are_read_by_ray_workers_only(s3_files, recording_proxy, shuffle):
    md.config.set_seed(7)
    remote = md.TFRecordDataset("s3://data/files/part-*.tfrecord", schema=TFRECORD_SCHEMA, shuffle=shuffle,
                                storage_options=_options(recording_proxy))
    local = md.TFRecordDataset(str(s3_files / "part-*.tfrecord"), schema=TFRECORD_SCHEMA, shuffle=shuffle)
    # A random op keys on each row's place in the pass: equal rows mean equal row identities.
    augment = [vision.Decode(), vision.RandomResizedCrop((8, 8))]
    remote, local = (ds.map(augment, input_columns="image") for ds in (remote, local))
    assert exact_rows(remote, "ray") == exact_rows(local, "local")

    driver = os.getpid()
    bodies = _reads(list(recording_proxy.log), "/data/files/", ".tfrecord")
    assert {r.path for r in bodies} == {f"/data/files/{p.name}" for p in s3_files.glob("*.tfrecord")}
    readers = {r.pid for r in bodies}
    assert driver not in readers, [(r.path, r.start, r.end) for r in bodies if r.pid == driver]
    assert None not in readers


# -- record files -----------------------------------------------------------------------------------


def test_mindrecord_rows_are_read_by_ray_workers_and_the_driver_reads_metadata(s3_mindrecord, recording_proxy):
    from testkit import make_jpeg

    remote = md.MindDataset("s3://data/mr/train.mindrecord0", shuffle=False, storage_options=_options(recording_proxy))
    local = md.MindDataset(str(s3_mindrecord / "train.mindrecord0"), shuffle=False)
    assert exact_rows(remote, "ray") == exact_rows(local, "local")

    jpegs = [make_jpeg(16 + i % 5, 14, seed=i) for i in range(20)]  # the fixture's rows
    files = {f"/data/mr/{p.name}": p for p in sorted(s3_mindrecord.glob("train.mindrecord?"))}
    _check_rows_read_by_workers(list(recording_proxy.log), files, jpegs)


def test_arrow_record_rows_are_read_by_ray_workers_and_the_driver_reads_metadata(s3_arrow_records, recording_proxy):
    remote = md.MindDataset("s3://data/arrow-rec/train.rec0", shuffle=False, storage_options=_options(recording_proxy))
    local = md.MindDataset(str(s3_arrow_records / "train.rec0"), shuffle=False)
    assert exact_rows(remote, "ray") == exact_rows(local, "local")

    jpegs = [_arrow_jpeg(i) for i in range(11)]  # the fixture's rows
    files = {f"/data/arrow-rec/{p.name}": p for p in sorted(s3_arrow_records.glob("train.rec?"))}
    _check_rows_read_by_workers(list(recording_proxy.log), files, jpegs)


def test_a_damaged_tfrecord_file_counted_in_a_ray_task_fails_naming_it(tmp_path):
    from minddata.bench.corpus import tf_example, tf_feature, tfrecord_bytes
    from minddata.errors import DataFormatError

    data = bytearray(tfrecord_bytes([tf_example({"label": tf_feature("int64", [i])}) for i in range(3)]))
    data[8] ^= 0xFF  # the first record's length CRC: the file can't be counted
    (tmp_path / "damaged.tfrecord").write_bytes(bytes(data))
    ds = md.TFRecordDataset(str(tmp_path / "damaged.tfrecord"), schema={"label": {"type": "int64", "shape": [1]}})
    with pytest.raises(DataFormatError, match=r"damaged\.tfrecord is corrupted: record 0 at byte 0 fails its length CRC") as caught:
        exact_rows(ds, "ray")
    assert type(caught.value) is DataFormatError  # the source's own error, not Ray's wrapper of it


# -- the local executor -----------------------------------------------------------------------------


def test_local_tfrecord_counting_with_a_cache_dir_downloads_each_byte_once(s3_files, recording_proxy, tmp_path):
    # Rows dealt to shards by position need each file's count before the first row: the local executor
    # counts in-process, and the reads that follow find the counted bytes in the cache.
    ds = md.TFRecordDataset("s3://data/files/part-*.tfrecord", schema=TFRECORD_SCHEMA, shuffle=False, num_shards=2,
                            shard_id=0, shard_equal_rows=True, storage_options=_options(recording_proxy),
                            cache_dir=tmp_path / "cache")
    assert len(exact_rows(ds, "local")) == 11  # 21 records over 2 shards

    for local in sorted(s3_files.glob("part-*.tfrecord")):
        reads = sorted(_reads(list(recording_proxy.log), f"/data/files/{local.name}", ""), key=lambda r: r.start)
        asked = [(r.start, r.end, r.status, r.body_bytes) for r in reads]  # (from, to, status, bytes) if it fails
        assert sum(r.body_bytes for r in reads) == local.stat().st_size, asked
        assert all(a.start + a.body_bytes <= b.start for a, b in zip(reads, reads[1:])), asked


# -- WebDataset -------------------------------------------------------------------------------------


def test_webdataset_shards_are_indexed_and_read_by_ray_workers(s3_shards, recording_proxy):
    # With columns_list given, nothing needs a shard's index before the pass: Ray tasks index the
    # shards, and the driver reads no byte of them (it lists the bucket)
    from testkit import make_jpeg

    columns = ["__key__", "jpg", "cls"]
    remote = md.WebDataset("s3://data/shards/train-*.tar", columns_list=columns, shuffle=False,
                           storage_options=_options(recording_proxy))
    local = md.WebDataset(str(s3_shards / "train-*.tar"), columns_list=columns, shuffle=False)
    assert exact_rows(remote, "ray") == exact_rows(local, "local")

    jpegs = [make_jpeg(20 + i, 18, seed=100 * s + i) for s in range(3) for i in range(6)]  # the fixture's rows
    files = {f"/data/shards/{p.name}": p for p in sorted(s3_shards.glob("train-*.tar"))}
    driver = os.getpid()
    assert not [r for r in recording_proxy.log if r.pid == driver and r.path in files]
    _check_rows_read_by_workers(list(recording_proxy.log), files, jpegs, driver_reads_metadata=False)
