"""KITTIDataset over KITTI's layout: data_object_image_2 PNGs and data_object_label_2 text labels."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import random_png

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

LABELS = {
    "000000": ["Pedestrian 0.00 0 -0.20 712.40 143.00 810.73 307.92 1.89 0.48 1.20 1.84 1.47 8.41 0.01"],
    "000001": ["Truck 0.00 0 -1.57 599.41 156.40 629.75 189.25 2.85 2.63 12.34 0.47 1.49 69.44 -1.56",
               "Car 0.00 0 1.85 387.63 181.54 423.81 203.12 1.67 1.87 3.69 -16.53 2.39 58.49 1.57",
               "DontCare -1 -1 -10 503.89 169.71 590.61 190.13 -1 -1 -1 -1000 -1000 -1000 -10"],
    "000002": ["Car 0.88 3 -0.69 0.00 192.37 402.31 374.00 1.60 1.57 3.23 -2.70 1.74 3.68 -1.29"],
    "000003": ["Cyclist 0.00 1 -1.85 570.00 170.00 600.00 230.00 1.70 0.60 1.80 -1.00 1.60 20.00 -1.90"],
}


@pytest.fixture
def kitti(tmp_path):
    train = tmp_path / "data_object_image_2" / "training" / "image_2"
    test = tmp_path / "data_object_image_2" / "testing" / "image_2"
    labels = tmp_path / "data_object_label_2" / "training" / "label_2"
    for folder in (train, test, labels):
        folder.mkdir(parents=True)
    for k, (name, lines) in enumerate(LABELS.items()):
        (train / f"{name}.png").write_bytes(random_png(10, 30, k))
        (labels / f"{name}.txt").write_text("\n".join(lines) + "\n")
    (test / "000000.png").write_bytes(random_png(10, 30, 99))
    return tmp_path


def test_train_columns_and_values(kitti):
    ds = md.KITTIDataset(str(kitti), shuffle=False)
    assert ds.get_col_names() == ["image", "label", "truncated", "occluded", "alpha", "bbox", "dimensions",
                                  "location", "rotation_y"]
    got = rows(ds)
    second = got[1]
    # types sorted: Car 0, Cyclist 1, DontCare 2, Pedestrian 3, Truck 4
    assert second["label"].tolist() == [[4], [0], [2]] and second["label"].dtype == np.uint32
    assert second["bbox"].dtype == np.float32 and np.allclose(second["bbox"][0], [599.41, 156.40, 629.75, 189.25])
    assert np.allclose(second["dimensions"][1], [1.67, 1.87, 3.69]) and np.allclose(second["location"][1], [-16.53, 2.39, 58.49])
    assert second["occluded"].tolist() == [[0], [0], [4294967295]]  # -1 as uint32, as MindSpore casts it
    assert np.allclose(got[2]["truncated"], [[0.88]]) and got[2]["occluded"].tolist() == [[3]]
    assert np.allclose(got[0]["alpha"], [[-0.20]]) and np.allclose(got[0]["rotation_y"], [[0.01]])
    assert ds.get_class_indexing() == {"Car": 0, "Cyclist": 1, "DontCare": 2, "Pedestrian": 3, "Truck": 4}


def test_test_usage_has_images_only(kitti):
    got = rows(md.KITTIDataset(str(kitti), usage="test", decode=True))
    assert list(got[0]) == ["image"] and got[0]["image"].shape == (10, 30, 3)


def test_shards_and_resume(kitti):
    assert_shards_partition(lambda **kw: md.KITTIDataset(str(kitti), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.KITTIDataset(str(kitti), num_parallel_workers=w))


def test_errors_name_the_file(kitti):
    with pytest.raises(ArgumentError, match="`usage` must be 'train' or 'test'"):
        md.KITTIDataset(str(kitti), usage="val")
    (kitti / "data_object_label_2/training/label_2/000002.txt").write_text("Car 0.5 1 2\n")
    with pytest.raises(DataFormatError, match=r"000002.txt line 1 is not a KITTI object line: 4 fields"):
        md.KITTIDataset(str(kitti)).get_dataset_size()
    (kitti / "data_object_label_2/training/label_2/000000.txt").unlink()
    with pytest.raises(DataFormatError, match=r"000000.txt is missing"):
        md.KITTIDataset(str(kitti)).get_dataset_size()
