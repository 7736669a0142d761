"""MindSpore's MindRecord format: files written by mindspore 2.10 read as MindSpore reads them, files
written by minddata read by MindSpore, conversion to and from Arrow records, damage reported.

The stored files (``data/mindspore_files.tar.gz``) were written by ``mindspore.mindrecord.FileWriter``
through ``data/mindspore_side.py``, with what MindSpore itself read back from them. Where MindSpore's
Python is found or made (tests/peers.py) the tests also write
fresh files with it and have it read minddata's files.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tarfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peers import peer_env
from record_helpers import run_python

import minddata as md
from minddata.errors import ArgumentError, DataFormatError
from minddata.mindrecord import FileReader, FileWriter
from minddata.record.mindrecord_format import is_mindrecord

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_spec = importlib.util.spec_from_file_location("mindspore_side", os.path.join(DATA, "mindspore_side.py"))
side = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(side)

NAMES = sorted(side.DATASETS)


def _first(folder, name: str) -> str:
    shard_num = side.DATASETS[name][0]
    return os.path.join(str(folder), f"{name}.mindrecord" + ("0" if shard_num > 1 else ""))


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """The stored MindSpore-written sets, unpacked."""
    folder = tmp_path_factory.mktemp("mindspore_files")
    with tarfile.open(os.path.join(DATA, "mindspore_files.tar.gz")) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(folder, filter="data")
        else:
            tar.extractall(folder)
    return folder


def _expected(folder, name: str) -> dict:
    with open(os.path.join(str(folder), f"{name}.expected.json")) as f:
        return json.load(f)


def _ours(first: str) -> dict:
    """What minddata reads from a set, in the form of ``mindspore_side.read``."""
    dataset = md.MindDataset(first, shuffle=False)
    rows = [{k: side.encode(v) for k, v in row.items()} for row in dataset.create_dict_iterator(output_numpy=True, num_epochs=1)]
    reader = FileReader(first)
    reader_rows = [{k: side.encode(v) for k, v in row.items()} for row in reader.get_next()]
    reader.close()
    return {"columns": dataset.get_col_names(), "size": dataset.get_dataset_size(), "rows": rows, "reader_rows": reader_rows}


def _decode(encoded: list):
    kind, shape, data = encoded
    if kind == "str":
        return data
    return np.frombuffer(base64.b64decode(data), dtype=np.dtype(kind)).reshape(shape)


def _same_value(a: list, b: list) -> bool:
    """FileReader values compared by value (MindSpore's FileReader turns 2.0 into the int 2)."""
    x, y = _decode(a), _decode(b)
    if isinstance(x, str) or isinstance(y, str):
        return x == y
    if x.dtype.kind == "S" or y.dtype.kind == "S":
        return x.tobytes() == y.tobytes()
    return x.shape == y.shape and np.array_equal(x, y)


def _assert_reads_as(ours: dict, theirs: dict) -> None:
    assert ours["columns"] == theirs["columns"]
    assert ours["size"] == theirs["size"] == len(theirs["rows"])
    for k, (a, b) in enumerate(zip(ours["rows"], theirs["rows"])):
        assert a == b, f"MindDataset row {k} differs from MindSpore's"
    assert len(ours["rows"]) == len(theirs["rows"])
    assert len(ours["reader_rows"]) == len(theirs["reader_rows"])
    for k, (a, b) in enumerate(zip(ours["reader_rows"], theirs["reader_rows"])):
        assert a.keys() == b.keys() and all(_same_value(a[c], b[c]) for c in a), f"FileReader row {k} differs"


def _key(row: dict) -> str:
    return json.dumps(row, sort_keys=True)


def _write_ours(folder, name: str, **kwargs) -> str:
    shard_num, schema, index, calls = side.DATASETS[name]
    writer = FileWriter(os.path.join(str(folder), f"{name}.mindrecord"), shard_num=shard_num, **kwargs)
    writer.set_header_size(1 << 14)
    writer.set_page_size(1 << 15)
    writer.add_schema(schema, f"minddata test set {name}")
    if index:
        writer.add_index(index)
    rows = side.rows(name)
    start = 0
    for size in calls:
        writer.write_raw_data(rows[start : start + size])
        start += size
    writer.commit()
    return _first(folder, name)


def _run_mindspore(python: str, *args: str) -> None:
    done = subprocess.run(
        [python, os.path.join(DATA, "mindspore_side.py"), *args],
        capture_output=True, text=True, timeout=300, env=peer_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]


# -- MindSpore's files, read as MindSpore reads them ---------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_reads_stored_mindspore_files_as_mindspore_does(stored, name):
    _assert_reads_as(_ours(_first(stored, name)), _expected(stored, name))


@pytest.mark.parametrize("name", NAMES)
def test_every_written_row_comes_back_exactly_once(stored, name):
    got = sorted(_key(r) for r in _ours(_first(stored, name))["rows"])
    written = sorted(_key({k: side.encode(v if not isinstance(v, bytes) else v) for k, v in _as_read(name, row).items()}) for row in side.rows(name))
    assert got == written


def _as_read(name: str, row: dict) -> dict:
    """A written row as MindDataset gives it back (the schema's dtypes and shapes)."""
    schema = side.DATASETS[name][1]
    out = {}
    for field, value in row.items():
        spec = schema[field]
        if spec["type"] == "bytes":
            out[field] = np.array([value])
        elif spec["type"] == "string":
            out[field] = np.array(value)
        else:
            out[field] = np.asarray(value, dtype=spec["type"])
    return out


def test_one_write_call_reads_back_in_write_order_across_shards(stored):
    ids = [int(_decode(r["id"])) for r in _ours(_first(stored, "scalars"))["rows"]]
    assert ids == list(range(40))
    labels = [_decode(r["file_name"]) for r in _ours(_first(stored, "images"))["rows"]]
    assert labels == [r["file_name"] for r in side.rows("images")]


def test_column_names_are_sorted_and_bytes_are_shape_one_arrays(stored):
    dataset = md.MindDataset(_first(stored, "images"), shuffle=False)
    assert dataset.get_col_names() == ["file_name", "image", "label"]
    row = next(dataset.create_dict_iterator(output_numpy=True))
    assert row["image"].shape == (1,) and row["image"].dtype.kind == "S"
    assert row["image"].tobytes() == side.rows("images")[0]["image"]
    assert row["label"].dtype == np.int32 and row["file_name"].dtype.kind == "U"


def test_decode_reads_mindrecord_image_bytes(stored):
    dataset = md.MindDataset(_first(stored, "images"), shuffle=False).map(md.vision.Decode(), input_columns=["image"])
    shapes = [r["image"].shape for r in dataset.create_dict_iterator(output_numpy=True)]
    assert shapes == [(12, 16, 3)] * 7


def test_gpu_translation_decodes_mindrecord_image_bytes(stored):
    pytest.importorskip("nvidia.dali", reason="NVIDIA DALI is not installed")
    md.config.set_gpu_emulation(True)
    first = _first(stored, "images")
    ops = [md.vision.Decode(), md.vision.Resize((8, 8))]
    gpu = md.MindDataset(first, shuffle=False).map(ops, input_columns=["image"], device="GPU")
    shapes = [r["image"].shape for r in gpu.create_dict_iterator(output_numpy=True)]
    assert shapes == [(8, 8, 3)] * 7


def test_columns_list_selects_and_orders_columns(stored):
    dataset = md.MindDataset(_first(stored, "mixed"), columns_list=["seq", "id"], shuffle=False)
    assert dataset.get_col_names() == ["seq", "id"]
    rows = list(dataset.create_tuple_iterator(output_numpy=True))
    assert len(rows) == 18 and all(len(r) == 2 for r in rows)


def test_columns_list_naming_a_missing_field_names_the_file_and_its_columns(stored):
    first = _first(stored, "mixed")
    with pytest.raises(DataFormatError, match=r"columns_list names \['nope'\], which MindRecord file .*mixed.* Its columns"):
        md.MindDataset(first, columns_list=["id", "nope"], shuffle=False).get_col_names()


def test_shards_are_disjoint_and_cover_the_set(stored):
    first = _first(stored, "scalars")
    md.config.set_seed(3)
    seen = []
    for shard_id in range(3):
        dataset = md.MindDataset(first, shuffle=True, num_shards=3, shard_id=shard_id, columns_list=["id"])
        seen.append([int(r["id"]) for r in dataset.create_dict_iterator(output_numpy=True, num_epochs=1)])
    everything = sum(seen, [])
    assert set(everything) == set(range(40)) and len(everything) == 42  # padded to equal shards, as MindSpore pads
    assert all(len(s) == 14 for s in seen)


def test_sampler_and_num_samples(stored):
    first = _first(stored, "scalars")
    dataset = md.MindDataset(first, sampler=md.SequentialSampler(start_index=5, num_samples=4))
    assert [int(r["id"]) for r in dataset.create_dict_iterator(output_numpy=True)] == [5, 6, 7, 8]
    dataset = md.MindDataset(first, shuffle=False, num_samples=3)
    assert [int(r["id"]) for r in dataset.create_dict_iterator(output_numpy=True)] == [0, 1, 2]


def test_list_of_files_reads_exactly_those(stored):
    files = [os.path.join(str(stored), f"mixed.mindrecord{i}") for i in (2, 0)]
    dataset = md.MindDataset(files, shuffle=False, columns_list=["id"])
    everything = [int(r["id"]) for r in md.MindDataset(_first(stored, "mixed"), shuffle=False, columns_list=["id"]).create_dict_iterator(output_numpy=True)]
    got = [int(r["id"]) for r in dataset.create_dict_iterator(output_numpy=True)]
    assert len(got) < len(everything) and set(got) < set(everything)


def test_resumes_exactly_on_mindrecord_files(stored):
    sys.path.insert(0, os.path.join(os.path.dirname(DATA), "..", "dataset"))
    try:
        from test_resume import assert_resumes_exactly
    finally:
        sys.path.pop(0)
    first = _first(stored, "mixed")
    assert_resumes_exactly(lambda w: md.MindDataset(first, num_parallel_workers=w, num_shards=2, shard_id=1))


# -- minddata's writer ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_our_files_read_back_like_mindsporess_modulo_its_random_shard_split(stored, tmp_path, name):
    ours = _ours(_write_ours(tmp_path, name))
    theirs = _expected(stored, name)
    assert ours["columns"] == theirs["columns"] and ours["size"] == theirs["size"]
    # MindSpore gives the len % shard_num extra rows of a call to random shards; compare as multisets.
    assert sorted(map(_key, ours["rows"])) == sorted(map(_key, theirs["rows"]))


def test_our_shard_files_split_each_call_into_contiguous_blocks(tmp_path):
    first = _write_ours(tmp_path, "mixed")
    ids = [int(r["id"]) for r in md.MindDataset(first, shuffle=False).create_dict_iterator(output_numpy=True)]
    # 13 rows -> 5, 4, 4 and 5 rows -> 2, 2, 1, read shard by shard.
    assert ids == [0, 1, 2, 3, 4, 13, 14, 5, 6, 7, 8, 15, 16, 9, 10, 11, 12, 17]
    assert [os.path.basename(p) for p in sorted(tmp_path.iterdir())] == [
        "mixed.mindrecord0", "mixed.mindrecord0.db", "mixed.mindrecord1", "mixed.mindrecord1.db",
        "mixed.mindrecord2", "mixed.mindrecord2.db",
    ]


def test_shard_names_are_zero_padded_as_mindspore_names_them(tmp_path):
    writer = FileWriter(str(tmp_path / "w.mindrecord"), shard_num=11)
    writer.add_schema({"x": {"type": "int32"}})
    writer.write_raw_data([{"x": i} for i in range(22)])
    writer.commit()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".db"))[:2] == ["w.mindrecord00", "w.mindrecord01"]
    assert md.MindDataset(str(tmp_path / "w.mindrecord07")).get_dataset_size() == 22


