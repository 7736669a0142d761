"""Where ``Dataset.save`` and ``minddata convert`` write: local paths and ``file://`` URLs; an object
storage URL is refused with the URL and the fix (write locally, then upload), and nothing is written."""

from __future__ import annotations

import os

import pytest
import webdataset as wds

import minddata as md
from minddata.cli import main as cli_main
from minddata.errors import ArgumentError


def _pipeline():
    return md.NumpySlicesDataset({"cls": [1, 2, 3]}, shuffle=False)


@pytest.mark.parametrize("file_type", ["mindrecord", "arrow", "webdataset"])
@pytest.mark.parametrize("url", ["s3://data/out/train.tar", "gs://data/out/train.tar", "https://host/out/train.tar"])
def test_save_refuses_an_object_storage_url_naming_it_and_the_fix(tmp_path, monkeypatch, file_type, url):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ArgumentError, match=rf"save: `file_name` must be a local path: .*Found: '{url}'\. "
                       r"Write to a local folder, then upload the files"):
        _pipeline().save(url, file_type=file_type)
    assert os.listdir(tmp_path) == []  # no "s3:" folder, no temporary file


def test_save_writes_a_file_url_to_its_local_path(tmp_path):
    _pipeline().save(f"file://{tmp_path}/out.tar", file_type="webdataset")
    assert [int(s["cls"]) for s in wds.WebDataset(str(tmp_path / "out.tar"), shardshuffle=False)] == [1, 2, 3]


def test_convert_refuses_an_object_storage_destination(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    source = str(tmp_path / "r.mindrecord")
    _pipeline().save(source)
    before = sorted(os.listdir(tmp_path))
    assert cli_main(["convert", source, "s3://data/out/r.tar", "--format", "webdataset"]) == 2
    err = capsys.readouterr().err
    assert "convert: error: `DEST` must be a local path" in err and "'s3://data/out/r.tar'" in err
    assert sorted(os.listdir(tmp_path)) == before  # no "s3:" folder made for it
