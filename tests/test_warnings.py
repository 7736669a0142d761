"""Every warning minddata logs to users starts with ``minddata:`` (through ``minddata.errors.warn``)."""

from __future__ import annotations

import ast
import logging
import os
from pathlib import Path

import pytest

import minddata as md
from minddata.errors import warn

ROOT = Path(__file__).resolve().parents[1]
# The library's own code; the service (minddata/serve), the trainer and the benchmarks format their
# own log lines and are not checked here.
SCANNED = ("minddata", "ops", "engine")
SKIPPED = ("minddata/serve",)
LOGGERS = {"_logger", "logger", "log", "logging"}
LEVELS = {"debug", "info", "error", "exception", "critical", "log"}


def _call_name(call: ast.Call) -> tuple[str | None, str | None]:
    """(receiver, attribute) of ``receiver.attribute(...)``, e.g. ("_logger", "warning")."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None, None
    receiver = func.value
    if isinstance(receiver, ast.Name):
        return receiver.id, func.attr
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "getLogger":
        return "logger", func.attr
    return None, func.attr


def _offences(source: str, rel: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        receiver, attr = _call_name(node)
        where = f"{rel}:{node.lineno}"
        if receiver == "warnings" and attr == "warn":
            found.append(f"{where}: warnings.warn: use minddata.errors.warn")
        elif receiver in LOGGERS and attr in ("warning", "warn"):
            if rel != "minddata/errors.py":
                found.append(f"{where}: {receiver}.{attr}: use minddata.errors.warn")
        elif receiver in LOGGERS and attr in LEVELS and node.args:
            first = node.args[1] if attr == "log" and len(node.args) > 1 else node.args[0]
            if not (isinstance(first, ast.Constant) and str(first.value).startswith("minddata: ")):
                found.append(f"{where}: {receiver}.{attr}: the message must start with 'minddata: '")
        elif isinstance(node.func, ast.Name) and node.func.id == "warn" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and str(first.value).lower().startswith("minddata"):
                found.append(f"{where}: warn() adds the 'minddata: ' prefix itself")
    return found


def test_library_warnings_go_through_the_prefixing_helper():
    offences = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(SKIPPED):
                offences += _offences(path.read_text(encoding="utf-8"), rel)
    assert offences == [], "\n".join(offences)


@pytest.mark.parametrize(
    "snippet",
    [
        "import warnings\nwarnings.warn('x')",
        "_logger.warning('more workers than cores')",
        "logging.getLogger('minddata').warning('x')",
        "_logger.exception('error while closing')",
        "warn('minddata: twice')",
    ],
)
def test_the_check_sees_each_kind_of_offence(snippet):
    assert _offences(snippet, "x.py")


def test_more_workers_than_cores_warns_with_the_prefix(caplog):
    import minddata.config as cfg

    cfg._warned_workers = False
    with caplog.at_level(logging.WARNING, logger="minddata"):
        md.config.set_num_parallel_workers((os.cpu_count() or 1) + 1)
    (message,) = [r.getMessage() for r in caplog.records if "more than this machine" in r.getMessage()]
    assert message.startswith("minddata: num_parallel_workers=")


def test_warn_logs_on_the_named_child_logger_with_the_prefix(caplog):
    with caplog.at_level(logging.WARNING, logger="minddata"):
        warn("autotune could not write %s", "x.json", logger="minddata.autotune")
    (record,) = caplog.records
    assert record.name == "minddata.autotune" and record.getMessage() == "minddata: autotune could not write x.json"
    assert record.filename == "test_warnings.py"  # the caller's location, not the helper's
