"""Credentials given in storage_options never reach reprs, explain(), serialize() or errors."""

from __future__ import annotations

import pytest
from s3kit import KEY_ID, SECRET, options

import minddata as md

SOURCES = {
    "ImageFolderDataset": lambda o: md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=o),
    "WebDataset": lambda o: md.WebDataset("s3://data/shards/train-*.tar", shuffle=False, storage_options=o),
    "TFRecordDataset": lambda o: md.TFRecordDataset("s3://data/files/part-*.tfrecord", shuffle=False, storage_options=o),
    "CSVDataset": lambda o: md.CSVDataset("s3://data/files/people-*.csv", shuffle=False, storage_options=o),
    "ParquetDataset": lambda o: md.ParquetDataset("s3://data/files/table-*.parquet", shuffle=False, storage_options=o),
    "MindDataset": lambda o: md.MindDataset("s3://data/mr/train.mindrecord0", shuffle=False, storage_options=o),
    "MindDataset-record": lambda o: md.MindDataset("s3://data/rec/train.rec0", shuffle=False, storage_options=o),
}


@pytest.fixture
def secret_options(s3_server, s3_images, s3_shards, s3_files, s3_mindrecord, s3_records):
    return options(s3_server, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET, aws_session_token=SECRET + "-token")


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_secret_absent_from_repr_explain_and_serialize(name, secret_options):
    ds = SOURCES[name](secret_options).batch(2)
    for text in (repr(ds), ds.explain(), str(md.serialize(ds))):
        assert SECRET not in text
    assert "<redacted>" in str(md.serialize(ds))


def test_deserialized_pipeline_takes_credentials_from_the_environment(secret_options):
    ds = SOURCES["WebDataset"](secret_options)
    described = md.serialize(ds)
    assert SECRET not in str(described)
    again = md.deserialize(input_dict=described)
    got = [str(r["__key__"]) for r in again.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert got == [str(r["__key__"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def test_cache_dir_argument_is_the_storage_option(s3_server, s3_images, faults, tmp_path):
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options(faults.url),
                               cache_dir=tmp_path / "cache")
    list(ds.create_dict_iterator(num_epochs=1))
    before = faults.counts["requests"]
    list(ds.create_dict_iterator(num_epochs=1))
    assert faults.counts["requests"] == before and any((tmp_path / "cache").rglob("*"))


def test_secret_absent_from_the_profile_and_the_log_of_a_failing_read(s3_images, faults, tmp_path, caplog):
    # A denied object under skip mode: the iterator logs the row's error, URL included, and the profiler
    # records the run; neither holds the credentials, nor does any logger's DEBUG output (the
    # requests are signed by minddata's own client, which logs no headers).
    secret = options(faults.url, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET, aws_session_token=SECRET + "-t")
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=secret)
    faults.deny = ("/data/images/dog/01.jpg",)
    md.config.set_error_samples_mode("skip")
    try:
        with caplog.at_level("DEBUG"), md.Profiler() as prof:
            rows = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    finally:
        md.config.set_error_samples_mode("raise")
    assert len(rows) == 14
    saved = prof.save(tmp_path / "profile")
    trace = prof.export_chrome_trace(tmp_path / "trace.json")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "s3://data/images/dog/01.jpg" in logged  # the log does carry the failing read's own words
    texts = [str(prof), repr(prof), str(prof.runs), str(prof.summary()), logged, trace.read_text()]
    texts += [f.read_text(errors="replace") for f in saved.rglob("*") if f.is_file()]
    assert not [t for t in texts if SECRET in t]
