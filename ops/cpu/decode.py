"""CPU kernel of Decode: libjpeg-turbo for JPEG (the ``_jpeg`` extension, GIL released), Pillow for
every other format, OpenCV for CMYK JPEGs. The header and the pixel limit are checked first, by the
decode plan (:mod:`minddata.ops.plans.decode`), as on every device.
"""

from __future__ import annotations

import struct
from typing import Any

import cv2
import numpy as np

from minddata import config
from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu import jpeg
from minddata.ops.formats import pil_open, sniff_format
from minddata.ops.plans.decode import (
    SKIP_HINT,
    PixelLimitError,
    check_image_pixels,
    empty_input_error,
    encoded_bytes,
)
from minddata.ops.registry import declare_op, register_kernel

__all__ = ["PixelLimitError", "check_image_pixels", "decode_image"]

_IMREAD_FLAGS = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION


def _not_decodable(buf: np.ndarray, reason: str, op_name: str = "Decode") -> ValueError:
    # The format and size only: echoing the bytes would show a file's contents in logs.
    fmt = sniff_format(buf)
    what = f"its signature says {fmt}" if fmt not in ("unknown", "empty") else "its signature is no known format"
    return ValueError(
        f"{op_name}: the input is not a decodable image ({buf.size} bytes; {what}); "
        f"expected JPEG, PNG, BMP, GIF, WebP or TIFF{reason}. {SKIP_HINT}"
    )


def _pil_rgb(im: Any) -> Any:
    """Pillow's first frame as RGB; 16-bit grey keeps its high byte (as libpng's strip_16 does),
    where ``convert`` would clip every value over 255 to white."""
    from PIL import Image

    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N"):
        high = (np.asarray(im, dtype=np.uint16) >> 8).astype(np.uint8)
        return Image.fromarray(high).convert("RGB")
    if im.mode == "RGB":
        im.load()  # already RGB: no converted copy (the caller's np.array copies once)
        return im
    return im.convert("RGB")


class TruncatedJpegError(ValueError):
    """A JPEG whose data ends before the image its frame header claims does."""


def _refuse_short_scan(buf: np.ndarray, op_name: str) -> None:
    try:
        shortfall = jpeg.scan_shortfall(buf)
    except ValueError:
        return  # a header the marker walk can't follow: the decoder names what is wrong
    if shortfall:
        raise TruncatedJpegError(f"{op_name}: the JPEG is truncated: {shortfall}. {SKIP_HINT}")


def _pil_decode(buf: np.ndarray, op_name: str, limit: int | None) -> Any:
    """Pillow decodes; the pixel limit is checked on the size Pillow's own header parse found, on the
    image object that then loads (so whatever Pillow reads in the header is what it decodes)."""
    from PIL import UnidentifiedImageError

    try:
        with pil_open(buf) as im:
            width, height = im.size
            check_image_pixels(op_name, width, height, limit=limit)
            if im.format == "JPEG":
                _refuse_short_scan(buf, op_name)  # Pillow pads the rows a short scan lacks with grey
            return _pil_rgb(im)
    except (PixelLimitError, TruncatedJpegError):
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError, struct.error) as e:
        raise _not_decodable(buf, f" (Pillow: {e})", op_name) from None


def _jpeg_failure(buf: np.ndarray, error: Exception, op_name: str) -> tuple[bool, ValueError]:
    """(truncated?, what is wrong with a JPEG libjpeg refused, in words, not its bytes)."""
    message = str(error).removeprefix("JPEG decode: ")
    if "ends before the image does" in message:
        # e.g. "Premature end of JPEG file", or a header cut short
        libjpeg = message.split(": the data ends", 1)[0].removeprefix("corrupt or unsupported JPEG header: ")
        return True, ValueError(
            f"{op_name}: the JPEG is truncated: its data ends after {buf.size} bytes, before the image does "
            f"(libjpeg: {libjpeg}). {SKIP_HINT}"
        )
    return False, ValueError(f"{op_name}: the JPEG can't be decoded: {message}. {SKIP_HINT}")


_FROM_CONFIG: Any = object()  # "read config.get_max_image_pixels()", for callers outside a pipeline


def decode_image(data: Any, to_pil: bool = False, op_name: str = "Decode", max_pixels: Any = _FROM_CONFIG) -> Any:
    """Encoded bytes → RGB ``uint8`` HWC array (or a PIL image in mode RGB when ``to_pil``).

    JPEG goes to libjpeg-turbo (the ``_jpeg`` extension: GIL released, straight into the output);
    everything else, and JPEGs the extension can't take, to Pillow. The pixel limit ``max_pixels``
    (default ``config.get_max_image_pixels()``; ``None``: no limit) is checked on the size that the
    decoder about to decode read from the header (libjpeg's ``jpeg_read_header``, Pillow's
    ``Image.open``), before any pixel is allocated: a separate header parse could disagree with the
    decoder (e.g. junk bytes before the frame header) and let a bomb through. OpenCV decodes only
    CMYK/YCCK JPEGs, after libjpeg has read and checked their header. ``op_name`` names the op in
    errors: ops that decode as one of their steps pass their own name.
    """
    buf = encoded_bytes(data, op_name)
    if buf.size == 0:
        raise empty_input_error(op_name)
    limit = config.snapshot().max_image_pixels if max_pixels is _FROM_CONFIG else max_pixels
    if not jpeg.AVAILABLE and not to_pil and jpeg.is_jpeg(buf):
        jpeg.note_fallback()
    if to_pil or not jpeg.AVAILABLE or not jpeg.is_jpeg(buf):
        return _pil_decode(buf, op_name, limit) if to_pil else np.array(_pil_decode(buf, op_name, limit))
    checked: list[tuple[int, int]] = []

    def check_size(width: int, height: int) -> None:
        check_image_pixels(op_name, width, height, limit)
        checked.append((width, height))

    try:
        return jpeg.decode(buf, check_size=check_size)
    except PixelLimitError:
        raise
    except ValueError as e:
        truncated, failure = _jpeg_failure(buf, e, op_name)
        if truncated:
            raise failure from None
    if checked:
        # libjpeg read and accepted the header (e.g. CMYK, which the extension leaves to OpenCV, whose
        # bundled libjpeg-turbo reads the same header).
        try:
            bgr = cv2.imdecode(buf, _IMREAD_FLAGS)
        except cv2.error:
            bgr = None
        if bgr is not None and bgr.ndim == 3 and bgr.shape[2] == 3 and bgr.dtype == np.uint8:
            return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB, dst=bgr)
    # A JPEG process this libjpeg lacks (e.g. lossless): Pillow's newer libjpeg-turbo may decode it.
    try:
        return np.array(_pil_decode(buf, op_name, limit))
    except PixelLimitError:
        raise
    except ValueError:
        raise failure from None


declare_op("Decode", cost_ms_per_mp=8.0, decodes=True, fusion_partners=("Resize", "RandomResizedCrop"))
@register_kernel("Decode", "CPU")
def decode(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
    return decode_image(data, to_pil=op.to_pil, max_pixels=ctx.options.max_image_pixels)
