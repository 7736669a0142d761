"""Build script: maps the repository's top-level folders into the single package ``minddata``.

``minddata/`` is the public API; ``ops/``, ``engine/``, ``trainer/`` and ``bench/`` install as
``minddata.ops``, ``minddata.engine``, ``minddata.trainer`` and ``minddata.bench`` (DESIGN.md §2).
Cython extensions are added here as kernels arrive; the build requirement is declared in
pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))

# Top-level folder -> name it installs under.
LAYERS = {
    "minddata": "minddata",
    "ops": "minddata.ops",
    "engine": "minddata.engine",
    "trainer": "minddata.trainer",
    "bench": "minddata.bench",
}


def _packages_and_dirs() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for folder, name in LAYERS.items():
        package_dir[name] = folder
        packages.append(name)
        for sub in find_packages(where=os.path.join(HERE, folder)):
            packages.append(f"{name}.{sub}")
            package_dir[f"{name}.{sub}"] = os.path.join(folder, *sub.split("."))
    return packages, package_dir


packages, package_dir = _packages_and_dirs()

setup(packages=packages, package_dir=package_dir)
