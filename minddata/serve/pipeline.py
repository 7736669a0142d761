"""What the service runs on each image: a list of ops over the ``"image"`` column, and optional
post-processing of each batch's outputs.

A pipeline file is a Python file that defines ``ops()`` (or a list ``OPS``) and may define
``postprocess(outputs)``, which takes the batch's outputs (``{name: array}``, batch first: the
model's outputs, or the preprocessed tensors without a model) and returns the ones to send::

    from minddata import vision

    def ops():
        return [vision.Decode(), vision.Resize((96, 96)), vision.HWC2CHW()]

    def postprocess(outputs):            # optional
        return {"mean": outputs["image"].mean(axis=(1, 2, 3))}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import minddata as md

__all__ = ["INPUT_COLUMN", "ServePipeline", "load_pipeline_file"]

INPUT_COLUMN = "image"

Postprocess = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class ServePipeline:
    """A named list of ops applied to each request's encoded image, and an optional post-step.

    Examples:
        >>> from minddata import vision
        >>> p = ServePipeline("small", [vision.Decode(), vision.Resize((8, 8))])
        >>> p.describe()
        'Decode [CPU] → Resize [CPU]'
    """

    name: str
    ops: Sequence[Any]
    postprocess: Postprocess | None = None

    def describe(self) -> str:
        """Each op with the device it was placed on."""
        return " → ".join(f"{getattr(op, 'name', getattr(op, '__name__', type(op).__name__))} "
                          f"[{getattr(op, 'device_target', 'CPU')}]" for op in self.ops)

    def dataset(self, workers: int) -> md.Dataset:
        """The online dataset the service feeds: one row per image, pushed in as it arrives."""
        return md.OnlineDataset([INPUT_COLUMN]).map(
            operations=list(self.ops), input_columns=INPUT_COLUMN, num_parallel_workers=workers
        )

    def run_offline(self, images: Sequence[bytes], workers: int = 1) -> dict[str, np.ndarray]:
        """The same ops over ``images`` as an ordinary batch pipeline: what the service must match."""
        rows = [np.frombuffer(b, dtype=np.uint8) for b in images]
        ds: md.Dataset = md.GeneratorDataset(lambda: ((r,) for r in rows), column_names=[INPUT_COLUMN])
        ds = ds.map(operations=list(self.ops), input_columns=INPUT_COLUMN, num_parallel_workers=workers)
        (batch,) = ds.batch(len(rows)).create_dict_iterator(num_epochs=1, output_numpy=True)
        return batch


def load_pipeline_file(path: str | os.PathLike) -> ServePipeline:
    """Load a pipeline file (see the module docstring). Raises ``ValueError`` naming the file and the
    problem."""
    from minddata._standard_pipelines import PIPELINES
    from minddata._userfile import load_user_module

    file = os.fspath(path)
    stem = os.path.splitext(os.path.basename(file))[0]
    standard = ", ".join(n for n in PIPELINES if n != "train")
    module = load_user_module(file, "minddata_serve_pipeline",
                              f"a standard pipeline ({standard}) or a Python file that defines ops()")
    make = getattr(module, "ops", None)
    try:
        ops = make() if callable(make) else getattr(module, "OPS", None)
    except Exception as exc:
        raise ValueError(f"{file}: ops() failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(ops, (list, tuple)) or not ops:
        raise ValueError(f"{file}: defines no ops; define ops() returning a non-empty list of ops (or a list OPS)")
    post = getattr(module, "postprocess", None)
    if post is not None and not callable(post):
        raise ValueError(f"{file}: postprocess must be a function taking and returning {{name: array}}")
    return ServePipeline(stem, list(ops), post)
