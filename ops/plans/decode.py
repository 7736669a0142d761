"""Decode plans: the bytes a row holds, the size its header claims, whether that size is allowed
(the decompression-bomb guard), and the reduced JPEG scale a fused decode may use.

These run before any pixel is decoded and on every device: the CPU, Dvpp and GPU decoders check the
same header against the same limit with the same message.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from minddata import config
from minddata.ops.formats import pil_open

__all__ = [
    "PixelLimitError",
    "SKIP_HINT",
    "check_image_pixels",
    "choose_scale",
    "empty_input_error",
    "encoded_bytes",
    "image_header_size",
]

# Ends every decoder's error about a damaged input (empty, truncated, garbage), on every device.
SKIP_HINT = (
    "If some files are known to be damaged, minddata.config.set_error_samples_mode('skip') skips such rows "
    "(or 'replace' repeats the previous good row)"
)


def encoded_bytes(x: Any, op_name: str = "Decode") -> np.ndarray:
    """The encoded image in ``x`` (bytes, a 1-D ``uint8``/``int8`` array or a bytes scalar) as a
    ``uint8`` array, or a ``TypeError`` naming ``op_name`` and what was found instead."""
    if isinstance(x, (bytes, bytearray, memoryview)):
        return np.frombuffer(x, dtype=np.uint8)
    if isinstance(x, np.ndarray):
        if (
            x.dtype.kind == "S" and x.size == 1 and x.ndim <= 1
        ):  # a bytes scalar, or MindRecord's shape-(1,) bytes
            return np.frombuffer(x.tobytes(), dtype=np.uint8)
        if x.ndim == 1 and x.dtype in (np.uint8, np.int8):
            return x.view(np.uint8)
        hint = " It looks already decoded." if x.ndim in (2, 3) and x.dtype.kind in "uif" else ""
        raise TypeError(
            f"{op_name}: expected encoded image bytes (a 1-D uint8 array or bytes). "
            f"Found an array of shape {x.shape}, dtype {x.dtype}.{hint}"
        )
    raise TypeError(
        f"{op_name}: expected encoded image bytes (a 1-D uint8 array or bytes). Found: {type(x).__name__}"
    )


def empty_input_error(op_name: str = "Decode") -> ValueError:
    """The error for a row of 0 bytes: most often an empty file (a copy or download that never
    finished), so it carries the same skip/replace advice as a truncated or garbage image."""
    return ValueError(
        f"{op_name}: the input is empty (0 bytes); expected an encoded image (an empty file is usually a "
        f"copy or download that did not finish). {SKIP_HINT}"
    )


class PixelLimitError(ValueError):
    """The decompression-bomb guard refused an image (its header is over the pixel limit)."""


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Start-of-frame markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but don't.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(buf: np.ndarray) -> tuple[int, int] | None:
    """(width, height) from a JPEG's SOF segment, walking the marker segments before it."""
    data = buf.data
    n = len(data)
    i = 2
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None  # not at a marker: corrupt, let the decoder report it
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image / start of scan before any frame header
            return None
        (length,) = struct.unpack_from(">H", data, i + 2)
        if marker in _JPEG_SOF:
            if i + 9 > n:
                return None
            height, width = struct.unpack_from(">HH", data, i + 5)
            # height 0 means "defined later by a DNL marker", which libjpeg-turbo doesn't support.
            return (width, height) if height else None
        i += 2 + length
    return None


def _pil_size(buf: np.ndarray) -> tuple[int, int] | None:
    try:
        with pil_open(buf) as im:  # parses the header only; pixels are read on load()
            return im.size
    except Exception:  # noqa: BLE001 - unreadable headers are reported by the decoders with context
        return None


def image_header_size(data: Any, op_name: str = "Decode") -> tuple[int, int] | None:
    """(width, height) an encoded image's header claims, read without decoding any pixel; ``None``
    when the header can't be read (the decoders then report the problem)."""
    buf = np.ascontiguousarray(encoded_bytes(data, op_name))  # struct reads need one contiguous buffer
    if buf.size >= 24 and buf[:8].tobytes() == _PNG_SIGNATURE:
        if buf[12:16].tobytes() != b"IHDR":
            return None
        width, height = struct.unpack_from(">II", buf.data, 16)
        return width, height
    if buf.size >= 4 and buf[0] == 0xFF and buf[1] == 0xD8:
        return _jpeg_size(buf)
    return _pil_size(buf)


_FROM_CONFIG: Any = object()  # "read config.get_max_image_pixels()", for callers outside a pipeline


def check_image_pixels(op_name: str, width: int, height: int, limit: int | None = _FROM_CONFIG) -> None:
    """Refuse an image larger than ``limit`` pixels (the decompression-bomb guard); ``limit``
    defaults to ``config.get_max_image_pixels()``, ``None`` is no limit."""
    if limit is _FROM_CONFIG:
        limit = config.snapshot().max_image_pixels
    if limit is not None and width * height > limit:
        raise PixelLimitError(
            f"{op_name}: the image header says {width}x{height} = {width * height} pixels, over the limit of "
            f"{limit} pixels (a decompression-bomb guard; nothing was decoded). If the image is trusted, raise "
            "the limit with minddata.config.set_max_image_pixels(n), or pass None to remove it"
        )


_SCALES = (8, 4, 2)


def choose_scale(height: int, width: int, need_h: int, need_w: int) -> int:
    """The largest libjpeg scale denominator s in (8, 4, 2) with ceil(h/s) >= need_h and
    ceil(w/s) >= need_w, or 1. Only 1/2, 1/4 and 1/8 are cheaper than a full decode.

    Examples:
        >>> from minddata.ops.plans.decode import choose_scale
        >>> choose_scale(480, 640, 224, 224), choose_scale(480, 640, 100, 100), choose_scale(480, 640, 300, 300)
        (2, 4, 1)
    """
    for s in _SCALES:
        if -(-height // s) >= need_h and -(-width // s) >= need_w:
            return s
    return 1
