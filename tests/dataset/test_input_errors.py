"""Unclear errors made clear: each names the file, the row/record/line and the rule broken."""

from __future__ import annotations

import gzip
import struct
import zlib

import numpy as np
import pytest
from testkit import tuple_rows

import minddata as md
from minddata.bench.corpus import tf_example, tf_feature, tfrecord_bytes
from minddata.dataset._crc32c import masked_crc
from minddata.errors import ArgumentError, DataFormatError

# -- TFRecord: a crafted length field ---------------------------------------------------------------


def _crafted(length: int) -> bytes:
    """One good record, then a header whose length field (with a valid CRC) claims ``length`` bytes."""
    good = tfrecord_bytes([tf_example({"x": tf_feature("int64", [1])})])
    header = struct.pack("<Q", length)
    return good + header + struct.pack("<I", masked_crc(header)) + b"tiny"


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB", ""])
@pytest.mark.parametrize("length", [2**40, 2**63 + 5, 2**64 - 1])
def test_a_crafted_tfrecord_length_is_an_error_naming_file_and_record(tmp_path, compression, length):
    data = _crafted(length)
    data = gzip.compress(data) if compression == "GZIP" else zlib.compress(data) if compression == "ZLIB" else data
    path = tmp_path / "crafted.tfrecord"
    path.write_bytes(data)
    schema = md.Schema()
    schema.add_column("x", "int64")
    ds = md.TFRecordDataset(str(path), schema=schema, shuffle=False, compression_type=compression or None)
    with pytest.raises(DataFormatError, match=rf"crafted.tfrecord is truncated.*record 1 .*{length}"):
        tuple_rows(ds)


# -- CSV numbers --------------------------------------------------------------------------------------


def _csv(tmp_path, text: str, defaults: list) -> md.CSVDataset:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    return md.CSVDataset(str(path), column_defaults=defaults, shuffle=False)


@pytest.mark.parametrize("value", ["2147483648", "-2147483649", "99999999999999999999999"])
def test_csv_int_out_of_int32_names_file_line_column_and_range(tmp_path, value):
    with pytest.raises(DataFormatError, match=rf"t.csv, line 3, column 'n': {value} does not fit the column's int32"):
        tuple_rows(_csv(tmp_path, f"n\n1\n{value}\n", [0]))


def test_csv_int_longer_than_pythons_digit_limit_names_file_line_column(tmp_path):
    huge = "9" * 5000  # past Python's 4,300-digit int() limit
    with pytest.raises(DataFormatError, match=r"t.csv, line 2, column 'n': 9{20}\.\.\. \(5000 digits\) does not fit"):
        tuple_rows(_csv(tmp_path, f"n\n{huge}\n", [0]))


def test_csv_int_with_many_leading_zeros_is_read(tmp_path):
    assert [int(r[0]) for r in tuple_rows(_csv(tmp_path, "n\n" + "0" * 5000 + "42\n", [0]))] == [42]


@pytest.mark.parametrize("value", ["1_000", " 7 ", "\u0667", "0x10", "7.0", "+-3"])
def test_csv_ints_are_ascii_digits_with_an_optional_sign(tmp_path, value):
    with pytest.raises(DataFormatError, match=r"t.csv, line 2, column 'n': .* is not an int \(ASCII digits"):
        tuple_rows(_csv(tmp_path, f'n\n"{value}"\n', [0]))


def test_csv_ints_that_fit_are_read(tmp_path):
    rows = tuple_rows(_csv(tmp_path, "n\n-2147483648\n+2147483647\n007\n", [0]))
    assert [int(r[0]) for r in rows] == [-2147483648, 2147483647, 7]


@pytest.mark.parametrize("value", ["3.4e39", "-1e40", "1e309"])
def test_csv_float_overflowing_float32_names_file_line_column_and_value(tmp_path, value):
    with pytest.raises(DataFormatError, match=rf"t.csv, line 2, column 'f': {value} overflows the column's float32"):
        tuple_rows(_csv(tmp_path, f"f\n{value}\n", [0.0]))


@pytest.mark.parametrize("value", ["1_0.5", " 1.5", "\u0661.5", "1e"])
def test_csv_floats_follow_the_format(tmp_path, value):
    with pytest.raises(DataFormatError, match=r"t.csv, line 2, column 'f': .* is not a float"):
        tuple_rows(_csv(tmp_path, f'f\n"{value}"\n', [0.0]))