def test_rows_span_many_pages(tmp_path):
    writer = FileWriter(str(tmp_path / "p.mindrecord"), shard_num=2)
    writer.set_header_size(1 << 14)
    writer.set_page_size(1 << 15)
    writer.add_schema({"i": {"type": "int64"}, "blob": {"type": "bytes"}, "name": {"type": "string"}})
    rows = [{"i": i, "blob": bytes([i % 251]) * (3000 + i), "name": "n" * (i % 50)} for i in range(120)]
    writer.write_raw_data(rows)
    writer.commit()
    got = list(md.MindDataset(str(tmp_path / "p.mindrecord0"), shuffle=False).create_dict_iterator(output_numpy=True))
    assert [r["blob"].tobytes() for r in got] == [r["blob"] for r in rows]
    assert [str(r["name"]) for r in got] == [r["name"] for r in rows]


def test_a_row_larger_than_a_page_is_an_error_naming_the_fix(tmp_path):
    writer = FileWriter(str(tmp_path / "big.mindrecord"))
    writer.set_page_size(1 << 15)
    writer.add_schema({"blob": {"type": "bytes"}})
    with pytest.raises(ArgumentError, match="set_page_size"):
        writer.write_raw_data([{"blob": b"x" * (1 << 16)}])
    writer.abort()


