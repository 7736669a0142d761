"""A progress bar for long command-line steps (generating images, converting, benchmarking).

On a terminal it is redrawn in place at most ten times a second with the rate and the time left; in a
log (not a terminal, or under CI) it writes one line per 10% so that logs stay short.

Examples:
    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar("copying", 4, unit="files", stream=out)
    >>> for done in range(1, 5):
    ...     bar(done)
    >>> bar.close()
    >>> out.getvalue().splitlines()[-1].split("]")[1].split("  ")[0]
    ' 4/4 files'
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

__all__ = ["ProgressBar", "progress_enabled"]


def progress_enabled(stream: Any) -> bool:
    """A bar redrawn in place is for people at a terminal; CI logs would fill with carriage returns."""
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class ProgressBar:
    """``label [#####.....] 1,234/2,000 images  845 images/s  1 s left``.

    Call it with the count done so far (and optionally ``nbytes``, shown in MB); ``close()`` ends the
    line. ``quiet=True`` draws nothing; ``in_logs=False`` draws only on a terminal.
    """

    def __init__(self, label: str, total: int, *, unit: str = "items", stream: Any = None, show_rate: bool = True,
                 quiet: bool = False, in_logs: bool = True):
        self.label = label
        self.total = max(int(total), 1)
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = progress_enabled(self.stream)
        self.show_rate = show_rate
        self.quiet = quiet
        self.in_logs = in_logs
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.last_tenth = -1
        self.drawn = False
        self.done = 0

    def line(self, done: int, nbytes: int | None = None, now: float | None = None) -> str:
        """The bar's text for ``done`` items (also used by tests)."""
        now = time.perf_counter() if now is None else now
        elapsed = max(now - self.start, 1e-9)
        width = 28
        filled = min(width, width * done // self.total)
        text = f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{self.total:,} {self.unit}"
        if nbytes is not None:
            text += f"  {nbytes / 1e6:,.1f} MB"
        if self.show_rate and done:
            rate = done / elapsed
            text += f"  {rate:,.0f} {self.unit}/s"
            if done < self.total:
                text += f"  {_duration((self.total - done) / rate)} left"
            else:
                text += f"  {_duration(elapsed)}"
        return text

    def __call__(self, done: int, total: int | None = None, nbytes: int | None = None) -> None:
        if total is not None:
            self.total = max(int(total), 1)
        self.done = done
        if self.quiet:
            return
        now = time.perf_counter()
        if self.tty:
            if now - self.last_draw >= 0.1 or done >= self.total:
                self.stream.write("\r" + self.line(done, nbytes, now) + " ")
                self.stream.flush()
                self.last_draw = now
                self.drawn = True
        elif self.in_logs:
            tenth = done * 10 // self.total
            if tenth != self.last_tenth:
                self.stream.write(self.line(done, nbytes, now) + "\n")
                self.stream.flush()
                self.last_tenth = tenth

    def close(self) -> None:
        """End the bar's line on a terminal (the next output starts on a fresh line)."""
        if self.tty and self.drawn and not self.quiet:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
