"""Every runnable example in the public API's docstrings runs and shows what it claims."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "minddata",
    "minddata.config",
    "minddata.dataset.base",
    "minddata.dataset.sources",
    "minddata.samplers",
    "minddata.transforms",
    "minddata.vision",
    "minddata.vision._utils",
    "minddata.vision.affine",
    "minddata.vision.color",
    "minddata.vision.crop",
    "minddata.vision.decode",
    "minddata.vision.erase_mix",
    "minddata.vision.flip",
    "minddata.vision.normalize",
    "minddata.vision.resize",
    "minddata.ops.base",
    "minddata.engine.procpool",
    "minddata.engine.autotune",
    "minddata.profiler",
    "minddata._devices",
    "minddata.ops.probe",
    "minddata.ops.formats",
    "minddata.ops.plans.affine",
    "minddata.ops.plans.color",
    "minddata.ops.plans.crop",
    "minddata.ops.plans.decode",
    "minddata.ops.plans.flip",
    "minddata.ops.plans.image",
    "minddata.ops.plans.resize",
    "minddata.ops.dvpp.rules",
    "minddata.ops.gpu.segment",
    "minddata.engine.placement",
    "minddata._progress",
    "minddata.bench.command",
    "minddata.bench.plot",
    "minddata.serve.protocol",
    "minddata.serve.pipeline",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_public_names_resolve():
    import minddata as md

    for name in md.__all__:
        assert getattr(md, name) is not None, name
    assert md.vision.Decode and md.transforms.TypeCast
