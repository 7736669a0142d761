"""A file's bytes as a ``uint8`` array, read once straight into the array: what the image sources
(``ImageFolderDataset``, the loaders) and ``vision.read_file`` hand to ``Decode``.

Examples:
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"minddata")
    >>> read_file(f.name).tobytes(), read_file(f.name).flags.writeable
    (b'minddata', True)
    >>> os.unlink(f.name)
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["read_file"]

try:
    # Two GIL hand-overs a file instead of five (ops/_file_bytes.pyx); built where there is a compiler.
    from minddata.ops._file_bytes import read_whole as _read_whole
except ImportError:
    _read_whole = None


def read_file(path: str | os.PathLike) -> np.ndarray:
    """A file's bytes as a writable 1-D ``uint8`` array, read straight into it (one ``read`` into the
    array's memory; ``np.fromfile`` goes through a C ``FILE`` and its buffer). Raises ``OSError``."""
    if _read_whole is not None:
        data = _read_whole(path)
        if data is not None:
            return data
    return _read_with_python(path)


def _read_with_python(path: str | os.PathLike) -> np.ndarray:
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        data = np.empty(size, np.uint8)
        got = f.readinto(data.data) if size else 0
        if got == size:
            # One byte more tells a file that grew since fstat (or a /proc-like one that reports size 0)
            # in one system call, where read() would stat and seek first.
            more = f.read(1)
            if not more:
                return data
            more += f.read()
            return np.concatenate([data, np.frombuffer(more, np.uint8)])
        return data[:got].copy()  # shrank since fstat
