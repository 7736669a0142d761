"""TFRecord, CSV, text and Parquet sources on s3:// URLs: the rows of the local files, exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest
from s3kit import options

import minddata as md
from minddata.errors import ArgumentError


def rows(ds, **kw):
    return [tuple(v.tobytes() if hasattr(v, "tobytes") else v for v in r.values())
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True, **kw)]


def test_tfrecord_rows_equal_local(s3_server, s3_files):
    remote = md.TFRecordDataset("s3://data/files/part-*.tfrecord", shuffle=False, storage_options=options(s3_server))
    local = md.TFRecordDataset(str(s3_files / "part-*.tfrecord"), shuffle=False)
    assert rows(remote) == rows(local) and len(rows(local)) == 21


def test_tfrecord_shuffled_shards_and_resume_under_faults(s3_files, faults):
    md.config.set_seed(9)
    kw = dict(shuffle=md.Shuffle.GLOBAL, num_shards=3, shard_id=2)
    # a seed whose first draws are faults: the files are read in a few requests (no HEAD per file)
    faults.set_rates({"503": 0.25, "drop": 0.1, "cut": 0.15}, seed=4)
    remote = md.TFRecordDataset("s3://data/files/part-*.tfrecord", storage_options=options(faults.url), **kw)
    got = rows(remote)
    it = remote.create_dict_iterator(num_epochs=1, output_numpy=True)
    head = [tuple(v.tobytes() for v in next(it).values()) for _ in range(3)]
    tail = rows(remote, state=it.get_state())
    counts = dict(faults.counts)
    faults.set_rates({})
    want = rows(md.TFRecordDataset(str(s3_files / "part-*.tfrecord"), **kw))
    assert got == want and head + tail == want
    assert counts.get("503", 0) + counts.get("drop", 0) + counts.get("cut", 0) > 0


def test_csv_rows_equal_local(s3_server, s3_files):
    remote = md.CSVDataset("s3://data/files/people-*.csv", shuffle=False, storage_options=options(s3_server))
    assert rows(remote) == rows(md.CSVDataset(str(s3_files / "people-*.csv"), shuffle=False))


def test_text_rows_equal_local_from_a_list(s3_server, s3_files):
    urls = ["s3://data/files/lines-0.txt", "s3://data/files/lines-1.txt"]
    remote = md.TextFileDataset(urls, shuffle=False, storage_options=options(s3_server))
    assert rows(remote) == rows(md.TextFileDataset(str(s3_files / "lines-*.txt"), shuffle=False))


def test_parquet_rows_equal_local_shuffled(s3_server, s3_files):
    md.config.set_seed(4)
    remote = md.ParquetDataset("s3://data/files/table-*.parquet", shuffle=True, storage_options=options(s3_server))
    assert rows(remote) == rows(md.ParquetDataset(str(s3_files / "table-*.parquet"), shuffle=True))


_FILE_URL_SOURCES = {
    # source: (the fixture holding its local files, how it is made from a path or URL)
    "TextFile": ("s3_files", lambda at: md.TextFileDataset(at("lines-*.txt"), shuffle=False)),
    "CSV": ("s3_files", lambda at: md.CSVDataset(at("people-*.csv"), shuffle=False)),
    "TFRecord": ("s3_files", lambda at: md.TFRecordDataset(at("part-*.tfrecord"), shuffle=False)),
    "Parquet": ("s3_files", lambda at: md.ParquetDataset(at("table-*.parquet"), shuffle=False)),
    "MindRecord": ("s3_mindrecord", lambda at: md.MindDataset(at("train.mindrecord0"), shuffle=False)),
    "record files": ("s3_records", lambda at: md.MindDataset(at("train.rec0"), shuffle=False)),
    "WebDataset": ("s3_shards", lambda at: md.WebDataset(at("train-*.tar"), shuffle=False)),
    "ImageFolder": ("s3_images", lambda at: md.ImageFolderDataset(at(""), shuffle=False)),
}


@pytest.mark.parametrize("source", list(_FILE_URL_SOURCES))
def test_a_file_url_reads_as_its_local_path(request, source):
    fixture, make = _FILE_URL_SOURCES[source]
    root = request.getfixturevalue(fixture)
    local = rows(make(lambda name: str(root / name)))
    assert local and rows(make(lambda name: "file://" + str(root / name))) == local


@pytest.mark.parametrize("make", [
    lambda: md.CocoDataset("s3://data/coco/images", "s3://data/coco/ann.json"),
    lambda: md.MnistDataset(dataset_dir="gs://data/mnist"),
    lambda: md.Cifar10Dataset("https://example.invalid/cifar"),
])
def test_sources_not_reached_refuse_urls_naming_themselves(make):
    with pytest.raises(ArgumentError, match=r"(\w+Dataset): .* is a remote URL; \1 does not read object storage yet"):
        make()


def test_planning_a_pass_of_remote_tfrecords_reads_no_file(s3_files, faults):
    # An executor that splits a pass into tasks asks for the pass's record order: it opens no file, so
    # no file's first block may be read ahead for it (only readers that open files read ahead).
    ds = md.TFRecordDataset("s3://data/files/part-*.tfrecord", shuffle=False, num_parallel_workers=1,
                            storage_options=options(faults.url))  # one reader: the three files one after another
    reads = ds._node.record_reads
    first = reads.order(0)  # counts each file's records once (reads them)
    faults.set_rates({})  # forgets the requests so far
    assert reads.order(1).tolist() == first.tolist() and sorted(first.tolist()) == list(range(21))
    assert faults.requests == []


def _cifar10_batch(folder, records=3):
    """A CIFAR-10 binary batch: each record a label byte and 3,072 pixel bytes."""
    folder.mkdir()
    rng = np.random.default_rng(0)
    data = b"".join(bytes([i % 10]) + rng.integers(0, 256, 3072, dtype=np.uint8).tobytes() for i in range(records))
    (folder / "data_batch_1.bin").write_bytes(data)
    return folder


@pytest.mark.parametrize("make", [
    lambda at: md.Cifar10Dataset(at, "train", shuffle=False),
    lambda at: md.Cifar10Dataset(dataset_dir=at, usage="train", shuffle=False),
])
def test_a_file_url_reads_as_its_local_path_for_sources_without_object_storage(tmp_path, make):
    folder = _cifar10_batch(tmp_path / "cifar")
    local = rows(make(str(folder)))
    assert len(local) == 3 and rows(make("file://" + str(folder))) == local


def test_a_tfrecord_schema_file_is_read_from_object_storage_with_the_dataset_options(s3_server, s3_client, s3_files):
    schema = {"columns": {"label": {"type": "int64", "shape": [1]}}}
    s3_client.put_object(Bucket="data", Key="schemas/labels.json", Body=json.dumps(schema).encode())
    ds = md.TFRecordDataset("s3://data/files/part-*.tfrecord", schema="s3://data/schemas/labels.json", shuffle=False,
                            storage_options=options(s3_server))
    assert ds.get_col_names() == ["label"]
    assert sorted(_labels(ds)) == sorted(10 * f + i for f in range(3) for i in range(7))


def test_a_tfrecord_schema_file_url_reads_as_its_local_path(tmp_path, s3_files):
    (tmp_path / "labels.json").write_text(json.dumps({"columns": {"label": {"type": "int64", "shape": [1]}}}))
    ds = md.TFRecordDataset(str(s3_files / "part-0.tfrecord"), schema="file://" + str(tmp_path / "labels.json"),
                            shuffle=False)
    assert _labels(ds) == list(range(7))


def _labels(ds):
    return [int(r["label"][0]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


# -- http(s) servers that do not serve byte ranges --------------------------------------------------


@pytest.fixture
def whole_file_server(s3_files):
    """``python -m http.server``'s handler over the local copies of ``s3://data/files/``: it answers
    every GET with the whole file (no ``Accept-Ranges``, a Range header ignored)."""
    import functools
    import http.server

    from testkit import local_http_server

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(s3_files))
    with local_http_server(handler) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("make", [
    lambda at: md.CSVDataset(at("people-0.csv"), shuffle=False),
    lambda at: md.TextFileDataset(at("lines-1.txt"), shuffle=False),
    lambda at: md.TFRecordDataset(at("part-2.tfrecord"), shuffle=False),
], ids=["CSV", "text", "TFRecord"])
def test_files_read_front_to_back_come_whole_from_a_server_without_ranges(whole_file_server, s3_files, make):
    local = rows(make(lambda name: str(s3_files / name)))
    assert local and rows(make(lambda name: f"{whole_file_server}/{name}")) == local
