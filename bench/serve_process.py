"""Run ``minddata serve`` as a child process on a free 127.0.0.1 port, for the load benchmark and the
service's tests: start it, wait for its start-up print, read its URL, stop it with SIGTERM.

Examples:
    >>> from minddata.bench.serve_process import ServerProcess
    >>> with ServerProcess(["infer224", "--max-batch", "8"]) as server:   # doctest: +SKIP
    ...     print(server.url)
    http://127.0.0.1:40123
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

__all__ = ["ServerProcess"]

_LISTENING = re.compile(r"listening on (http://\S+)")


class ServerProcess:
    """``python -m minddata.cli serve ARGS --host 127.0.0.1 --port 0`` (or ``python -m MODULE ARGS ...``
    for another server that prints ``listening on URL``). Its stdout and stderr are read by threads (so
    the child never blocks on a full pipe) and kept in ``stdout``/``stderr``."""

    def __init__(self, args: Sequence[str], startup_timeout_s: float = 90.0, env: dict[str, str] | None = None,
                 module: Sequence[str] = ("minddata.cli", "serve")):
        self.args = list(args)
        self.module = list(module)
        self.startup_timeout_s = startup_timeout_s
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._readers: list[threading.Thread] = []

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def _read(self, stream, sink: list[str], forward: bool) -> None:
        for line in stream:
            sink.append(line)
            if forward:
                self._lines.put(line)
        if forward:
            self._lines.put(None)

    def start(self) -> ServerProcess:
        cmd = [sys.executable, "-m", *self.module, *self.args, "--host", "127.0.0.1", "--port", "0"]
        env = dict(os.environ if self.env is None else self.env, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for stream, sink, forward in ((self.proc.stdout, self.stdout, True), (self.proc.stderr, self.stderr, False)):
            t = threading.Thread(target=self._read, args=(stream, sink, forward), daemon=True)
            t.start()
            self._readers.append(t)
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                self.kill()
                raise TimeoutError(f"minddata serve did not start within {self.startup_timeout_s:g} s: "
                                   f"{''.join(self.stderr)[-2000:]}") from None
            if line is None:
                code = self.proc.wait(timeout=10)
                raise RuntimeError(f"minddata serve exited with status {code} before listening: "
                                   f"{''.join(self.stderr)[-2000:]}")
            found = _LISTENING.search(line)
            if found:
                self.url = found.group(1)
                return self

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGTERM (drain), then the exit status; SIGKILL if it does not exit within ``timeout_s``."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        for t in self._readers:
            t.join(timeout=5)
        return code

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            self.kill()
