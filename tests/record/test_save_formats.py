"""``Dataset.save``: MindSpore's MindRecord by default (MindSpore 2.10's casts, shapes, file names and
refusals), minddata's Arrow record files with ``file_type="arrow"``; ``MindDataset`` reads both back.

MindSpore itself reading these files, and its own ``save`` output read here, are in
test_mindrecord.py (they need MindSpore's Python)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from testkit import jpeg_array

import minddata as md
from minddata.errors import ArgumentError, DataFormatError
from minddata.record.mindrecord_format import is_mindrecord, read_mindrecord_header

FORMATS = ["mindrecord", "arrow"]


def _jpeg(i: int) -> np.ndarray:
    """An encoded JPEG of 3 x (4 + i) pixels, as an image column holds it."""
    return jpeg_array(np.full((3, 4 + i, 3), (30 * i, 20, 7), np.uint8))


def _rows(n: int = 7) -> list[tuple]:
    return [
        (
            np.int32(i - 2),
            np.int64(2**40 * i),
            np.float32(i / 3),
            np.float64(-i / 7),
            np.array(f"name-{i}-é"),
            np.array(bytes([i, 0, 200, 9])),
            _jpeg(i),
            (np.arange(24).reshape(2, 4, 3) * (i + 1) % 256).astype(np.uint8),
            np.arange(6, dtype=np.float32).reshape(2, 3) * i,
            np.arange(i % 4 + 1, dtype=np.int64) - 5,
        )
        for i in range(n)
    ]


COLUMNS = ["small", "big", "ratio", "score", "name", "blob", "jpeg", "pixels", "mat", "seq"]


def _pipeline(rows: list[tuple], columns: list[str] = COLUMNS) -> md.Dataset:
    return md.GeneratorDataset(lambda: iter(rows), columns, shuffle=False)


def _read(first: str) -> list[dict]:
    return list(md.MindDataset(first, shuffle=False).create_dict_iterator(output_numpy=True, num_epochs=1))


def _files(folder) -> list[str]:
    return sorted(os.listdir(folder))


# MindRecord's stored dtype for each column (MindSpore's casts); Arrow keeps the pipeline's dtype.
MINDRECORD_DTYPES = {"small": "int32", "big": "int64", "ratio": "float32", "score": "float64", "jpeg": "int32",
                     "pixels": "int32", "mat": "float32", "seq": "int64"}


@pytest.mark.parametrize("file_type", FORMATS)
def test_every_column_kind_round_trips(tmp_path, file_type):
    rows = _rows()
    path = str(tmp_path / "all.data")
    _pipeline(rows).save(path, file_type=file_type)
    back = _read(path)
    assert len(back) == len(rows)
    for original, row in zip(rows, back):
        for name, value in zip(COLUMNS, original):
            got = row[name]
            if name == "name":
                assert str(got) == str(value)
            elif name == "blob":
                assert got.tobytes() == value.tobytes()
            else:
                assert got.shape == value.shape and np.array_equal(got, value), name
                wanted = MINDRECORD_DTYPES[name] if file_type == "mindrecord" else value.dtype.name
                if not (file_type == "arrow" and name == "jpeg"):  # Arrow stores 1-D uint8 as bytes, read back as uint8
                    assert got.dtype == np.dtype(wanted), name


@pytest.mark.parametrize("file_type", FORMATS)
def test_many_files_hold_every_row_once(tmp_path, file_type):
    rows = _rows(11)
    path = str(tmp_path / "set.data")
    _pipeline(rows).save(path, num_files=3, file_type=file_type)
    assert [f for f in _files(tmp_path) if not f.endswith((".db", ".json"))] == ["set.data0", "set.data1", "set.data2"]
    smalls = sorted(int(r["small"]) for r in _read(path + "0"))
    assert smalls == [int(r[0]) for r in rows]


@pytest.mark.parametrize("file_type", FORMATS)
def test_minddataset_tells_the_format_by_content(tmp_path, file_type):
    path = str(tmp_path / "x.mindrecord")
    md.NumpySlicesDataset({"x": [4, 5]}, shuffle=False).save(path, file_type=file_type)
    assert is_mindrecord(path) == (file_type == "mindrecord")
    assert [int(r["x"]) for r in _read(path)] == [4, 5]


def test_mindrecord_is_the_default(tmp_path):
    path = str(tmp_path / "d.mindrecord")
    md.NumpySlicesDataset({"x": [1]}, shuffle=False).save(path)
    assert _files(tmp_path) == ["d.mindrecord", "d.mindrecord.db"]
    assert read_mindrecord_header(path)["version"] == "3.0"


def test_mindrecord_shards_take_rows_in_turn_and_are_not_zero_padded(tmp_path):
    path = str(tmp_path / "t.mindrecord")
    md.NumpySlicesDataset({"n": list(range(25))}, shuffle=False).save(path, num_files=12)
    shards = [f"t.mindrecord{i}" for i in range(12)]
    assert _files(tmp_path) == sorted([*shards, *(s + ".db" for s in shards)])
    assert sorted(int(r["n"]) for r in _read(str(tmp_path / "t.mindrecord0"))) == list(range(25))
    for i in (0, 1, 11):
        own = [int(r["n"]) for r in md.MindDataset([str(tmp_path / shards[i])], shuffle=False).create_dict_iterator(output_numpy=True)]
        assert own == list(range(i, 25, 12))


@pytest.mark.parametrize(
    ("dtype", "stored"),
    [("bool", "int32"), ("int8", "int32"), ("uint8", "int32"), ("int16", "int32"), ("uint16", "int32"),
     ("int32", "int32"), ("uint32", "int64"), ("int64", "int64"), ("uint64", "int64"), ("float16", "float32"),
     ("float32", "float32"), ("float64", "float64")],
)
def test_mindrecord_casts_numbers_as_mindspore(tmp_path, dtype, stored):
    values = np.array([1, 0, 1], dtype=dtype)
    path = str(tmp_path / "c.mindrecord")
    md.NumpySlicesDataset({"v": values, "a": np.stack([values, values], axis=1)}, shuffle=False).save(path)
    schema = read_mindrecord_header(path)["schema"][0]
    assert schema["schema"] == {"v": {"type": stored}, "a": {"type": stored, "shape": [-1]}}
    assert schema["blob_fields"] == ["a"]
    back = _read(path)
    assert [r["v"].dtype.name for r in back] == [stored] * 3
    assert [int(r["v"]) for r in back] == [1, 0, 1]


def test_mindrecord_indexes_scalar_numbers_and_strings(tmp_path):
    path = str(tmp_path / "i.mindrecord")
    md.NumpySlicesDataset({"n": [1], "s": ["a"], "f": [0.5], "v": [[1, 2]]}, shuffle=False).save(path)
    assert sorted(i["index_field"] for i in read_mindrecord_header(path)["index_fields"]) == ["f", "n", "s"]


def test_mindrecord_first_dimension_may_vary(tmp_path):
    rows = [(np.ones((k + 1, 2, 2), np.float32) * k,) for k in range(4)]
    path = str(tmp_path / "v.mindrecord")
    _pipeline(rows, ["grid"]).save(path)
    assert read_mindrecord_header(path)["schema"][0]["schema"] == {"grid": {"type": "float32", "shape": [-1, 2, 2]}}
    assert [r["grid"].shape for r in _read(path)] == [(1, 2, 2), (2, 2, 2), (3, 2, 2), (4, 2, 2)]


def test_mindrecord_turns_punctuation_in_column_names_into_underscores(tmp_path):
    path = str(tmp_path / "p.mindrecord")
    md.NumpySlicesDataset({"a.b": [1], "c-d": [2]}, shuffle=False).save(path)
    assert md.MindDataset(path).get_col_names() == ["a_b", "c_d"]


def test_a_bytes_value_is_stored_as_bytes_and_decodes(tmp_path):
    jpegs = [_jpeg(i) for i in range(3)]
    ds = _pipeline([(j,) for j in jpegs], ["image"]).map(lambda img: np.array(img.tobytes()), input_columns="image")
    path = str(tmp_path / "b.mindrecord")
    ds.save(path)
    assert read_mindrecord_header(path)["schema"][0]["schema"] == {"image": {"type": "bytes"}}
    decoded = md.MindDataset(path, shuffle=False).map(md.vision.Decode(), input_columns="image")
    assert [r["image"].shape for r in decoded.create_dict_iterator(output_numpy=True)] == [(3, 4, 3), (3, 5, 3), (3, 6, 3)]


def test_mindrecord_bytes_columns_save_again(tmp_path):
    first = str(tmp_path / "first.mindrecord")
    _pipeline([(np.array(b"ab\x00c"),), (np.array(b"xyz"),)], ["blob"]).save(first)
    again = str(tmp_path / "again.mindrecord")
    md.MindDataset(first, shuffle=False).save(again)
    assert [r["blob"].tobytes() for r in _read(again)] == [b"ab\x00c", b"xyz"]


# -- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (np.array(["a", "b"]), r"column 'col' holds <U1 values of shape \[2\]; MindRecord stores one string per row"),
        (np.array([b"a", b"b"]), r"column 'col' holds \|S1 values of shape \[2\]; MindRecord stores one bytes value"),
        (np.array([1 + 2j]), r"column 'col' holds complex128 values.*Cast the column"),
        (np.array("2024-01-01", dtype="datetime64[D]"), r"column 'col' holds datetime64\[D\] values.*TypeCast"),
    ],
)
def test_mindrecord_refuses_what_mindspore_refuses(tmp_path, value, match):
    with pytest.raises(DataFormatError, match=match) as error:
        _pipeline([(value,)], ["col"]).save(str(tmp_path / "r.mindrecord"))
    assert 'file_type="arrow"' in str(error.value)
    assert _files(tmp_path) == []


def test_mindrecord_refuses_a_shape_that_varies_after_the_first_dimension(tmp_path):
    rows = [(np.ones((2, 3), np.float32),), (np.ones((2, 4), np.float32),)]
    with pytest.raises(DataFormatError, match=r"row 1, column 'm' has shape \[2, 4\].*only the first dimension"):
        _pipeline(rows, ["m"]).save(str(tmp_path / "r.mindrecord"))
    assert _files(tmp_path) == []


@pytest.mark.parametrize(
    "rows",
    [[(np.int32(1),), (np.float32(2.5),)], [(np.int32(1),), (np.array([2, 3], np.int32),)], [(np.array("a"),), (np.int64(1),)]],
    ids=["int-then-float", "scalar-then-array", "string-then-int"],
)
def test_mindrecord_refuses_a_column_whose_type_changes(tmp_path, rows):
    with pytest.raises(DataFormatError, match=r"row 1, column 'a' .* but the first row made it a MindRecord"):
        _pipeline(rows, ["a"]).save(str(tmp_path / "r.mindrecord"))


def test_uint64_past_int64_is_refused_not_wrapped(tmp_path):
    with pytest.raises(DataFormatError, match=r"row 1, column 'u' holds the uint64 value 9223372036854775808"):
        md.NumpySlicesDataset({"u": np.array([1, 2**63], np.uint64)}, shuffle=False).save(str(tmp_path / "u.mindrecord"))
    assert _files(tmp_path) == []


@pytest.mark.parametrize(
    ("columns", "match"),
    [({"a.b": [1], "a_b": [2]}, r"columns 'a.b' and 'a_b' would both be the MindRecord field 'a_b'"),
     ({"a b": [1]}, r"column 'a b' can't be a MindRecord field.*Dataset.rename")],
)
def test_mindrecord_refuses_column_names_it_cannot_store(tmp_path, columns, match):
    with pytest.raises(ArgumentError, match=match):
        md.NumpySlicesDataset(columns, shuffle=False).save(str(tmp_path / "n.mindrecord"))


def test_a_pipeline_without_rows_is_an_error(tmp_path):
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).filter(lambda x: False, input_columns="x")
    with pytest.raises(DataFormatError, match="produced no rows, so there is no schema"):
        ds.save(str(tmp_path / "e.mindrecord"))
    assert _files(tmp_path) == []


def test_existing_files_are_never_overwritten(tmp_path):
    path = str(tmp_path / "x.mindrecord")
    md.NumpySlicesDataset({"x": [1, 2, 3, 4]}, shuffle=False).save(path, num_files=2)
    with pytest.raises(ArgumentError, match=r"4 file\(s\) of this MindRecord set already exist, e.g. .*x.mindrecord0"):
        md.NumpySlicesDataset({"x": [9]}, shuffle=False).save(path, num_files=2)
    assert sorted(int(r["x"]) for r in _read(path + "0")) == [1, 2, 3, 4]


@pytest.mark.parametrize("num_files", [0, 1001, 2.0, True])
def test_mindrecord_num_files_is_an_int_from_1_to_1000(tmp_path, num_files):
    with pytest.raises(ArgumentError, match=r"`num_files` must be an int in \[1, 1000\]"):
        md.NumpySlicesDataset({"x": [1]}, shuffle=False).save(str(tmp_path / "x.mindrecord"), num_files=num_files)


def test_other_file_types_are_refused_naming_the_three(tmp_path):
    with pytest.raises(ArgumentError, match=r"'mindrecord' \(MindSpore's format\), 'arrow' .* or 'webdataset'. Found: 'tfrecord'"):
        md.NumpySlicesDataset({"x": [1]}, shuffle=False).save(str(tmp_path / "x"), file_type="tfrecord")


def test_a_row_larger_than_a_page_names_the_row_and_the_fix(tmp_path):
    rows = [(np.zeros(4, np.float64),), (np.zeros(5 << 20, np.float64),)]
    with pytest.raises(DataFormatError, match=r'row 1 needs more than a MindRecord page \(32 MiB.*file_type="arrow"'):
        _pipeline(rows, ["big"]).save(str(tmp_path / "big.mindrecord"))
    assert _files(tmp_path) == []


def test_arrow_keeps_types_mindrecord_lacks(tmp_path):
    path = str(tmp_path / "a.rec")
    md.NumpySlicesDataset({"flag": [True, False], "u": np.array([1, 2**63], np.uint64)}, shuffle=False).save(
        path, file_type="arrow"
    )
    back = _read(path)
    assert [r["flag"].dtype.name for r in back] == ["bool", "bool"]
    assert [int(r["u"]) for r in back] == [1, 2**63]
