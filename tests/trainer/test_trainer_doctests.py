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
]


@pytest.mark.parametrize("name", MODULES)
def test_trainer_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
