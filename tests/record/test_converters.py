"""Cifar10ToMR, Cifar100ToMR, CsvToMR and TFRecordToMR: MindSpore's converters, writing files MindSpore
reads; MindPage against MindSpore's MindPage on the same file.

Where MindSpore's Python is found or made (tests/peers.py), MindSpore's FileReader reads our
conversions and must give the rows minddata's reader gives. (MindSpore's own converters need
OpenCV, which its test environment does not install, so they are not run side by side.)
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess

import numpy as np
import pytest
from peers import peer_env

import minddata as md
from minddata.bench.corpus import tf_example, tf_feature, tfrecord_bytes
from minddata.errors import DataFormatError
from minddata.mindrecord import (
    Cifar10ToMR,
    Cifar100ToMR,
    CsvToMR,
    FileReader,
    FileWriter,
    FixedLenFeature,
    MindPage,
    TFRecordToMR,
)


def _cifar10(folder, batches=2, per=3):
    rng = np.random.default_rng(0)
    os.makedirs(folder, exist_ok=True)
    for name in [f"data_batch_{k + 1}" for k in range(batches)] + ["test_batch"]:
        smooth = np.add.outer(np.arange(per) * 20, np.arange(3072) % 32 * 4) % 256  # JPEG-friendly
        batch = {b"data": (smooth + rng.integers(0, 4, (per, 3072))).astype(np.uint8),
                 b"labels": [int(v) for v in rng.integers(0, 10, per)]}
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump(batch, f)
    return folder


def _cifar100(folder, per=3):
    rng = np.random.default_rng(1)
    os.makedirs(folder, exist_ok=True)
    for name in ("train", "test"):
        batch = {b"data": rng.integers(0, 256, (per, 3072), dtype=np.uint8),
                 b"fine_labels": [int(v) for v in rng.integers(0, 100, per)],
                 b"coarse_labels": [int(v) for v in rng.integers(0, 20, per)]}
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump(batch, f)
    return folder


def _rows(path):
    reader = FileReader(path)
    rows = list(reader.get_next())
    reader.close()
    return rows


def test_cifar10_to_mr_writes_train_and_test(tmp_path):
    source = _cifar10(str(tmp_path / "cifar"))
    Cifar10ToMR(source, str(tmp_path / "c10.mindrecord")).transform(["label"])
    train = _rows(str(tmp_path / "c10.mindrecord"))
    assert [r["id"] for r in train] == list(range(6)) and sorted(train[0]) == ["data", "id", "label"]
    assert len(_rows(str(tmp_path / "c10.mindrecord_test"))) == 3


def test_cifar10_to_mr_images_decode_to_the_pixels(tmp_path):
    source = _cifar10(str(tmp_path / "cifar"), batches=1, per=1)
    Cifar10ToMR(source, str(tmp_path / "c10.mindrecord")).transform()
    ds = md.MindDataset(str(tmp_path / "c10.mindrecord"), shuffle=False).map(md.vision.Decode(), input_columns="data")
    image = next(ds.create_dict_iterator(output_numpy=True))["data"]
    with open(os.path.join(source, "data_batch_1"), "rb") as f:
        pixels = pickle.load(f)[b"data"].reshape(3, 32, 32).transpose(1, 2, 0)
    assert image.shape == (32, 32, 3) and np.abs(image.astype(int) - pixels).mean() < 8


def test_cifar10_to_mr_refuses_a_folder_without_batches(tmp_path):
    with pytest.raises(md.errors.ArgumentError, match="data_batch_"):
        Cifar10ToMR(str(tmp_path), str(tmp_path / "x.mindrecord"))


def test_cifar_batches_cannot_run_code(tmp_path):
    source = _cifar10(str(tmp_path / "cifar"))
    with open(os.path.join(source, "data_batch_1"), "wb") as f:
        pickle.dump({b"data": os.system}, f)
    with pytest.raises(DataFormatError, match="forbidden"):
        Cifar10ToMR(source, str(tmp_path / "x.mindrecord")).transform()


def test_cifar100_to_mr_writes_both_labels(tmp_path):
    source = _cifar100(str(tmp_path / "cifar100"))
    Cifar100ToMR(source, str(tmp_path / "c100.mindrecord")).transform()
    rows = _rows(str(tmp_path / "c100.mindrecord"))
    with open(os.path.join(source, "train"), "rb") as f:
        batch = pickle.load(f)
    assert [r["fine_label"] for r in rows] == batch[b"fine_labels"]
    assert [r["coarse_label"] for r in rows] == batch[b"coarse_labels"]


def test_csv_to_mr_infers_pandas_types(tmp_path):
    (tmp_path / "t.csv").write_text("name,age,score,ok\nann,31,1.5,True\nbob,42,,False\n")
    CsvToMR(str(tmp_path / "t.csv"), str(tmp_path / "t.mindrecord")).transform()
    rows = _rows(str(tmp_path / "t.mindrecord"))
    assert [(r["name"], r["age"], r["ok"]) for r in rows] == [("ann", 31, 1), ("bob", 42, 0)]
    assert rows[0]["score"] == 1.5 and np.isnan(rows[1]["score"])
    ds = md.MindDataset(str(tmp_path / "t.mindrecord"), shuffle=False)
    types = dict(zip(ds.get_col_names(), [str(t) for t in ds.output_types()]))
    assert types == {"age": "int64", "ok": "int32", "score": "float64", "name": "<U3"}


def test_csv_to_mr_columns_list_selects_columns(tmp_path):
    (tmp_path / "t.csv").write_text("a,b\n1,x\n2,y\n")
    CsvToMR(str(tmp_path / "t.csv"), str(tmp_path / "t.mindrecord"), columns_list=["b"], partition_number=2).transform()
    assert sorted(r["b"] for r in _rows(str(tmp_path / "t.mindrecord0"))) == ["x", "y"]


def test_csv_to_mr_refuses_numeric_column_names(tmp_path):
    (tmp_path / "t.csv").write_text("1,b\n1,x\n")
    with pytest.raises(md.errors.ArgumentError, match="starts with a number"):
        CsvToMR(str(tmp_path / "t.csv"), str(tmp_path / "t.mindrecord")).transform()


_MINDSPORE_SIDE = r"""
import json, sys
from mindspore.mindrecord import FileReader
def read(path):
    reader = FileReader(path)
    rows = [{k: (v.hex() if isinstance(v, bytes) else v.tolist() if hasattr(v, "tolist") else v)
             for k, v in row.items()} for row in reader.get_next()]
    reader.close()
    return rows
