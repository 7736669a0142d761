"""Record files: ArrowRecordWriter / FileReader / MindDataset round trips, sharding, save, convert, damage."""

from __future__ import annotations

import doctest
import importlib
import json
import os
import textwrap

import numpy as np
import pytest
from record_helpers import run_python
from testkit import column, dict_rows

import minddata as md
from minddata.errors import ArgumentError, DataFormatError
from minddata.record import ArrowRecordWriter, FileReader

SCHEMA = {
    "image": {"type": "bytes"},
    "label": {"type": "int32"},
    "name": {"type": "string"},
    "mask": {"type": "float32", "shape": [2, 3]},
    "boxes": {"type": "int64", "shape": [-1, 2]},
}


def _row(i: int) -> dict:
    return {
        "image": bytes([i % 256]) * (i + 1),
        "label": i,
        "name": f"row{i}",
        "mask": np.full((2, 3), i, dtype=np.float64),  # cast to float32 on write
        "boxes": np.arange(2 * (i % 4)).reshape(i % 4, 2),
    }


def _write(path, rows=10, shard_num=1, **kwargs) -> list[str]:
    writer = ArrowRecordWriter(str(path), shard_num=shard_num, **kwargs)
    writer.add_schema(SCHEMA, "test")
    writer.add_index(["label", "name"])
    writer.write_raw_data([_row(i) for i in range(rows)])
    writer.commit()
    return writer.paths


def _check_row(row, i):
    assert row["image"].dtype == np.uint8 and row["image"].tobytes() == _row(i)["image"]
    assert row["label"].dtype == np.int32 and int(row["label"]) == i
    assert str(row["name"]) == f"row{i}"
    assert row["mask"].dtype == np.float32 and row["mask"].shape == (2, 3) and (row["mask"] == i).all()
    assert row["boxes"].dtype == np.int64 and row["boxes"].tolist() == _row(i)["boxes"].tolist()


# -- round trips ------------------------------------------------------------------------------


def test_round_trip_every_field_type(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=7)
    rows = dict_rows(md.MindDataset(str(tmp_path / "a.mindrecord"), shuffle=False))
    assert len(rows) == 7
    for i, row in enumerate(rows):
        _check_row(row, i)


def test_files_appear_only_at_commit_with_metadata(tmp_path):
    writer = ArrowRecordWriter(str(tmp_path / "a.mindrecord"))
    writer.add_schema({"x": {"type": "int64"}})
    writer.write_raw_data([{"x": i} for i in range(3000)])  # several record batches already flushed
    assert not (tmp_path / "a.mindrecord").exists()
    writer.commit()
    assert sorted(os.listdir(tmp_path)) == ["a.mindrecord", "a.mindrecord.meta.json"]
    meta = json.loads((tmp_path / "a.mindrecord.meta.json").read_text())
    assert meta["num_rows"] == 3000 and len(meta["batches"]) >= 3


def test_values_are_copies_out_of_the_map(tmp_path):
    # A view of the memory map would fault (SIGBUS) in whatever op touched it after the file shrank.
    _write(tmp_path / "a.mindrecord", rows=3)
    row = dict_rows(md.MindDataset(str(tmp_path / "a.mindrecord"), shuffle=False))[2]
    for name in ("image", "boxes", "mask"):
        assert row[name].flags.owndata or row[name].base.flags.owndata, name


def test_one_shard_name_reads_the_whole_set(tmp_path):
    paths = _write(tmp_path / "s.mindrecord", rows=10, shard_num=3)
    assert [os.path.basename(p) for p in paths] == ["s.mindrecord0", "s.mindrecord1", "s.mindrecord2"]
    for p in paths:
        ds = md.MindDataset(p, shuffle=False)
        assert sorted(column(ds, "label")) == list(range(10))
    only_two = md.MindDataset(paths[:2], shuffle=False)
    assert only_two.get_dataset_size() == 7  # rows are dealt round-robin: 4 + 3 (+ 3 in the third)


