"""A pytest plugin for the device check: with ``MINDDATA_REQUIRE_GPU=1`` a test marked ``gpu`` that
skips fails instead (docs/devices.md), so a check on a GPU machine cannot pass with nothing run.

A ``gpu`` test that needs a driver the machine may lack by design says so with
``pytest.mark.gpu(needs="nvidia.dali")``: where that module is not installed its skip stays a skip
and is listed at the end; where it is installed, its skip fails like any other.

Used as ``python -m pytest -p minddata.bench.require_gpu ...`` (bench/device_check.sh).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

_exempt: list[str] = []


def _required() -> bool:
    return os.environ.get("MINDDATA_REQUIRE_GPU", "") not in ("", "0")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    marker = item.get_closest_marker("gpu")
    if not (_required() and report.skipped and marker is not None):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    needs = marker.kwargs.get("needs")
    if needs and not _installed(needs):
        _exempt.append(f"{item.nodeid}: needs {needs}, not installed here ({reason})")
        return
    report.outcome = "failed"
    report.longrepr = f"MINDDATA_REQUIRE_GPU=1: this GPU test skipped, which the device check counts as a failure: {reason}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _exempt:
        terminalreporter.write_sep("-", f"GPU tests not run: a driver absent by design ({len(_exempt)})")
        for line in _exempt:
            terminalreporter.write_line(line)
