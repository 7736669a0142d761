"""OnnxModel: metadata, predict on arrays and datasets, eval with metrics, threads, errors."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from onnx_graphs import linear_classifier, two_inputs_two_outputs

import minddata as md
from minddata.errors import ArgumentError
from minddata.trainer import Accuracy, ColumnMismatchError, OnnxModel

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def linear(tmp_path):
    rng = np.random.default_rng(0)
    weight, bias = rng.normal(size=(5, 3)), rng.normal(size=3)
    return OnnxModel(linear_classifier(tmp_path / "linear.onnx", weight, bias)), weight.astype(np.float32), bias.astype(
        np.float32
    )


def test_metadata_names_dtypes_datatypes_and_dynamic_dims(tmp_path):
    model = OnnxModel(two_inputs_two_outputs(tmp_path / "two.onnx"))
    assert [(i.name, i.dtype, i.datatype, i.shape) for i in model.inputs] == [
        ("a", np.dtype(np.float32), "FP32", (-1, 4)),
        ("b", np.dtype(np.float32), "FP32", (-1, 4)),
        ("ids", np.dtype(np.int64), "INT64", (-1,)),
    ]
    assert [(o.name, o.datatype, o.shape) for o in model.outputs] == [("sum", "FP32", (-1, 4)), ("doubled", "INT64", (-1,))]
    assert "CPUExecutionProvider" in model.providers


def test_predict_one_output_returns_an_array(linear):
    model, weight, bias = linear
    x = np.random.default_rng(1).normal(size=(7, 5)).astype(np.float32)
    out = model.predict(x)
    assert isinstance(out, np.ndarray) and out.shape == (7, 3)
    np.testing.assert_allclose(out, x @ weight + bias, rtol=1e-5, atol=1e-5)


def test_predict_several_outputs_returns_a_tuple(tmp_path):
    model = OnnxModel(two_inputs_two_outputs(tmp_path / "two.onnx"))
    a = np.ones((2, 4), np.float32)
    total, doubled = model.predict(a, a * 3, np.array([5, 7]))
    np.testing.assert_array_equal(total, np.full((2, 4), 4.0, np.float32))
    np.testing.assert_array_equal(doubled, [10, 14])


def test_predict_accepts_torch_tensors_and_casts_integers_to_float(linear):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    model, weight, bias = linear
    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    np.testing.assert_allclose(model.predict(torch.from_numpy(x)), x @ weight + bias, rtol=1e-5)


def test_predict_rejects_a_lossy_cast_naming_the_input(tmp_path):
    model = OnnxModel(two_inputs_two_outputs(tmp_path / "two.onnx"))
    a = np.ones((1, 4), np.float32)
    with pytest.raises(ArgumentError, match=r"input 'ids' must be INT64 \(int64\)\. Found: float32"):
        model.predict(a, a, np.array([1.5], np.float32))


def test_predict_rejects_a_wrong_fixed_dimension(linear):
    model, _, _ = linear
    with pytest.raises(ArgumentError, match=r"input 'x' must have shape \[\?, 5\].*Found: \[2, 4\]"):
        model.predict(np.zeros((2, 4), np.float32))


def test_predict_counts_inputs(linear):
    model, _, _ = linear
    with pytest.raises(ArgumentError, match=r"takes 1 input\(s\) \['x'\]\. Found: 2"):
        model.predict(np.zeros((1, 5)), np.zeros((1, 5)))


def _dataset(x: np.ndarray, y: np.ndarray, batch: int):
    return md.NumpySlicesDataset({"features": x, "label": y}, shuffle=False).batch(batch)


def test_predict_dataset_streams_one_output_per_batch_leaving_the_label_out(linear):
    model, weight, bias = linear
    x = np.random.default_rng(2).normal(size=(10, 5)).astype(np.float32)
    stream = model.predict(_dataset(x, np.zeros(10, np.int32), batch=4))
    assert not isinstance(stream, (list, tuple))  # a lazy iterator, not a collected list
    outs = list(stream)
    assert [o.shape for o in outs] == [(4, 3), (4, 3), (2, 3)]
    np.testing.assert_allclose(np.concatenate(outs), x @ weight + bias, rtol=1e-5, atol=1e-5)


def test_predict_dataset_maps_columns_by_the_model_input_names(tmp_path):
    model = OnnxModel(two_inputs_two_outputs(tmp_path / "two.onnx"))
    rows = {"ids": np.arange(6), "b": np.ones((6, 4), np.float32), "a": np.zeros((6, 4), np.float32)}
    (total, doubled), = list(model.predict(md.NumpySlicesDataset(rows, shuffle=False).batch(6)))
    np.testing.assert_array_equal(doubled, np.arange(6) * 2)
    np.testing.assert_array_equal(total, np.ones((6, 4)))


def test_predict_dataset_unbatched_rows_become_batches_of_one(linear):
    model, weight, bias = linear
    x = np.random.default_rng(3).normal(size=(3, 5)).astype(np.float32)
    outs = list(model.predict(md.NumpySlicesDataset({"x": x}, shuffle=False)))
    assert [o.shape for o in outs] == [(1, 3)] * 3


def test_eval_accuracy_matches_numpy(linear):
    model, weight, bias = linear
    rng = np.random.default_rng(4)
    x = rng.normal(size=(50, 5)).astype(np.float32)
    y = rng.integers(0, 3, size=50).astype(np.int32)
    expected = float(np.mean((x @ weight + bias).argmax(1) == y))
    assert model.eval(_dataset(x, y, batch=8), metrics={"accuracy"}) == {"accuracy": pytest.approx(expected)}
    assert model.eval(_dataset(x, y, batch=8), metrics={"acc": Accuracy()})["acc"] == pytest.approx(expected)


def test_eval_with_a_loss_metric_says_to_use_model(linear):
    model, _, _ = linear
    ds = _dataset(np.zeros((2, 5), np.float32), np.zeros(2, np.int32), 2)
    with pytest.raises(ArgumentError, match="needs a loss function"):
        model.eval(ds, metrics={"loss"})


def test_dataset_that_does_not_fit_names_columns_and_inputs(tmp_path):
    model = OnnxModel(two_inputs_two_outputs(tmp_path / "two.onnx"))
    ds = md.NumpySlicesDataset({"p": np.zeros((2, 4), np.float32)}, shuffle=False)
    with pytest.raises(ColumnMismatchError, match=r"columns \['p'\] do not fit ONNX model two\.onnx\(a, b, ids\)"):
        list(model.predict(ds))


def test_concurrent_predict_from_threads_on_one_session(linear):
    model, weight, bias = linear
    rng = np.random.default_rng(5)
    batches = [rng.normal(size=(16, 5)).astype(np.float32) for _ in range(8)]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(20):
                results[i] = model.predict(batches[i])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)
    for i, x in enumerate(batches):
        np.testing.assert_allclose(results[i], x @ weight + bias, rtol=1e-5, atol=1e-5)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no ONNX model file"):
        OnnxModel(tmp_path / "absent.onnx")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_importing_the_trainer_loads_neither_torch_nor_onnxruntime():
    done = _run(
        "import sys, minddata.trainer as t; t.Accuracy; t.ColumnMismatchError\n"
        "print(sorted(m for m in ('torch', 'onnxruntime') if m in sys.modules))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_missing_onnxruntime_names_the_extra(tmp_path):
    path = linear_classifier(tmp_path / "m.onnx", np.ones((2, 2)), np.zeros(2))
    done = _run(
        "import sys; sys.modules['onnxruntime'] = None\n"
        "from minddata.trainer import OnnxModel\n"
        f"try:\n    OnnxModel({path!r})\nexcept ImportError as e:\n    print(e)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'minddata[infer]'" in done.stdout
