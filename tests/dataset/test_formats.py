"""Standard sources read from files written byte by byte from each format's spec (not by our readers),
plus padded and bucketed batching.

The writers here are deliberately independent of minddata's readers: IDX and CIFAR headers with
``struct``, TFRecord framing with a bitwise (table-free) CRC-32C, protobuf messages encoded by hand.
"""

from __future__ import annotations

import doctest
import gzip
import importlib
import json
import struct
import zlib

import numpy as np
import pytest
from testkit import column, dict_rows

import minddata as md
from minddata.bench.corpus import proto_field as _field
from minddata.bench.corpus import tf_feature as _feature
from minddata.bench.corpus import varint as _varint
from minddata.errors import ArgumentError, DataFormatError, PipelineError, RowError

# -- MNIST (IDX) ------------------------------------------------------------------------------


def _write_mnist(folder, prefix, n, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    # IDX: magic 0x00000803 (uint8, 3 dims) / 0x00000801, then big-endian int32 dims, then data.
    (folder / f"{prefix}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
    (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 0x801, n) + labels.tobytes())
    return images, labels


def test_mnist_columns_types_and_usage(tmp_path):
    train_x, train_y = _write_mnist(tmp_path, "train", 5, 0)
    test_x, test_y = _write_mnist(tmp_path, "t10k", 3, 1)
    rows = dict_rows(md.MnistDataset(str(tmp_path), usage="train", shuffle=False))
    assert [r["image"].shape for r in rows] == [(28, 28, 1)] * 5
    assert rows[0]["image"].dtype == np.uint8 and rows[0]["label"].dtype == np.uint32
    assert np.array_equal(np.stack([r["image"][..., 0] for r in rows]), train_x)
    assert [int(r["label"]) for r in rows] == train_y.tolist()
    assert md.MnistDataset(str(tmp_path), usage="test").get_dataset_size() == 3
    every = column(md.MnistDataset(str(tmp_path), shuffle=False), "label")
    assert every == train_y.tolist() + test_y.tolist()
    shards = [column(md.MnistDataset(str(tmp_path), num_shards=3, shard_id=k), "label") for k in range(3)]
    assert [len(s) for s in shards] == [3, 3, 3]


def test_mnist_damage_names_the_file(tmp_path):
    _write_mnist(tmp_path, "train", 4, 0)
    images = tmp_path / "train-images-idx3-ubyte"
    images.write_bytes(images.read_bytes()[:-10])
    with pytest.raises(DataFormatError, match=r"train-images-idx3-ubyte is truncated: its header gives shape \[4, 28, 28\]"):
        md.MnistDataset(str(tmp_path), usage="train").get_dataset_size()
    images.write_bytes(struct.pack(">IIII", 0x802, 4, 28, 28))
    with pytest.raises(DataFormatError, match="magic number 0x00000802"):
        md.MnistDataset(str(tmp_path), usage="train").get_dataset_size()
    with pytest.raises(DataFormatError, match="t10k-images-idx3-ubyte is missing"):
        md.MnistDataset(str(tmp_path), usage="test").get_dataset_size()


# -- CIFAR ------------------------------------------------------------------------------------


def _cifar_record(labels, seed):
    rng = np.random.default_rng(seed)
    chw = rng.integers(0, 256, size=(3, 32, 32), dtype=np.uint8)  # red, green, blue planes
    return bytes(labels) + chw.tobytes(), chw.transpose(1, 2, 0)


def test_cifar10_hwc_images_and_labels(tmp_path):
    expected = []
    for b in (1, 2):
        blob = b""
        for k in range(3):
            record, hwc = _cifar_record([b * 3 + k], seed=10 * b + k)
            blob += record
            expected.append((hwc, b * 3 + k))
        (tmp_path / f"data_batch_{b}.bin").write_bytes(blob)
    record, hwc = _cifar_record([9], seed=99)
    (tmp_path / "test_batch.bin").write_bytes(record)
    rows = dict_rows(md.Cifar10Dataset(str(tmp_path), usage="train", shuffle=False))
    assert len(rows) == 6 and rows[0]["image"].shape == (32, 32, 3) and rows[0]["label"].dtype == np.uint32
    for row, (hwc_k, label) in zip(rows, expected):
        assert np.array_equal(row["image"], hwc_k) and int(row["label"]) == label
    assert md.Cifar10Dataset(str(tmp_path)).get_dataset_size() == 7
    (tmp_path / "test_batch.bin").write_bytes(record[:-1])
    with pytest.raises(DataFormatError, match=r"test_batch.bin is truncated .*3072 bytes left over"):
        md.Cifar10Dataset(str(tmp_path), usage="test").get_dataset_size()


def test_cifar100_two_labels(tmp_path):
    a, hwc = _cifar_record([3, 42], seed=1)
    (tmp_path / "train.bin").write_bytes(a)
    (tmp_path / "test.bin").write_bytes(_cifar_record([1, 2], seed=2)[0])
    ds = md.Cifar100Dataset(str(tmp_path), usage="train")
    assert ds.get_col_names() == ["image", "coarse_label", "fine_label"]
    (row,) = dict_rows(ds)
    assert np.array_equal(row["image"], hwc) and int(row["coarse_label"]) == 3 and int(row["fine_label"]) == 42


# -- COCO -------------------------------------------------------------------------------------


def _coco(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    for name in ("a.jpg", "b.jpg", "c.jpg"):
        (images / name).write_bytes(name.encode() * 3)
    content = {
        "images": [{"id": 7, "file_name": "a.jpg"}, {"id": 3, "file_name": "b.jpg"}, {"id": 9, "file_name": "c.jpg"}],
        "annotations": [
            {"image_id": 7, "bbox": [1, 2, 3, 4], "category_id": 1, "iscrowd": 0, "keypoints": list(range(51)),
             "num_keypoints": 5, "caption": "a cat", "segmentation": [[1, 2, 3, 4], [5, 6]],
             "segments_info": [{"bbox": [0, 0, 1, 1], "category_id": 2, "area": 10}]},
            {"image_id": 7, "bbox": [5, 6, 7, 8], "category_id": 2, "iscrowd": 1, "keypoints": [0] * 51,
             "num_keypoints": 0, "caption": "on a mat", "segmentation": [[9, 9]], "segments_info": []},
            {"image_id": 3, "bbox": [0.5, 0, 1, 1], "category_id": 2, "keypoints": [1] * 51, "num_keypoints": 1,
             "caption": "x", "segmentation": [[1, 1, 2, 2]], "segments_info": []},
        ],
        "categories": [{"id": 1, "name": "cat"}, {"id": 2, "name": "mat"}],
    }
    annotation = tmp_path / "ann.json"
    annotation.write_text(json.dumps(content))
    return images, annotation


def test_coco_detection_columns(tmp_path):
    images, annotation = _coco(tmp_path)
    ds = md.CocoDataset(str(images), str(annotation), shuffle=False)
    assert ds.get_col_names() == ["image", "bbox", "category_id", "iscrowd"]
    assert ds.get_class_indexing() == {"cat": 1, "mat": 2}
    a, b, c = dict_rows(ds)
    assert a["image"].tobytes() == b"a.jpg" * 3
    assert a["bbox"].dtype == np.float32 and a["bbox"].tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert a["category_id"].dtype == np.uint32 and a["category_id"].tolist() == [[1], [2]]
    assert a["iscrowd"].tolist() == [[0], [1]] and b["iscrowd"].tolist() == [[0]]
    assert c["bbox"].shape == (0, 4) and c["category_id"].shape == (0, 1)


def test_coco_other_tasks(tmp_path):
    images, annotation = _coco(tmp_path)
    key = dict_rows(md.CocoDataset(str(images), str(annotation), task="Keypoint", shuffle=False))[0]
    assert key["keypoints"].shape == (2, 51) and key["num_keypoints"].tolist() == [[5], [0]]
    pan = dict_rows(md.CocoDataset(str(images), str(annotation), task="Panoptic", shuffle=False))[0]
    assert pan["bbox"].tolist() == [[0, 0, 1, 1]] and pan["area"].tolist() == [[10]]
    cap = dict_rows(md.CocoDataset(str(images), str(annotation), task="Captioning", shuffle=False, extra_metadata=True))[0]
    assert cap["captions"].tolist() == ["a cat", "on a mat"] and str(cap["_meta-filename"]) == "a.jpg"
    stuff = dict_rows(md.CocoDataset(str(images), str(annotation), task="Stuff", shuffle=False))[0]
    assert stuff["segmentation"].tolist() == [[1, 2, 3, 4, 5, 6], [9, 9, -1, -1, -1, -1]]


def test_coco_bad_annotation_names_the_file(tmp_path):
    images, annotation = _coco(tmp_path)
    content = json.loads(annotation.read_text())
    content["annotations"][0]["image_id"] = 12345
    annotation.write_text(json.dumps(content))
    with pytest.raises(DataFormatError, match=r"ann.json: annotations\[0\] refers to image_id 12345"):
        md.CocoDataset(str(images), str(annotation)).get_dataset_size()
    with pytest.raises(ArgumentError, match="task"):
        md.CocoDataset(str(images), str(annotation), task="Segmentation")


# -- CSV and text -----------------------------------------------------------------------------


def test_csv_quotes_types_defaults_and_errors(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(b'name,age,score\n"Smith, J",31,1.5\n"multi\nline",,2\nplain,7,\n')
    ds = md.CSVDataset(str(path), column_defaults=["", -1, 0.25], shuffle=False)
    rows = dict_rows(ds)
    assert [str(r["name"]) for r in rows] == ["Smith, J", "multi\nline", "plain"]
    assert [int(r["age"]) for r in rows] == [31, -1, 7] and rows[0]["age"].dtype == np.int32
    assert [float(r["score"]) for r in rows] == [1.5, 2.0, 0.25] and rows[0]["score"].dtype == np.float32
    strings = dict_rows(md.CSVDataset(str(path), shuffle=False))
    assert strings[0]["age"].dtype.kind == "U"
    named = md.CSVDataset(str(path), column_names=["a", "b", "c"], shuffle=False)
    assert str(dict_rows(named)[0]["a"]) == "name"  # with names given, the first line is a row
    (tmp_path / "b.csv").write_text("name,age,score\nx,notanint,1\n")
    with pytest.raises(DataFormatError, match=r"b.csv, line 2, column 'age': 'notanint' is not an int"):
        column(md.CSVDataset(str(tmp_path / "b.csv"), column_defaults=["", 0, 0.0]))
    (tmp_path / "c.csv").write_text("name,age,score\nx,1\n")
    with pytest.raises(DataFormatError, match=r"c.csv, line 2: 2 field\(s\) but 3 column\(s\)"):
        column(md.CSVDataset(str(tmp_path / "c.csv")))
    (tmp_path / "d.csv").write_text("x;y\n1;2\n")
    assert [int(r["y"]) for r in dict_rows(md.CSVDataset(str(tmp_path / "d.csv"), field_delim=";", column_defaults=[0, 0]))] == [2]


def test_text_file_lines(tmp_path):
    (tmp_path / "b.txt").write_bytes(b"third\r\n\nfourth")
    (tmp_path / "a.txt").write_bytes(b"first\nsecond\n\n")
    ds = md.TextFileDataset(str(tmp_path / "*.txt"), shuffle=False)
    # MindSpore's order: the files' readers' rows interleaved one at a time.
    assert [str(t) for t in column(ds, "text")] == ["first", "third\r", "second", "fourth"]
    one_reader = md.TextFileDataset(str(tmp_path / "*.txt"), shuffle=False, num_parallel_workers=1)
    assert [str(t) for t in column(one_reader, "text")] == ["first", "second", "third\r", "fourth"]
    assert ds.get_dataset_size() == 4
    assert md.TextFileDataset(str(tmp_path / "*.txt"), num_samples=3).get_dataset_size() == 3
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe\n")
    with pytest.raises(DataFormatError, match=r"bad.txt, line 2: not UTF-8"):
        column(md.TextFileDataset(str(tmp_path / "bad.txt")))


def test_text_file_keeps_carriage_returns_as_mindspore(tmp_path):
    # MindSpore splits at "\n" only: "\r" stays in the text and a "\r"-only line is a row.
    (tmp_path / "cr.txt").write_bytes(b"a\r\nb\r\n\r\nc\rd\n\n")
    ds = md.TextFileDataset(str(tmp_path / "cr.txt"), shuffle=False)
    assert [str(t) for t in column(ds, "text")] == ["a\r", "b\r", "\r", "c\rd"]
    assert ds.get_dataset_size() == 4


def test_streamed_shuffle_modes(tmp_path):
    files = []
    for f in range(3):
        path = tmp_path / f"f{f}.txt"
        path.write_text("".join(f"{f}-{k}\n" for k in range(5)))
        files.append(str(path))
    md.config.set_seed(4)

    def read(shuffle):
        return [str(t) for t in column(md.TextFileDataset(files, shuffle=shuffle), "text", epochs=2)]

    plain = read(False)
    # Rows interleaved across the files' readers, as MindSpore reads them.
    assert plain[:15] == [f"{f}-{k}" for k in range(5) for f in range(3)] and plain[15:] == plain[:15]
    first_epoch = read(md.Shuffle.FILES)[:15]
    file_order = [row[0] for row in first_epoch[:3]]
    assert sorted(file_order) == ["0", "1", "2"]
    assert first_epoch == [f"{f}-{k}" for k in range(5) for f in file_order]  # rows in order in each file
    infile = read(md.Shuffle.INFILE)[:15]
    assert [row[0] for row in infile] == ["0", "1", "2"] * 5
    assert [sorted(infile[f::3]) for f in range(3)] == [[f"{f}-{k}" for k in range(5)] for f in range(3)]
    everything = read(True)
    assert sorted(everything[:15]) == sorted(plain[:15]) and everything[:15] != everything[15:]
    md.config.set_seed(4)
    assert read(True) == everything  # same seed, same order


# -- TFRecord ---------------------------------------------------------------------------------


def _crc32c_bitwise(data: bytes) -> int:
    """CRC-32C straight from its definition: reflected polynomial 0x82F63B78, bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> int:
    crc = _crc32c_bitwise(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _frame(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", _masked(length)) + data + struct.pack("<I", _masked(data))


def _example(features: dict) -> bytes:
    entries = b"".join(_field(1, 2, _field(1, 2, name.encode()) + _field(2, 2, value)) for name, value in features.items())
    unknown = _field(15, 0, _varint(7))  # an unknown field a reader must skip
    return unknown + _field(1, 2, entries)


def _tfrecord(path, records, compress=None):
    data = b"".join(_frame(r) for r in records)
    if compress == "GZIP":
        data = gzip.compress(data)
    elif compress == "ZLIB":
        data = zlib.compress(data)
    path.write_bytes(data)


def _records(n, start=0):
    return [
        _example(
            {
                "image": _feature("bytes", [bytes([k % 256]) * 4]),
                "label": _feature("int64", [k, -k], packed=k % 2 == 0),
                "score": _feature("float", [k / 2, 1.0], packed=k % 2 == 1),
                "text": _feature("bytes", [f"t{k}".encode()]),
            }
        )
        for k in range(start, start + n)
    ]


def test_crc32c_known_vectors():
    from minddata.dataset._crc32c import crc32c, crc32c_py, masked_crc

    # RFC 3720 B.4 and the usual check value.
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C
    rng = np.random.default_rng(0)
    for n in (0, 1, 1023, 1024, 1025, 5000, 70001):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert crc32c(data) == crc32c_py(data) == _crc32c_bitwise(data)
        assert crc32c(data[n // 3 :], crc32c(data[: n // 3])) == crc32c_py(data)
        assert masked_crc(data) == _masked(data)


def test_tfrecord_with_schema(tmp_path):
    _tfrecord(tmp_path / "a.tfrecord", _records(4))
    schema = md.Schema()
    schema.add_column("image", "uint8")
    schema.add_column("label", "int32", [2])
    schema.add_column("score", "float32", [2])
    schema.add_column("text", "string", [])
    rows = dict_rows(md.TFRecordDataset(str(tmp_path / "a.tfrecord"), schema=schema, shuffle=False))
    assert len(rows) == 4
    r = rows[3]
    assert r["image"].dtype == np.uint8 and r["image"].tolist() == [3] * 4
    assert r["label"].dtype == np.int32 and r["label"].tolist() == [3, -3]
    assert r["score"].tolist() == [1.5, 1.0]
    assert str(r["text"]) == "t3"


def test_tfrecord_inferred_columns_and_compression(tmp_path):
    for kind in ("GZIP", "ZLIB"):
        _tfrecord(tmp_path / f"{kind}.tfrecord", _records(3), compress=kind)
        ds = md.TFRecordDataset(str(tmp_path / f"{kind}.tfrecord"), compression_type=kind, shuffle=False)
        assert ds.get_col_names() == ["image", "label", "score", "text"]
        rows = dict_rows(ds)
        assert [r["label"].tolist() for r in rows] == [[0, 0], [1, -1], [2, -2]]
        assert rows[1]["text"].tobytes() == b"t1" and rows[0]["score"].dtype == np.float32
        assert ds.get_dataset_size() == 3


def test_tfrecord_damage_and_missing_features(tmp_path):
    path = tmp_path / "a.tfrecord"
    _tfrecord(path, _records(3))
    data = bytearray(path.read_bytes())
    first = len(_frame(_records(1)[0]))
    data[first + 20] ^= 0x01  # inside record 1's data
    path.write_bytes(bytes(data))
    with pytest.raises(DataFormatError, match=rf"a.tfrecord is corrupted: record 1 at byte {first} fails its data CRC"):
        column(md.TFRecordDataset(str(path), shuffle=False))
    _tfrecord(path, _records(3))
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(DataFormatError, match="a.tfrecord is truncated: record 2"):
        column(md.TFRecordDataset(str(path), shuffle=False))
    (tmp_path / "text.tfrecord").write_bytes(b"this is not a tfrecord file at all")
    with pytest.raises(DataFormatError, match="fails its length CRC"):
        md.TFRecordDataset(str(tmp_path / "text.tfrecord"))
    _tfrecord(path, _records(2))
    with pytest.raises(DataFormatError, match=r"record 0 \(byte 0\): feature 'nope' is missing"):
        column(md.TFRecordDataset(str(path), schema={"nope": {"type": "int64"}}))


def test_tfrecord_sharding_by_file_and_by_row(tmp_path):
    for f in range(3):
        _tfrecord(tmp_path / f"p{f}.tfrecord", _records(2 + f, start=10 * f))
    files = str(tmp_path / "p*.tfrecord")
    labels = lambda ds: sorted(int(x[0]) for x in column(ds, "label"))  # noqa: E731
    by_file = [labels(md.TFRecordDataset(files, num_shards=2, shard_id=k, shuffle=False)) for k in range(2)]
    assert by_file == [[0, 1, 20, 21, 22, 23], [10, 11, 12]]
    by_row = [
        labels(md.TFRecordDataset(files, num_shards=2, shard_id=k, shard_equal_rows=True, shuffle=False)) for k in range(2)
    ]
    # The stream 0 1 10 11 12 20 21 22 23 in ranges of 5 (MindSpore); shard 1 is padded with the first row.
    assert by_row == [[0, 1, 10, 11, 12], [0, 20, 21, 22, 23]]
    with pytest.raises(ArgumentError, match="at least num_shards=4 files"):
        md.TFRecordDataset(files, num_shards=4, shard_id=0)


def test_protobuf_negative_unpacked_and_empty():
    from minddata.dataset._protobuf import ProtobufError, parse_example

    msg = _example({"a": _feature("int64", [-1, 2**40], packed=False), "e": _field(1, 2, b"")})
    parsed = parse_example(msg)
    assert parsed["a"][0] == "int64" and parsed["a"][1].tolist() == [-1, 2**40]
    assert parsed["e"] == ("bytes", [])
    with pytest.raises(ProtobufError, match="runs past the end"):
        parse_example(msg[:-3])


# -- generated sources ------------------------------------------------------------------------


def test_fake_image_and_random_are_deterministic_per_row():
    a = dict_rows(md.FakeImageDataset(num_images=6, image_size=(4, 5, 3), num_classes=3, shuffle=False))
    b = dict_rows(md.FakeImageDataset(num_images=6, image_size=(4, 5, 3), num_classes=3, num_shards=2, shard_id=1, shuffle=False))
    assert a[0]["image"].shape == (4, 5, 3) and a[0]["label"].dtype == np.uint32
    assert np.array_equal(b[0]["image"], a[1]["image"]) and all(int(r["label"]) < 3 for r in a)
    schema = {"v": {"type": "float32", "shape": [-1, 2]}, "s": {"type": "string"}}
    r = dict_rows(md.RandomDataset(total_rows=5, schema=schema, shuffle=False))
    assert len(r) == 5 and r[0]["v"].shape[1] == 2 and r[0]["v"].dtype == np.float32 and r[0]["s"].dtype.kind == "U"
    random_schema = md.RandomDataset(total_rows=3, base_seed=7)
    assert random_schema.get_dataset_size() == 3 and random_schema.get_col_names()


def test_padded_dataset_evens_out_shards():
    base = md.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False)
    pad = md.PaddedDataset([{"x": np.array(-1)}])
    both = base + pad
    assert column(both, "x") == [0, 1, 2, 3, 4, -1]
    with pytest.raises(ArgumentError, match="same keys|every sample"):
        md.PaddedDataset([{"x": 1}, {"y": 2}])


# -- padded and bucketed batching -------------------------------------------------------------


def _seqs(lengths):
    ds = md.NumpySlicesDataset({"n": np.asarray(lengths)}, shuffle=False)
    return ds.map(lambda n: (np.arange(1, n + 1, dtype=np.int32), np.array(int(n))), input_columns="n", output_columns=["seq", "n"])


def test_padded_batch_shapes_and_values():
    ds = _seqs([1, 3, 2, 4]).padded_batch(2, pad_info={"seq": ([None], -1)})
    batches = dict_rows(ds)
    assert [b["seq"].tolist() for b in batches] == [[[1, -1, -1], [1, 2, 3]], [[1, 2, -1, -1], [1, 2, 3, 4]]]
    fixed = dict_rows(_seqs([1, 3]).padded_batch(2, pad_info={"seq": ([5], 0)}))
    assert fixed[0]["seq"].shape == (2, 5)
    everything = dict_rows(_seqs([2, 1]).padded_batch(2, pad_info={}))
    assert everything[0]["seq"].tolist() == [[1, 2], [1, 0]]
    text = md.NumpySlicesDataset({"t": ["ab", "c"]}, shuffle=False).map(lambda t: np.asarray(list(str(t))), input_columns="t")
    assert dict_rows(text.padded_batch(2, pad_info={"t": (None, None)}))[0]["t"].tolist() == [["a", "b"], ["c", ""]]


def test_padded_batch_errors():
    with pytest.raises(PipelineError, match=r"row 1 of column 'seq' in batch 0 has shape \(3,\), larger than the pad shape \(2,\)"):
        column(_seqs([1, 3]).padded_batch(2, pad_info={"seq": ([2], 0)}))
    with pytest.raises(PipelineError, match="has rank 2, but its rows have rank 1"):
        column(_seqs([1, 3]).padded_batch(2, pad_info={"seq": ([2, 2], 0)}))
    with pytest.raises(ArgumentError, match="pad_shape must be"):
        _seqs([1]).padded_batch(1, pad_info={"seq": ([0], 0)})
    with pytest.raises(Exception, match=r"pad_info names column\(s\) \['nope'\]"):
        _seqs([1]).padded_batch(1, pad_info={"nope": (None, 0)})
    with pytest.raises(PipelineError, match="different shapes"):
        column(_seqs([1, 3]).padded_batch(2, pad_info=None))


def test_bucket_batch_by_length():
    lengths = [1, 5, 2, 6, 3, 9, 1]
    ds = _seqs(lengths).bucket_batch_by_length("seq", [3, 7], [2, 2, 1], pad_info={"seq": ([None], 0)})
    batches = [b["n"].tolist() for b in dict_rows(ds)]
    # buckets [0,3): 1,2,1  [3,7): 5,6,3  [7,inf): 9 -> full batches as they fill, then the rest in bucket order
    assert batches == [[1, 2], [5, 6], [9], [1], [3]]
    padded = dict_rows(_seqs(lengths).bucket_batch_by_length("seq", [3, 7], [2, 2, 1], pad_info={"seq": ([None], 0)}, drop_remainder=True))
    assert [b["seq"].shape for b in padded] == [(2, 2), (2, 6), (1, 9)]
    to_boundary = _seqs([1, 2, 4]).bucket_batch_by_length(
        "seq", [3, 7], [2, 1, 1], pad_info={"seq": ([None], 0)}, pad_to_bucket_boundary=True
    )
    assert [b["seq"].shape for b in dict_rows(to_boundary)] == [(2, 2), (1, 6)]
    custom = _seqs([4, 1, 2]).bucket_batch_by_length(["n"], [3], [1, 1], element_length_function=lambda n: int(n))
    assert [b["n"].tolist() for b in dict_rows(custom)] == [[4], [1], [2]]
    last = _seqs([9]).bucket_batch_by_length("seq", [3], [1, 1], pad_info={"seq": ([None], 0)}, pad_to_bucket_boundary=True)
    with pytest.raises(PipelineError, match="fell in the last bucket"):
        column(last)
    with pytest.raises(ArgumentError, match="one size per bucket"):
        _seqs([1]).bucket_batch_by_length("seq", [3], [1])
    with pytest.raises(ArgumentError, match="strictly increasing"):
        _seqs([1]).bucket_batch_by_length("seq", [3, 3], [1, 1, 1])


@pytest.mark.parametrize(
    "name",
    [
        "minddata.dataset.text_sources",
        "minddata.dataset.standard",
        "minddata.dataset.schema",
        "minddata.dataset._crc32c",
        "minddata.dataset._protobuf",
        "minddata.dataset.base",
    ],
)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def _coco_naming(tmp_path, file_name, **kwargs):
    tmp_path.mkdir(exist_ok=True)
    images, annotation = _coco(tmp_path)
    content = json.loads(annotation.read_text())
    content["images"][1]["file_name"] = file_name
    annotation.write_text(json.dumps(content))
    return md.CocoDataset(str(images), str(annotation), shuffle=False, **kwargs)


@pytest.mark.parametrize("file_name", ["../../x", "../secret.txt", "/etc/hostname", "sub/../../secret.txt"])
def test_coco_file_name_leaving_the_folder_is_refused(tmp_path, file_name):
    (tmp_path / "secret.txt").write_text("top secret contents")
    with pytest.raises(DataFormatError, match=r"ann.json: images\[1\].file_name .* leaves the dataset folder") as e:
        dict_rows(_coco_naming(tmp_path, file_name))
    assert "top secret" not in str(e.value) and "trusted_roots" in str(e.value)


def test_coco_symlink_out_of_the_folder_is_refused_when_read(tmp_path):
    (tmp_path / "secret.txt").write_text("top secret contents")
    ds = _coco_naming(tmp_path, "link.jpg")
    (tmp_path / "images" / "link.jpg").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(RowError, match=r"row 1, image .*link.jpg.* leaves the dataset folder .*symlinks") as e:
        dict_rows(ds)
    assert "top secret" not in str(e.value)


def test_coco_symlink_inside_the_folder_is_read(tmp_path):
    ds = _coco_naming(tmp_path, "alias.jpg")
    (tmp_path / "images" / "alias.jpg").symlink_to(tmp_path / "images" / "a.jpg")
    assert dict_rows(ds)[1]["image"].tobytes() == b"a.jpg" * 3


def test_coco_trusted_roots_allow_absolute_paths_there(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "z.jpg").write_bytes(b"zzz")
    rows = dict_rows(_coco_naming(tmp_path / "one", str(elsewhere / "z.jpg"), trusted_roots=[str(elsewhere)]))
    assert rows[1]["image"].tobytes() == b"zzz"
    with pytest.raises(DataFormatError, match="leaves the dataset folder"):
        dict_rows(_coco_naming(tmp_path / "two", "/etc/hostname", trusted_roots=[str(elsewhere)]))


def test_coco_trusted_roots_are_checked(tmp_path):
    with pytest.raises(ValueError, match="trusted_roots` must be an existing absolute folder"):
        _coco_naming(tmp_path, "a.jpg", trusted_roots=["relative/folder"])


def test_coco_skip_mode_skips_a_row_whose_symlink_escapes(tmp_path):
    (tmp_path / "secret.txt").write_text("top secret contents")
    ds = _coco_naming(tmp_path, "link.jpg")
    (tmp_path / "images" / "link.jpg").symlink_to(tmp_path / "secret.txt")
    md.config.set_error_samples_mode("skip")
    assert [r["image"].tobytes() for r in dict_rows(ds)] == [b"a.jpg" * 3, b"c.jpg" * 3]
