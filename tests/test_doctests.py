"""Every runnable example in the public API's docstrings runs and shows what it claims."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "minddata",
    "minddata.config",
    "minddata.dataset.base",
    "minddata.dataset.serialization",
    "minddata.dataset.sources",
    "minddata.dataset.corpora_csv",
    "minddata.dataset.corpora_imdb",
    "minddata.dataset.corpora_json",
    "minddata.dataset.corpora_lines",
    "minddata.dataset.corpora_tagging",
    "minddata.dataset.corpora_translation",
    "minddata.samplers",
    "minddata.transforms",
    "minddata.vision",
    "minddata.vision._ops",
    "minddata.vision._geometry",
    "minddata.vision._color",
    "minddata.vision._erase_mix",
    "minddata.ops.base",
    "minddata.engine.procpool",
    "minddata.engine.autotune",
    "minddata.profiler",
    "minddata._devices",
    "minddata.ops.probe",
    "minddata.ops.formats",
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
