"""Evaluation metrics with ``mindspore.train``'s names and protocol: ``clear()``, ``update(*inputs)``,
``eval()``.

Metrics compute on NumPy, so they work with any engine (``Model`` over torch, ``OnnxModel`` over ONNX
Runtime); torch tensors are accepted and brought to the host. ``Model.eval`` calls
``update(prediction, label)``, except on :class:`Loss`, which gets ``update(loss)`` (as MindSpore).

Examples:
    >>> import numpy as np
    >>> from minddata.trainer import Accuracy
    >>> metric = Accuracy()
    >>> metric.update(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([1, 1]))
    >>> metric.eval()
    0.5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from minddata.errors import ArgumentError

__all__ = [
    "Accuracy",
    "ConfusionMatrix",
    "F1",
    "Fbeta",
    "Loss",
    "MAE",
    "MSE",
    "Metric",
    "Precision",
    "Recall",
    "Top1CategoricalAccuracy",
    "Top5CategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "get_metric",
    "get_metrics",
]


def to_numpy(value: Any) -> np.ndarray:
    """A host NumPy array from a NumPy array, a torch tensor (any device), a list or a scalar."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # torch.Tensor, without importing torch
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return np.asarray(value)


class Metric:
    """Base class: subclasses define ``clear``, ``update`` and ``eval``. ``clear()`` runs at creation."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def update(self, *inputs: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def eval(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def name(self) -> str:
        return type(self).__name__

    def _inputs(self, inputs: tuple, count: int) -> list[np.ndarray]:
        if len(inputs) != count:
            raise ArgumentError(
                f"{self.name}.update takes {count} inputs ({'prediction, label' if count == 2 else 'loss'}). "
                f"Found: {len(inputs)}"
            )
        return [to_numpy(x) for x in inputs]

    def _need_samples(self, count: int) -> None:
        if count == 0:
            raise RuntimeError(f"{self.name}.eval: no samples yet; call update(...) with at least one batch first")


def _class_labels(y_pred: np.ndarray, y: np.ndarray, who: str) -> tuple[np.ndarray, np.ndarray]:
    """(predicted class, true class) per sample: logits/probabilities (N, C) and labels (N,) or one-hot
    (N, C); a 1-D prediction is a binary probability (threshold 0.5)."""
    if y_pred.ndim == 1:
        predicted = (y_pred >= 0.5).astype(np.int64)
    else:
        predicted = y_pred.reshape(-1, y_pred.shape[-1]).argmax(axis=-1)
    if y.ndim == y_pred.ndim and y.ndim > 1 and y.shape[-1] == y_pred.shape[-1]:
        truth = y.reshape(-1, y.shape[-1]).argmax(axis=-1)  # one-hot labels
    else:
        truth = y.reshape(-1).astype(np.int64)
    if predicted.shape[0] != truth.shape[0]:
        raise ArgumentError(
            f"{who}.update: predictions and labels must have the same number of samples. "
            f"Found: prediction shape {tuple(y_pred.shape)}, label shape {tuple(y.shape)}"
        )
    return predicted, truth


class _ShareOfSamples(Metric):
    """A metric that is the share of samples judged right: subclasses count them in ``update``."""

    def clear(self) -> None:
        self._correct = 0
        self._total = 0

    def _count(self, right: Any) -> None:
        self._correct += int(np.sum(right))
        self._total += int(np.asarray(right).shape[0])

    def eval(self) -> float:
        self._need_samples(self._total)
        return self._correct / self._total


class Accuracy(_ShareOfSamples):
    """Share of samples whose predicted class is the label. ``eval_type="multilabel"`` rounds each
    output and counts a sample as right only when every label matches."""

    def __init__(self, eval_type: str = "classification") -> None:
        if eval_type not in ("classification", "multilabel"):
            raise ArgumentError(f"Accuracy: `eval_type` must be 'classification' or 'multilabel'. Found: {eval_type!r}")
        self.eval_type = eval_type
        super().__init__()

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        if self.eval_type == "multilabel":
            right = np.all(np.round(y_pred) == y.reshape(y_pred.shape), axis=tuple(range(1, y_pred.ndim)))
        else:
            predicted, truth = _class_labels(y_pred, y, self.name)
            right = predicted == truth
        self._count(right)


class TopKCategoricalAccuracy(_ShareOfSamples):
    """Share of samples whose label is among the ``k`` highest scores."""

    def __init__(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ArgumentError(f"TopKCategoricalAccuracy: `k` must be an int of 1 or more. Found: {k!r}")
        self.k = k
        super().__init__()

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        scores = y_pred.reshape(-1, y_pred.shape[-1])
        truth = y.reshape(-1, y.shape[-1]).argmax(-1) if y.ndim == y_pred.ndim and y.ndim > 1 else y.reshape(-1)
        truth = truth.astype(np.int64)
        # A label is in the top k when fewer than k classes score strictly higher (ties favour the label).
        higher = (scores > scores[np.arange(len(truth)), truth][:, None]).sum(axis=1)
        self._count(higher < self.k)


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self) -> None:
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self) -> None:
        super().__init__(5)


class Loss(Metric):
    """Mean of the per-batch losses (each batch's loss averaged first, as MindSpore)."""

    def clear(self) -> None:
        self._sum = 0.0
        self._count = 0

    def update(self, *inputs: Any) -> None:
        (loss,) = self._inputs(inputs, 1)
        if loss.ndim > 1:
            raise ArgumentError(f"Loss.update: the loss must be a scalar or 1-D. Found: shape {tuple(loss.shape)}")
        self._sum += float(np.mean(loss))
        self._count += 1

    def eval(self) -> float:
        self._need_samples(self._count)
        return self._sum / self._count


class _ErrorMetric(Metric):
    def clear(self) -> None:
        self._error_sum = 0.0
        self._samples = 0

    def _error(self, difference: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        if y.size != y_pred.size:
            raise ArgumentError(
                f"{self.name}.update: prediction and label must have the same number of values. "
                f"Found: shapes {tuple(y_pred.shape)} and {tuple(y.shape)}"
            )
        difference = y.reshape(y_pred.shape).astype(np.float64) - y_pred.astype(np.float64)
        self._error_sum += float(self._error(difference).sum())
        self._samples += int(y_pred.shape[0]) if y_pred.ndim else 1

    def eval(self) -> float:
        self._need_samples(self._samples)
        return self._error_sum / self._samples


class MAE(_ErrorMetric):
    """Mean absolute error: the sum of absolute errors over samples' values, per sample (MindSpore's
    definition; for one value per sample it is the usual mean)."""

    def _error(self, difference: np.ndarray) -> np.ndarray:
        return np.abs(difference)


class MSE(_ErrorMetric):
    """Mean squared error, per sample as :class:`MAE`."""

    def _error(self, difference: np.ndarray) -> np.ndarray:
        return difference**2


class _PerClassCounts(Metric):
    """True positives, predicted positives and actual positives per class."""

    def __init__(self, eval_type: str = "classification") -> None:
        if eval_type not in ("classification", "multilabel"):
            raise ArgumentError(f"{self.name}: `eval_type` must be 'classification' or 'multilabel'. Found: {eval_type!r}")
        self.eval_type = eval_type
        super().__init__()

    def clear(self) -> None:
        self._true_positive = np.zeros(0)
        self._predicted = np.zeros(0)
        self._actual = np.zeros(0)
        self._samples = 0

    def _grow(self, classes: int) -> None:
        if classes > self._true_positive.shape[0]:
            pad = classes - self._true_positive.shape[0]
            self._true_positive, self._predicted, self._actual = (
                np.concatenate([a, np.zeros(pad)]) for a in (self._true_positive, self._predicted, self._actual)
            )

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        if self.eval_type == "multilabel":
            predicted = np.round(y_pred).reshape(-1, y_pred.shape[-1]).astype(bool)
            truth = y.reshape(predicted.shape).astype(bool)
        else:
            classes = y_pred.shape[-1] if y_pred.ndim > 1 else 2
            labels_predicted, labels_true = _class_labels(y_pred, y, self.name)
            classes = max(classes, int(labels_true.max(initial=-1)) + 1)
            predicted = np.eye(classes, dtype=bool)[labels_predicted]
            truth = np.eye(classes, dtype=bool)[labels_true]
        self._grow(predicted.shape[1])
        width = predicted.shape[1]
        self._true_positive[:width] += (predicted & truth).sum(0)
        self._predicted[:width] += predicted.sum(0)
        self._actual[:width] += truth.sum(0)
        self._samples += predicted.shape[0]

    @staticmethod
    def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)

    def _per_class(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def eval(self, average: bool = False) -> np.ndarray | float:
        """Per class (an array), or their mean with ``average=True``."""
        self._need_samples(self._samples)
        values = self._per_class()
        return float(values.mean()) if average else values


class Precision(_PerClassCounts):
    """Per class: true positives over predicted positives (0 where a class was never predicted)."""

    def _per_class(self) -> np.ndarray:
        return self._ratio(self._true_positive, self._predicted)


class Recall(_PerClassCounts):
    """Per class: true positives over actual positives (0 where a class never occurred)."""

    def _per_class(self) -> np.ndarray:
        return self._ratio(self._true_positive, self._actual)


class Fbeta(_PerClassCounts):
    """Per class F-beta score: ``(1 + b²)·P·R / (b²·P + R)``."""

    def __init__(self, beta: float, eval_type: str = "classification") -> None:
        if not beta > 0:
            raise ArgumentError(f"Fbeta: `beta` must be greater than 0. Found: {beta!r}")
        self.beta = float(beta)
        super().__init__(eval_type)

    def _per_class(self) -> np.ndarray:
        b2 = self.beta**2
        return self._ratio((1 + b2) * self._true_positive, b2 * self._actual + self._predicted)


class F1(Fbeta):
    """F-beta with beta 1: the harmonic mean of precision and recall, per class."""

    def __init__(self, eval_type: str = "classification") -> None:
        super().__init__(1.0, eval_type)


class ConfusionMatrix(Metric):
    """``num_classes`` x ``num_classes`` counts, rows the true class and columns the predicted one.
    ``normalize``: ``"no_norm"``, ``"target"`` (rows sum to 1), ``"prediction"`` (columns) or ``"all"``.
    ``threshold`` turns 1-D scores into classes 0/1."""

    def __init__(self, num_classes: int, normalize: str = "no_norm", threshold: float = 0.5) -> None:
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
            raise ArgumentError(f"ConfusionMatrix: `num_classes` must be an int of 1 or more. Found: {num_classes!r}")
        if normalize not in ("no_norm", "target", "prediction", "all"):
            raise ArgumentError(
                f"ConfusionMatrix: `normalize` must be 'no_norm', 'target', 'prediction' or 'all'. Found: {normalize!r}"
            )
        self.num_classes = num_classes
        self.normalize = normalize
        self.threshold = threshold
        super().__init__()

    def clear(self) -> None:
        self._matrix = np.zeros((self.num_classes, self.num_classes), dtype=np.int64)

    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        if y_pred.ndim == 1 and y_pred.dtype.kind == "f":
            y_pred = (y_pred >= self.threshold).astype(np.int64)
        predicted = y_pred.reshape(-1, y_pred.shape[-1]).argmax(-1) if y_pred.ndim > 1 else y_pred.astype(np.int64)
        truth = y.reshape(-1).astype(np.int64)
        bad = (truth < 0) | (truth >= self.num_classes) | (predicted < 0) | (predicted >= self.num_classes)
        if bad.any():
            raise ArgumentError(
                f"ConfusionMatrix.update: classes must be in [0, {self.num_classes}). "
                f"Found: label {int(truth[bad][0])}, prediction {int(predicted[bad][0])}"
            )
        np.add.at(self._matrix, (truth, predicted), 1)

    def eval(self) -> np.ndarray:
        matrix = self._matrix.astype(np.float64)
        if self.normalize == "no_norm":
            return self._matrix.copy()
        if self.normalize == "all":
            total = matrix.sum()
            return matrix / total if total else matrix
        axis = 1 if self.normalize == "target" else 0
        sums = matrix.sum(axis=axis, keepdims=True)
        return np.divide(matrix, sums, out=np.zeros_like(matrix), where=sums > 0)


_BY_NAME = {
    "accuracy": Accuracy,
    "acc": Accuracy,
    "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy,
    "loss": Loss,
    "mae": MAE,
    "mse": MSE,
    "precision": Precision,
    "recall": Recall,
    "f1": F1,
}


def get_metric(name: str) -> Metric:
    """A new metric by its ``mindspore.train`` name (``"accuracy"``, ``"loss"``, ``"mae"``, ...)."""
    try:
        return _BY_NAME[name.lower()]()
    except (KeyError, AttributeError):
        raise ArgumentError(
            f"unknown metric name {name!r}; known: {', '.join(sorted(_BY_NAME))}, or pass a Metric instance"
        ) from None


def get_metrics(metrics: Any) -> dict[str, Metric]:
    """``{name: Metric}`` from ``None``, a name, a Metric, a set/list of either, or a ``{name: Metric}``."""
    if metrics is None:
        return {}
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
    elif isinstance(metrics, Iterable):
        items = [(m, m) if isinstance(m, str) else (_metric_key(m), m) for m in metrics]
    else:
        raise ArgumentError(f"`metrics` must be names, Metric instances or a dict of them. Found: {metrics!r}")
    out: dict[str, Metric] = {}
    for key, metric in items:
        if isinstance(metric, str):
            metric = get_metric(metric)
        if not isinstance(metric, Metric):
            raise ArgumentError(f"metric {key!r} must be a Metric (clear/update/eval). Found: {metric!r}")
        out[str(key)] = metric
    return out


def _metric_key(metric: Any) -> str:
    for name, cls in _BY_NAME.items():
        if type(metric) is cls:
            return name
    return type(metric).__name__
