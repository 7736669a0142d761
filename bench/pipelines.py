"""The standard benchmark pipelines, built with the public API exactly as a user script would.

======== =============================================================================== ==============
name     ops (on the ``"image"`` column)                                                 output image
======== =============================================================================== ==============
train    Decode, RandomResizedCrop(224), RandomHorizontalFlip, Normalize, HWC2CHW        (3, 224, 224)
infer224 Decode, Resize(256), CenterCrop(224), Normalize, HWC2CHW                        (3, 224, 224)
yolo416  Decode, Resize((416, 416)), Normalize, HWC2CHW                                  (3, 416, 416)
======== =============================================================================== ==============

Normalize uses the ImageNet mean/std in 0-255 units, as MindSpore's model zoo does.

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

__all__ = ["PIPELINES", "CustomPipeline", "PipelineSpec", "build", "describe", "load_pipeline_file", "make_ops", "place"]

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


@dataclass(frozen=True)
class PipelineSpec:
    """A standard pipeline: its ops (as readable steps) and the image shape one row comes out with."""

    name: str
    steps: tuple[str, ...]
    image_shape: tuple[int, int, int]
    summary: str


def _train_ops(vision: Any) -> list[Any]:
    return [
        vision.Decode(),
        vision.RandomResizedCrop(224),
        vision.RandomHorizontalFlip(),
        vision.Normalize(mean=MEAN, std=STD),
        vision.HWC2CHW(),
    ]


def _infer224_ops(vision: Any) -> list[Any]:
    return [
        vision.Decode(),
        vision.Resize(256),
        vision.CenterCrop(224),
        vision.Normalize(mean=MEAN, std=STD),
        vision.HWC2CHW(),
    ]


def _yolo416_ops(vision: Any) -> list[Any]:
    return [vision.Decode(), vision.Resize((416, 416)), vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()]


PIPELINES: dict[str, PipelineSpec] = {
    "train": PipelineSpec(
        "train",
        ("Decode", "RandomResizedCrop(224)", "RandomHorizontalFlip", "Normalize", "HWC2CHW"),
        (3, 224, 224),
        "ImageNet training augmentation",
    ),
    "infer224": PipelineSpec(
        "infer224",
        ("Decode", "Resize(256)", "CenterCrop(224)", "Normalize", "HWC2CHW"),
        (3, 224, 224),
        "ImageNet evaluation / classification inference",
    ),
    "yolo416": PipelineSpec(
        "yolo416",
        ("Decode", "Resize((416, 416))", "Normalize", "HWC2CHW"),
        (3, 416, 416),
        "detector input (stretch to 416x416)",
    ),
}

_OPS: dict[str, Callable[[Any], list[Any]]] = {
    "train": _train_ops,
    "infer224": _infer224_ops,
    "yolo416": _yolo416_ops,
}


def _spec(name: str) -> PipelineSpec:
    try:
        return PIPELINES[name]
    except KeyError:
        raise ValueError(
            f"bench: unknown pipeline {name!r}; choose one of {', '.join(PIPELINES)}"
        ) from None


def describe(name: str) -> str:
    """The pipeline's ops as one line, e.g. ``'Decode → Resize(256) → ...'``."""
    return " → ".join(_spec(name).steps)


def make_ops(name: str) -> list[Any]:
    """Fresh op specs for pipeline ``name`` (from ``minddata.vision``)."""
    _spec(name)
    # Imported here so that listing and describing pipelines works without the vision module loaded.
    from minddata import vision

    return _OPS[name](vision)


def place(ops: list[Any], device: str) -> list[Any]:
    """Put each op that has a kernel on ``device`` there (``"auto"``: let placement choose); the rest
    stay on the CPU. ``"cpu"`` leaves every op as it is."""
    device = device.lower()
    if device == "cpu":
        return ops
    from minddata.ops.base import canonical_device
    from minddata.ops.registry import has_kernel

    target = canonical_device(device, where="bench --device")
    for op in ops:
        if target == "auto" or has_kernel(op.name, target):
            op.device(target)
    return ops


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
