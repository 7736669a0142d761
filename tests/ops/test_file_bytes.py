"""``read_file``: the compiled reader (ops/_file_bytes.pyx) and the Python one give the same arrays
and the same errors, whatever the file."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from minddata.ops import file_bytes

try:
    from minddata.ops._file_bytes import read_whole
except ImportError:  # no compiler where the package was built, or not POSIX
    read_whole = None


def _compiled(path: str | os.PathLike) -> np.ndarray:
    if read_whole is None:
        pytest.skip("minddata.ops._file_bytes is not built here (no C compiler or Cython at install, or not POSIX)")
    data = read_whole(path)
    assert data is not None
    return data


READERS: dict[str, Callable[[str | os.PathLike], np.ndarray]] = {
    "compiled": _compiled,
    "python": file_bytes._read_with_python,
    "read_file": file_bytes.read_file,
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 85_000, 3 * 1024 * 1024 + 7])
def test_every_reader_returns_the_files_bytes_as_a_writable_array(tmp_path: Path, reader: str, size: int) -> None:
    payload = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    path = tmp_path / "f.bin"
    path.write_bytes(payload.tobytes())
    data = READERS[reader](path)
    assert data.dtype == np.uint8 and data.ndim == 1 and data.flags.writeable and data.flags.owndata
    np.testing.assert_array_equal(data, payload)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("as_type", [str, bytes, Path])
def test_a_path_may_be_str_bytes_or_path_like(tmp_path: Path, reader: str, as_type: type) -> None:
    path = tmp_path / "named é.bin"
    path.write_bytes(b"minddata")
    arg = os.fsencode(path) if as_type is bytes else as_type(path)
    assert READERS[reader](arg).tobytes() == b"minddata"


@pytest.mark.parametrize("reader", READERS)
def test_a_missing_file_raises_file_not_found_with_its_path(tmp_path: Path, reader: str) -> None:
    missing = tmp_path / "none.jpg"
    with pytest.raises(FileNotFoundError) as caught:
        READERS[reader](missing)
    assert caught.value.errno == errno.ENOENT and str(missing) in str(caught.value)


@pytest.mark.parametrize("reader", READERS)
def test_a_directory_raises_is_a_directory(tmp_path: Path, reader: str) -> None:
    with pytest.raises(IsADirectoryError):
        READERS[reader](tmp_path)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc here (not Linux)")
def test_a_file_longer_than_its_stat_size_is_read_whole() -> None:
    # /proc files report size 0: the compiled reader says so (None) and read_file reads it all.
    if read_whole is not None:
        assert read_whole("/proc/self/status") is None
    text = file_bytes.read_file("/proc/self/status").tobytes()
    assert text.startswith(b"Name:") and text.endswith(b"\n")


def test_the_compiled_reader_closes_every_file(tmp_path: Path) -> None:
    if read_whole is None:
        pytest.skip("minddata.ops._file_bytes is not built here (no C compiler or Cython at install, or not POSIX)")
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd here (not Linux): open descriptors cannot be counted")
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(200):
        read_whole(path)
        with pytest.raises(OSError):
            read_whole(tmp_path)  # opened, then the read fails: closed too
    assert len(os.listdir("/proc/self/fd")) == before
