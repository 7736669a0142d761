"""Argument parsing shared by the ``python -m minddata.bench.*`` scripts: the command line's parser
and argument types (:mod:`minddata._command_line`), for scripts that are their own entry point."""

from __future__ import annotations

from typing import NoReturn

from minddata._command_line import CommandParser, positive_int
from minddata.errors import UsageError

__all__ = ["OneLineParser", "positive_int"]


class OneLineParser(CommandParser):
    """:class:`~minddata._command_line.CommandParser` for a script run as ``python -m``: nothing above
    it turns the one-line :class:`UsageError` into an exit status, so it prints the line and exits 2."""

    def error(self, message: str) -> NoReturn:
        try:
            super().error(message)
        except UsageError as error:
            self.exit(2, f"{error}\n")