def test_csv_floats_that_fit_are_read(tmp_path):
    rows = tuple_rows(_csv(tmp_path, "f\n3.4e38\n-.5\n1e-50\nnan\n-inf\n", [0.0]))
    values = [float(r[0]) for r in rows]
    assert values[:3] == [np.float32(3.4e38), -0.5, 0.0] and np.isnan(values[3]) and values[4] == -np.inf


# -- inferred columns name their file ----------------------------------------------------------------


def test_column_defaults_count_error_names_the_header_file(tmp_path):
    path = tmp_path / "six.csv"
    path.write_text("a,b,c,d,e,f\n1,2,3,4,5,6\n")
    with pytest.raises(ArgumentError, match=r"has 3 value\(s\) but there are 6 columns in the header of .*six.csv"):
        md.CSVDataset(str(path), column_defaults=[0, 0, 0])


def test_tfrecord_inferred_schema_without_columns_names_the_file(tmp_path):
    path = tmp_path / "empty_features.tfrecord"
    path.write_bytes(tfrecord_bytes([tf_example({})]))
    with pytest.raises(DataFormatError, match=r"inferred from .*empty_features.tfrecord .* names no columns"):
        md.TFRecordDataset(str(path))


# -- resume states out of range ------------------------------------------------------------------------


def _ten():
    return md.NumpySlicesDataset({"x": np.arange(10)}, shuffle=False)


def test_a_resume_row_beyond_the_epoch_is_refused():
    state = _ten().create_tuple_iterator(num_epochs=1).get_state()
    state["row"] = 11
    it = _ten().create_tuple_iterator(num_epochs=1, state=state)
    with pytest.raises(ValueError, match=r"state\['row'\] is 11, beyond the end of an epoch of this dataset \(10 rows\)"):
        list(it)


def test_a_resume_row_beyond_a_csv_epoch_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("n\n1\n2\n3\n")
    ds = md.CSVDataset(str(path), column_defaults=[0], shuffle=False)
    state = ds.create_tuple_iterator(num_epochs=1).get_state()
    state["row"] = 4
    with pytest.raises(ValueError, match=r"state\['row'\] is 4, beyond the end of an epoch of this dataset \(3 rows\)"):
        list(ds.create_tuple_iterator(num_epochs=1, state=state))


def test_a_resume_row_at_the_end_of_the_epoch_is_accepted():
    state = _ten().create_tuple_iterator(num_epochs=2).get_state()
    state["row"] = 10
    it = _ten().create_tuple_iterator(num_epochs=2, output_numpy=True, state=state)
    assert list(it) == []  # the rest of epoch 0 is empty
    assert len(list(it)) == 10  # epoch 1 is whole


@pytest.mark.parametrize("seed", [2**32, 2**64])
def test_a_resume_seed_of_2_to_the_32_or_more_is_refused(seed):
    state = _ten().create_tuple_iterator(num_epochs=1).get_state()
    state["seed"] = seed
    with pytest.raises(ValueError, match=r"state\['seed'\] must be below 2\*\*32"):
        _ten().create_tuple_iterator(num_epochs=1, state=state)


# -- a file gone between listing and reading ------------------------------------------------------------


def test_a_file_gone_after_listing_is_one_error_without_the_oss_traceback(tmp_path):
    import os
    import traceback

    from testkit import make_jpeg

    from minddata.errors import RowError

    (tmp_path / "c").mkdir()
    for i in range(2):
        (tmp_path / "c" / f"{i}.jpg").write_bytes(make_jpeg(8, 8, seed=i))
    ds = md.ImageFolderDataset(str(tmp_path), shuffle=False)
    assert ds.get_dataset_size() == 2  # listed now
    os.remove(tmp_path / "c" / "1.jpg")
    with pytest.raises(RowError) as caught:
        tuple_rows(ds)
    printed = "".join(traceback.format_exception(caught.value))
    assert f"ImageFolderDataset: can't read row 1, file {tmp_path / 'c' / '1.jpg'}: No such file or directory" in printed
    assert "FileNotFoundError" not in printed and "direct cause" not in printed