def test_columns_list_orders_columns(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=3)
    ds = md.MindDataset(str(tmp_path / "a.mindrecord"), columns_list=["name", "label"], shuffle=False)
    assert ds.get_col_names() == ["name", "label"]
    assert ds.schema() == {"name": {"type": "string"}, "label": {"type": "int32"}}


def test_shuffle_sharding_and_num_samples(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=10)
    path = str(tmp_path / "a.mindrecord")
    md.config.set_seed(5)
    first = column(md.MindDataset(path), "label", epochs=2)
    assert sorted(first[:10]) == list(range(10)) and first[:10] != first[10:]
    shards = [column(md.MindDataset(path, num_shards=3, shard_id=k), "label") for k in range(3)]
    assert [len(s) for s in shards] == [4, 4, 4]
    assert set(sum(shards, [])) == set(range(10))
    assert md.MindDataset(path, num_samples=4).get_dataset_size() == 4
    assert column(md.MindDataset(path, sampler=md.SubsetSampler([9, 0])), "label") == [9, 0]


def test_padded_sample_pads_to_the_shard_count(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=10)
    path = str(tmp_path / "a.mindrecord")
    pad = dict(_row(0), label=-1, image=b"")
    shards = [
        column(md.MindDataset(path, num_shards=4, shard_id=k, shuffle=False, padded_sample=pad, num_padded=2), "label")
        for k in range(4)
    ]
    assert sorted(sum(shards, [])) == [-1, -1, *range(10)]
    with pytest.raises(ArgumentError, match="num_padded=2"):
        md.MindDataset(path, num_shards=4, shard_id=0, padded_sample=pad, num_padded=1)
    with pytest.raises(ArgumentError, match="go together"):
        md.MindDataset(path, padded_sample=pad)


def test_shuffle_files_and_infile(tmp_path):
    paths = _write(tmp_path / "s.mindrecord", rows=12, shard_num=3)
    md.config.set_seed(3)
    files = column(md.MindDataset(paths, shuffle=md.Shuffle.FILES), "label")
    blocks = [files[i : i + 4] for i in range(0, 12, 4)]
    assert sorted(map(tuple, blocks)) == [(0, 3, 6, 9), (1, 4, 7, 10), (2, 5, 8, 11)]
    infile = column(md.MindDataset(paths, shuffle=md.Shuffle.INFILE), "label")
    assert [sorted(infile[i : i + 4]) for i in range(0, 12, 4)] == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8, 11]]
    sharded = [column(md.MindDataset(paths, shuffle="infile", num_shards=2, shard_id=k), "label") for k in range(2)]
    assert sorted(sum(sharded, [])) == list(range(12))


def test_file_reader_and_index(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=6)
    reader = FileReader(str(tmp_path / "a.mindrecord"))
    assert len(reader) == 6 and reader.index_fields() == ["label", "name"]
    assert [int(r["label"]) for r in reader.get_next()] == list(range(6))
    assert reader.find("name", "row4") == [4]
    assert reader.schema()["boxes"] == {"type": "int64", "shape": [-1, 2]}
    with pytest.raises(ArgumentError, match="not an index field"):
        reader.find("mask", 1)


# -- writer checks ----------------------------------------------------------------------------


def test_bad_schemas_are_rejected(tmp_path):
    writer = ArrowRecordWriter(str(tmp_path / "a.mindrecord"))
    with pytest.raises(ArgumentError, match="unknown type 'int128'"):
        writer.add_schema({"x": {"type": "int128"}})
    with pytest.raises(ArgumentError, match="can't have a shape"):
        writer.add_schema({"x": {"type": "bytes", "shape": [2]}})
    with pytest.raises(ArgumentError, match="shape must be"):
        writer.add_schema({"x": {"type": "int32", "shape": [0]}})
    with pytest.raises(ArgumentError, match=r"shape \[65536, 65536\] holds more than 2147483647 values per row"):
        writer.add_schema({"x": {"type": "int32", "shape": [65536, 65536]}})
    writer.add_schema({"x": {"type": "int32"}, "v": {"type": "float32", "shape": [2]}})
    with pytest.raises(ArgumentError, match="must be a scalar"):
        writer.add_index(["v"])
    writer.abort()


