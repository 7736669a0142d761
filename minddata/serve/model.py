"""The model behind the service, one call per batch: ONNX (through ``minddata.trainer.OnnxModel``),
TorchScript (``torch.jit.load``), or none (the preprocessed tensors are the answer).

Every adapter takes the batch as ``{column: array}`` (batch first, the pipeline's output columns in
order) and returns ``{output name: array}``; ``predict`` may be called from several threads at once.
"""

from __future__ import annotations

import os
import threading
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from minddata.serve.protocol import oip_datatype

__all__ = ["NoModel", "OnnxAdapter", "ServedModel", "TensorInfo", "TorchScriptAdapter", "load_model"]


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the model's signature as the protocol states it: -1 marks a dynamic dimension."""

    name: str
    datatype: str
    shape: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


def infer_signature(samples: Sequence[dict[str, np.ndarray]]) -> list[TensorInfo]:
    """Tensor infos of batch outputs seen on differently sized inputs: dims that differ (and the batch
    dim) are dynamic."""
    first = samples[0]
    infos = []
    for name, array in first.items():
        shape = [-1, *array.shape[1:]]
        for other in samples[1:]:
            o = other[name]
            if o.ndim != array.ndim:
                shape = [-1] * array.ndim
                break
            shape = [s if s == t else -1 for s, t in zip(shape, (-1, *o.shape[1:]))]
        infos.append(TensorInfo(name, oip_datatype(array.dtype), tuple(shape)))
    return infos


class ServedModel:
    """What the batcher calls. ``kind`` names it in the start-up print; ``inputs`` is None for no model."""

    kind = "none"
    path: str | None = None
    inputs: list[TensorInfo] | None = None

    def predict(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raise NotImplementedError


class NoModel(ServedModel):
    """No model: the preprocessed batch is the answer."""

    def predict(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return batch


def _named(outputs: Any, names: Sequence[str]) -> dict[str, np.ndarray]:
    if isinstance(outputs, dict):
        return {str(k): np.asarray(v) for k, v in outputs.items()}
    if isinstance(outputs, (list, tuple)):
        return {n: np.asarray(v) for n, v in zip(names, outputs)}
    return {names[0]: np.asarray(outputs)}


def _positional(batch: dict[str, np.ndarray], count: int, what: str) -> list[np.ndarray]:
    arrays = list(batch.values())
    if len(arrays) != count:
        raise ValueError(
            f"{what} takes {count} input(s) but the pipeline gives {len(arrays)} column(s) ({', '.join(batch)}); "
            "make the pipeline's output columns match the model's inputs"
        )
    return arrays


class OnnxAdapter(ServedModel):
    """An ONNX file on ONNX Runtime, through ``minddata.trainer.OnnxModel`` (thread-safe ``predict``)."""

    kind = "onnx"

    def __init__(self, path: str, providers: Sequence[str] | None = None):
        try:
            from minddata.trainer import OnnxModel
        except ImportError as exc:
            raise ValueError(
                f"--model {path}: ONNX models need minddata.trainer.OnnxModel and onnxruntime ({exc}); "
                "pip install onnxruntime"
            ) from exc
        self.path = path
        self.model = OnnxModel(path, providers=providers)
        self.inputs = [self._info(t) for t in self.model.inputs]
        self.output_names = [t.name for t in self.model.outputs]
        self.input_dtypes = [np.dtype(getattr(t, "dtype", np.float32)) for t in self.model.inputs]

    @staticmethod
    def _info(t: Any) -> TensorInfo:
        shape = tuple(d if isinstance(d, int) and d >= 0 else -1 for d in t.shape)
        datatype = getattr(t, "datatype", None) or oip_datatype(np.dtype(t.dtype))
        return TensorInfo(t.name, datatype, shape)

    def predict(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        arrays = _positional(batch, len(self.input_dtypes), f"the ONNX model {self.path}")
        arrays = [a if a.dtype == d else a.astype(d) for a, d in zip(arrays, self.input_dtypes)]
        return _named(self.model.predict(*arrays), self.output_names)


class TorchScriptAdapter(ServedModel):
    """A TorchScript file (``torch.jit.save``) on the CPU, in eval mode, without autograd."""

    kind = "torchscript"

    def __init__(self, path: str):
        try:
            import torch
        except ImportError as exc:
            raise ValueError(f"--model {path}: TorchScript models need torch ({exc}); pip install 'minddata[torch]'") from exc
        self.torch = torch
        self.path = path
        try:
            self.module = torch.jit.load(path, map_location="cpu").eval()
        except Exception as exc:  # torch raises RuntimeError/ValueError/... for a bad file
            raise ValueError(f"--model {path}: not a TorchScript file torch.jit.load can read ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})") from exc
        # A scripted module's forward is thread-safe for inference; the lock only guards lazy
        # optimisation on the first calls (the profiling executor), which is not.
        self._warm = threading.Lock()
        self._calls = 0

    def predict(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        torch = self.torch
        tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in batch.values()]
        with torch.inference_mode():
            if self._calls < 3:
                with self._warm:
                    out = self.module(*tensors)
                    self._calls += 1
            else:
                out = self.module(*tensors)
        if isinstance(out, torch.Tensor):
            out = [out]
        if isinstance(out, dict):
            return {str(k): v.numpy() for k, v in out.items()}
        return {f"output{i}": t.numpy() for i, t in enumerate(out)}


def load_model(path: str | os.PathLike | None) -> ServedModel:
    """The adapter for ``path`` by its content (ONNX protobuf or TorchScript zip), or :class:`NoModel`.
    Raises ``ValueError`` with one line naming the file and the problem."""
    if path is None:
        return NoModel()
    file = os.fspath(path)
    if not os.path.isfile(file):
        raise ValueError(f"--model {file}: no such file")
    with open(file, "rb") as f:
        head = f.read(4)
    if head.startswith(b"PK"):  # TorchScript archives are zip files
        if not zipfile.is_zipfile(file):  # caught before importing torch, which takes seconds
            raise ValueError(f"--model {file}: not a TorchScript file (a damaged zip archive)")
        return TorchScriptAdapter(file)
    if file.endswith(".onnx"):
        return OnnxAdapter(file)
    raise ValueError(f"--model {file}: neither an ONNX file (*.onnx) nor a TorchScript archive (torch.jit.save)")
