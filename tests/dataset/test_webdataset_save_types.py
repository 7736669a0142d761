"""What ``save(file_type="webdataset")`` and ``minddata convert --format webdataset`` write for each kind
of column value, and that each reads back as it was, in ``md.WebDataset`` and in the real ``webdataset``
package: a column keeps its name when the name says how to read it, else gets the extension of its
values (an encoded image ``.jpg``/``.png``, a str ``.txt``, an integer ``.cls``, anything else ``.npy``)."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest
import webdataset as wds
from testkit import dict_rows, make_jpeg, random_png

import minddata as md
from minddata import vision
from minddata.cli import main as cli_main
from minddata.errors import ArgumentError
from minddata.mindrecord import FileWriter


def _members(path):
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if not m.name.startswith("__")}


def _save(tmp_path, data):
    """``data`` (a dataset, or a dict of columns) saved as one shard; its path."""
    path = str(tmp_path / "out.tar")
    ds = md.NumpySlicesDataset(data, shuffle=False) if isinstance(data, dict) else data
    ds.save(path, file_type="webdataset")
    return path


class _Column:
    """A one-column GeneratorDataset whose rows are the given values, as they are."""

    def __init__(self, values):
        self.values = values

    def __getitem__(self, i):
        return (self.values[i],)

    def __len__(self):
        return len(self.values)


def _one_column(name, values):
    return md.GeneratorDataset(_Column(values), [name], shuffle=False)


@pytest.fixture
def mindrecord(tmp_path):
    """A MindRecord file as MindSpore writes one: a ``bytes`` image column and an int32 label."""
    path = str(tmp_path / "train.mindrecord")
    writer = FileWriter(path, 1)
    writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}}, "t")
    writer.write_raw_data([{"image": make_jpeg(16, 14, seed=i), "label": i} for i in range(4)])
    writer.commit()
    return path


def test_convert_writes_a_mindrecord_bytes_column_as_jpeg_members_that_decode(tmp_path, mindrecord):
    assert cli_main(["convert", mindrecord, str(tmp_path / "d.tar"), "--format", "webdataset"]) == 0
    ds = md.WebDataset(str(tmp_path / "d.tar"), shuffle=False)
    assert ds.get_col_names() == ["__key__", "image.jpg", "label.cls"]
    images = [r["image.jpg"] for r in dict_rows(ds.map(vision.Decode(), input_columns="image.jpg"))]
    assert [im.shape for im in images] == [(14, 16, 3)] * 4


def test_convert_of_mindrecord_reads_back_in_the_webdataset_package(tmp_path, mindrecord):
    assert cli_main(["convert", mindrecord, str(tmp_path / "d.tar"), "--format", "webdataset"]) == 0
    samples = list(wds.WebDataset(str(tmp_path / "d.tar"), shardshuffle=False).decode("rgb8"))
    assert [(s["image.jpg"].shape, s["label.cls"]) for s in samples] == [((14, 16, 3), i) for i in range(4)]


@pytest.mark.parametrize("form", [
    lambda b: b,                                  # Python bytes
    lambda b: np.bytes_(b),                       # a NumPy bytes scalar
    lambda b: np.array(b),                        # a 0-d S array
    lambda b: np.array([b]),                      # a one-element S array (MindDataset's bytes column)
    lambda b: np.frombuffer(b, np.uint8),         # a 1-D uint8 array (ImageFolderDataset's image)
], ids=["bytes", "bytes_", "0-d S", "(1,) S", "uint8"])
def test_a_bytes_value_is_written_as_its_raw_bytes(tmp_path, form):
    jpeg = make_jpeg(9, 7, seed=1)
    path = _save(tmp_path, _one_column("image", [form(jpeg)]))
    assert _members(path) == {"000000000.image.jpg": jpeg}


def test_png_bytes_get_the_png_extension(tmp_path):
    png = random_png(5, 6, seed=2)
    path = _save(tmp_path, _one_column("mask", [png]))
    assert list(_members(path)) == ["000000000.mask.png"]
    (row,) = dict_rows(md.WebDataset(path).map(vision.Decode(), input_columns="mask.png"))
    assert row["mask.png"].shape == (5, 6, 3)


def test_bytes_that_are_no_image_keep_the_column_name(tmp_path):
    path = _save(tmp_path, _one_column("blob", [b"\x00\x01raw"]))
    assert _members(path) == {"000000000.blob": b"\x00\x01raw"}
    assert dict_rows(md.WebDataset(path))[0]["blob"].tobytes() == b"\x00\x01raw"


def test_a_column_named_by_its_type_keeps_its_name(tmp_path):
    jpeg = make_jpeg(9, 7, seed=3)
    path = _save(tmp_path, _one_column("left.jpg", [jpeg]))
    assert list(_members(path)) == ["000000000.left.jpg"]


def test_an_integer_column_reads_back_as_an_integer(tmp_path):
    path = _save(tmp_path, {"label": np.array([3, 7], np.int32)})
    assert md.WebDataset(path).get_col_names() == ["__key__", "label.cls"]
    assert [int(r["label.cls"]) for r in dict_rows(md.WebDataset(path, shuffle=False))] == [3, 7]
    assert [s["label.cls"] for s in wds.WebDataset(path, shardshuffle=False).decode()] == [3, 7]


def test_a_string_column_reads_back_as_a_string(tmp_path):
    path = _save(tmp_path, {"caption": ["a cat", "zwei Hunde \u00e4"]})
    assert [str(r["caption.txt"]) for r in dict_rows(md.WebDataset(path, shuffle=False))] == ["a cat", "zwei Hunde \u00e4"]
    assert [s["caption.txt"] for s in wds.WebDataset(path, shardshuffle=False).decode()] == ["a cat", "zwei Hunde \u00e4"]


def test_a_float_array_column_reads_back_through_npy(tmp_path):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    path = _save(tmp_path, {"feat": values})
    rows = dict_rows(md.WebDataset(path, shuffle=False))
    assert np.load(io.BytesIO(rows[1]["feat.npy"].tobytes())).tolist() == [3.0, 4.0, 5.0]
    theirs = [s["feat.npy"] for s in wds.WebDataset(path, shardshuffle=False).decode()]
    np.testing.assert_array_equal(np.stack(theirs), values)


def test_the_first_row_fixes_a_columns_extension(tmp_path):
    """An image column whose rows mix formats stays one column (decoders read the format from the bytes)."""
    values = [make_jpeg(8, 8, seed=0), random_png(4, 4, seed=1)]
    path = _save(tmp_path, _one_column("image", values))
    ds = md.WebDataset(path, shuffle=False)
    assert ds.get_col_names() == ["__key__", "image.jpg"]
    assert [r["image.jpg"].shape for r in dict_rows(ds.map(vision.Decode(), input_columns="image.jpg"))] == [
        (8, 8, 3), (4, 4, 3)]


def test_a_later_row_of_another_type_names_the_row_and_the_column(tmp_path):
    ds = _one_column("label", [np.int64(1), np.float32(0.5)])
    with pytest.raises(ArgumentError, match=r"row 1: column 'label' is written as \.label\.cls members .*Found: "):
        ds.save(str(tmp_path / "x.tar"), file_type="webdataset")
    assert list(tmp_path.iterdir()) == []


def test_two_columns_written_under_one_extension_are_refused(tmp_path):
    jpeg = np.frombuffer(make_jpeg(8, 8, seed=0), np.uint8)
    ds = md.NumpySlicesDataset({"image": [jpeg], "image.jpg": [jpeg]}, shuffle=False)
    with pytest.raises(ArgumentError, match=r"columns 'image' and 'image\.jpg' would both be written as .*'image\.jpg'"):
        ds.save(str(tmp_path / "x.tar"), file_type="webdataset")
