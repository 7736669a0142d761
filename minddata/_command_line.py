"""What the ``minddata`` command and the commands behind it share (``minddata bench``, whose arguments
and work live in ``bench/``): the one-line argument parser, argument types, the library versions and the
executor check.

Examples:
    >>> from minddata._command_line import CommandParser, positive_int
    >>> parser = CommandParser(prog="minddata demo")
    >>> _ = parser.add_argument("--rounds", type=positive_int)
    >>> parser.parse_args(["--rounds", "3"]).rounds
    3
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Callable
from typing import NoReturn

from minddata.errors import UsageError

__all__ = [
    "PROG",
    "CommandParser",
    "positive_int",
    "whole_number",
    "workers_arg",
    "port_number",
    "non_negative_float",
    "positive_float",
    "library_versions",
    "check_executor",
]

PROG = "minddata"


class CommandParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line naming the problem (a :class:`UsageError`, exit
    status 2), not argparse's usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see {self.prog} --help)")


def whole_number(low: int, high: int | None = None, what: str = "a whole number") -> Callable[[str], int]:
    """An argparse ``type`` for whole numbers from ``low`` (to ``high``); its error names ``what`` the
    argument is and the range, e.g. ``expected a port number from 0 to 65535, found '70000'``.

    Examples:
        >>> whole_number(0, 19)("7")
        7
    """
    rule = f"{what} >= {low}" if high is None else f"{what} from {low} to {high}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {rule}, found {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {rule}, found {value}")
        return value

    return parse


positive_int = whole_number(1)
port_number = whole_number(0, 65535, "a port number")


def workers_arg(text: str) -> int | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 or 'auto', found {text!r}") from None


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, found {text}")
    return value


def positive_float(text: str) -> float:
    value = non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, found {text}")
    return value


def library_versions() -> dict[str, str]:
    """Versions of minddata, Python and the libraries its kernels use (``minddata --version``)."""
    from minddata._version import __version__

    versions = {"minddata": __version__, "Python": f"{platform.python_version()} ({sys.executable})"}
    try:
        import numpy

        versions["numpy"] = numpy.__version__
    except ImportError:
        versions["numpy"] = "not installed"
    try:
        import PIL
        from PIL import features

        if features.check_feature("libjpeg_turbo"):
            kind = f"libjpeg-turbo {features.version_feature('libjpeg_turbo') or ''}".rstrip()
        else:
            kind = f"libjpeg {features.version('jpg') or '?'}, not libjpeg-turbo: JPEG decode is slower"
        versions["Pillow"] = f"{PIL.__version__} (JPEG: {kind})"
    except ImportError:
        versions["Pillow"] = "not installed"
    try:
        import cv2

        versions["OpenCV"] = cv2.__version__
    except ImportError:
        versions["OpenCV"] = "not installed"
    return versions


def check_executor(command: str, executor: str) -> None:
    """A usage error for ``--executor ray`` when Ray is not installed (found now, not mid-run)."""
    if executor == "ray":
        from minddata.engine.ray_executor import require_ray

        try:
            require_ray()
        except ImportError as exc:
            raise UsageError(f"{PROG} {command}: error: --executor ray: {exc}") from None