@pytest.mark.parametrize(
    ("schema", "match"),
    [
        ({"x": {"type": "uint8"}}, "MindRecord stores"),
        ({"bad-name": {"type": "int32"}}, "0-9, a-z"),
        ({"x": {"type": "string", "shape": [2]}}, "can't have a shape"),
    ],
)
def test_schema_errors(tmp_path, schema, match):
    writer = FileWriter(str(tmp_path / "s.mindrecord"))
    with pytest.raises(ArgumentError, match=match):
        writer.add_schema(schema)
    writer.abort()


def test_row_errors_name_the_row_and_field(tmp_path):
    writer = FileWriter(str(tmp_path / "r.mindrecord"))
    writer.add_schema({"x": {"type": "int32"}, "v": {"type": "float32", "shape": [2, 2]}})
    with pytest.raises(ArgumentError, match=r"row 1 does not match the schema: missing \[.v.\]"):
        writer.write_raw_data([{"x": 1, "v": np.zeros(4)}, {"x": 2}])
    with pytest.raises(ArgumentError, match=r"row 0, field 'v'.*reshape to \[2, 2\]"):
        writer.write_raw_data([{"x": 1, "v": np.zeros(5)}])
    with pytest.raises(ArgumentError, match="index fields are scalar"):
        writer.add_index(["v"])
    writer.abort()


