"""The error for a MindSpore name that minddata does not have (yet).

A ported script that reaches for such a name should learn at once that the name is missing here,
not that it mistyped it, and where to see what is covered.
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["COVERAGE_TABLE", "not_implemented", "module_getattr"]

COVERAGE_TABLE = "docs/coverage.md in minddata's repository"


def not_implemented(module: str, name: str) -> AttributeError:
    """An AttributeError saying that ``module.name`` is not implemented yet, pointing at the table."""
    error = AttributeError(
        f"module {module!r} has no attribute {name!r}: minddata does not implement it yet (or MindSpore "
        f"has no such name either). The coverage table of MindSpore's API lists what minddata has: "
        f"{COVERAGE_TABLE}."
    )
    error.name = name
    return error


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


def _importing_from(frame: Any) -> bool:
    """Whether ``frame`` is executing ``from x import y`` (an IMPORT_FROM instruction)."""
    try:
        return frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM
    except (AttributeError, IndexError):
        return False


def module_getattr(
    module: str,
    lazy: dict[str, str] | None = None,
    aliases: dict[str, Any] | None = None,
    lazy_attributes: dict[str, str] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__``: ``lazy`` maps names to modules imported on first use,
    ``lazy_attributes`` names to the module that defines them (imported on first use, the value kept
    in ``module``'s globals), ``aliases`` names to values (names that can't be module globals, e.g.
    ``bool``); other public names raise :func:`not_implemented`; private and dunder names raise a plain
    AttributeError (tools probe those with ``hasattr``)."""

    def __getattr__(name: str) -> Any:
        if lazy and name in lazy:
            import importlib

            return importlib.import_module(lazy[name])
        if lazy_attributes and name in lazy_attributes:
            import importlib

            value = getattr(importlib.import_module(lazy_attributes[name]), name)
            setattr(sys.modules[module], name, value)
            return value
        if aliases and name in aliases:
            return aliases[name]
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        error = not_implemented(module, name)
        if _importing_from(sys._getframe(1)):
            # `from module import name` turns an AttributeError into a bare "cannot import name";
            # an ImportError passes through with the explanation.
            raise ImportError(str(error), name=module) from None
        raise error

    return __getattr__
