"""What kind of encoded image a row holds, from its first bytes: device kernels accept some formats
only (Dvpp decodes JPEG only; DALI has no GIF decoder), and their errors name the format found.

Examples:
    >>> from minddata.ops.formats import sniff_format
    >>> sniff_format(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(20))
    'PNG'
    >>> sniff_format(b"\\xff\\xd8\\xff\\xe0")
    'JPEG'
"""

from __future__ import annotations

import io
import struct
from typing import Any

import numpy as np

__all__ = ["pil_open", "sniff_format"]

_MAGIC = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"\x00\x00\x00\x0cjP  \r\n\x87\n", "JPEG 2000"),
    (b"\xff\x4f\xff\x51", "JPEG 2000"),
)


def sniff_format(data: Any) -> str:
    """``"JPEG"``, ``"PNG"``, ``"GIF"``, ``"BMP"``, ``"TIFF"``, ``"WebP"``, ``"JPEG 2000"``, ``"PNM"``,
    ``"empty"`` or ``"unknown"``, from the magic bytes (nothing is decoded)."""
    if isinstance(data, np.ndarray):
        head = data.reshape(-1)[:16].view(np.uint8).tobytes() if data.dtype.itemsize == 1 else b""
        if data.dtype.kind == "S" and data.size == 1 and data.ndim <= 1:
            head = data.tobytes()[:16]
    else:
        head = bytes(memoryview(data)[:16])
    if not head:
        return "empty"
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP"
    if len(head) >= 2 and head[0:1] == b"P" and head[1:2] in b"123456":
        return "PNM"
    return "unknown"


def pil_open(buf: np.ndarray) -> Any:
    """``PIL.Image.open`` of the bytes, less Pillow's own decompression-bomb check: our pixel limit
    (checked by the caller on the size this image object parsed) is the one knob, so that
    ``set_max_image_pixels(None)`` or a higher limit really lets trusted large images through.
    Walks Pillow's plugin registry (``Image.ID``/``Image.OPEN``) as ``Image.open`` does."""
    from PIL import Image, UnidentifiedImageError

    fp = io.BytesIO(buf.tobytes())
    prefix = fp.read(16)
    for loader in (Image.preinit, Image.init):
        loader()
        for plugin in list(Image.ID):
            factory, accept = Image.OPEN[plugin]
            try:
                result = not accept or accept(prefix)
                if result and not isinstance(result, str):
                    fp.seek(0)
                    return factory(fp, "")
            except (SyntaxError, IndexError, TypeError, struct.error):
                continue
    raise UnidentifiedImageError("cannot identify image file")
