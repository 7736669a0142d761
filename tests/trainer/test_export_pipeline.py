"""``Model.export_onnx(..., pipeline=)`` and ``export_torchscript``: the evaluation pipeline, its digest,
the pixel-defining versions, reference images and golden outputs go into the model file."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from paritykit import eval_dataset, eval_ops, image_folder, trained_model  # noqa: E402
from PIL import Image  # noqa: E402

import minddata as md  # noqa: E402
from minddata import vision  # noqa: E402
from minddata._parity import (  # noqa: E402
    CARD_KEY,
    GOLDEN_KEY,
    check_golden,
    digest_array,
    digest_ops,
    op_entry,
    read_card,
    run_ops,
)
from minddata.errors import ArgumentError  # noqa: E402
from minddata.trainer import OnnxModel  # noqa: E402


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = image_folder(str(tmp_path_factory.mktemp("images")))
    model = trained_model(root)
    folder = tmp_path_factory.mktemp("export")
    onnx_path = model.export_onnx(folder / "net.onnx", eval_dataset(root), pipeline=eval_dataset(root))
    ts_path = model.export_torchscript(folder / "net.pt", eval_dataset(root), pipeline=eval_dataset(root))
    return model, root, onnx_path, ts_path


def test_onnx_metadata_holds_the_ops_after_the_source_and_their_digest(exported):
    _, _, path, _ = exported
    metadata = OnnxModel(path).metadata
    assert CARD_KEY in metadata and GOLDEN_KEY in metadata
    card = read_card(path)
    assert card.op_names() == ["Decode", "Resize", "CenterCrop", "Normalize", "HWC2CHW"]
    assert card.ops == [op_entry(op) for op in eval_ops()]
    assert card.digest == digest_ops(card.ops) and card.stored_digest_ok
    assert card.column == "image"


def test_card_names_the_versions_that_define_the_pixels(exported):
    card = read_card(exported[2])
    assert card.versions["minddata"] == md.__version__
    assert {"OpenCV"} <= set(card.versions) and ({"libjpeg-turbo"} & set(card.versions) or {"libjpeg"} & set(card.versions))


def test_reference_images_are_small_jpegs_stored_in_the_file(exported):
    card = read_card(exported[2])
    assert len(card.images) == 3
    for data in card.images:
        image = Image.open(io.BytesIO(data))
        assert image.format == "JPEG" and max(image.size) <= 64


def test_golden_pipeline_digests_are_the_pipelines_output_on_the_reference_images(exported):
    card = read_card(exported[2])
    outputs = run_ops(eval_ops(), [np.frombuffer(b, np.uint8) for b in card.images])
    assert [digest_array(o) for o in outputs] == card.golden["pipeline"]


def test_golden_model_digests_are_onnx_runtimes_outputs(exported):
    _, _, path, _ = exported
    card = read_card(path)
    model = OnnxModel(path)
    outputs = run_ops(eval_ops(), [np.frombuffer(b, np.uint8) for b in card.images])
    assert [[digest_array(model.predict(o[None]))] for o in outputs] == card.golden["model"]


def test_each_ops_output_is_stored_to_name_a_drifting_op(exported):
    card = read_card(exported[2])
    decoded = vision.Decode()(card.images[0])
    np.testing.assert_array_equal(card.arrays["op0_0"], decoded)
    np.testing.assert_array_equal(card.arrays["op1_0"], vision.Resize((20, 20))(decoded))
    assert card.arrays["op4_0"].shape == (3, 16, 16) and card.arrays["op4_0"].dtype == np.float16


@pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")
def test_torchscript_export_carries_the_same_pipeline_in_extra_files(exported):
    import torch

    _, _, onnx_path, ts_path = exported
    extra = {CARD_KEY: "", GOLDEN_KEY: ""}
    torch.jit.load(ts_path, _extra_files=extra)
    assert extra[CARD_KEY] and extra[GOLDEN_KEY]
    assert read_card(ts_path).digest == read_card(onnx_path).digest


def test_the_golden_check_is_exact_on_the_exporting_machine(exported):
    _, _, path, _ = exported
    card = read_card(path)
    model = OnnxModel(path)
    ops = card.build_ops()
    report = check_golden(card, ops, lambda b: run_ops(ops, [np.frombuffer(b, np.uint8)])[0],
                          lambda x: [model.predict(x)])
    assert report.status == "exact", report.message()
    assert all(c.max_difference == 0 for c in report.ops)


@pytest.mark.parametrize("moved, status", [(1, "within_tolerance"), (5, "drift")])
def test_a_moved_pixel_is_pinned_on_its_op_and_judged_by_its_tolerance(exported, moved, status):
    card = read_card(exported[2])
    resized = card.arrays["op1_1"].copy()
    # As if the exporting machine's resize had put one pixel of reference image 1 elsewhere: a corner
    # pixel, which CenterCrop(16) cuts away, so that only Resize differs.
    resized[0, 0, 0] = resized[0, 0, 0] + moved if resized[0, 0, 0] < 128 else resized[0, 0, 0] - moved
    card.arrays["op1_1"] = resized
    ops = card.build_ops()
    report = check_golden(card, ops, lambda b: run_ops(ops, [np.frombuffer(b, np.uint8)])[0], None)
    assert report.status == status
    assert [(c.op, c.max_difference, c.image) for c in report.ops if c.max_difference] == [("Resize", moved, 1)]
    if status == "drift":
        assert "op 1 Resize differs from its exported outputs by up to 5" in report.message()


def test_a_random_op_in_the_pipeline_is_refused_naming_it(exported, tmp_path):
    model, root, _, _ = exported
    ds = md.ImageFolderDataset(root, shuffle=False).map(
        [vision.Decode(), vision.RandomHorizontalFlip(), vision.Resize((16, 16)), vision.HWC2CHW()],
        input_columns="image").batch(4)
    with pytest.raises(ArgumentError, match="RandomHorizontalFlip is random"):
        model.export_onnx(tmp_path / "x.onnx", eval_dataset(root), pipeline=ds)


def test_python_code_in_the_pipeline_is_refused(exported, tmp_path):
    model, root, _, _ = exported
    ds = md.ImageFolderDataset(root, shuffle=False).map(
        [vision.Decode(), lambda x: x, vision.Resize((16, 16)), vision.HWC2CHW()], input_columns="image").batch(4)
    with pytest.raises(ArgumentError, match="Python code"):
        model.export_onnx(tmp_path / "x.onnx", eval_dataset(root), pipeline=ds)
