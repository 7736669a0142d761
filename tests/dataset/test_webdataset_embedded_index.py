"""Shards written by minddata carry their index as a first, metadata-named member: a reader indexes
such a shard from its first kilobytes, and falls back to the header walk for any shard where the
member is missing, damaged, or no longer fits the file."""

from __future__ import annotations

import io
import os
import tarfile

import numpy as np
import pytest
import webdataset as wds

import minddata as md
from minddata.dataset import webdataset as impl

ROWS = 11


def _write(folder, num_files=2):
    rows = md.NumpySlicesDataset({"__key__": [f"k{i:03d}" for i in range(ROWS)], "cls": np.arange(ROWS, dtype=np.int64),
                                  "txt": [f"row {i}" for i in range(ROWS)]}, shuffle=False)
    rows.save(str(folder / "part.tar"), num_files=num_files, file_type="webdataset")
    return sorted(str(p) for p in folder.glob("part-*.tar"))


def _rows(files):
    ds = md.WebDataset(files, shuffle=False)
    return [(str(r["__key__"]), int(r["cls"]), str(r["txt"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def _scanned(path):
    """The shard's index from its headers, the embedded index left aside."""
    real = impl._embedded_index
    impl._embedded_index = lambda *args: None
    try:
        return impl.index_shard("test", path)
    finally:
        impl._embedded_index = real


@pytest.fixture
def written(tmp_path):
    return _write(tmp_path)


def test_a_written_shard_starts_with_its_index_member(written):
    with tarfile.open(written[0]) as tar:
        names = tar.getnames()
    assert names[0] == "__minddata_index__" and names.count("__minddata_index__") == 1


def test_the_embedded_index_equals_the_header_walk(written):
    for path in written:
        with open(path, "rb") as f:
            embedded = impl._embedded_index(path, f, os.path.getsize(path))
        scanned = _scanned(path)
        assert embedded is not None and embedded.keys == scanned.keys and embedded.exts == scanned.exts
        for mine, theirs in ((embedded.first, scanned.first), (embedded.offsets, scanned.offsets),
                             (embedded.sizes, scanned.sizes)):
            assert mine.tolist() == theirs.tolist()


def test_a_written_shard_is_indexed_without_walking_its_headers(written, monkeypatch):
    def walked(*args):
        raise AssertionError("the header walk ran")

    monkeypatch.setattr(impl, "_plain_members", walked)
    assert _rows(written) == [(f"k{i:03d}", i, f"row {i}") for i in (*range(0, ROWS, 2), *range(1, ROWS, 2))]


def test_the_webdataset_package_skips_the_index_member(written):
    keys = [s["__key__"] for s in wds.WebDataset(written, shardshuffle=False)]
    assert keys == [f"k{i:03d}" for i in (*range(0, ROWS, 2), *range(1, ROWS, 2))]


def test_members_appended_later_are_read_the_index_no_longer_fits(written):
    with tarfile.open(written[0], "a") as tar:
        for ext, data in (("cls", b"99"), ("txt", b"appended")):
            info = tarfile.TarInfo(f"k999.{ext}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert _rows([written[0]])[-1] == ("k999", 99, "appended")


@pytest.mark.parametrize("damage", ["payload", "checksum"])
def test_a_damaged_index_member_falls_back_to_the_header_walk(written, damage):
    want = _rows(written)
    data = bytearray(open(written[0], "rb").read())
    if damage == "payload":
        data[512:520] = b"garbage!"  # the index's own format line
    else:
        data[148:156] = b"0000000\0"  # the member header's checksum
    open(written[0], "wb").write(bytes(data))
    with open(written[0], "rb") as f:
        assert impl._embedded_index(written[0], f, len(data)) is None
    if damage == "payload":  # a valid tar still: the walk reads the same rows
        assert _rows(written) == want

