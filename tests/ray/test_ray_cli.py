"""``minddata convert`` and ``minddata bench`` with ``--executor ray``, on the tests' Ray cluster."""

from __future__ import annotations

import json

import pytest
from ray_cluster import ray_cluster  # noqa: F401 - the session's cluster

import minddata as md
from minddata.bench import images
from minddata.cli import main

# Ray Data copies its context, touching its own deprecated fields: not this project's warnings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")


@pytest.fixture(scope="module")
def tiny_images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny")
    images.generate(folder, num_images=6, num_classes=2, seed=3, size=(48, 40))
    return folder


def _records(path):
    ds = md.MindDataset(str(path), shuffle=False)
    return [(str(r["file_name"]), int(r["label"]), r["image"].tobytes())
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def test_convert_on_ray_writes_the_same_records(tiny_images, tmp_path, capsys):
    assert main(["convert", str(tiny_images), str(tmp_path / "local.mindrecord"), "-q"]) == 0
    assert main(["convert", str(tiny_images), str(tmp_path / "ray.mindrecord"), "-q", "--executor", "ray"]) == 0
    assert "wrote 6 images" in capsys.readouterr().out
    assert _records(tmp_path / "ray.mindrecord") == _records(tmp_path / "local.mindrecord")


def test_bench_train_pipeline_on_ray(tiny_images, tmp_path, capsys):
    out_json = tmp_path / "r.json"
    rc = main(["bench", "--data", str(tiny_images), "--pipeline", "train", "--batch-size", "3",
               "--executor", "ray", "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "ray executor" in out
    payload = json.loads(out_json.read_text())
    assert payload["settings"]["executor"] == "ray"
    (result,) = payload["results"]
    assert (result["images"], result["output_shape"]) == (6, [3, 3, 224, 224])