def test_nothing_appears_before_commit_and_abort_leaves_nothing(tmp_path):
    writer = FileWriter(str(tmp_path / "c.mindrecord"), shard_num=2)
    writer.add_schema({"x": {"type": "int32"}})
    writer.write_raw_data([{"x": i} for i in range(5)])
    assert not [p for p in tmp_path.iterdir() if ".tmp-" not in p.name]
    writer.abort()
    assert list(tmp_path.iterdir()) == []


def test_existing_files_need_overwrite(tmp_path):
    _write_ours(tmp_path, "scalars")
    with pytest.raises(ArgumentError, match="overwrite=True"):
        FileWriter(str(tmp_path / "scalars.mindrecord"))
    _write_ours(tmp_path, "scalars", overwrite=True)
    assert md.MindDataset(str(tmp_path / "scalars.mindrecord")).get_dataset_size() == 40


def test_open_for_append_adds_rows(tmp_path):
    first = _write_ours(tmp_path, "mixed")
    writer = FileWriter.open_for_append(first)
    extra = side.rows("mixed")[:4]
    writer.write_raw_data(extra)
    writer.commit()
    ids = sorted(int(r["id"]) for r in md.MindDataset(first, shuffle=False).create_dict_iterator(output_numpy=True))
    assert ids == sorted(list(range(18)) + [0, 1, 2, 3])
    assert FileReader(first).len() == 22


def test_empty_arrays_round_trip(tmp_path):
    writer = FileWriter(str(tmp_path / "e.mindrecord"))
    writer.add_schema({"v": {"type": "int64", "shape": [-1]}, "m": {"type": "float32", "shape": [-1, 2]}})
    writer.write_raw_data([{"v": np.zeros(0, np.int64), "m": np.zeros((0, 2), np.float32)}, {"v": [1], "m": [[1, 2]]}])
    writer.commit()
    rows = list(md.MindDataset(str(tmp_path / "e.mindrecord"), shuffle=False).create_dict_iterator(output_numpy=True))
    assert [(r["v"].shape, r["m"].shape) for r in rows] == [((0,), (0, 2)), ((1,), (1, 2))]


def test_file_reader_reads_arrow_record_files_too(tmp_path):
    path = str(tmp_path / "a.mindrecord")
    md.NumpySlicesDataset({"x": [3, 4]}, shuffle=False).save(path, file_type="arrow")
    assert not is_mindrecord(path)
    assert [int(r["x"]) for r in FileReader(path).get_next()] == [3, 4]


def test_format_is_told_by_content_not_name(tmp_path):
    writer = FileWriter(str(tmp_path / "data.arrow"))
    writer.add_schema({"x": {"type": "int64"}})
    writer.write_raw_data([{"x": 5}])
    writer.commit()
    assert is_mindrecord(str(tmp_path / "data.arrow"))
    assert [int(r["x"]) for r in md.MindDataset(str(tmp_path / "data.arrow")).create_dict_iterator(output_numpy=True)] == [5]


def _encrypted_like_mindspore(path):
    """A file shaped as MindSpore 2.10 writes an encrypted shard: length-prefixed cipher blocks, a zero
    length, the mode, and the ENCRYPT flag."""
    block = bytes(range(256)) * 4
    path.write_bytes(struct.pack(">I", len(block)) + block + struct.pack(">I", 0) + b"AES-GCM" + b"ENCRYPT")
    return path


@pytest.mark.parametrize("with_index", [False, True], ids=["alone", "beside its .db"])
def test_a_shard_encrypted_like_mindspores_is_named_as_such(tmp_path, with_index):
    path = _encrypted_like_mindspore(tmp_path / "e.mindrecord")
    if with_index:
        (tmp_path / "e.mindrecord.db").write_bytes(b"encrypted too")
    with pytest.raises(DataFormatError, match=r"MindDataset: MindRecord file .*e\.mindrecord: it was encrypted by "
                                              r"MindSpore \(mindspore\.mindrecord\.set_enc_key\)"):
        md.MindDataset(str(path))


