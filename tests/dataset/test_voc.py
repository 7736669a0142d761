"""VOCDataset over a VOC folder written in its real layout: JPEGs, palette PNG masks, XML annotations
and ImageSets lists."""

from __future__ import annotations

import io

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from PIL import Image
from test_resume import assert_resumes_exactly
from testkit import make_jpeg

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

# id -> objects (name, xmin, ymin, xmax, ymax, difficult, truncated)
OBJECTS = {
    "2008_000001": [("person", 10, 12, 40, 50, 0, 1), ("cat", 5, 6, 20, 30, 1, 0)],
    "2008_000002": [("dog", 3, 4, 33, 24, 0, 0)],
    "2008_000003": [("cat", 1, 2, 9, 8, 0, 0)],
    "2008_000004": [("person", 7, 7, 17, 27, 0, 0), ("dog", 2, 2, 12, 12, 0, 1)],
}
TRAIN = ["2008_000001", "2008_000002", "2008_000003", "2008_000004"]
VAL = ["2008_000003"]


def _xml(image_id, objects):
    parts = [f"<annotation><folder>VOC2012</folder><filename>{image_id}.jpg</filename>"
             "<size><width>48</width><height>60</height><depth>3</depth></size>"]
    for name, x0, y0, x1, y1, difficult, truncated in objects:
        parts.append(
            f"<object><name>{name}</name><pose>Unspecified</pose><truncated>{truncated}</truncated>"
            f"<difficult>{difficult}</difficult><bndbox><xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax>"
            f"<ymax>{y1}</ymax></bndbox></object>"
        )
    return "".join(parts) + "</annotation>\n"


def _mask(seed):
    rng = np.random.default_rng(seed)
    image = Image.fromarray(rng.integers(0, 4, size=(60, 48), dtype=np.uint8), mode="P")
    image.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0] + [0] * (256 * 3 - 12))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def voc(tmp_path):
    root = tmp_path / "VOC2012"
    for sub in ("JPEGImages", "Annotations", "SegmentationClass", "ImageSets/Main", "ImageSets/Segmentation"):
        (root / sub).mkdir(parents=True)
    for k, image_id in enumerate(OBJECTS):
        (root / "JPEGImages" / f"{image_id}.jpg").write_bytes(make_jpeg(48, 60, seed=k))
        (root / "Annotations" / f"{image_id}.xml").write_text(_xml(image_id, OBJECTS[image_id]))
        (root / "SegmentationClass" / f"{image_id}.png").write_bytes(_mask(k))
    for task in ("Main", "Segmentation"):
        (root / "ImageSets" / task / "train.txt").write_text("\n".join(TRAIN) + "\n")
        (root / "ImageSets" / task / "val.txt").write_text("\r\n".join(VAL) + "\r\n")  # Windows line ends
    return root


def test_detection_columns_types_and_values(voc):
    ds = md.VOCDataset(str(voc), task="Detection", usage="train", shuffle=False)
    assert ds.get_col_names() == ["image", "bbox", "label", "difficult", "truncate"]
    got = rows(ds)
    assert len(got) == 4
    first = got[0]
    assert first["image"].dtype == np.uint8 and first["image"].ndim == 1
    assert first["image"].tobytes() == (voc / "JPEGImages" / "2008_000001.jpg").read_bytes()
    assert first["bbox"].dtype == np.float32 and first["bbox"].tolist() == [[10, 12, 30, 38], [5, 6, 15, 24]]
    # labels: the names found, sorted: cat 0, dog 1, person 2
    assert first["label"].dtype == np.uint32 and first["label"].tolist() == [[2], [0]]
    assert first["difficult"].tolist() == [[0], [1]] and first["truncate"].tolist() == [[1], [0]]
    assert first["difficult"].dtype == np.uint32 and first["truncate"].dtype == np.uint32
    assert ds.get_class_indexing() == {"cat": 0, "dog": 1, "person": 2}


