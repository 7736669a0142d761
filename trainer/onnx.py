"""``OnnxModel``: an ONNX model run by ONNX Runtime behind ``Model``'s ``predict``/``eval`` API.

One ``InferenceSession`` serves every caller: ONNX Runtime allows concurrent ``run`` calls on a
session, so ``predict`` is thread-safe without a lock (the inference service calls it from many
request threads).

Examples:
    >>> import numpy as np, onnx, tempfile, os
    >>> from onnx import helper, TensorProto
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Relu", ["x"], ["y"])], "relu",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
    >>> path = os.path.join(tempfile.mkdtemp(), "relu.onnx")
    >>> onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    >>> from minddata.trainer import OnnxModel
    >>> model = OnnxModel(path)
    >>> model.inputs[0]
    TensorInfo(name='x', dtype=dtype('float32'), datatype='FP32', shape=(-1, 3))
    >>> model.predict(np.array([[-1.0, 0.0, 2.0]], dtype=np.float32))
    array([[0., 0., 2.]], dtype=float32)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.trainer.columns import ColumnMap, Signature, map_columns
from minddata.trainer.metrics import Metric, get_metrics, to_numpy

__all__ = ["OnnxModel", "TensorInfo", "ORT_TYPES", "embed_pipeline"]

INSTALL_HINT = "pip install 'minddata[infer]'"

# ONNX Runtime's type string -> (NumPy dtype, Open Inference Protocol datatype).
ORT_TYPES: dict[str, tuple[np.dtype, str]] = {
    "tensor(float)": (np.dtype(np.float32), "FP32"),
    "tensor(float16)": (np.dtype(np.float16), "FP16"),
    "tensor(double)": (np.dtype(np.float64), "FP64"),
    "tensor(int8)": (np.dtype(np.int8), "INT8"),
    "tensor(int16)": (np.dtype(np.int16), "INT16"),
    "tensor(int32)": (np.dtype(np.int32), "INT32"),
    "tensor(int64)": (np.dtype(np.int64), "INT64"),
    "tensor(uint8)": (np.dtype(np.uint8), "UINT8"),
    "tensor(uint16)": (np.dtype(np.uint16), "UINT16"),
    "tensor(uint32)": (np.dtype(np.uint32), "UINT32"),
    "tensor(uint64)": (np.dtype(np.uint64), "UINT64"),
    "tensor(bool)": (np.dtype(np.bool_), "BOOL"),
    "tensor(string)": (np.dtype(object), "BYTES"),
}


def import_onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise ImportError(f"OnnxModel needs ONNX Runtime, which is not installed: {INSTALL_HINT}") from exc
    return onnxruntime


@dataclass(frozen=True)
class TensorInfo:
    """One input or output of the model. ``shape`` has -1 for a dynamic (named or unknown) dimension,
    as the Open Inference Protocol's metadata does; ``datatype`` is the protocol's name (``"FP32"``)."""

    name: str
    dtype: np.dtype
    datatype: str
    shape: tuple[int, ...]

    @classmethod
    def of_node(cls, node: Any) -> TensorInfo:
        if node.type not in ORT_TYPES:
            raise ArgumentError(
                f"OnnxModel: tensor {node.name!r} has type {node.type}, which minddata does not map to NumPy; "
                f"supported: {', '.join(sorted(ORT_TYPES))}"
            )
        dtype, datatype = ORT_TYPES[node.type]
        shape = tuple(d if isinstance(d, int) and d >= 0 else -1 for d in (node.shape or []))
        return cls(node.name, dtype, datatype, shape)

    def shape_text(self) -> str:
        return "[" + ", ".join("?" if d < 0 else str(d) for d in self.shape) + "]"


class OnnxModel:
    """Runs an ONNX model file on ONNX Runtime.

    ``providers``: ONNX Runtime execution providers in order of preference (default: CUDA when this
    onnxruntime build has it, then CPU). ``input_columns``/``label_columns`` say which dataset
    columns feed the model in ``predict(dataset)``/``eval``; by default columns named like the
    model's inputs go by name, otherwise the last column is the label and the others are inputs.
    ``metrics`` are ``eval``'s defaults (names or :class:`~minddata.trainer.Metric` objects).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        providers: Sequence[Any] | None = None,
        *,
        metrics: Any = None,
        input_columns: str | Sequence[str] | None = None,
        label_columns: str | Sequence[str] | None = None,
        session_options: Any = None,
    ) -> None:
        ort = import_onnxruntime()
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"OnnxModel: no ONNX model file at {path!r}")
        if providers is None:
            available = ort.get_available_providers()
            providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available] or available
        try:
            self._session = ort.InferenceSession(path, sess_options=session_options, providers=list(providers))
        except Exception as exc:
            raise ArgumentError(f"OnnxModel: ONNX Runtime could not load {path!r}: {exc}") from exc
        self.path = path
        self.inputs: list[TensorInfo] = [TensorInfo.of_node(n) for n in self._session.get_inputs()]
        self.outputs: list[TensorInfo] = [TensorInfo.of_node(n) for n in self._session.get_outputs()]
        self._output_names = [o.name for o in self.outputs]
        self._metrics = metrics
        self._input_columns = input_columns
        self._label_columns = label_columns
        self.signature = Signature(
            f"ONNX model {os.path.basename(path)}", tuple(i.name for i in self.inputs), len(self.inputs)
        )

    @property
    def metadata(self) -> dict[str, str]:
        """The file's ``metadata_props`` (an embedded pipeline is there: docs/parity.md)."""
        return dict(self._session.get_modelmeta().custom_metadata_map)

    @property
    def providers(self) -> list[str]:
        """The execution providers the session actually uses."""
        return self._session.get_providers()

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.datatype}{i.shape_text()}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.datatype}{o.shape_text()}" for o in self.outputs)
        return f"OnnxModel({self.path!r}, inputs=({ins}), outputs=({outs}))"

    # -- inference ----------------------------------------------------------------------------

    def predict(self, *inputs: Any) -> Any:
        """Outputs for one batch of inputs (NumPy arrays or torch tensors, in the model's input order):
        one array for a one-output model, else a tuple. With a dataset as the only argument, an
        iterator over the outputs of each of its batches (streamed: one batch in flight at a time).

        Inputs are cast to the model's dtype when that loses nothing of their kind (int → float,
        float64 → float32); other mismatches, a wrong rank or a wrong fixed dimension raise, naming
        the input.
        """
        if len(inputs) == 1 and _is_dataset(inputs[0]):
            return self._predict_dataset(inputs[0])
        if len(inputs) != len(self.inputs):
            names = [i.name for i in self.inputs]
            raise ArgumentError(
                f"OnnxModel.predict: the model takes {len(self.inputs)} input(s) {names}. Found: {len(inputs)}"
            )
        feed = {info.name: _checked_input(info, value) for info, value in zip(self.inputs, inputs)}
        results = self._session.run(self._output_names, feed)
        return results[0] if len(results) == 1 else tuple(results)

    __call__ = predict

    def _columns(self, dataset: Any, labels: str) -> ColumnMap:
        return map_columns(
            dataset.get_col_names(),
            self.signature,
            input_columns=self._input_columns,
            label_columns=self._label_columns,
            labels=labels,
            where="OnnxModel",
        )

    def _batches(self, dataset: Any, labels: str) -> Iterator[tuple[list[Any], list[Any]]]:
        columns = dataset.get_col_names()
        inputs, label_idx = self._columns(dataset, labels).indices(columns)
        iterator = dataset.create_tuple_iterator(num_epochs=1, output_numpy=True)
        try:
            for row in iterator:
                yield [self._batched(i, row[k]) for i, k in enumerate(inputs)], [row[k] for k in label_idx]
        finally:
            iterator.close()

    def _batched(self, position: int, value: Any) -> Any:
        # An unbatched row (one rank short of the model's input) becomes a batch of one.
        expected = self.inputs[position].shape
        if expected and np.ndim(value) == len(expected) - 1:
            return np.asarray(value)[None]
        return value

    def _predict_dataset(self, dataset: Any) -> Iterator[Any]:
        for inputs, _ in self._batches(dataset, labels="none"):
            yield self.predict(*inputs)

    def eval(self, valid_dataset: Any, metrics: Any = None) -> dict[str, Any]:
        """``{metric name: value}`` over one epoch of ``valid_dataset``. Each metric gets
        ``update(first output, label)``; ``metrics`` defaults to the constructor's.

        A :class:`~minddata.trainer.Loss` metric needs a loss, which an ONNX model does not compute:
        use ``Model.eval`` for it.
        """
        chosen = get_metrics(metrics if metrics is not None else self._metrics)
        if not chosen:
            raise ArgumentError("OnnxModel.eval: no metrics; pass metrics={'accuracy'} (or Metric objects)")
        _reject_loss(chosen)
        for metric in chosen.values():
            metric.clear()
        for inputs, labels in self._batches(valid_dataset, labels="required"):
            outputs = self.predict(*inputs)
            prediction = outputs[0] if isinstance(outputs, tuple) else outputs
            label = labels[0] if len(labels) == 1 else labels
            for metric in chosen.values():
                metric.update(prediction, label)
        return {name: metric.eval() for name, metric in chosen.items()}


