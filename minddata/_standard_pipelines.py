"""The standard pipelines, by name: ``minddata serve NAME`` serves them and ``minddata bench`` measures
them (``minddata.bench.pipelines`` builds them into datasets).

======== =============================================================================== ==============
name     ops (on the ``"image"`` column)                                                 output image
======== =============================================================================== ==============
train    Decode, RandomResizedCrop(224), RandomHorizontalFlip, Normalize, HWC2CHW        (3, 224, 224)
infer224 Decode, Resize(256), CenterCrop(224), Normalize, HWC2CHW                        (3, 224, 224)
yolo416  Decode, Resize((416, 416)), Normalize, HWC2CHW                                  (3, 416, 416)
======== =============================================================================== ==============

Normalize uses the ImageNet mean/std in 0-255 units, as MindSpore's model zoo does.

Examples:
    >>> from minddata._standard_pipelines import describe
    >>> describe("yolo416")
    'Decode → Resize((416, 416)) → Normalize → HWC2CHW'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["MEAN", "STD", "PIPELINES", "PipelineSpec", "describe", "make_ops", "place"]

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
    return [
        vision.Decode(),
        vision.Resize((416, 416)),
        vision.Normalize(mean=MEAN, std=STD),
        vision.HWC2CHW(),
    ]


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
        raise ValueError(f"bench: unknown pipeline {name!r}; choose one of {', '.join(PIPELINES)}") from None


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
