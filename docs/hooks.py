"""MkDocs hook: lay the source tree out as the installed package before the API pages are rendered.

``setup.py`` installs ``ops/``, ``engine/``, ``trainer/`` and ``bench/`` as ``minddata.ops`` and so on;
mkdocstrings reads sources statically, so it is pointed at ``.docs-api/`` (git-ignored), where
``minddata/`` holds a copy of the package's own files with those layer folders inside it (copies, not
links: the reader resolves links to their real place, which has no ``minddata.ops``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

LAYERS = ("ops", "engine", "trainer", "bench")


def on_config(config, **kwargs):
    root = Path(config.config_file_path).resolve().parent
    tree = root / ".docs-api" / "minddata"
    if tree.parent.exists():
        shutil.rmtree(tree.parent)
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.c")
    shutil.copytree(root / "minddata", tree, ignore=skip)
    for layer in LAYERS:
        shutil.copytree(root / layer, tree / layer, ignore=skip)
    # The checkout's own minddata/ (found through the working directory) lacks the layers: read the
    # laid-out copy instead.
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and Path(p).resolve() != root]
    return config