print(json.dumps({path: read(path) for path in sys.argv[1:]}))
"""


def test_mindspore_reads_our_conversions(mindspore_python_path, tmp_path):
    c10, c100 = _cifar10(str(tmp_path / "c10")), _cifar100(str(tmp_path / "c100"))
    Cifar10ToMR(c10, str(tmp_path / "ours10.mindrecord")).transform(["label"])
    Cifar100ToMR(c100, str(tmp_path / "ours100.mindrecord")).transform()
    (tmp_path / "t.csv").write_text("name,age,ok\nann,31,True\nbob,42,False\n")
    CsvToMR(str(tmp_path / "t.csv"), str(tmp_path / "t.mindrecord")).transform()
    TFRecordToMR(_tfrecord(tmp_path / "in.tfrecord"), str(tmp_path / "tf.mindrecord"), _FEATURES, ["image bytes"]).transform()
    paths = [str(tmp_path / n) for n in ("ours10.mindrecord", "ours10.mindrecord_test", "ours100.mindrecord",
                                          "ours100.mindrecord_test", "t.mindrecord", "tf.mindrecord")]
    done = subprocess.run([mindspore_python_path, "-c", _MINDSPORE_SIDE, *paths],
                          capture_output=True, text=True, timeout=300, env=peer_env(), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    for path in paths:
        ours = [{k: (v.hex() if isinstance(v, bytes) else v.tolist() if hasattr(v, "tolist") else v)
                 for k, v in row.items()} for row in _rows(path)]
        assert theirs[path] == ours and ours, f"MindSpore reads {os.path.basename(path)} otherwise"


# TFRecordToMR: the example of MindSpore's docstring, with TensorFlow's FixedLenFeature replaced by minddata's.
_FEATURES = {
    "file_name": FixedLenFeature([], "string"), "image bytes": FixedLenFeature([], "string"),
    "int64_scalar": FixedLenFeature([], "int64"), "float_scalar": FixedLenFeature([], "float32"),
    "int64_list": FixedLenFeature([6], "int64"), "float_list": FixedLenFeature([3], "float32"),
    "flag": FixedLenFeature([], "bool", default_value=1),
}


def _tfrecord(path, n=3):
    records = [tf_example({
        "file_name": tf_feature("bytes", [f"{k}.jpg".encode()]),
        "image bytes": tf_feature("bytes", [bytes([k, 255, 0])]),
        "int64_scalar": tf_feature("int64", [k * 1000]),
        "float_scalar": tf_feature("float", [k / 4]),
        "int64_list": tf_feature("int64", list(range(k, k + 6)), packed=k % 2 == 0),
        "float_list": tf_feature("float", [0.5, -1.0, k], packed=k % 2 == 1),
        **({"flag": tf_feature("int64", [0])} if k == 1 else {}),
    }) for k in range(n)]
    path.write_bytes(tfrecord_bytes(records))
    return str(path)


def test_tfrecord_to_mr_writes_mindspores_schema_and_rows(tmp_path):
    convert = TFRecordToMR(_tfrecord(tmp_path / "in.tfrecord"), str(tmp_path / "out.mindrecord"), _FEATURES,
                           ["image bytes"])
    assert convert.mindrecord_schema == {
        "file_name": {"type": "string"}, "image_bytes": {"type": "bytes"}, "int64_scalar": {"type": "int64"},
        "float_scalar": {"type": "float32"}, "int64_list": {"type": "int64", "shape": [6]},
        "float_list": {"type": "float32", "shape": [3]}, "flag": {"type": "int32"},
    }
    convert.transform()
    rows = _rows(str(tmp_path / "out.mindrecord"))
    assert [r["file_name"] for r in rows] == ["0.jpg", "1.jpg", "2.jpg"]
    assert rows[1]["image_bytes"] == bytes([1, 255, 0]) and rows[2]["int64_scalar"] == 2000
    assert rows[1]["float_scalar"] == 0.25 and rows[2]["int64_list"].tolist() == list(range(2, 8))
    assert rows[2]["float_list"].dtype == np.float32 and [r["flag"] for r in rows] == [1, 0, 1]


def test_tfrecord_to_mr_errors_name_the_record(tmp_path):
    source = _tfrecord(tmp_path / "in.tfrecord")
    wrong = dict(_FEATURES, int64_list=FixedLenFeature([5], "int64"))
    with pytest.raises(DataFormatError, match="record 0: feature 'int64_list' has 6 values; feature_dict says 5"):
        TFRecordToMR(source, str(tmp_path / "a.mindrecord"), wrong, ["image bytes"]).transform()
    with pytest.raises(DataFormatError, match="record 0: feature 'image bytes' is not UTF-8 text"):
        TFRecordToMR(source, str(tmp_path / "e.mindrecord"), _FEATURES).transform()
    with pytest.raises(DataFormatError, match="feature 'missing' is missing and has no default_value"):
        TFRecordToMR(source, str(tmp_path / "b.mindrecord"), {"missing": FixedLenFeature([], "int64")}).transform()
    with pytest.raises(md.errors.ArgumentError, match="list of strings"):
        TFRecordToMR(source, str(tmp_path / "c.mindrecord"), {"file_name": FixedLenFeature([2], "string")})
    with pytest.raises(md.errors.ArgumentError, match="bytes field 'int64_scalar' must be a string feature"):
        TFRecordToMR(source, str(tmp_path / "d.mindrecord"), _FEATURES, ["int64_scalar"])
    with pytest.raises(md.errors.ArgumentError, match=r"`bytes_fields` must be list\(str\). Found: 'image bytes'"):
        TFRecordToMR(source, str(tmp_path / "f.mindrecord"), _FEATURES, "image bytes")


def _paged(path):
    writer = FileWriter(path, 2)
    writer.add_schema({"file_name": {"type": "string"}, "label": {"type": "int32"}, "score": {"type": "float64"},
                       "data": {"type": "bytes"}, "vec": {"type": "int64", "shape": [2]}}, "d")
    writer.add_index(["file_name", "label"])
    writer.write_raw_data([{"file_name": f"{i % 3}.jpg", "label": i % 2, "score": i / 4 + 0.1, "data": bytes([i]) * 3,
                            "vec": np.array([i, -i])} for i in range(7)])
    writer.commit()
    return path + "0"


def _pages(page_class, path):
    """Every query of the MindPage API as plain data (run under minddata and under MindSpore)."""
    out = []
    page = page_class(path)
    out.append(sorted(page.candidate_fields))

    def plain(rows):
        return [{k: (v.hex() if isinstance(v, bytes) else v.tolist() if hasattr(v, "tolist") else v)
                 for k, v in sorted(r.items())} for r in rows]

    for field in ("label", "file_name"):
        page.category_field = field
        out.append(page.read_category_info())
        out.append(plain(page.read_at_page_by_id(1, 0, 2)) + plain(page.read_at_page_by_id(0, 1, 2)))
        out.append(plain(page.read_at_page_by_name("1" if field == "label" else "2.jpg", 0, 5)))
    return out


_MINDPAGE_SIDE = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from mindspore.mindrecord import MindPage
from test_converters_pages import pages
print(json.dumps(pages(MindPage, sys.argv[1])))
"""


