"""Small ONNX models built with onnx.helper (no torch needed), for the OnnxModel tests."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(graph: onnx.GraphProto, path) -> str:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by every onnxruntime this project supports
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def linear_classifier(path, weight: np.ndarray, bias: np.ndarray) -> str:
    """``logits = x @ weight + bias`` over a dynamic batch: input ``x`` FP32 [batch, D], output ``logits``."""
    d, c = weight.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["logits"])],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", d])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", c])],
        initializer=[
            numpy_helper.from_array(weight.astype(np.float32), "W"),
            numpy_helper.from_array(bias.astype(np.float32), "b"),
        ],
    )
    return save(graph, path)


def two_inputs_two_outputs(path) -> str:
    """``sum = a + b`` (FP32 [batch, 4]) and ``count = b_ids * 2`` (INT64 [batch]): inputs ``a``, ``b``,
    ``ids``; outputs ``sum``, ``doubled``."""
    two = numpy_helper.from_array(np.array(2, dtype=np.int64), "two")
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Mul", ["ids", "two"], ["doubled"])],
        "two",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [None, 4]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [None, 4]),
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"]),
        ],
        [
            helper.make_tensor_value_info("sum", TensorProto.FLOAT, [None, 4]),
            helper.make_tensor_value_info("doubled", TensorProto.INT64, ["n"]),
        ],
        initializer=[two],
    )
    return save(graph, path)
