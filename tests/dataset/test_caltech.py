"""Caltech101Dataset and Caltech256Dataset over their real layouts: class folders of JPEGs, and
Caltech 101's MATLAB v5 contour annotations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError, RowError

CLASSES_101 = {"Faces": 2, "accordion": 3, "airplanes": 1}  # class -> images


@pytest.fixture
def caltech101(tmp_path):
    contours = {}
    for c, (name, count) in enumerate(CLASSES_101.items()):
        images = tmp_path / "101_ObjectCategories" / name
        notes = tmp_path / "Annotations" / {"Faces": "Faces_2", "airplanes": "Airplanes_Side_2"}.get(name, name)
        images.mkdir(parents=True)
        notes.mkdir(parents=True)
        for k in range(1, count + 1):
            (images / f"image_{k:04d}.jpg").write_bytes(make_jpeg(20 + k, 15 + c, seed=10 * c + k))
            contour = np.random.default_rng(10 * c + k).uniform(0, 20, size=(2, 5 + k))
            box = np.array([[1, 15, 2, 20]], dtype=np.uint16)
            scipy.io.savemat(str(notes / f"annotation_{k:04d}.mat"), {"box_coord": box, "obj_contour": contour})
            contours[(name, k)] = contour
    (tmp_path / "101_ObjectCategories" / "BACKGROUND_Google").mkdir()
    (tmp_path / "101_ObjectCategories" / "BACKGROUND_Google" / "image_0001.jpg").write_bytes(make_jpeg(9, 9, seed=99))
    return tmp_path, contours


def test_caltech101_categories_skip_the_background(caltech101):
    folder, _ = caltech101
    got = rows(md.Caltech101Dataset(str(folder), shuffle=False))
    assert [int(r["category"]) for r in got] == [0, 0, 1, 1, 1, 2]  # Faces, accordion, airplanes (sorted)
    assert got[0]["category"].dtype == np.uint32 and got[0]["image"].dtype == np.uint8
    assert got[2]["image"].tobytes() == (folder / "101_ObjectCategories/accordion/image_0001.jpg").read_bytes()
    assert md.Caltech101Dataset(str(folder)).get_class_indexing() == {"Faces": 0, "accordion": 1, "airplanes": 2}


def test_caltech101_annotations_come_from_the_renamed_folders(caltech101):
    folder, contours = caltech101
    got = rows(md.Caltech101Dataset(str(folder), target_type="all", shuffle=False, decode=True))
    assert md.Caltech101Dataset(str(folder), target_type="all").get_col_names() == ["image", "category", "annotation"]
    assert got[0]["annotation"].dtype == np.float64
    assert np.array_equal(got[0]["annotation"], contours[("Faces", 1)])
    assert np.array_equal(got[5]["annotation"], contours[("airplanes", 1)])
    assert got[3]["image"].shape == (16, 22, 3)
    only = rows(md.Caltech101Dataset(str(folder), target_type="annotation", shuffle=False))
    assert list(only[0]) == ["image", "annotation"] and np.array_equal(only[4]["annotation"], contours[("accordion", 3)])


def test_caltech101_shards_and_resume(caltech101):
    folder, _ = caltech101
    assert_shards_partition(lambda **kw: md.Caltech101Dataset(str(folder), target_type="all", shuffle=False, **kw), 3)
    assert_resumes_exactly(lambda w: md.Caltech101Dataset(str(folder), target_type="all", num_parallel_workers=w))


def test_caltech101_errors(caltech101, tmp_path):
    folder, _ = caltech101
    with pytest.raises(ArgumentError, match="`target_type` must be one of"):
        md.Caltech101Dataset(str(folder), target_type="box")
    with pytest.raises(DataFormatError, match="101_ObjectCategories is missing"):
        md.Caltech101Dataset(str(folder / "Annotations"))
    (folder / "Annotations/accordion/annotation_0002.mat").write_bytes(b"garbage")
    with pytest.raises(RowError, match=r"row 3: .*annotation_0002.mat is not a readable MATLAB v5 file"):
        rows(md.Caltech101Dataset(str(folder), target_type="annotation", shuffle=False))
    (folder / "Annotations/accordion/annotation_0002.mat").unlink()
    with pytest.raises(RowError, match=r"annotation_0002.mat is missing"):
        rows(md.Caltech101Dataset(str(folder), target_type="annotation", shuffle=False))


@pytest.fixture
def caltech256(tmp_path):
    root = tmp_path / "256_ObjectCategories"
    for c, name in enumerate(["001.ak47", "002.american-flag", "257.clutter"]):
        (root / name).mkdir(parents=True)
        for k in range(1, 3):
            (root / name / f"{name[:3]}_{k:04d}.jpg").write_bytes(make_jpeg(12 + k, 10 + c, seed=7 * c + k))
    (root / "001.ak47" / "greg").mkdir()  # a stray folder inside a class, as in the real archive
    return root


def test_caltech256_labels_and_bytes(caltech256):
    got = rows(md.Caltech256Dataset(str(caltech256), shuffle=False))
    assert [int(r["label"]) for r in got] == [0, 0, 1, 1, 2, 2] and got[0]["label"].dtype == np.uint32
    assert got[3]["image"].tobytes() == (caltech256 / "002.american-flag" / "002_0002.jpg").read_bytes()
    decoded = rows(md.Caltech256Dataset(str(caltech256), shuffle=False, decode=True))
    assert decoded[5]["image"].shape == (12, 14, 3)


def test_caltech256_shards_resume_and_errors(caltech256, tmp_path):
    assert_shards_partition(lambda **kw: md.Caltech256Dataset(str(caltech256), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.Caltech256Dataset(str(caltech256), num_parallel_workers=w))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataFormatError, match=r"no .jpg images.*256_ObjectCategories"):
        md.Caltech256Dataset(str(tmp_path / "empty")).get_dataset_size()


def test_caltech256_pk_sampler_groups_by_label(caltech256):
    got = rows(md.Caltech256Dataset(str(caltech256), sampler=md.PKSampler(1)))
    assert sorted(int(r["label"]) for r in got) == [0, 1, 2]


def test_caltech256_num_samples(caltech256):
    assert len(rows(md.Caltech256Dataset(str(caltech256), num_samples=4))) == 4
