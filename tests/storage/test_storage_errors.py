"""Every source that reads object storage, on a missing object or prefix and on denied access: an
error when the pipeline is built (or at the first row that needs the object) naming the URL and the
fix, with no secret in it and no client library's traceback."""

from __future__ import annotations

import re

import pytest
from s3kit import SECRET, options

import minddata as md
from minddata.errors import MinddataError


def _obs(url, endpoint):
    return md.OBSMindDataset([url], endpoint, "AKIDOBS", SECRET, "s3://data/sync/", shuffle=False)


def _reading(cls):
    """A builder of source ``cls`` over ``url`` with the storage options for ``endpoint``."""
    return lambda url, endpoint: cls(url, storage_options=options(endpoint))


# name → (build it from (url, endpoint), a URL where nothing is, a URL of real objects)
SOURCES = {
    "ImageFolderDataset": (_reading(md.ImageFolderDataset), "s3://data/images-none/", "s3://data/images/"),
    "MindDataset-MindRecord": (_reading(md.MindDataset), "s3://data/mr/none.mindrecord0", "s3://data/mr/train.mindrecord0"),
    "MindDataset-record": (_reading(md.MindDataset), "s3://data/rec/none.rec0", "s3://data/rec/train.rec0"),
    "TFRecordDataset": (_reading(md.TFRecordDataset), "s3://data/files/none-*.tfrecord", "s3://data/files/part-*.tfrecord"),
    "ParquetDataset": (_reading(md.ParquetDataset), "s3://data/files/none.parquet", "s3://data/files/table-0.parquet"),
    "CSVDataset": (_reading(md.CSVDataset), "s3://data/files/none-*.csv", "s3://data/files/people-*.csv"),
    "TextFileDataset": (_reading(md.TextFileDataset), "s3://data/files/none.txt", "s3://data/files/lines-0.txt"),
    "WebDataset": (_reading(md.WebDataset), "s3://data/shards/none-{0..2}.tar", "s3://data/shards/train-000000.tar"),
    "OBSMindDataset": (_obs, "s3://data/mr/none.mindrecord0", "s3://data/mr/train.mindrecord0"),
}


@pytest.fixture
def stored(s3_images, s3_mindrecord, s3_records, s3_files, s3_shards):
    """Every kind of object the sources read, uploaded."""


def _failure(make) -> str:
    """The message of the error building the pipeline and reading its first row raises."""
    with pytest.raises(MinddataError) as info:
        ds = make()
        next(iter(ds.create_dict_iterator(num_epochs=1, output_numpy=True)))
    return str(info.value)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_missing_object_or_prefix_names_the_url_and_the_fix(name, s3_server, stored):
    make, missing, _ = SOURCES[name]
    text = _failure(lambda: make(missing, f"http://127.0.0.1:{s3_server}"))
    assert missing.split("{")[0] in text, text  # a brace pattern may be named by its first object
    assert re.search(r"HTTP 404|matches no object|no objects under", text), text
    assert "Check" in text or "check" in text, text
    assert SECRET not in text and "Traceback" not in text


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_denied_access_names_the_url_and_the_fix(name, faults, stored):
    make, _, present = SOURCES[name]
    faults.deny = ("/data/", "/data?")  # every request to the bucket: listing, HEAD and GET
    text = _failure(lambda: make(present, faults.url))
    assert "s3://data/" in text and "403" in text, text
    assert "access denied" in text and "grant s3:GetObject" in text, text
    assert SECRET not in text and "Traceback" not in text