def test_file_urls_read_as_their_paths_in_every_record_entry_point(stored, tmp_path):
    from minddata.record.convert import convert_records

    first = _first(stored, "images")
    url = "file://" + first
    assert [r["label"] for r in FileReader(url).get_next()] == [r["label"] for r in FileReader(first).get_next()]
    convert_records(url, tmp_path / "out.rec", format="arrow")
    assert md.MindDataset(str(tmp_path / "out.rec")).get_dataset_size() == md.MindDataset(first).get_dataset_size()


def test_mindspores_encryption_settings_say_they_are_not_implemented():
    import minddata.mindrecord as mr

    with pytest.raises(AttributeError, match=r"set_enc_key is not implemented.*mindspore_differences\.md"):
        mr.set_enc_key  # noqa: B018


# -- conversion -----------------------------------------------------------------------------------


def test_convert_mindrecord_to_arrow_and_back(stored, tmp_path, capsys):
    from minddata.cli import main

    first = _first(stored, "mixed")
    assert main(["convert", first, str(tmp_path / "arrow.rec"), "--shards", "2", "--format", "arrow"]) == 0
    assert "from MindRecord to Arrow record" in capsys.readouterr().out
    arrow = md.MindDataset(str(tmp_path / "arrow.rec0"), shuffle=False)
    assert arrow.get_dataset_size() == 18 and not is_mindrecord(str(tmp_path / "arrow.rec0"))
    assert main(["convert", str(tmp_path / "arrow.rec0"), str(tmp_path / "back.mindrecord")]) == 0
    back = _ours(str(tmp_path / "back.mindrecord"))
    original = _ours(first)
    assert back["columns"] == original["columns"]
    assert sorted(map(_key, back["rows"])) == sorted(map(_key, original["rows"]))


def test_convert_widens_arrow_types_mindrecord_lacks(tmp_path):
    from minddata.record.convert import convert_records

    source = str(tmp_path / "u8.rec")
    md.NumpySlicesDataset({"img": np.arange(24, dtype=np.uint8).reshape(2, 3, 4), "flag": [True, False]}, shuffle=False).save(
        source, file_type="arrow"
    )
    convert_records(source, str(tmp_path / "m.mindrecord"))
    rows = list(md.MindDataset(str(tmp_path / "m.mindrecord"), shuffle=False).create_dict_iterator(output_numpy=True))
    assert rows[1]["img"].dtype == np.int32 and rows[1]["img"].tolist() == np.arange(12, 24).reshape(3, 4).tolist()
    assert [int(r["flag"]) for r in rows] == [1, 0]


# -- damage ---------------------------------------------------------------------------------------


@pytest.fixture
def copy_of(stored, tmp_path):
    def make(name: str) -> str:
        for entry in os.listdir(str(stored)):
            if entry.startswith(name + ".mindrecord"):
                shutil.copy(os.path.join(str(stored), entry), tmp_path / entry)
        return _first(tmp_path, name)

    return make


def _read_all(first: str) -> list:
    return list(md.MindDataset(first, shuffle=False).create_tuple_iterator(output_numpy=True, num_epochs=1))


def test_truncated_shard_is_reported_with_its_name(copy_of):
    first = copy_of("scalars")
    with open(first, "r+b") as f:
        f.truncate(os.path.getsize(first) - 100)
    with pytest.raises(DataFormatError, match=r"scalars.mindrecord is truncated"):
        md.MindDataset(first)


_SHRINK_WHILE_READING = """
import os
import minddata as md
from minddata.errors import DataFormatError
first = {first!r}
ds = md.MindDataset(first, shuffle=False, num_parallel_workers=2)
rows = 0
try:
    for row in ds.create_tuple_iterator(output_numpy=True, num_epochs=1):
        rows += 1
        if rows == 2:
            for name in os.listdir(os.path.dirname(first)):
                if not name.endswith(".db"):
                    os.truncate(os.path.join(os.path.dirname(first), name), 4096)
    print("no error after", rows, "rows")
except DataFormatError as error:
    print(error)
"""


