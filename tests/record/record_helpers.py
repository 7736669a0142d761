"""Helpers shared by the record-file tests: running the checkout's minddata in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_python(script: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``script`` with this checkout's minddata (not an installed copy) in a fresh interpreter.

    A child process turns a fatal signal (SIGBUS, SIGSEGV) into a return code the test can check,
    instead of killing pytest.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=env)