def embed_pipeline(path: str, column: str, ops: Sequence[Any]) -> None:
    """Write the pipeline card of ``ops`` (minddata._parity) into the ONNX file at ``path``: the
    model's golden outputs come from ONNX Runtime running that file, as the service will."""
    from minddata._parity import build_card

    try:
        import onnx
    except ImportError as exc:
        raise ImportError(f"embedding a pipeline in an ONNX file needs the onnx package: {INSTALL_HINT}") from exc
    model = OnnxModel(path, providers=["CPUExecutionProvider"])
    dtype = model.inputs[0].dtype

    def predict(x: np.ndarray) -> list[np.ndarray]:
        out = model.predict(x)
        return list(out) if isinstance(out, tuple) else [out]

    metadata = build_card(column, ops, predict, dtype).to_metadata()
    proto = onnx.load(path)
    keep = [p for p in proto.metadata_props if p.key not in metadata]
    del proto.metadata_props[:]
    proto.metadata_props.extend(keep)
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(proto, path)


def _reject_loss(metrics: dict[str, Metric]) -> None:
    from minddata.trainer.metrics import Loss

    for name, metric in metrics.items():
        if isinstance(metric, Loss):
            raise ArgumentError(
                f"OnnxModel.eval: metric {name!r} (Loss) needs a loss function, which an ONNX model has not; "
                "evaluate the torch network with minddata.trainer.Model(net, loss_fn, metrics=...) instead"
            )