def test_detection_class_indexing_keeps_only_its_names(voc):
    ds = md.VOCDataset(str(voc), task="Detection", class_indexing={"dog": 7}, shuffle=False)
    got = rows(ds)
    # only the images with a dog remain, each with only its dogs
    assert [r["label"].tolist() for r in got] == [[[7]], [[7]]]
    assert [r["bbox"].tolist() for r in got] == [[[3, 4, 30, 20]], [[2, 2, 10, 10]]]
    assert ds.get_class_indexing() == {"dog": 7}


def test_segmentation_image_and_mask(voc):
    got = rows(md.VOCDataset(str(voc), task="Segmentation", usage="train", shuffle=False, decode=True))
    assert [r["image"].shape for r in got] == [(60, 48, 3)] * 4
    mask = np.asarray(Image.open(voc / "SegmentationClass" / "2008_000002.png").convert("RGB"))
    assert got[1]["target"].dtype == np.uint8 and np.array_equal(got[1]["target"], mask)


def test_segmentation_undecoded_target_is_the_png_bytes(voc):
    got = rows(md.VOCDataset(str(voc), shuffle=False))
    assert got[0]["target"].tobytes() == (voc / "SegmentationClass" / "2008_000001.png").read_bytes()


def test_usage_picks_the_list_file_and_extra_metadata_names_the_image(voc):
    ds = md.VOCDataset(str(voc), task="Detection", usage="val", extra_metadata=True, shuffle=False)
    assert ds.get_col_names()[-1] == "_meta-filename"
    assert [str(r["_meta-filename"]) for r in rows(ds)] == ["2008_000003"]


def test_shards_split_the_rows(voc):
    assert_shards_partition(
        lambda **kw: md.VOCDataset(str(voc), task="Detection", shuffle=False, **kw), num_shards=2)


def test_resumes_exactly(voc):
    assert_resumes_exactly(lambda w: md.VOCDataset(str(voc), task="Detection", num_parallel_workers=w), epochs=2)


def test_decoded_segmentation_resumes_exactly(voc):
    assert_resumes_exactly(lambda w: md.VOCDataset(str(voc), decode=True, num_parallel_workers=w))


def test_missing_folder_and_list_file_are_named(voc, tmp_path):
    with pytest.raises(ArgumentError, match="`dataset_dir` must be an existing folder"):
        md.VOCDataset(str(tmp_path / "nowhere"))
    with pytest.raises(DataFormatError, match=r"ImageSets/Main/test.txt is missing.*usage='test'"):
        md.VOCDataset(str(voc), task="Detection", usage="test")


def test_garbled_annotation_names_the_file(voc):
    (voc / "Annotations" / "2008_000002.xml").write_text("<annotation><object><name>dog</name>")
    with pytest.raises(DataFormatError, match=r"2008_000002.xml is not valid XML"):
        md.VOCDataset(str(voc), task="Detection").get_dataset_size()


def test_invalid_box_names_the_file_and_the_rule(voc):
    (voc / "Annotations" / "2008_000003.xml").write_text(_xml("2008_000003", [("cat", 0, 2, 9, 8, 0, 0)]))
    with pytest.raises(DataFormatError, match=r"2008_000003.xml: <object> 0 has an invalid <bndbox>.*xmin > 0"):
        md.VOCDataset(str(voc), task="Detection").get_dataset_size()


def test_missing_image_is_a_row_error_naming_it(voc):
    (voc / "JPEGImages" / "2008_000004.jpg").unlink()
    with pytest.raises(md.errors.RowError, match="2008_000004.jpg"):
        rows(md.VOCDataset(str(voc), shuffle=False))


def test_an_id_leaving_the_folder_is_refused(voc):
    (voc / "ImageSets" / "Segmentation" / "train.txt").write_text("../../etc/passwd\n")
    with pytest.raises(DataFormatError, match="leaves the dataset folder"):
        md.VOCDataset(str(voc)).get_dataset_size()


def test_argument_rules():
    with pytest.raises(ArgumentError, match="`task` must be 'Segmentation' or 'Detection'"):
        md.VOCDataset(".", task="Keypoint")
    with pytest.raises(ArgumentError, match="only valid with task='Detection'"):
        md.VOCDataset(".", class_indexing={"cat": 0})
