"""MkDocs hook: lay the source tree out as the installed package before the API pages are rendered.

``setup.py`` installs ``ops/``, ``engine/``, ``trainer/`` and ``bench/`` as ``minddata.ops`` and so on;
mkdocstrings reads sources statically, so it is pointed at ``.docs-api/`` (git-ignored), where
``minddata/`` holds a copy of the package's own files with those layer folders inside it (copies, not
links: the reader resolves links to their real place, which has no ``minddata.ops``). The copy is made
at start-up, before mkdocstrings looks at its search paths (it drops folders that do not exist yet).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

LAYERS = ("ops", "engine", "trainer", "bench")
ROOT = Path(__file__).resolve().parents[1]


def lay_out(root: Path = ROOT) -> Path:
    """Write ``root/.docs-api/minddata`` afresh and return it."""
    tree = root / ".docs-api" / "minddata"
    if tree.parent.exists():
        shutil.rmtree(tree.parent)
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.c")
    shutil.copytree(root / "minddata", tree, ignore=skip)
    for layer in LAYERS:
        shutil.copytree(root / layer, tree / layer, ignore=skip)
    return tree


def on_startup(command: str, dirty: bool, **kwargs) -> None:
    lay_out()


def on_config(config, **kwargs):
    # The checkout's own minddata/ (found through the working directory) lacks the layers: read the
    # laid-out copy instead.
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and Path(p).resolve() != ROOT]
    return config


if __name__ == "__main__":
    print(lay_out())
