"""MkDocs hook: lay the source tree out as the installed package before the API pages are rendered.

``setup.py`` installs ``ops/``, ``engine/``, ``trainer/`` and ``bench/`` as ``minddata.ops`` and so on;
mkdocstrings reads sources statically, so it is pointed at ``.docs-api/`` (git-ignored), where
``minddata/`` holds links to the package's own files and to those layer folders.
"""

from __future__ import annotations

import shutil
from pathlib import Path

LAYERS = ("ops", "engine", "trainer", "bench")


def on_config(config, **kwargs):
    root = Path(config.config_file_path).resolve().parent
    tree = root / ".docs-api" / "minddata"
    if tree.parent.exists():
        shutil.rmtree(tree.parent)
    tree.mkdir(parents=True)
    for entry in (root / "minddata").iterdir():
        if entry.name != "__pycache__":
            (tree / entry.name).symlink_to(entry)
    for layer in LAYERS:
        (tree / layer).symlink_to(root / layer)
    return config
