"""A source checkout imports like the installed package (DESIGN.md §2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
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


@pytest.fixture(scope="module")
def checkout_without_extensions(tmp_path_factory):
    """A copy of this checkout's packages and setup.py, without compiled extensions (never touching
    the ones built in place here, which other tests use)."""
    import shutil

    copy = tmp_path_factory.mktemp("checkout")
    ignore = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__")
    for folder in ("minddata", "ops", "engine", "trainer", "bench"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=ignore)
    shutil.copy(ROOT / "setup.py", copy / "setup.py")
    return copy


def _run_in(root: Path, script: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_checkout_without_the_jpeg_extension_says_so_and_how_to_build_it(checkout_without_extensions):
    out = _run_in(checkout_without_extensions, "from minddata.ops.cpu import jpeg\n"
                                               "print(jpeg.__file__); print(jpeg.AVAILABLE); print(jpeg.WHY_UNAVAILABLE)")
    assert out.returncode == 0, out.stderr
    where, available, why = out.stdout.splitlines()
    assert where == str(checkout_without_extensions / "ops" / "cpu" / "jpeg.py") and available == "False"
    assert f"the _jpeg extension is not built in the source checkout {checkout_without_extensions}" in why
    assert f"Fix: run `python setup.py build_ext --inplace` in {checkout_without_extensions}" in why
    assert "or run the script from another folder" in why


def test_the_first_jpeg_decoded_in_such_a_checkout_warns_once(checkout_without_extensions):
    script = (
        "import io\nfrom PIL import Image\nfrom minddata import vision\n"
        "buf = io.BytesIO(); Image.new('RGB', (8, 6)).save(buf, 'JPEG')\n"
        "for _ in range(3):\n    assert vision.Decode()(buf.getvalue()).shape == (6, 8, 3)\n"
    )
    out = _run_in(checkout_without_extensions, script)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "slower fallback" in line]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("minddata: JPEGs are decoded by the slower fallback (Pillow, OpenCV): the _jpeg "
                               "extension is not built in the source checkout")
