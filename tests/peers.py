"""MindSpore 2.10 for the differential suites, found or made once per machine.

MindSpore 2.10 needs ``numpy<2`` and minddata needs ``numpy>=2``, so MindSpore runs in a virtual
environment of its own, driven through subprocesses. The tests find its Python in this order:

1. ``$MINDDATA_MINDSPORE_PYTHON`` (a Python that imports ``mindspore.dataset``);
2. ``/opt/msvenv/bin/python``, where a machine keeps one;
3. the cached environment ``$XDG_CACHE_HOME/minddata/mindspore-2.10`` (``~/.cache/...``), which the
   first test that needs it creates from ``tests/mindspore-requirements.txt`` (about 40 s and 2.8 GB on
   Linux x86_64; once per machine, under a file lock so parallel test processes build it once).

``MINDDATA_PEER_VENVS=0`` turns the creation off (the suites then skip, saying how to turn it on).
Where MindSpore publishes no wheel for this platform or Python, the suites skip naming pip's answer.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parent / "mindspore-requirements.txt"
MACHINE_VENV_PYTHON = "/opt/msvenv/bin/python"


def cached_venv() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "minddata" / "mindspore-2.10"


def _imports_mindspore(python: str) -> str | None:
    """None when ``python`` imports mindspore.dataset, else why not."""
    if not os.path.exists(python):
        return f"{python} does not exist"
    try:
        probe = subprocess.run([python, "-c", "import mindspore.dataset"], capture_output=True, timeout=180,
                               env=peer_env())
    except subprocess.TimeoutExpired:
        return f"{python} took over 180 s to import mindspore.dataset"
    if probe.returncode != 0:
        return f"{python} cannot import mindspore.dataset: {probe.stderr.decode(errors='replace')[-300:]}"
    return None


def peer_env() -> dict[str, str]:
    """The environment for MindSpore's subprocesses: none of this interpreter's path settings, and
    MindSpore's own logging at errors only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["GLOG_v"] = "3"
    return env


def _create(venv: Path) -> str | None:
    """Build the environment in a sibling folder and rename it into place (a half-built one is never
    seen); None on success, else pip's reason."""
    venv.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=venv.parent))
    try:
        made = subprocess.run([sys.executable, "-m", "venv", str(staging)], capture_output=True, text=True,
                              timeout=300)
        if made.returncode != 0:
            return f"python -m venv failed: {made.stderr[-300:]}"
        pip = [str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "-r", str(REQUIREMENTS)]
        installed = subprocess.run(pip, capture_output=True, text=True, timeout=1200, env=peer_env())
        if installed.returncode != 0:
            return f"pip could not install {REQUIREMENTS.name}: {installed.stderr.strip()[-400:]}"
        # Console scripts keep the staging path in their first line, but the tests only run the venv's
        # python, which finds its prefix from where it lies: renaming the finished folder is safe.
        staging.rename(venv)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@lru_cache(maxsize=1)
def mindspore_python() -> tuple[str | None, str]:
    """``(python, "")`` for a Python with MindSpore 2.10, or ``(None, reason to skip)``."""
    explicit = os.environ.get("MINDDATA_MINDSPORE_PYTHON")
    if explicit:
        why = _imports_mindspore(explicit)
        return (None, f"MINDDATA_MINDSPORE_PYTHON: {why}") if why else (explicit, "")
    if os.path.exists(MACHINE_VENV_PYTHON) and _imports_mindspore(MACHINE_VENV_PYTHON) is None:
        return MACHINE_VENV_PYTHON, ""
    venv = cached_venv()
    python = str(venv / "bin" / "python")
    if os.path.exists(python) and _imports_mindspore(python) is None:
        return python, ""
    if os.environ.get("MINDDATA_PEER_VENVS", "1") == "0":
        return None, (f"MindSpore 2.10 is not installed and MINDDATA_PEER_VENVS=0 keeps the tests from "
                      f"creating {venv}: unset it, or set MINDDATA_MINDSPORE_PYTHON to a Python with "
                      f"mindspore==2.10.0 and numpy<2")
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / ".mindspore-2.10.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be building it now: wait for it
        if os.path.exists(python) and _imports_mindspore(python) is None:
            return python, ""
        if venv.exists():
            shutil.rmtree(venv)  # a broken one (interrupted by hand, or a Python that moved)
        why = _create(venv)
    if why:
        return None, f"could not create MindSpore's environment {venv}: {why}"
    why = _imports_mindspore(python)
    return (None, why) if why else (python, "")
