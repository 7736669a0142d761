"""Cifar10ToMR, Cifar100ToMR and CsvToMR: MindSpore's converters, writing files MindSpore reads.

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
from minddata.errors import DataFormatError
from minddata.mindrecord import Cifar10ToMR, Cifar100ToMR, CsvToMR, FileReader


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
    rows = [{k: (v.hex() if isinstance(v, bytes) else v) for k, v in row.items()} for row in reader.get_next()]
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
    paths = [str(tmp_path / n) for n in ("ours10.mindrecord", "ours10.mindrecord_test", "ours100.mindrecord",
                                          "ours100.mindrecord_test", "t.mindrecord")]
    done = subprocess.run([mindspore_python_path, "-c", _MINDSPORE_SIDE, *paths],
                          capture_output=True, text=True, timeout=300, env=peer_env(), cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    for path in paths:
        ours = [{k: (v.hex() if isinstance(v, bytes) else v) for k, v in row.items()} for row in _rows(path)]
        assert theirs[path] == ours and ours, f"MindSpore reads {os.path.basename(path)} otherwise"
