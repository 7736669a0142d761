"""minddata's training and inference engine (``mindspore.train`` names, PyTorch networks).

Everything here imports lazily: ``import minddata.trainer`` loads neither torch nor ONNX Runtime;
the first use of ``Model`` needs torch (``pip install 'minddata[torch]'``), of ``OnnxModel`` ONNX
Runtime (``pip install 'minddata[infer]'``).

Examples:
    >>> import minddata.trainer as trainer
    >>> trainer.Accuracy().name
    'Accuracy'
"""

from __future__ import annotations

import importlib
from typing import Any

# Public name -> the submodule that defines it.
_EXPORTS = {
    "OnnxModel": "onnx",
    "TensorInfo": "onnx",
    "ColumnMismatchError": "columns",
    "Model": "model",
    "AMP_LEVELS": "model",
    "CheckpointMismatchError": "model",
    "InputDtypeError": "model",
    "UnsafeCheckpointError": "model",
    **{
        name: "callbacks"
        for name in (
            "BackupAndRestore", "Callback", "CallbackList", "CallbackParams", "CheckpointConfig", "EarlyStopping",
            "History", "LambdaCallback", "LearningRateScheduler", "LossMonitor", "ModelCheckpoint", "OnRequestExit",
            "ProgressBar", "ReduceLROnPlateau", "RunContext", "TimeMonitor",
        )
    },
    **{
        name: "metrics"
        for name in (
            "Metric", "Accuracy", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
            "Loss", "MAE", "MSE", "Precision", "Recall", "Fbeta", "F1", "ConfusionMatrix", "get_metric",
            "get_metrics",
        )
    },
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'minddata.trainer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"minddata.trainer.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
