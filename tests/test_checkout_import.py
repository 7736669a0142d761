"""A source checkout imports like the installed package (DESIGN.md §2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_layering import LAYERS

from minddata import _checkout

ROOT = Path(__file__).resolve().parents[1]


def test_finder_serves_exactly_setup_py_layers():
    mapped = {name: folder for folder, name in LAYERS.items() if name != folder}
    assert _checkout.LAYER_FOLDERS == mapped


def test_script_in_repository_root_imports_the_checkout(tmp_path):
    script = (
        "import minddata, minddata.ops, minddata.engine, minddata.bench\n"
        "print(minddata.__file__); print(minddata.ops.__file__); print(minddata.engine.__file__)\n"
    )
    # `python -c` from the root puts the root first on sys.path, as `python my_script.py` there does.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    files = out.stdout.split()
    assert files == [str(ROOT / "minddata" / "__init__.py"), str(ROOT / "ops" / "__init__.py"),
                     str(ROOT / "engine" / "__init__.py")]


def test_repository_root_is_not_a_package_namespace():
    out = subprocess.run([sys.executable, "-c", "import minddata.tests"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode != 0 and "No module named 'minddata.tests'" in out.stderr
