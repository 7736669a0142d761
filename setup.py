"""Build script: maps the repository's top-level folders into the single package ``minddata``.

``minddata/`` is the public API; ``ops/``, ``engine/``, ``trainer/`` and ``bench/`` install as
``minddata.ops``, ``minddata.engine``, ``minddata.trainer`` and ``minddata.bench`` (DESIGN.md §2).
Cython extensions are added here as kernels arrive; the build requirement is declared in
pyproject.toml. Extensions that need a system library are built only where its headers are found
(``minddata.ops.cpu._jpeg``: libjpeg-turbo's ``jpeglib.h``); elsewhere the install still succeeds
and the pure-Python module in front of the extension falls back and says why.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, find_packages, setup

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


def _say(line: str) -> None:
    print(f"minddata setup: {line}", file=sys.stderr)


def _find_jpeglib() -> tuple[str | None, str]:
    """The folder holding libjpeg-turbo's ``jpeglib.h``, or None and why not.

    ``$JPEG_INCLUDE_DIR``, when set, is the only place looked at (so pointing it at an empty folder
    builds without the extension); otherwise ``$CPATH``/``$C_INCLUDE_PATH``, the interpreter's
    prefix (conda), ``/usr/local/include`` and ``/usr/include``.
    """
    explicit = os.environ.get("JPEG_INCLUDE_DIR")
    if explicit is not None:
        candidates = [explicit]
    else:
        candidates = [
            *os.environ.get("CPATH", "").split(os.pathsep),
            *os.environ.get("C_INCLUDE_PATH", "").split(os.pathsep),
            os.path.join(sys.prefix, "include"),
            "/usr/local/include",
            "/usr/include",
        ]
    candidates = [d for d in dict.fromkeys(candidates) if d]
    for folder in candidates:
        header = os.path.join(folder, "jpeglib.h")
        if not os.path.isfile(header):
            continue
        with open(header, encoding="latin-1") as f:
            if "jpeg_skip_scanlines" not in f.read():
                return None, (
                    f"{header} is not libjpeg-turbo >= 1.5 (it lacks jpeg_skip_scanlines/jpeg_crop_scanline)"
                )
        return folder, ""
    return None, f"libjpeg-turbo headers (jpeglib.h) were not found in {', '.join(candidates) or '(nothing)'}"


def _jpeg_extensions() -> list:
    """``minddata.ops.cpu._jpeg`` (ops/cpu/_jpeg.pyx over libjpeg-turbo) when it can be built, else [].

    Building never fails for want of it: without the headers or Cython nothing extra is built and one
    line says why; a compile/link failure is reported and skipped (``optional=True``).
    ``minddata.ops.cpu.jpeg`` then falls back to OpenCV and says why in ``WHY_UNAVAILABLE``.
    """
    fix = "install libjpeg62-turbo-dev (Debian) or libjpeg-turbo-devel and reinstall"
    folder, why = _find_jpeglib()
    if folder is None:
        _say(f"not building the _jpeg extension: {why}; {fix}")
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _say("not building the _jpeg extension: Cython is not importable (pip install 'Cython>=3.0')")
        return []
    include_dirs: list[str] = []
    library_dirs: list[str] = []
    if folder not in ("/usr/include", "/usr/local/include"):
        include_dirs.append(folder)
        lib = os.environ.get("JPEG_LIB_DIR") or os.path.join(os.path.dirname(folder), "lib")
        if os.path.isdir(lib):
            library_dirs.append(lib)
    unix = sys.platform != "win32"
    ext = Extension(
        "minddata.ops.cpu._jpeg",
        sources=["ops/cpu/_jpeg.pyx"],
        include_dirs=include_dirs,
        library_dirs=library_dirs,
        runtime_library_dirs=library_dirs if unix else [],
        libraries=["jpeg"],
        extra_compile_args=["-O3"] if unix else ["/O2"],
        optional=True,
    )
    _say(f"building the _jpeg extension against {os.path.join(folder, 'jpeglib.h')}")
    return cythonize([ext], compiler_directives={"language_level": "3"}, quiet=True)


def _pixel_extensions() -> list:
    """``minddata.ops.cpu._pixels`` (one-pass pixel kernels, no system library needed); without
    Cython or a compiler the NumPy path in ``minddata.ops.cpu.fused`` is used instead."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        _say("not building the _pixels extension: Cython is not importable (pip install 'Cython>=3.0')")
        return []
    unix = sys.platform != "win32"
    ext = Extension(
        "minddata.ops.cpu._pixels",
        sources=["ops/cpu/_pixels.pyx"],
        # No -ffast-math: the kernels must round exactly as NumPy does.
        extra_compile_args=["-O3"] if unix else ["/O2"],
        optional=True,
    )
    return cythonize([ext], compiler_directives={"language_level": "3"}, quiet=True)


def _file_extensions() -> list:
    """``minddata.ops._file_bytes`` (a whole file read with two GIL hand-overs, POSIX only); without it
    ``minddata.ops.file_bytes`` reads through Python's ``open``."""
    if sys.platform == "win32":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _say("not building the _file_bytes extension: Cython is not importable (pip install 'Cython>=3.0')")
        return []
    ext = Extension("minddata.ops._file_bytes", sources=["ops/_file_bytes.pyx"], extra_compile_args=["-O2"],
                    optional=True)
    return cythonize([ext], compiler_directives={"language_level": "3"}, quiet=True)


packages, package_dir = _packages_and_dirs()

setup(
    packages=packages,
    package_dir=package_dir,
    ext_modules=_jpeg_extensions() + _pixel_extensions() + _file_extensions(),
    # The list of MindSpore's public names that the coverage table (bench/coverage.py) compares against.
    package_data={"minddata.bench": ["mindspore_names.txt"]},
    # Cython's generated C sits next to the .pyx; it is a build input, not package data.
    exclude_package_data={"": ["*.c"]},
)
