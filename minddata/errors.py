"""Exceptions raised by minddata, and :func:`warn`, through which it logs every warning to users.

Every error names where it happened (the op or dataset node, the row, the source file when there is
one), the rule that was broken, the value found and, where there is one, the fix.
"""

from __future__ import annotations

import logging
import re

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
    "redact_urls",
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



# In a message: a URL's ``user:password@`` (the password), and the values of a presigned URL's
# credential and signature parameters (AWS's, Google's, Azure's, Alibaba's, Huawei's).
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:'\"]*):[^\s/?#@'\"]+@")
_SIGNED_QUERY = re.compile(
    r"([?&](?:X-Amz-(?:Security-Token|Signature|Credential)|X-Goog-(?:Signature|Credential)|Signature|AWSAccessKeyId"
    r"|OSSAccessKeyId|AccessKeyId|sig|token|access_token|x-oss-(?:signature|security-token|credential)"
    r"|x-obs-security-token)=)[^&\s'\"#]*",
    re.IGNORECASE,
)
_REDACTED = "<redacted>"


def redact_urls(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@host`` URL in it, and the values
    of presigned URLs' signature and credential parameters, replaced by ``<redacted>``.

    Examples:
        >>> redact_urls("reading http://me:hunter2@host/x.csv?X-Amz-Signature=ab12&part=1 failed")
        'reading http://me:<redacted>@host/x.csv?X-Amz-Signature=<redacted>&part=1 failed'
    """
    if "://" not in text:
        return text
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{_REDACTED}@", text)
    return _SIGNED_QUERY.sub(lambda m: m.group(1) + _REDACTED, text)


class MinddataError(Exception):
    """Base class of every error minddata raises on purpose. A URL's password and a presigned URL's
    signature in the message are redacted (:func:`redact_urls`): a message never holds a credential."""

    def __init__(self, *args: object):
        if args and isinstance(args[0], str):
            args = (redact_urls(args[0]), *args[1:])
        super().__init__(*args)


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