@pytest.mark.parametrize(
    "row, message",
    [
        ({"x": 1}, r"row 0 does not match the schema: missing \['v'\]"),
        ({"x": 1.5, "v": [1, 2]}, r"row 0, field 'x' \(int32\): expected int32 values"),
        ({"x": 2**40, "v": [1, 2]}, r"out of range for int32"),
        ({"x": 1, "v": [1, 2, 3]}, r"field 'v' \(float32\[2\]\): expected shape \[2\]"),
        ({"x": 1, "v": [1, 2], "extra": 0}, r"unknown \['extra'\]"),
    ],
)
def test_bad_rows_name_the_row_and_field(tmp_path, row, message):
    writer = ArrowRecordWriter(str(tmp_path / "a.mindrecord"))
    writer.add_schema({"x": {"type": "int32"}, "v": {"type": "float32", "shape": [2]}})
    with pytest.raises(ArgumentError, match=message):
        writer.write_raw_data([row])
    writer.abort()
    assert os.listdir(tmp_path) == []


def test_existing_files_need_overwrite(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=2)
    with pytest.raises(ArgumentError, match="already exist"):
        ArrowRecordWriter(str(tmp_path / "a.mindrecord"))
    _write(tmp_path / "a.mindrecord", rows=5, overwrite=True)
    assert md.MindDataset(str(tmp_path / "a.mindrecord")).get_dataset_size() == 5


def test_context_manager_aborts_on_error(tmp_path):
    with pytest.raises(RuntimeError):
        with ArrowRecordWriter(str(tmp_path / "a.mindrecord")) as writer:
            writer.add_schema({"x": {"type": "int32"}})
            writer.write_raw_data([{"x": 1}] * 2000)
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []


