"""The coverage table (docs/coverage.md) of mindspore.dataset names is true and current."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from minddata.bench import coverage

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coverage.md"


def test_every_name_marked_present_imports():
    marked = re.findall(r"\| `(minddata[\w.]*)` \| ✔ \|", PAGE.read_text(encoding="utf-8"))
    assert len(marked) > 50  # the parse itself found the table
    missing = []
    for full in marked:
        module, _, name = full.rpartition(".")
        if not hasattr(importlib.import_module(module), name):
            missing.append(full)
    assert not missing, f"marked ✔ in docs/coverage.md but not importable: {missing}"


def test_page_is_current():
    assert PAGE.read_text(encoding="utf-8") == coverage.render(coverage.coverage()), (
        "docs/coverage.md is out of date: run `python -m minddata.bench.coverage`"
    )


def test_names_map_to_minddata_modules():
    assert coverage.minddata_name("dataset.vision.Resize") == "minddata.vision.Resize"
    assert coverage.minddata_name("dataset.config.set_seed") == "minddata.config.set_seed"
    assert coverage.minddata_name("dataset.MindDataset") == "minddata.MindDataset"
