"""Metrics: mindspore.train names, clear/update/eval, against NumPy and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minddata.errors import ArgumentError
from minddata.trainer import (
    F1,
    MAE,
    MSE,
    Accuracy,
    ConfusionMatrix,
    Loss,
    Precision,
    Recall,
    TopKCategoricalAccuracy,
    get_metrics,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed")


@st.composite
def predictions(draw):
    n = draw(st.integers(1, 40))
    classes = draw(st.integers(2, 6))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, classes)), rng.integers(0, classes, size=n), classes


@settings(max_examples=40, deadline=None)
@given(predictions(), st.integers(1, 3))
def test_classification_metrics_match_sklearn_over_any_split_into_batches(data, parts):
    logits, labels, classes = data
    metrics = [Accuracy(), Precision(), Recall(), F1(), ConfusionMatrix(classes)]
    for chunk in np.array_split(np.arange(len(labels)), parts):
        for m in metrics:
            m.update(logits[chunk], labels[chunk])
    predicted = logits.argmax(1)
    every = list(range(classes))
    assert metrics[0].eval() == pytest.approx(sklearn_metrics.accuracy_score(labels, predicted))
    for metric, fn in ((metrics[1], sklearn_metrics.precision_score), (metrics[2], sklearn_metrics.recall_score),
                       (metrics[3], sklearn_metrics.f1_score)):
        want = fn(labels, predicted, labels=every, average=None, zero_division=0)
        np.testing.assert_allclose(metric.eval()[: classes], want, atol=1e-12)
    np.testing.assert_array_equal(metrics[4].eval(), sklearn_metrics.confusion_matrix(labels, predicted, labels=every))


def test_top_k_counts_a_label_among_the_k_best():
    metric = TopKCategoricalAccuracy(2)
    metric.update(np.array([[0.1, 0.5, 0.4], [0.6, 0.3, 0.1]]), np.array([2, 2]))
    assert metric.eval() == 0.5


def test_one_hot_labels_are_accepted():
    metric = Accuracy()
    metric.update(np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([[1, 0], [1, 0]]))
    assert metric.eval() == 0.5


def test_loss_mae_mse():
    loss = Loss()
    loss.update(np.array(2.0))
    loss.update(np.array([1.0, 3.0]))
    assert loss.eval() == 2.0
    mae, mse = MAE(), MSE()
    for m in (mae, mse):
        m.update(np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0]))
    assert mae.eval() == pytest.approx(1.0) and mse.eval() == pytest.approx(5 / 3)


def test_eval_before_update_and_bad_inputs_say_what_to_do():
    with pytest.raises(RuntimeError, match="no samples yet"):
        Accuracy().eval()
    with pytest.raises(ArgumentError, match="takes 2 inputs"):
        Accuracy().update(np.zeros((2, 2)))
    with pytest.raises(ArgumentError, match=r"classes must be in \[0, 2\)"):
        ConfusionMatrix(2).update(np.zeros((1, 3)) + [0, 0, 1], np.array([0]))


def test_names_resolve_as_in_mindspore():
    metrics = get_metrics({"accuracy", "loss", "mae"})
    assert {type(m).__name__ for m in metrics.values()} == {"Accuracy", "Loss", "MAE"}
    with pytest.raises(ArgumentError, match="unknown metric name 'acuracy'"):
        get_metrics("acuracy")


def test_torch_tensors_are_accepted():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    metric = Accuracy()
    metric.update(torch.tensor([[0.2, 0.8]]), torch.tensor([1]))
    assert metric.eval() == 1.0