def test_mindpage_matches_mindspore(mindspore_python_path, tmp_path):
    path = _paged(str(tmp_path / "p.mindrecord"))
    ours = _pages(MindPage, path)
    assert json.loads(ours[1])["categories"] == [{"count": 4, "id": 0, "name": "0"}, {"count": 3, "id": 1, "name": "1"}]
    helper = tmp_path / "helper"
    helper.mkdir()
    import inspect

    (helper / "test_converters_pages.py").write_text(inspect.getsource(_pages).replace("def _pages", "def pages"))
    done = subprocess.run([mindspore_python_path, "-c", _MINDPAGE_SIDE, path, str(helper)],
                          capture_output=True, text=True, timeout=300, env=peer_env(), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == json.loads(json.dumps(ours))


def test_mindpage_errors(tmp_path):
    page = MindPage(_paged(str(tmp_path / "p.mindrecord")))
    with pytest.raises(md.errors.ArgumentError, match="set `category_field`"):
        page.read_category_info()
    with pytest.raises(md.errors.ArgumentError, match="'score' is not a candidate category field"):
        page.category_field = "score"
    page.category_field = "label"
    with pytest.raises(md.errors.ArgumentError, match=r"`category_id` must be in \[0, 2\)"):
        page.read_at_page_by_id(2, 0, 1)
    with pytest.raises(md.errors.ArgumentError, match="page 5 of 5 rows is past"):
        page.read_at_page_by_id(0, 5, 5)
    with pytest.raises(md.errors.ArgumentError, match="no category named '7'"):
        page.read_at_page_by_name("7", 0, 1)
