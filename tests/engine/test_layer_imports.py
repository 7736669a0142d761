"""What importing a low layer pulls in: the graph module and the device-free op plans stay light.

The import checks run in a fresh interpreter (sys.modules is shared by the whole test session, so
only a new process shows what one import brings); the graph module's lazy imports are followed in
the source, as tests/test_layering.py reads imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_layering import LAYERS, imports_in

ROOT = Path(__file__).resolve().parents[2]

# The modules that run a pipeline: stages and their workers, the runtime, the iterator, the executors.
EXECUTION_MODULES = (
    "minddata.engine.stages",
    "minddata.engine.parallel",
    "minddata.engine.runtime",
    "minddata.engine.procpool",
    "minddata.engine.iterator",
    "minddata.engine.mapfn",
    "minddata.engine.compiler",
    "minddata.engine.ray_executor",
)


def modules_after_import(module: str) -> set[str]:
    """The names in sys.modules after ``import module`` in a new interpreter started at the checkout."""
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _under(loaded: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == p or m.startswith(p + ".") for p in packages))


def test_graph_module_imports_no_execution_code():
    loaded = modules_after_import("minddata.engine.ir")
    assert "minddata.engine.ir" in loaded
    assert _under(loaded, EXECUTION_MODULES) == []


def _module_file(module: str) -> Path | None:
    """The repository file of project module ``module`` (``minddata.engine.ir`` → engine/ir.py), or None."""
    for folder, name in sorted(LAYERS.items(), key=lambda item: -len(item[1])):
        if module == name or module.startswith(name + "."):
            base = ROOT / folder / Path(*module[len(name) :].lstrip(".").split("."))
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if module != name and candidate.is_file():
                    return candidate
            return None
    return None


def test_graph_module_reaches_no_execution_code_at_any_depth():
    # Lazy imports (inside functions) count too: followed through every project module ir reaches.
    reached: dict[str, str | None] = {}
    todo: list[tuple[str, str | None]] = [("minddata.engine.ir", None)]
    while todo:
        module, via = todo.pop()
        path = _module_file(module)
        if path is None:  # ``from package.module import name`` names an attribute: its module
            parent = module.rpartition(".")[0]
            if parent and _module_file(parent) is not None:
                todo.append((parent, via))
            continue
        if module in reached:
            continue
        reached[module] = via
        rel = path.relative_to(ROOT).as_posix()
        todo += [(i.module, module) for i in imports_in(rel, path.read_text()) if i.module and i.module.startswith("minddata.")]
    assert "minddata.ops.base" in reached
    assert {m: reached[m] for m in _under(set(reached), EXECUTION_MODULES)} == {}


def test_the_dataset_api_loads_on_first_use_and_every_public_name_resolves():
    code = (
        "import json, sys; import minddata as md; loaded = 'minddata.dataset' in sys.modules; "
        "unresolved = [n for n in md.__all__ if getattr(md, n, None) is None]; "
        "print(json.dumps([loaded, unresolved, md.ImageFolderDataset.__module__]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    loaded_by_import, unresolved, module = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded_by_import is False
    assert unresolved == []
    assert module.startswith("minddata.dataset.")


def test_the_names_type_checkers_see_are_the_lazily_loaded_ones():
    # minddata/__init__.py lists the dataset API's names twice: in __all__ (what loads on first use)
    # and in its TYPE_CHECKING import (what type checkers and IDEs see). The two lists must agree.
    import ast

    import minddata as md

    tree = ast.parse((ROOT / "minddata" / "__init__.py").read_text())
    checked = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for statement in node.body
        if isinstance(statement, ast.ImportFrom) and statement.module == "minddata.dataset"
        for alias in statement.names
    }
    assert checked and checked == set(md._DATASET_NAMES)


def test_no_device_free_plan_imports_the_dataset_api_or_pyarrow():
    plans = sorted(p.stem for p in (ROOT / "ops" / "plans").glob("*.py") if p.stem != "__init__")
    # One interpreter, the plans imported in turn: each one's new modules are checked as it comes.
    code = (
        "import json, sys\n"
        "found = {}\n"
        f"for name in {plans!r}:\n"
        "    __import__('minddata.ops.plans.' + name)\n"
        "    found[name] = sorted(m for m in sys.modules if m == 'pyarrow' or m.startswith(('pyarrow.', 'minddata.dataset')))\n"
        "print(json.dumps(found))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(found) == set(plans) and "resize" in found
    assert {name: heavy for name, heavy in found.items() if heavy} == {}
