"""CRC-32C (Castagnoli), as TFRecord frames use it, without a compiled dependency.

- :func:`crc32c_py`: the textbook table-driven loop (reflected polynomial 0x82F63B78, initial and
  final XOR 0xFFFFFFFF), one byte per step. The reference.
- :func:`crc32c`: the same value, fast for long inputs. CRC is linear over GF(2): with a zero
  initial register, ``raw(A + B) = Z^len(B)(raw(A)) ^ raw(B)``, where ``Z`` is "feed one zero byte",
  a linear map of the 32-bit register. So the input is cut into blocks of 64 bytes whose raw CRCs
  are computed all at once with NumPy (64 vectorized table steps), then combined pairwise,
  ``log2(blocks)`` vectorized steps, each applying ``Z^k`` through four 256-entry tables.
  Leading zero bytes leave a zero register unchanged, which pads the input to whole blocks.
  If ``google_crc32c`` or ``crc32c`` (hardware CRC) is installed, it is used instead.
- :func:`masked_crc`: TFRecord's mask, ``((crc >> 15) | (crc << 17)) + 0xa282ead8``.

Examples:
    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
"""

from __future__ import annotations

import numpy as np

__all__ = ["crc32c", "crc32c_py", "masked_crc", "BACKEND"]

_POLY = 0x82F63B78
_MASK32 = 0xFFFFFFFF
_BLOCK = 64
_SMALL = 1024


def _make_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_table()
_TABLE_NP = np.asarray(_TABLE, dtype=np.uint32)


def crc32c_py(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-32C of ``data``, continuing from ``crc`` (0 to start), byte by byte."""
    table = _TABLE
    c = crc ^ _MASK32
    for b in bytes(data):
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ _MASK32


# _ZPOW[i]: the 4 byte tables of Z^(2^i), "feed 2^i zero bytes", as one (4, 256) uint32 array.
_ZPOW: list[np.ndarray] = []


def _tables_from_images(images: np.ndarray) -> np.ndarray:
    """Byte tables of a linear map given the images of the 32 basis bits."""
    values = np.arange(256, dtype=np.uint32)
    tables = np.zeros((4, 256), dtype=np.uint32)
    for j in range(4):
        for bit in range(8):
            tables[j] ^= np.where((values >> bit) & 1, images[8 * j + bit], 0).astype(np.uint32)
    return tables


def _apply(tables: np.ndarray, c: np.ndarray) -> np.ndarray:
    return tables[0][c & 0xFF] ^ tables[1][(c >> 8) & 0xFF] ^ tables[2][(c >> 16) & 0xFF] ^ tables[3][c >> 24]


def _zpow(i: int) -> np.ndarray:
    while len(_ZPOW) <= i:
        if not _ZPOW:
            basis = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
            images = _TABLE_NP[basis & 0xFF] ^ (basis >> 8)
        else:
            prev = _ZPOW[-1]
            basis = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
            images = _apply(prev, _apply(prev, basis))
        _ZPOW.append(_tables_from_images(images))
    return _ZPOW[i]


_ZPOW_LISTS: list[tuple[list[int], ...]] = []


def _zpow_lists(i: int) -> tuple[list[int], ...]:
    while len(_ZPOW_LISTS) <= i:
        _ZPOW_LISTS.append(tuple(t.tolist() for t in _zpow(len(_ZPOW_LISTS))))
    return _ZPOW_LISTS[i]


def _apply_scalar(tables: tuple[list[int], ...], c: int) -> int:
    t0, t1, t2, t3 = tables
    return t0[c & 0xFF] ^ t1[(c >> 8) & 0xFF] ^ t2[(c >> 16) & 0xFF] ^ t3[c >> 24]


def _shift(c: int, n: int) -> int:
    """Z^n(c): the register after ``n`` zero bytes."""
    i = 0
    while n:
        if n & 1:
            c = _apply_scalar(_zpow_lists(i), c)
        n >>= 1
        i += 1
    return c


def _raw_blocks(data: np.ndarray, block: int = _BLOCK) -> int:
    """The raw (zero-initial, unfinalized) CRC register of ``data``, vectorized over blocks of
    ``block`` bytes (a power of two)."""
    pad = (-len(data)) % block
    if pad:
        data = np.concatenate([np.zeros(pad, np.uint8), data])
    blocks = data.reshape(-1, block)
    c = np.zeros(len(blocks), dtype=np.uint32)
    table = _TABLE_NP
    for j in range(block):
        c = table[(c ^ blocks[:, j]) & 0xFF] ^ (c >> 8)
    level = block.bit_length() - 1  # blocks of 2^level bytes
    while len(c) > 32:
        if len(c) % 2:
            c = np.concatenate([np.zeros(1, np.uint32), c])  # a leading zero block changes nothing
        c = _apply(_zpow(level), c[0::2]) ^ c[1::2]
        level += 1
    tables = _zpow_lists(level)
    register = 0
    for value in c.tolist():
        register = _apply_scalar(tables, register) ^ value
    return register


def _crc32c_numpy(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    view = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    if len(view) < _SMALL:
        return crc32c_py(view.tobytes(), crc)
    # Short inputs: fewer, smaller blocks (each block byte is a NumPy step; each halving is one too).
    block = _BLOCK if len(view) >= 1 << 14 else 16 if len(view) >= 1 << 11 else 8
    register = _shift(crc ^ _MASK32, len(view)) ^ _raw_blocks(view, block)
    return register ^ _MASK32


def _hardware():
    try:
        import google_crc32c  # type: ignore[import-not-found]  # optional, faster when installed

        if google_crc32c.implementation == "c":
            return (lambda data, crc=0: google_crc32c.extend(crc, bytes(data))), "google_crc32c"
    except ImportError:
        pass
    try:
        import crc32c as _crc32c_pkg  # type: ignore[import-not-found]  # optional, faster when installed

        return (lambda data, crc=0: _crc32c_pkg.crc32c(bytes(data), crc)), "crc32c"
    except ImportError:
        pass
    return None, "numpy"


_FAST, BACKEND = _hardware()
crc32c = _FAST or _crc32c_numpy
crc32c.__doc__ = "CRC-32C of ``data``, continuing from ``crc`` (0 to start)."


def masked_crc(data: bytes | bytearray | memoryview) -> int:
    """TFRecord's masked CRC-32C of ``data``."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & _MASK32
