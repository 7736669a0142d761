"""WebDataset shards with shard metadata members (``__meta__.json``) and with samples that lack members
other samples have: metadata is skipped, an uneven shard is reported when the dataset is made and at
the row, naming the shard, the key, the missing member and the ``columns_list`` that every sample has."""

from __future__ import annotations

import io
import logging
import tarfile

import pytest
import webdataset as wds
from testkit import dict_rows

import minddata as md
from minddata.errors import RowError


def _tar(path, members):
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


@pytest.fixture
def with_meta(tmp_path):
    return _tar(tmp_path / "meta.tar", [("__meta__.json", b'{"classes": 2}'), ("a.jpg", b"\xff\xd8a"), ("a.cls", b"0"),
                                        ("b.jpg", b"\xff\xd8b"), ("b.cls", b"1")])


@pytest.fixture
def uneven(tmp_path):
    """Sample 'b' has no .cls; sample 'c' has an extra .txt."""
    return _tar(tmp_path / "uneven.tar", [("a.jpg", b"\xff\xd8a"), ("a.cls", b"0"), ("b.jpg", b"\xff\xd8b"),
                                          ("c.jpg", b"\xff\xd8c"), ("c.cls", b"2"), ("c.txt", b"note")])


def test_a_meta_json_member_is_skipped_as_shard_metadata(with_meta):
    ds = md.WebDataset(with_meta, shuffle=False)
    assert ds.get_col_names() == ["__key__", "cls", "jpg"]
    ours = [(str(r["__key__"]), int(r["cls"]), r["jpg"].tobytes()) for r in dict_rows(ds)]
    # the webdataset package yields the metadata as a sample keyed "__meta__"; its samples are ours besides
    theirs = [(s["__key__"], int(s["cls"]), s["jpg"]) for s in wds.WebDataset(with_meta, shardshuffle=False)
              if s["__key__"] != "__meta__"]
    assert ours == theirs == [("a", 0, b"\xff\xd8a"), ("b", 1, b"\xff\xd8b")]


def test_uneven_samples_are_reported_when_the_dataset_is_made(uneven, caplog):
    with caplog.at_level(logging.WARNING, logger="minddata"):
        md.WebDataset(uneven)
    assert "2 of 3 samples lack a member that other samples have" in caplog.text
    assert "uneven.tar, sample 'a' has no txt" in caplog.text
    assert "Fix: pass columns_list=['__key__', 'jpg']" in caplog.text


def test_even_samples_are_not_reported(with_meta, caplog):
    with caplog.at_level(logging.WARNING, logger="minddata"):
        md.WebDataset(with_meta)
    assert caplog.text == ""


def test_a_sample_lacking_a_found_column_names_the_columns_every_sample_has(uneven):
    with pytest.raises(RowError, match=r"uneven\.tar, sample 'a' \(row 0\) has no member txt \(its members: jpg, cls\)\. "
                       r".*pass columns_list=\['__key__', 'jpg'\] \(the members every sample has\).*"
                       r"config\.set_error_samples_mode\('skip'\)"):
        dict_rows(md.WebDataset(uneven, shuffle=False))


def test_the_columns_every_sample_has_read_every_sample(uneven):
    ds = md.WebDataset(uneven, columns_list=["__key__", "jpg"], shuffle=False)
    assert [str(r["__key__"]) for r in dict_rows(ds)] == ["a", "b", "c"]
