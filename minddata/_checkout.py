"""Makes a source checkout import exactly like the installed package (DESIGN.md §2).

Installed, ``setup.py`` maps the repository's ``ops/``, ``engine/``, ``trainer/`` and ``bench/``
folders to ``minddata.ops`` and so on. In a checkout (``python -m pytest`` or a script run from the
repository root) Python finds the bare ``minddata/`` folder first, which lacks those subpackages. When
``minddata/`` sits in a checkout (a ``setup.py`` beside it that declares the layer mapping), this module
installs a finder that serves exactly the mapped layer packages from their sibling folders; nothing
else in the repository root becomes importable as ``minddata.*``.

Compiled extensions (``ops/cpu/_jpeg``, ``ops/cpu/_pixels``) are then the checkout's own: there only
once built in place (``python setup.py build_ext --inplace``), since ``pip install .`` builds them into
the installed copy, which a script run from the repository root does not import. Without them the
kernels fall back to slower code; ``minddata.ops.cpu.jpeg.WHY_UNAVAILABLE`` says so and why, and the
first JPEG decoded logs it as a warning.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

# Must match setup.py's LAYERS (tests/test_layering.py checks the two agree).
LAYER_FOLDERS = {"minddata.ops": "ops", "minddata.engine": "engine", "minddata.trainer": "trainer",
                 "minddata.bench": "bench"}


class _CheckoutLayerFinder(importlib.abc.MetaPathFinder):
    """Finds ``minddata.<layer>`` in the checkout's sibling folder; submodules then resolve through
    the layer package's own ``__path__``."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        folder = LAYER_FOLDERS.get(fullname)
        if folder is None:
            return None
        package_dir = os.path.join(self.root, folder)
        init = os.path.join(package_dir, "__init__.py")
        if not os.path.isfile(init):
            return None
        return importlib.util.spec_from_file_location(fullname, init, submodule_search_locations=[package_dir])


def checkout_root(package_dir: str) -> str | None:
    """The repository root when ``package_dir`` (the ``minddata/`` folder) is inside a checkout."""
    root = os.path.dirname(os.path.abspath(package_dir))
    setup_py = os.path.join(root, "setup.py")
    if not os.path.isfile(setup_py) or not os.path.isfile(os.path.join(root, "ops", "__init__.py")):
        return None
    return root


def install(package_dir: str) -> bool:
    """Install the finder when running from a checkout; True when it was (or already is) installed."""
    root = checkout_root(package_dir)
    if root is None:
        return False
    if not any(isinstance(f, _CheckoutLayerFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _CheckoutLayerFinder(root))
    return True


install(os.path.dirname(os.path.abspath(__file__)))
