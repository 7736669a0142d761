"""The MNIST family over files written byte for byte in their real formats: IDX (MNIST, Fashion-MNIST,
KMNIST, EMNIST, QMNIST's idx2-int labels) and USPS's libsvm text."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly

import minddata as md
from minddata.errors import ArgumentError, DataFormatError


def _write_idx_pair(folder, image_name, label_name, n, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    (folder / image_name).write_bytes(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
    (folder / label_name).write_bytes(struct.pack(">II", 0x801, n) + labels.tobytes())
    return images, labels


def _write_mnist_layout(folder):
    train = _write_idx_pair(folder, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 6, 0)
    test = _write_idx_pair(folder, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 4, 1)
    return train, test


MNIST_LAYOUT = [md.MnistDataset, md.FashionMnistDataset, md.KMnistDataset]


@pytest.mark.parametrize("cls", MNIST_LAYOUT, ids=lambda c: c.__name__)
def test_mnist_layout_columns_values_and_usage(cls, tmp_path):
    (train_x, train_y), (test_x, test_y) = _write_mnist_layout(tmp_path)
    got = rows(cls(str(tmp_path), usage="test", shuffle=False))
    assert [r["image"].shape for r in got] == [(28, 28, 1)] * 4
    assert got[0]["image"].dtype == np.uint8 and got[0]["label"].dtype == np.uint32
    assert np.array_equal(np.stack([r["image"][..., 0] for r in got]), test_x)
    assert [int(r["label"]) for r in got] == test_y.tolist()
    assert cls(str(tmp_path), usage="train").get_dataset_size() == 6
    assert [int(r["label"]) for r in rows(cls(str(tmp_path), shuffle=False))] == train_y.tolist() + test_y.tolist()


@pytest.mark.parametrize("cls", MNIST_LAYOUT, ids=lambda c: c.__name__)
def test_mnist_layout_shards_and_resume(cls, tmp_path):
    _write_mnist_layout(tmp_path)
    assert_shards_partition(lambda **kw: cls(str(tmp_path), shuffle=False, **kw), num_shards=2)
    assert_resumes_exactly(lambda w: cls(str(tmp_path), num_parallel_workers=w))


@pytest.mark.parametrize("cls", MNIST_LAYOUT, ids=lambda c: c.__name__)
def test_mnist_layout_missing_and_garbled_files_are_named(cls, tmp_path):
    _write_idx_pair(tmp_path, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 3, 0)
    with pytest.raises(DataFormatError, match=rf"{cls.__name__}: .*t10k-images-idx3-ubyte is missing.*gunzip"):
        cls(str(tmp_path), usage="test").get_dataset_size()
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(b"\x1f\x8b\x08\x00garbage")  # a gzip file, not IDX
    with pytest.raises(DataFormatError, match=r"train-labels-idx1-ubyte is not an IDX file.*uncompressed"):
        cls(str(tmp_path), usage="train").get_dataset_size()
    with pytest.raises(ArgumentError, match="`dataset_dir` must be an existing folder"):
        cls(str(tmp_path / "nowhere"))


def test_mnist_family_classes_are_distinct():
    assert not issubclass(md.FashionMnistDataset, md.MnistDataset)
    assert not issubclass(md.KMnistDataset, md.MnistDataset)


# -- EMNIST -----------------------------------------------------------------------------------


def _write_emnist(folder, name):
    train = _write_idx_pair(folder, f"emnist-{name}-train-images-idx3-ubyte", f"emnist-{name}-train-labels-idx1-ubyte", 4, 2)
    test = _write_idx_pair(folder, f"emnist-{name}-test-images-idx3-ubyte", f"emnist-{name}-test-labels-idx1-ubyte", 2, 3)
    return train, test


def test_emnist_reads_the_named_split(tmp_path):
    (train_x, train_y), (test_x, test_y) = _write_emnist(tmp_path, "letters")
    _write_emnist(tmp_path, "digits")
    got = rows(md.EMnistDataset(str(tmp_path), "letters", usage="train", shuffle=False))
    assert np.array_equal(np.stack([r["image"][..., 0] for r in got]), train_x)
    assert [int(r["label"]) for r in got] == train_y.tolist() and got[0]["label"].dtype == np.uint32
    assert md.EMnistDataset(str(tmp_path), "letters").get_dataset_size() == 6
    assert md.EMnistDataset(str(tmp_path), "letters", usage="test").get_dataset_size() == 2


def test_emnist_shards_resume_and_errors(tmp_path):
    _write_emnist(tmp_path, "balanced")
    assert_shards_partition(lambda **kw: md.EMnistDataset(str(tmp_path), "balanced", shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.EMnistDataset(str(tmp_path), "balanced", num_parallel_workers=w))
    with pytest.raises(ArgumentError, match="`name` must be one of"):
        md.EMnistDataset(str(tmp_path), "greek")
    with pytest.raises(DataFormatError, match="emnist-mnist-train-images-idx3-ubyte is missing"):
        md.EMnistDataset(str(tmp_path), "mnist").get_dataset_size()


# -- QMNIST -----------------------------------------------------------------------------------


def _write_qmnist(folder, stem, n, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    info = rng.integers(0, 100000, size=(n, 8), dtype=np.int32)
    info[:, 0] = rng.integers(0, 10, size=n)
    (folder / f"{stem}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 0x803, n, 28, 28) + images.tobytes())
    # labels-idx2-int: magic 0x00000C02 (int32, 2 dims), n, 8, then big-endian int32
    (folder / f"{stem}-labels-idx2-int").write_bytes(struct.pack(">III", 0xC02, n, 8) + info.astype(">i4").tobytes())
    return images, info


@pytest.fixture
def qmnist(tmp_path):
    return tmp_path, {
        "train": _write_qmnist(tmp_path, "qmnist-train", 4, 0),
        "test": _write_qmnist(tmp_path, "qmnist-test", 3, 1),
        "nist": _write_qmnist(tmp_path, "xnist", 5, 2),
    }


def test_qmnist_compat_label_is_the_class(qmnist):
    folder, data = qmnist
    got = rows(md.QMnistDataset(str(folder), usage="train", shuffle=False))
    images, info = data["train"]
    assert np.array_equal(np.stack([r["image"][..., 0] for r in got]), images)  # grey levels kept
    assert got[0]["label"].shape == () and got[0]["label"].dtype == np.uint32
    assert [int(r["label"]) for r in got] == info[:, 0].tolist()


def test_qmnist_full_information_with_compat_false(qmnist):
    folder, data = qmnist
    got = rows(md.QMnistDataset(str(folder), usage="nist", compat=False, shuffle=False))
    assert got[0]["label"].shape == (8,) and got[0]["label"].dtype == np.uint32
    assert np.array_equal(np.stack([r["label"] for r in got]), data["nist"][1].astype(np.uint32))


def test_qmnist_usages(qmnist):
    folder, _ = qmnist
    size = {u: md.QMnistDataset(str(folder), usage=u).get_dataset_size() for u in ("train", "test", "test10k", "nist", "all")}
    # test10k: the first 10,000 test rows (all 3 here); all: train + test + nist
    assert size == {"train": 4, "test": 3, "test10k": 3, "nist": 5, "all": 12}


def test_qmnist_shards_and_resume(qmnist):
    folder, _ = qmnist
    assert_shards_partition(lambda **kw: md.QMnistDataset(str(folder), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.QMnistDataset(str(folder), compat=False, num_parallel_workers=w))


def test_qmnist_wrong_label_file_is_named(qmnist):
    folder, _ = qmnist
    path = folder / "qmnist-test-labels-idx2-int"
    path.write_bytes(struct.pack(">II", 0x801, 3) + bytes(3))  # an MNIST label file in its place
    with pytest.raises(DataFormatError, match=r"qmnist-test-labels-idx2-int is not an IDX file of int32 with 2"):
        md.QMnistDataset(str(folder), usage="test").get_dataset_size()
    with pytest.raises(ArgumentError, match="`usage` must be one of"):
        md.QMnistDataset(str(folder), usage="test20k")


# -- USPS -------------------------------------------------------------------------------------


def _usps_line(label, values):
    # libsvm as distributed: "label 1:v 2:v ... 256:v " (a trailing space)
    return f"{label} " + "".join(f"{k}:{v!r} " for k, v in enumerate(values, 1)) + "\n"


def _write_usps(path, n, seed):
    rng = np.random.default_rng(seed)
    values = np.round(rng.uniform(-1, 1, size=(n, 256)), 6)
    values[:, 0] = -1.0
    values[:, 1] = 1.0
    labels = rng.integers(1, 11, size=n)
    path.write_text("".join(_usps_line(int(y), [float(x) for x in row]) for y, row in zip(labels, values)))
    return values, labels


@pytest.fixture
def usps(tmp_path):
    return tmp_path, _write_usps(tmp_path / "usps", 6, 0), _write_usps(tmp_path / "usps.t", 2, 1)


def test_usps_pixels_and_labels(usps):
    folder, (values, labels), _ = usps
    got = rows(md.USPSDataset(str(folder), usage="train", shuffle=False))
    assert [r["image"].shape for r in got] == [(16, 16, 1)] * 6 and got[0]["image"].dtype == np.uint8
    expected = ((values.astype(np.float32).astype(np.float64) + 1) / 2 * 255).astype(np.uint8).reshape(-1, 16, 16)
    assert np.array_equal(np.stack([r["image"][..., 0] for r in got]), expected)
    assert got[0]["image"][0, 0, 0] == 0 and got[0]["image"][0, 1, 0] == 255
    assert [int(r["label"]) for r in got] == (labels - 1).tolist() and got[0]["label"].dtype == np.uint32


def test_usps_usage_shards_and_resume(usps):
    folder, _, _ = usps
    assert md.USPSDataset(str(folder)).get_dataset_size() == 8
    assert md.USPSDataset(str(folder), usage="test").get_dataset_size() == 2
    assert_shards_partition(lambda **kw: md.USPSDataset(str(folder), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.USPSDataset(str(folder), num_parallel_workers=w))


def test_usps_errors_name_the_file_and_line(usps):
    folder, _, _ = usps
    with pytest.raises(ArgumentError, match="Shuffle.FILES|`shuffle` must be"):
        md.USPSDataset(str(folder), shuffle=md.Shuffle.FILES)
    (folder / "usps.t").write_text("3 1:0.5 2:0.5\n")
    with pytest.raises(DataFormatError, match=r"usps.t line 1 must hold .* found label 3 and 2 pixel"):
        md.USPSDataset(str(folder), usage="test").get_dataset_size()
    (folder / "usps.t").unlink()
    with pytest.raises(DataFormatError, match=r"usps.t is missing.*bunzip2"):
        md.USPSDataset(str(folder), usage="test").get_dataset_size()



def test_pk_sampler_over_emnist_groups_by_label(tmp_path):
    (_, train_y), (_, test_y) = _write_emnist(tmp_path, "digits")
    got = rows(md.EMnistDataset(str(tmp_path), "digits", sampler=md.PKSampler(1)))
    assert sorted(int(r["label"]) for r in got) == sorted(set(train_y.tolist() + test_y.tolist()))
