"""Argument parsing shared by the ``python -m minddata.bench.*`` scripts."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["OneLineParser", "positive_int"]


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {value}")
    return value


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments give one line and exit 2, not argparse's usage block (the project's rule)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")