def test_shard_truncated_while_reading_is_an_error_not_a_crash(tmp_path):
    # In a child: reading through a map would die of SIGBUS here; a short pread is reported instead.
    first = str(tmp_path / "big.mindrecord")
    writer = FileWriter(first, shard_num=1)
    writer.add_schema({"label": {"type": "int32"}, "blob": {"type": "bytes"}}, "big")
    writer.write_raw_data([{"label": i, "blob": bytes([i % 256]) * 4000} for i in range(3000)])
    writer.commit()
    assert is_mindrecord(first)
    done = run_python(_SHRINK_WHILE_READING.format(first=first), tmp_path, timeout=120)
    assert done.returncode == 0, f"child ended with {done.returncode}: {done.stderr[-2000:]}"
    assert "shrank while being read" in done.stdout and "big.mindrecord" in done.stdout, done.stdout


def test_missing_index_file_is_reported(copy_of):
    first = copy_of("images")
    os.remove(first.replace("mindrecord0", "mindrecord1") + ".db")
    with pytest.raises(DataFormatError, match=r"images.mindrecord1: its index file .*\.db is missing"):
        md.MindDataset(first)


def test_overwritten_start_is_reported_as_a_damaged_mindrecord_file(copy_of):
    first = copy_of("scalars")
    with open(first, "r+b") as f:
        f.write(b"\xff" * 16)
    with pytest.raises(DataFormatError, match="MindRecord file .*scalars.mindrecord: its header length field"):
        md.MindDataset(first)


def test_garbage_index_file_is_reported(copy_of):
    first = copy_of("scalars")
    with open(first + ".db", "wb") as f:
        f.write(b"not a database" * 100)
    with pytest.raises(DataFormatError, match="not a readable MindRecord index"):
        md.MindDataset(first)


def test_index_of_another_shard_is_refused(copy_of):
    first = copy_of("images")
    shutil.copy(first + ".db", first.replace("mindrecord0", "mindrecord1") + ".db")
    with pytest.raises(DataFormatError, match="belongs to another shard"):
        md.MindDataset(first)


def _rewrite_header(path: str, change) -> None:
    with open(path, "r+b") as f:
        data = f.read()
        (length,) = struct.unpack_from("<Q", data)
        header = json.loads(data[8 : 8 + length])
        change(header)
        text = json.dumps(header).encode()
        f.seek(0)
        f.write(struct.pack("<Q", len(text)) + text)


@pytest.mark.parametrize("address", ["../secret-file", "/etc/passwd"])
def test_shard_addresses_may_not_leave_the_folder(copy_of, address):
    first = copy_of("images")

    def change(header):
        header["shard_addresses"][1] = address

    _rewrite_header(first, change)
    with pytest.raises(DataFormatError, match="points outside its folder") as error:
        md.MindDataset(first)
    assert address not in str(error.value)


def test_damaged_row_entry_is_reported_at_its_row(copy_of):
    first = copy_of("scalars")
    connection = sqlite3.connect(first + ".db")
    (page, start) = connection.execute("SELECT PAGE_ID_RAW, PAGE_OFFSET_RAW FROM INDEXES WHERE ROW_ID = 7").fetchone()
    connection.close()
    with open(first, "r+b") as f:
        f.seek((1 << 14) + page * (1 << 15) + start)
        f.write(struct.pack("<Q", 999))
    with pytest.raises(Exception, match=r"scalars.mindrecord, row 7: its raw entry says 999 bytes") as error:
        _read_all(first)
    assert isinstance(error.value, DataFormatError) or isinstance(error.value.__cause__, DataFormatError)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damage_gives_values_or_a_format_error_never_a_crash(copy_of, data):
    first = copy_of("mixed")
    target = data.draw(st.sampled_from([first, first + ".db"]))
    with open(target, "rb") as f:
        content = bytearray(f.read())
    if data.draw(st.booleans()):
        content = content[: data.draw(st.integers(0, len(content)))]
    else:
        for _ in range(data.draw(st.integers(1, 8))):
            # header and the used part of the first pages, where the damage is not read back as zeros
            at = data.draw(st.integers(0, min(len(content), (1 << 14) + 3 * (1 << 15)) - 1))
            content[at] ^= data.draw(st.integers(1, 255))
    original = open(target, "rb").read()
    with open(target, "wb") as f:
        f.write(content)
    try:
        reader = FileReader(first)
        list(reader.get_next())
        _read_all(first)
    except DataFormatError:
        pass
    except md.errors.PipelineError as error:
        assert isinstance(error.__cause__, DataFormatError), error
    finally:
        with open(target, "wb") as f:
            f.write(original)


# -- against MindSpore itself ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def fresh(mindspore_python_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh_mindspore_files")
    _run_mindspore(mindspore_python_path, "write", str(folder))
    return folder


@pytest.mark.parametrize("name", NAMES)
def test_reads_fresh_mindspore_files_as_mindspore_does(fresh, name):
    _assert_reads_as(_ours(_first(fresh, name)), _expected(fresh, name))


