"""Argument parsing shared by the ``python -m minddata.bench.*`` scripts."""

from __future__ import annotations

import argparse
from typing import NoReturn

from minddata._command_line import positive_int

__all__ = ["OneLineParser", "positive_int"]


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line and exit 2, not argparse's usage block (the project's rule)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