def test_killed_writer_leaves_nothing_that_reads(tmp_path):
    path = tmp_path / "k.mindrecord"
    script = textwrap.dedent(
        f"""
        import os, signal
        from minddata.record import ArrowRecordWriter
        w = ArrowRecordWriter({str(path)!r}, shard_num=2)
        w.add_schema({{"x": {{"type": "bytes"}}}})
        w.write_raw_data([{{"x": b"a" * 5000}}] * 3000)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = run_python(script, tmp_path)
    assert proc.returncode == -9
    assert not any(n.endswith(("mindrecord0", "mindrecord1", ".meta.json")) for n in os.listdir(tmp_path))
    leftovers = os.listdir(tmp_path)
    assert leftovers and all(".tmp-" in n for n in leftovers)
    with pytest.raises(DataFormatError, match="does not exist"):
        md.MindDataset(str(path) + "0")


# -- damaged files ----------------------------------------------------------------------------


def test_data_file_without_metadata_is_not_valid(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=3)
    os.remove(tmp_path / "a.mindrecord.meta.json")  # as a writer killed between the two renames
    with pytest.raises(DataFormatError, match=r"a.mindrecord: its metadata file a.mindrecord.meta.json is missing"):
        md.MindDataset(str(tmp_path / "a.mindrecord"))


def test_truncated_file_names_the_file(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=50)
    path = tmp_path / "a.mindrecord"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    ds = md.MindDataset(str(path), shuffle=False)
    with pytest.raises(DataFormatError, match=rf"{path} is truncated: \d+ bytes, but its metadata says {len(data)}"):
        column(ds, "label")


def test_a_file_listed_twice_is_refused_by_name(tmp_path):
    paths = _write(tmp_path / "a.mindrecord", shard_num=2)
    with pytest.raises(ArgumentError, match=rf"`dataset_files` lists {paths[1]} more than once; list each file once"):
        md.MindDataset([paths[1], paths[0], paths[1]])


def test_corrupted_byte_is_caught_by_the_checksum(tmp_path):
    writer = ArrowRecordWriter(str(tmp_path / "a.mindrecord"))
    writer.add_schema({"blob": {"type": "bytes"}, "label": {"type": "int32"}})
    writer.write_raw_data([{"blob": b"\x11" * 1000, "label": i} for i in range(20)])
    writer.commit()
    path = tmp_path / "a.mindrecord"
    data = bytearray(path.read_bytes())
    at = data.find(b"\x11" * 1000) + 500
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    # Another column of the same batch still reads: checks are per column.
    assert column(md.MindDataset(str(path), columns_list=["label"], shuffle=False)) == list(range(20))
    ds = md.MindDataset(str(path), shuffle=False)
    with pytest.raises(DataFormatError, match=r"is corrupted: column 'blob' of record batch 0 \(rows 0 to 19\) fails its checksum"):
        column(ds, "label")


def test_garbage_and_foreign_files(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=3)
    meta = tmp_path / "a.mindrecord.meta.json"
    good_meta = meta.read_text()
    meta.write_text("{not json")
    with pytest.raises(DataFormatError, match="metadata file .*a.mindrecord.meta.json is unreadable"):
        md.MindDataset(str(tmp_path / "a.mindrecord"))
    meta.write_text(good_meta)
    data = (tmp_path / "a.mindrecord").read_bytes()
    (tmp_path / "a.mindrecord").write_bytes(b"x" * len(data))
    with pytest.raises(DataFormatError, match="is not a valid Arrow IPC file"):
        column(md.MindDataset(str(tmp_path / "a.mindrecord")))


def test_data_file_swapped_between_sets(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=3)
    _write(tmp_path / "b.mindrecord", rows=3)
    (tmp_path / "a.mindrecord").write_bytes((tmp_path / "b.mindrecord").read_bytes())
    with pytest.raises(DataFormatError, match="does not belong to its metadata file"):
        column(md.MindDataset(str(tmp_path / "a.mindrecord")))


def test_wrong_schema_names_the_file_and_columns(tmp_path):
    _write(tmp_path / "a.mindrecord", rows=3)
    with ArrowRecordWriter(str(tmp_path / "b.mindrecord")) as writer:
        writer.add_schema(dict(SCHEMA, label={"type": "int64"}))
        writer.write_raw_data([_row(1)])
    with pytest.raises(DataFormatError, match=r"b.mindrecord has a different schema from .*a.mindrecord \(label: int32 vs int64\)"):
        md.MindDataset([str(tmp_path / "a.mindrecord"), str(tmp_path / "b.mindrecord")])
    with pytest.raises(DataFormatError, match=r"columns_list names \['nope'\]"):
        md.MindDataset(str(tmp_path / "a.mindrecord"), columns_list=["nope"])


# -- Dataset.save and convert -----------------------------------------------------------------


def test_save_round_trip(tmp_path):
    data = {
        "i": np.arange(300, dtype=np.int16),
        "f": np.linspace(0, 1, 300 * 3, dtype=np.float32).reshape(300, 3),
        "s": np.asarray([f"s{k}" for k in range(300)]),
    }
    ds = md.NumpySlicesDataset(data, shuffle=False)
    ds = ds.map(lambda i: (i, np.arange(int(i) % 5, dtype=np.uint8)), input_columns="i", output_columns=["i", "blob"])
    path = str(tmp_path / "saved.rec")
    ds.save(path, file_type="arrow")
    back = md.MindDataset(path, shuffle=False)
    assert back.schema() == {
        "i": {"type": "int16"}, "blob": {"type": "bytes"}, "f": {"type": "float32", "shape": [3]}, "s": {"type": "string"},
    }
    rows = dict_rows(back)
    assert [int(r["i"]) for r in rows] == list(range(300))
    assert all(r["blob"].tolist() == list(range(k % 5)) for k, r in enumerate(rows))
    assert np.array_equal(np.stack([r["f"] for r in rows]), data["f"])
    assert [str(r["s"]) for r in rows] == list(data["s"])


def test_save_variable_shapes_and_shards(tmp_path):
    ds = md.NumpySlicesDataset({"n": np.arange(10)}, shuffle=False)
    ds = ds.map(lambda n: np.ones((int(n) % 3 + 1, 2), np.float64) * n, input_columns="n", output_columns="v")
    path = str(tmp_path / "v.rec")
    ds.save(path, num_files=2, file_type="arrow")
    back = md.MindDataset(path + "0", shuffle=False)
    assert back.schema() == {"v": {"type": "float64", "shape": [-1, 2]}}
    shapes = sorted((int(r["v"][0, 0]), r["v"].shape) for r in dict_rows(back))
    assert shapes == [(n, (n % 3 + 1, 2)) for n in range(10)]
    with pytest.raises(ArgumentError, match="already exist"):
        ds.save(path, num_files=2, file_type="arrow")


def test_convert_cli_matches_image_folder(image_folder, tmp_path, capsys):
    from minddata.cli import main

    dest = tmp_path / "imgs.mindrecord"
    assert main(["convert", str(image_folder), str(dest), "--shards", "2", "-q"]) == 0
    assert "wrote 12 images" in capsys.readouterr().out
    folder = dict_rows(md.ImageFolderDataset(str(image_folder), shuffle=False))
    records = dict_rows(md.MindDataset(str(dest) + "1", shuffle=False))
    by_name = {str(r["file_name"]): r for r in records}
    assert len(by_name) == 12
    files = sorted(p.relative_to(image_folder).as_posix() for p in image_folder.rglob("*.jpg"))
    for name, row in zip(files, folder):
        assert by_name[name]["image"].tobytes() == row["image"].tobytes()
        assert int(by_name[name]["label"]) == int(row["label"])
    assert main(["convert", str(image_folder), str(dest), "--shards", "2", "-q"]) == 2
    assert "already exist" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / "nope"), str(dest), "-q"]) == 2


def test_convert_progress_bar_without_terminal(image_folder, tmp_path, capsys):
    from minddata.cli import main

    assert main(["convert", str(image_folder), str(tmp_path / "p.mindrecord")]) == 0
    assert "12/12 images" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["images", "records"])
def test_convert_cli_creates_the_missing_dest_folder(source, image_folder, tmp_path, capsys):
    from minddata.cli import main

    src = image_folder
    if source == "records":
        src = tmp_path / "n.rec"
        md.NumpySlicesDataset({"n": list(range(12))}, shuffle=False).save(str(src), file_type="arrow")
    dest = tmp_path / "out" / "train" / "x.mindrecord"
    assert main(["convert", str(src), str(dest), "-q"]) == 0, capsys.readouterr().err
    assert len(dict_rows(md.MindDataset(str(dest), shuffle=False))) == 12


def test_a_failed_convert_removes_the_folder_it_created(image_folder, tmp_path, capsys):
    from minddata.cli import main

    (image_folder / "cat" / "bad.jpg").write_bytes(b"not an image")
    assert main(["convert", str(image_folder), str(tmp_path / "out" / "x.mindrecord"), "-q"]) == 2
    assert "bad.jpg" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _folder_order(image_folder) -> list[tuple[str, int]]:
    rows = dict_rows(md.ImageFolderDataset(str(image_folder), shuffle=False))
    files = sorted(p.relative_to(image_folder).as_posix() for p in image_folder.rglob("*.jpg"))
    return [(name, int(row["label"])) for name, row in zip(files, rows)]


def test_convert_cli_writes_mindspores_mindrecord_by_default(image_folder, tmp_path, capsys):
    from minddata.cli import main
    from minddata.record.mindrecord_format import is_mindrecord

    dest = tmp_path / "imgs.mindrecord"
    assert main(["convert", str(image_folder), str(dest), "--shards", "2", "-q"]) == 0
    assert "2 MindRecord file(s)" in capsys.readouterr().out
    for shard in ("0", "1"):
        assert is_mindrecord(str(dest) + shard) and (tmp_path / f"imgs.mindrecord{shard}.db").is_file()
    records = dict_rows(md.MindDataset(str(dest) + "0", shuffle=False))
    assert [(str(r["file_name"]), int(r["label"])) for r in records] == _folder_order(image_folder)


def test_convert_cli_format_arrow_writes_arrow_record_files(image_folder, tmp_path, capsys):
    from minddata.cli import main
    from minddata.record.mindrecord_format import is_mindrecord

    dest = tmp_path / "imgs.arrow"
    assert main(["convert", str(image_folder), str(dest), "--shards", "2", "-q", "--format", "arrow"]) == 0
    assert "2 Arrow record file(s)" in capsys.readouterr().out
    assert not is_mindrecord(str(dest) + "0") and (tmp_path / "imgs.arrow0.meta.json").is_file()
    records = dict_rows(md.MindDataset(str(dest) + "0", shuffle=False))
    assert [(str(r["file_name"]), int(r["label"])) for r in records] == _folder_order(image_folder)


@pytest.mark.parametrize("fmt", ["mindrecord", "arrow"])
def test_convert_records_to_their_own_format_reshards_them(fmt, tmp_path):
    from minddata.record.convert import convert_records

    source = tmp_path / "n.arrow"
    md.NumpySlicesDataset({"n": np.arange(7, dtype=np.int32)}, shuffle=False).save(str(source), file_type="arrow")
    first = tmp_path / "first.rec"
    convert_records(str(source), str(first), format=fmt)
    result = convert_records(str(first), str(tmp_path / "again.rec"), shard_num=3, format=fmt)
    assert (result.source_format, result.dest_format, len(result.files)) == (fmt, fmt, 3)
    back = dict_rows(md.MindDataset(result.files[0], shuffle=False))
    assert [int(r["n"]) for r in back] == list(range(7))


def test_convert_names_the_formats_it_writes(image_folder, tmp_path):
    from minddata.record.convert import convert_image_folder

    with pytest.raises(ArgumentError, match="'mindrecord' .*'arrow'.*Found: 'tfrecord'"):
        convert_image_folder(image_folder, tmp_path / "x.rec", format="tfrecord")


def test_the_old_arrow_writer_name_says_which_writer_to_use():
    import minddata.record

    with pytest.raises(AttributeError, match=r"ArrowRecordWriter .*minddata\.mindrecord\.FileWriter"):
        minddata.record.FileWriter  # noqa: B018


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"file_name": ""}, "`file_name` must be a file path"),
        ({"shard_num": 0}, r"`shard_num` must be an int in \[1, 1000\]. Found: 0"),
        ({"shard_num": True}, r"`shard_num` must be an int in \[1, 1000\]. Found: True"),
        ({"overwrite": 1}, "`overwrite` must be True or False. Found: 1"),
        ({"file_name": "/no/such/folder/x"}, "the folder of `file_name` does not exist: /no/such/folder"),
    ],
)
@pytest.mark.parametrize("writer", ["minddata.record.ArrowRecordWriter", "minddata.mindrecord.FileWriter"])
def test_both_writers_check_their_arguments_alike(writer, kwargs, match, tmp_path):
    module, name = writer.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    args = {"file_name": str(tmp_path / "x.rec"), **kwargs}
    with pytest.raises(ArgumentError, match=f"^{name}: {match}"):
        cls(**args)


@pytest.mark.parametrize("writer", ["minddata.record.ArrowRecordWriter", "minddata.mindrecord.FileWriter"])
def test_both_writers_name_a_bad_row_value_alike(writer, tmp_path):
    module, name = writer.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    w = cls(str(tmp_path / "x.rec"))
    w.add_schema({"label": {"type": "int32"}})
    with pytest.raises(ArgumentError, match=rf"^{name}.write_raw_data: row 1, field 'label' \(int32\): out of range"):
        w.write_raw_data([{"label": 1}, {"label": 2**40}])
    w.abort()


# -- Parquet ----------------------------------------------------------------------------------


def _parquet(tmp_path, name="t.parquet", n=25, row_group_size=10):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "i": pa.array(np.arange(n, dtype=np.int32)),
            "s": pa.array([f"s{k}" for k in range(n)]),
            "b": pa.array([bytes([k]) * k for k in range(n)], pa.binary()),
            "v": pa.array([[float(k)] * (k % 3) for k in range(n)], pa.list_(pa.float32())),
            "m": pa.array([[[k, k], [k, k]] for k in range(n)], pa.list_(pa.list_(pa.int64(), 2), 2)),
        }
    )
    path = tmp_path / name
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def test_parquet_values_and_types(tmp_path):
    path = _parquet(tmp_path)
    rows = dict_rows(md.ParquetDataset(str(path), shuffle=False))
    assert len(rows) == 25
    r = rows[13]
    assert r["i"].dtype == np.int32 and int(r["i"]) == 13
    assert str(r["s"]) == "s13"
    assert r["b"].dtype == np.uint8 and r["b"].tobytes() == bytes([13]) * 13
    assert r["v"].dtype == np.float32 and r["v"].tolist() == [13.0]
    assert r["m"].shape == (2, 2) and r["m"].tolist() == [[13, 13], [13, 13]]


def test_parquet_shuffle_shards_and_mind_dataset(tmp_path):
    a = _parquet(tmp_path, "a.parquet", n=12, row_group_size=5)
    md.config.set_seed(2)
    order = column(md.ParquetDataset(str(a)), "i")
    assert sorted(order) == list(range(12)) and order != list(range(12))
    shards = [column(md.ParquetDataset(str(a), num_shards=5, shard_id=k, columns_list=["i"]), "i") for k in range(5)]
    assert [len(s) for s in shards] == [3] * 5 and set(sum(shards, [])) == set(range(12))
    via_mind = md.MindDataset(str(a), shuffle=False, columns_list=["s"])
    assert [str(x) for x in column(via_mind, "s")] == [f"s{k}" for k in range(12)]


def test_parquet_nulls_and_damage_name_the_file(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"x": [1, None, 3]}), path)
    with pytest.raises(DataFormatError, match=r"n.parquet, row 1: column 'x' is null"):
        column(md.ParquetDataset(str(path), shuffle=False))
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(DataFormatError, match="bad.parquet is not a readable Parquet file"):
        md.ParquetDataset(str(bad))
    pq.write_table(pa.table({"x": ["a"]}), tmp_path / "o.parquet")
    with pytest.raises(DataFormatError, match=r"o.parquet has a different schema .*x: int64 vs string"):
        md.ParquetDataset([str(path), str(tmp_path / "o.parquet")])


# -- docstrings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "minddata.record",
        "minddata.record.writer",
        "minddata.record.reader",
        "minddata.record.convert",
        "minddata.dataset.arrow_sources",
    ],
)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_convert_cli_names_the_shard_files_of_a_set_given_by_its_base_name(tmp_path, capsys):
    from minddata.cli import main

    path = tmp_path / "n.mindrecord"
    md.NumpySlicesDataset({"n": list(range(4))}, shuffle=False).save(str(path), num_files=2)
    assert main(["convert", str(path), str(tmp_path / "out.mindrecord"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"SOURCE {path}: no such file, but its folder has the shard files" in err
    assert f"pass one of them, e.g. {path}0" in err