@pytest.fixture(scope="module")
def protected(mindspore_python_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("protected_mindspore_files")
    _run_mindspore(mindspore_python_path, "protect", str(folder))
    return folder


def test_a_set_mindspore_encrypted_is_refused_naming_the_setting(protected):
    path = str(protected / "encrypted.mindrecord")
    with pytest.raises(DataFormatError, match=r"encrypted by MindSpore \(mindspore\.mindrecord\.set_enc_key\)") as error:
        md.MindDataset(path).get_dataset_size()
    assert path in str(error.value) and "set_enc_key(None)" in str(error.value)


@pytest.fixture(scope="module")
def read_by_mindspore(mindspore_python_path, stored, tmp_path_factory):
    """minddata-written sets (each DATASETS set, one appended to, one converted from Arrow records) and
    what MindSpore read from each, in one MindSpore process."""
    from minddata.record.convert import convert_records

    folder = tmp_path_factory.mktemp("ours_for_mindspore")
    firsts = {name: _write_ours(folder, name) for name in NAMES}
    appended = folder / "appended"
    appended.mkdir()
    firsts["appended"] = _write_ours(appended, "images")
    writer = FileWriter.open_for_append(firsts["appended"])
    writer.write_raw_data(side.rows("images")[:3])
    writer.commit()
    convert_records(_first(stored, "mixed"), str(folder / "arrow.rec"), format="arrow")
    convert_records(str(folder / "arrow.rec"), str(folder / "back.mindrecord"), shard_num=2)
    firsts["converted"] = str(folder / "back.mindrecord0")
    firsts["image_folder"] = _convert_image_folder_by_cli(folder)
    args = [a for name, first in firsts.items() for a in (first, str(folder / f"{name}.mindspore.json"))]
    _run_mindspore(mindspore_python_path, "read", *args)
    return {name: (first, json.loads((folder / f"{name}.mindspore.json").read_text())) for name, first in firsts.items()}


def _convert_image_folder_by_cli(folder) -> str:
    """``minddata convert`` of a small image folder with the default format, as a user runs it."""
    from PIL import Image

    from minddata.cli import main

    images = folder / "image_folder"
    for k, cls in enumerate(("cat", "dog", "eel")):
        (images / cls).mkdir(parents=True)
        for i in range(3):
            Image.new("RGB", (5 + i, 4 + k), (40 * i, 60 * k, 7)).save(images / cls / f"{i}.png")
    assert main(["convert", str(images), str(folder / "converted_images.mindrecord"), "--shards", "2", "-q"]) == 0
    return str(folder / "converted_images.mindrecord0")


@pytest.mark.parametrize("name", [*NAMES, "appended", "converted", "image_folder"])
def test_mindspore_reads_our_files_row_by_row(read_by_mindspore, name):
    first, theirs = read_by_mindspore[name]
    _assert_reads_as(_ours(first), theirs)


# -- MindSpore's converters -----------------------------------------------------------------------


def test_mnist_to_mr_writes_train_and_test_sets(tmp_path):
    import gzip

    from minddata.mindrecord import MnistToMR

    rng = np.random.default_rng(0)
    for prefix, n in (("train", 5), ("t10k", 3)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        with gzip.open(tmp_path / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        with gzip.open(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, n) + bytes(range(n)))
    MnistToMR(str(tmp_path), str(tmp_path / "mnist"), partition_number=2).transform()
    train = md.MindDataset(str(tmp_path / "mnist_train.mindrecord0"), shuffle=False).map(md.vision.Decode(), input_columns=["data"])
    rows = list(train.create_dict_iterator(output_numpy=True))
    assert [int(r["label"]) for r in rows] == [0, 1, 2, 3, 4]
    assert rows[0]["data"].shape == (28, 28, 3)
    assert FileReader(str(tmp_path / "mnist_test.mindrecord0")).len() == 3


def test_imagenet_to_mr_reads_the_map_file(tmp_path):
    from minddata.mindrecord import ImageNetToMR

    for folder in ("n02", "n01"):
        (tmp_path / "train" / folder).mkdir(parents=True)
        for i in range(2):
            (tmp_path / "train" / folder / f"{i}.JPEG").write_bytes(side._jpeg(i))
    (tmp_path / "map.txt").write_text("n01 0\nn02 1\n")
    ImageNetToMR(str(tmp_path / "map.txt"), str(tmp_path / "train"), str(tmp_path / "in.mindrecord")).transform()
    rows = list(md.MindDataset(str(tmp_path / "in.mindrecord"), shuffle=False).create_dict_iterator(output_numpy=True))
    assert [(int(r["label"]), os.path.basename(str(r["file_name"]))) for r in rows] == [(0, "0.JPEG"), (0, "1.JPEG"), (1, "0.JPEG"), (1, "1.JPEG")]
    (tmp_path / "bad.txt").write_text("n01\n")
    with pytest.raises(DataFormatError, match=r"bad.txt, line 1: expected '<folder> <label>'"):
        ImageNetToMR(str(tmp_path / "bad.txt"), str(tmp_path / "train"), str(tmp_path / "x.mindrecord")).transform()


# -- Dataset.save against MindSpore's Dataset.save ------------------------------------------------


@pytest.fixture(scope="module")
def saved_both_ways(mindspore_python_path, tmp_path_factory):
    """``mindspore_side.save_rows()`` saved by minddata (one file and three) and by MindSpore (the
    same), and what MindSpore read from each, in one MindSpore process per step."""
    folder = tmp_path_factory.mktemp("saved_both_ways")
    firsts = {}
    for num_files in (1, 3):
        ours = str(folder / f"ours{num_files}.mindrecord")
        md.GeneratorDataset(side.save_rows, side.SAVE_COLUMNS, shuffle=False).save(ours, num_files)
        theirs = str(folder / f"theirs{num_files}.mindrecord")
        _run_mindspore(mindspore_python_path, "save", theirs, str(num_files))
        suffix = "0" if num_files > 1 else ""
        firsts[f"ours{num_files}"], firsts[f"theirs{num_files}"] = ours + suffix, theirs + suffix
    args = [a for name, first in firsts.items() for a in (first, str(folder / f"{name}.mindspore.json"))]
    _run_mindspore(mindspore_python_path, "read", *args)
    return {name: (first, json.loads((folder / f"{name}.mindspore.json").read_text())) for name, first in firsts.items()}


@pytest.mark.parametrize("num_files", [1, 3])
def test_mindspore_reads_our_save_as_its_own_save(saved_both_ways, num_files):
    _, ours = saved_both_ways[f"ours{num_files}"]
    _, theirs = saved_both_ways[f"theirs{num_files}"]
    assert ours["columns"] == theirs["columns"] and ours["size"] == theirs["size"] == 11
    if num_files == 1:
        assert ours["rows"] == theirs["rows"]
    else:  # MindSpore's save sends each row to a random shard; ours deals them in turn
        assert sorted(map(_key, ours["rows"])) == sorted(map(_key, theirs["rows"]))


@pytest.mark.parametrize("num_files", [1, 3])
def test_our_save_reads_back_here_as_mindspore_reads_it(saved_both_ways, num_files):
    first, theirs = saved_both_ways[f"ours{num_files}"]
    _assert_reads_as(_ours(first), theirs)


@pytest.mark.parametrize("num_files", [1, 3])
def test_mindspore_save_reads_here_as_mindspore_reads_it(saved_both_ways, num_files):
    first, theirs = saved_both_ways[f"theirs{num_files}"]
    _assert_reads_as(_ours(first), theirs)


@pytest.mark.parametrize("num_files", [1, 3])
def test_our_save_writes_mindsporess_schema_and_file_names(saved_both_ways, num_files):
    from minddata.record.mindrecord_format import read_mindrecord_header

    ours = read_mindrecord_header(saved_both_ways[f"ours{num_files}"][0])
    theirs = read_mindrecord_header(saved_both_ways[f"theirs{num_files}"][0])
    assert ours["schema"] == theirs["schema"]
    assert sorted(map(_key, ours["index_fields"])) == sorted(map(_key, theirs["index_fields"]))
    names = [a.replace("ours", "theirs", 1) for a in ours["shard_addresses"]]
    assert names == theirs["shard_addresses"]


@pytest.fixture(scope="module")
def refused_by_mindspore(mindspore_python_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("refused_by_mindspore")
    _run_mindspore(mindspore_python_path, "refuse", str(folder), str(folder / "refused.json"))
    return json.loads((folder / "refused.json").read_text())


@pytest.mark.parametrize("name", sorted(side.REFUSED_SAVES))
def test_save_refuses_what_mindsporess_save_refuses_or_cannot_read_back(refused_by_mindspore, tmp_path, name):
    pipeline = md.GeneratorDataset([(v,) for v in side.REFUSED_SAVES[name]], ["col"], shuffle=False)
    if refused_by_mindspore[name] == "saved":
        pipeline.save(str(tmp_path / name))
        assert len(list(md.MindDataset(str(tmp_path / name)).create_tuple_iterator(output_numpy=True))) == 2
    else:
        with pytest.raises(DataFormatError, match="column 'col'"):
            pipeline.save(str(tmp_path / name))
        assert os.listdir(tmp_path) == []
