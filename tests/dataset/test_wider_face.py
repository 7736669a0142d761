"""WIDERFaceDataset over WIDER FACE's layout: event folders of JPEGs and the bbx_gt ground truth."""

from __future__ import annotations

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

# x1 y1 w h blur expression illumination invalid occlusion pose
TRAIN = {
    "0--Parade/0_Parade_marchingband_1_849.jpg": ["449 330 122 149 0 0 0 0 0 0"],
    "0--Parade/0_Parade_Parade_0_904.jpg": ["361 98 263 339 0 0 0 0 0 0", "78 221 7 8 2 0 0 1 1 0"],
    "1--Handshaking/1_Handshaking_Handshaking_1_35.jpg": [],
}
VAL = {"2--Demonstration/2_Demonstration_Demonstration_Or_Protest_2_58.jpg": ["10 20 30 40 1 1 1 0 2 1"]}


def _ground_truth(entries):
    out = []
    for name, faces in entries.items():
        out += [name, str(len(faces))] + (faces or ["0 0 0 0 0 0 0 0 0 0 "])
    return "\n".join(out) + "\n"


@pytest.fixture
def wider(tmp_path):
    (tmp_path / "wider_face_split").mkdir()
    for base, entries in (("WIDER_train", TRAIN), ("WIDER_val", VAL), ("WIDER_test", {"0--Parade/0_Parade_test_1.jpg": []})):
        for k, name in enumerate(entries):
            path = tmp_path / base / "images" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(make_jpeg(30, 20 + k, seed=len(base) + k))
    (tmp_path / "wider_face_split" / "wider_face_train_bbx_gt.txt").write_text(_ground_truth(TRAIN))
    (tmp_path / "wider_face_split" / "wider_face_val_bbx_gt.txt").write_text(_ground_truth(VAL))
    return tmp_path


def test_faces_and_their_attributes(wider):
    got = rows(md.WIDERFaceDataset(str(wider), usage="train", shuffle=False))
    # files in name order: 0_Parade_Parade_0_904 < 0_Parade_marchingband_1_849 < 1_Handshaking...
    parade = got[0]
    assert parade["bbox"].dtype == np.uint32 and parade["bbox"].tolist() == [[361, 98, 263, 339], [78, 221, 7, 8]]
    assert parade["blur"].tolist() == [0, 2] and parade["invalid"].tolist() == [0, 1]
    assert parade["occlusion"].tolist() == [0, 1] and parade["pose"].tolist() == [0, 0]
    assert parade["image"].tobytes() == (wider / "WIDER_train/images" / list(TRAIN)[1]).read_bytes()
    assert got[2]["bbox"].shape == (0, 4) and got[2]["blur"].shape == (0,)  # no face


def test_usages(wider):
    assert md.WIDERFaceDataset(str(wider)).get_dataset_size() == 4
    val = rows(md.WIDERFaceDataset(str(wider), usage="valid"))
    assert val[0]["occlusion"].tolist() == [2] and val[0]["pose"].tolist() == [1] and val[0]["invalid"].tolist() == [0]
    test = rows(md.WIDERFaceDataset(str(wider), usage="test", decode=True))
    assert list(test[0]) == ["image"] and test[0]["image"].shape == (20, 30, 3)
    with pytest.raises(ArgumentError, match=r"`usage` must be one of \['train', 'valid', 'test', 'all'\]"):
        md.WIDERFaceDataset(str(wider), usage="val")


def test_shards_and_resume(wider):
    assert_shards_partition(lambda **kw: md.WIDERFaceDataset(str(wider), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.WIDERFaceDataset(str(wider), num_parallel_workers=w))


def test_errors_name_the_file(wider):
    (wider / "wider_face_split" / "wider_face_val_bbx_gt.txt").write_text("2--Demonstration/x.jpg\n2\n1 2 3 4 0 0 0 0 0 0\n")
    with pytest.raises(DataFormatError, match=r"wider_face_val_bbx_gt.txt near line 1 is not WIDER FACE ground truth"):
        md.WIDERFaceDataset(str(wider), usage="valid").get_dataset_size()
    (wider / "wider_face_split" / "wider_face_train_bbx_gt.txt").unlink()
    with pytest.raises(DataFormatError, match=r"wider_face_train_bbx_gt.txt is missing.*wider_face_split.zip"):
        md.WIDERFaceDataset(str(wider), usage="train").get_dataset_size()
