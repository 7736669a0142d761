"""Exceptions raised by minddata, and :func:`warn`, through which it logs every warning to users.

Every error names where it happened (the op or dataset node, the row, the source file when there is
one), the rule that was broken, the value found and, where there is one, the fix.
"""

from __future__ import annotations

import logging

__all__ = [
    "MinddataError",
    "ArgumentError",
    "GraphError",
    "ColumnNotFoundError",
    "PipelineError",
    "RowError",
    "EpochsExhaustedError",
    "DeviceError",
    "WorkerDiedError",
    "DataFormatError",
    "WARNING_PREFIX",
    "warn",
]

# Starts every warning minddata logs, so a line in a training log says where it comes from.
WARNING_PREFIX = "minddata: "


def warn(message: str, *args: object, logger: str = "minddata") -> None:
    """Log a warning for users on the ``minddata`` logger (or its child ``logger``), starting with
    ``minddata:``. ``args`` are ``%``-style arguments of ``message``, formatted only when the record is
    emitted. The record's location is the caller's.

    Examples:
        >>> import logging, sys
        >>> handler = logging.StreamHandler(sys.stdout)
        >>> logging.getLogger("minddata").addHandler(handler)
        >>> warn("%d row(s) skipped", 2)
        minddata: 2 row(s) skipped
        >>> logging.getLogger("minddata").removeHandler(handler)
    """
    logging.getLogger(logger).warning(WARNING_PREFIX + message, *args, stacklevel=2)



class MinddataError(Exception):
    """Base class of every error minddata raises on purpose."""


class ArgumentError(MinddataError, ValueError):
    """An argument broke a rule at construction time (op, argument, rule, value found)."""


class GraphError(MinddataError, ValueError):
    """The dataflow graph is inconsistent: unknown column, column clash, mismatched schemas."""


class ColumnNotFoundError(GraphError, RuntimeError):
    """A column named by an operation does not exist. Raised when the graph is built; also a
    ``RuntimeError``, which is what MindSpore raises (at iteration), so ``except RuntimeError`` ports."""


class PipelineError(MinddataError, RuntimeError):
    """The pipeline failed while running."""


class RowError(PipelineError):
    """An op failed on one row. ``op``, ``row`` and ``source`` say where; ``__cause__`` is the original
    error, except where the message already says all it would (a source's file that can't be read:
    the OS's reason is in the message, and its traceback is left out)."""

    def __init__(self, message: str, *, op: str, row: int | None, source: str | None = None):
        super().__init__(message)
        self.op = op
        self.row = row
        self.source = source

    def __reduce__(self):
        return (_rebuild_row_error, (str(self), self.op, self.row, self.source))


def _rebuild_row_error(message, op, row, source):
    return RowError(message, op=op, row=row, source=source)


class EpochsExhaustedError(PipelineError):
    """The iterator was read past the ``num_epochs`` it was created with."""


class DeviceError(MinddataError, RuntimeError):
    """An op was placed on a device that is absent or has no kernel for it."""


class WorkerDiedError(PipelineError):
    """A worker process ended without answering (crash, kill, out of memory). ``worker`` names it and
    ``exitcode`` is its exit status, where known."""

    def __init__(self, message: str, *, worker: str | None = None, exitcode: int | None = None):
        super().__init__(message)
        self.worker = worker
        self.exitcode = exitcode


class DataFormatError(MinddataError, ValueError):
    """A data file is missing, truncated, corrupted or not in the expected format or schema.

    The message names the file, where in it (record, row, byte offset) and what is wrong; ``path``
    holds the file.
    """

    def __init__(self, message: str, *, path: str | None = None):
        super().__init__(message)
        self.path = path

    def __reduce__(self):
        return (_rebuild_format_error, (str(self), self.path))


def _rebuild_format_error(message, path):
    return DataFormatError(message, path=path)


class UsageError(MinddataError, ValueError):
    """A bad command line: reported by ``minddata`` as one line naming the problem and the fix, exit 2."""
