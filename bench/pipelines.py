"""The standard benchmark pipelines, built with the public API exactly as a user script would. Their
ops, and the table of what each does, are in :mod:`minddata._standard_pipelines` (``minddata serve``
serves them too).

Examples:
    >>> from minddata.bench.pipelines import describe
    >>> describe("yolo416")
    'Decode → Resize((416, 416)) → Normalize → HWC2CHW'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minddata._standard_pipelines import MEAN, PIPELINES, STD, PipelineSpec, describe, make_ops, place

__all__ = [
    "MEAN", "STD", "PIPELINES", "CustomPipeline", "PipelineSpec", "build", "describe", "load_pipeline_file",
    "make_ops", "place",
]


def build(
    name: str, data_dir: str | os.PathLike, workers: int = 2, batch_size: int = 64, device: str = "cpu"
) -> Any:
    """The dataset for pipeline ``name`` over the image folder ``data_dir`` (``<class>/<image>``).

    Source and map both get ``workers``; batches keep the last partial batch so every image is counted.
    ``workers=minddata.AUTOTUNE`` starts every stage, the batch included, at one worker and lets
    autotune adjust them. ``device``: see :func:`place`.
    """
    ops = place(make_ops(name), device)
    import minddata as md

    ds = md.ImageFolderDataset(os.fspath(data_dir), shuffle=False, num_parallel_workers=workers)
    ds = ds.map(operations=ops, input_columns="image", num_parallel_workers=workers)
    batch_workers = workers if workers is md.AUTOTUNE else None
    return ds.batch(batch_size, drop_remainder=False, num_parallel_workers=batch_workers)


@dataclass(frozen=True)
class CustomPipeline:
    """A pipeline defined in a Python file: ``build(data_dir, workers, batch_size)`` returning a
    dataset whose first column (or ``"image"``) is a batch of images. ``name`` is the file's stem."""

    name: str
    path: str
    summary: str
    build: Callable[..., Any]


def load_pipeline_file(path: str | os.PathLike) -> CustomPipeline:
    """Load a pipeline file (see :class:`CustomPipeline`). Raises ``ValueError`` naming the problem.

    Example file::

        import minddata as md
        from minddata import vision

        def build(data_dir, workers, batch_size):
            ds = md.ImageFolderDataset(data_dir, num_parallel_workers=workers)
            ds = ds.map([vision.Decode(), vision.Resize((96, 96))], input_columns="image",
                        num_parallel_workers=workers)
            return ds.batch(batch_size)
    """
    from minddata._userfile import load_user_module

    file = os.fspath(path)
    stem = os.path.splitext(os.path.basename(file))[0]
    module = load_user_module(file, "minddata_bench_pipeline",
                              "a Python file that defines build(data_dir, workers, batch_size)")
    fn = getattr(module, "build", None)
    if not callable(fn):
        raise ValueError(f"{file}: defines no build(data_dir, workers, batch_size) function")
    doc = (module.__doc__ or "").strip().splitlines()
    return CustomPipeline(stem, file, doc[0] if doc else f"build() from {file}", fn)
