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
        if module == "minddata.Dataset":  # a Dataset method: checked on every transformed dataset
            if not all(hasattr(d, name) for d in coverage.transformed_datasets().values()):
                missing.append(full)
        elif not hasattr(importlib.import_module(module), name):
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
    assert coverage.minddata_name("dataset.Dataset.num_classes") == "minddata.Dataset.num_classes"


def test_dataset_methods_are_listed_and_checked_after_each_operation():
    rows = {ms: ok for ms, _, ok in coverage.coverage()}
    assert rows["dataset.Dataset.get_class_indexing"] and rows["dataset.Dataset.num_classes"]
    assert {"source", "map", "batch", "zip", "concat"} <= set(coverage.transformed_datasets())


def test_runtime_plumbing_is_listed_as_not_applicable_with_its_reason():
    page = PAGE.read_text(encoding="utf-8")
    not_applicable = page[page.index("## Not applicable"):]
    for name in ("parse", "parse_tree", "create_ir_tree", "iterator_bootstrap", "device_que"):
        assert f"| `mindspore.dataset.Dataset.{name}` | internal to MindSpore's C++ runtime: " in not_applicable
    dataset_section = page[page.index("## mindspore.dataset.Dataset"):page.index("## Not applicable")]
    assert "| `parse_tree` |" not in dataset_section  # listed once, and not counted as missing


def test_a_name_in_the_reasons_is_one_mindspore_has():
    names = set(coverage.mindspore_names())
    assert set(coverage.NOT_APPLICABLE) <= names and set(coverage.ABSENT) <= names


def test_only_plugin_is_absent_and_it_says_why():
    absent = [ms for ms, _, ok in coverage.coverage() if not ok and ms not in coverage.NOT_APPLICABLE]
    assert absent == ["dataset.transforms.Plugin"]
    assert "| `Plugin` |  | ✗ | loads a C++ plug-in" in PAGE.read_text(encoding="utf-8")
