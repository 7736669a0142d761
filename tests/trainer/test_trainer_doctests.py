"""The trainer's docstring examples run and show what they claim."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "minddata.trainer",
    "minddata.trainer.metrics",
    "minddata.trainer.columns",
    "minddata.trainer.onnx",
    "minddata.trainer.callbacks",
    "minddata.trainer.model",
]
NEEDS = {"minddata.trainer.onnx": ("onnx", "onnxruntime"), "minddata.trainer.model": ("torch",)}


@pytest.mark.parametrize("name", MODULES)
def test_trainer_docstring_examples(name):
    for package in NEEDS.get(name, ()):
        pytest.importorskip(package, reason=f"{package} is not installed: {name}'s examples need it")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
