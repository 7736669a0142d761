"""Loading a user's Python file (a pipeline file for ``minddata bench`` or ``minddata serve``) as a
module, with every failure a ``ValueError`` that names the file."""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

__all__ = ["load_user_module"]


def load_user_module(path: str | os.PathLike, prefix: str, expects: str) -> ModuleType:
    """Run the file at ``path`` as a module named ``<prefix>_<file stem>``.

    ``expects`` says what the file should define (e.g. "a Python file that defines ops()"); it ends
    the message for a missing file. Errors raised by the file itself are reported with their type.
    """
    file = os.fspath(path)
    if not os.path.isfile(file):
        raise ValueError(f"{file}: no such file; pass {expects}")
    stem = os.path.splitext(os.path.basename(file))[0]
    spec = importlib.util.spec_from_file_location(f"{prefix}_{stem}", file)
    if spec is None or spec.loader is None:
        raise ValueError(f"{file}: not a Python file; pass {expects}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: report it as bad input, with its error
        raise ValueError(f"{file}: failed to load: {type(exc).__name__}: {exc}") from exc
    return module