def _is_dataset(value: Any) -> bool:
    from minddata.dataset import Dataset

    return isinstance(value, Dataset)


def _checked_input(info: TensorInfo, value: Any) -> np.ndarray:
    array = to_numpy(value)
    if array.dtype != info.dtype:
        lossless_kind = np.can_cast(array.dtype, info.dtype, casting="same_kind") or (
            array.dtype.kind in "biu" and info.dtype.kind == "f"
        )
        if info.dtype.kind == "O" and array.dtype.kind in "SUO":
            array = array.astype(object)
        elif lossless_kind:
            array = array.astype(info.dtype)
        else:
            raise ArgumentError(
                f"OnnxModel.predict: input {info.name!r} must be {info.datatype} ({info.dtype}). Found: {array.dtype}; "
                f"cast it in the pipeline (e.g. transforms.TypeCast) or before calling predict"
            )
    if info.shape:
        fixed_ok = array.ndim == len(info.shape) and all(
            want < 0 or want == got for want, got in zip(info.shape, array.shape)
        )
        if not fixed_ok:
            raise ArgumentError(
                f"OnnxModel.predict: input {info.name!r} must have shape {info.shape_text()} (? = any). "
                f"Found: {list(array.shape)}"
            )
    return np.ascontiguousarray(array)
