"""ManifestDataset over a ModelArts manifest: JSON lines naming real JPEG/PNG files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from loader_checks import assert_shards_partition, rows
from test_resume import assert_resumes_exactly
from testkit import make_jpeg, random_png

import minddata as md
from minddata.errors import ArgumentError, DataFormatError

ENTRIES = [("a.jpg", "train", ["dog"]), ("b.png", "TRAIN", ["cat"]), ("c.jpg", "eval", ["dog"]),
           ("d.jpg", "train", ["cat", "dog"]), ("notes.jpg", "train", ["cat"]), ("e.jpg", "train", ["bird"])]


@pytest.fixture
def manifest(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    for k, (name, _, _) in enumerate(ENTRIES):
        data = random_png(6, 7, k) if name.endswith(".png") else make_jpeg(9, 8 + k, seed=k)
        (images / name).write_bytes(b"just notes" if name == "notes.jpg" else data)
    lines = [json.dumps({"source": str(images / name), "usage": usage,
                         "annotation": [{"type": "modelarts/image_classification", "name": n} for n in names]})
             for name, usage, names in ENTRIES]
    path = tmp_path / "manifest.json"
    path.write_text("\n".join(lines) + "\n")
    return path, images


def test_labels_usage_and_skipped_files(manifest):
    path, images = manifest
    ds = md.ManifestDataset(str(path), shuffle=False)
    got = rows(ds)
    # train entries (usage compared without case), notes.jpg is no image: a, b, d, e
    assert ds.get_class_indexing() == {"bird": 0, "cat": 1, "dog": 2}
    assert [r["label"].tolist() for r in got] == [2, 1, [1, 2], 0] and got[0]["label"].dtype == np.int32
    assert got[1]["image"].tobytes() == (images / "b.png").read_bytes()
    assert md.ManifestDataset(str(path), usage="eval").get_dataset_size() == 1


def test_class_indexing_keeps_only_its_classes(manifest):
    path, _ = manifest
    ds = md.ManifestDataset(str(path), class_indexing={"dog": 5}, shuffle=False, decode=True)
    assert [r["label"].tolist() for r in rows(ds)] == [5, 5]
    assert ds.get_class_indexing() == {"dog": 5}


def test_shards_and_resume(manifest):
    path, _ = manifest
    assert_shards_partition(lambda **kw: md.ManifestDataset(str(path), shuffle=False, **kw), 2)
    assert_resumes_exactly(lambda w: md.ManifestDataset(str(path), num_parallel_workers=w))


def test_sources_outside_the_folder_need_trusted_roots(manifest, tmp_path_factory):
    path, images = manifest
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "z.jpg").write_bytes(make_jpeg(5, 5, seed=9))
    line = json.dumps({"source": str(elsewhere / "z.jpg"), "usage": "train", "annotation": [{"name": "cat"}]})
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(DataFormatError, match="leaves the dataset folder"):
        md.ManifestDataset(str(path)).get_dataset_size()
    assert md.ManifestDataset(str(path), trusted_roots=[str(elsewhere)]).get_dataset_size() == 5


def test_errors(manifest, tmp_path):
    path, _ = manifest
    with pytest.raises(ArgumentError, match="`usage` must be 'train', 'eval' or 'inference'"):
        md.ManifestDataset(str(path), usage="test")
    with pytest.raises(ArgumentError, match="`dataset_file` must be an existing file"):
        md.ManifestDataset(str(tmp_path / "none.json"))
    path.write_text('{"source": "images/a.jpg", "usage": "train"}\n')
    with pytest.raises(DataFormatError, match=r"manifest.json line 1 is not a manifest entry \(KeyError"):
        md.ManifestDataset(str(path)).get_dataset_size()
