"""JPEG decoding at a reduced DCT scale and/or of a crop only, over libjpeg-turbo.

The fusion passes (DESIGN.md §4) use this module: Decode+Resize becomes a decode at 1/2, 1/4 or 1/8
scale and a smaller resize; Decode+RandomResizedCrop picks the crop from the header's size, then
decodes only that region at the smallest adequate scale.

Fast path: the Cython extension ``minddata.ops.cpu._jpeg`` (ops/cpu/_jpeg.pyx), built by setup.py
where libjpeg-turbo's headers are found. ``AVAILABLE`` says whether it was; ``WHY_UNAVAILABLE`` says
why not and how to fix it. A source checkout (a script or ``python -m pytest`` run from the repository
root imports it, not the installed package; see :mod:`minddata._checkout`) has the extension only once
built in place (``python setup.py build_ext --inplace``): ``pip install .`` builds it into the installed
copy alone. There the first JPEG decoded without it logs a warning saying so. Without it:

* :func:`read_header` parses the frame header (SOF marker) in pure Python, so sizes can be planned
  everywhere;
* :func:`decode` is the *slow path*: OpenCV decodes the whole image (at the reduced scale through
  ``IMREAD_REDUCED_COLOR_{2,4,8}``, which is libjpeg's own DCT scaling and gives the same pixels as
  the fast path), then the crop is cut out. The brief's full decode + ``cv2.resize(INTER_AREA)`` was
  measured instead and rejected: off by up to 85 grey levels on odd sizes, where ``ceil(W/s)`` is
  not ``W/s``; it is kept only for an OpenCV whose reduced decode has an unexpected size.

Scaling and cropping rules (both paths):

* At ``scale_denom`` s the image is ``(ceil(H/s), ceil(W/s))`` — libjpeg's output size and what
  Pillow's ``draft()`` gives.
* A crop ``(top, left, height, width)`` is given in *original* pixels and must lie inside the
  image. At scale s it covers rows ``floor(top/s)`` to ``ceil((top+height)/s)`` (exclusive) and the
  same for columns: rounded outwards, so the result always contains the requested region.
  :func:`scaled_crop_box` computes that box; ``decode(data, s, crop)`` equals
  ``decode(data, s)[t:t+h, x:x+w]`` for ``(t, x, h, w) = scaled_crop_box(*crop, s, H, W)``.

Exactness (measured with libjpeg-turbo 2.1.5 in the extension, Pillow 13 with its bundled
libjpeg-turbo 3.x, OpenCV 5; tests/ops/test_jpeg.py checks all of it on 4:2:0, 4:2:2, 4:4:4,
grayscale, progressive and restart-marker files of odd sizes):

* full decode == Pillow's decode, bit-exact; scaled decode == Pillow's ``draft('RGB', (W//s, H//s))``
  decode, bit-exact (same ISLOW IDCT, fancy upsampling and IDCT scaling);
* crop == full decode at the same scale, cropped, bit-exact. A bare ``jpeg_crop_scanline`` is not:
  libjpeg's fancy chroma upsampling treats the crop's left/right edge as an image edge, which
  changes the edge columns of 4:2:0/4:2:2 images (measured: up to 44 levels on a noisy image, at
  scale 1, and at 1/2 and 1/4 for 4:2:2), and it falls back to box upsampling for a crop under 3
  chroma samples wide. The extension therefore decodes one extra column on each side, and at least
  ``3 * max_h_samp_factor`` columns, then drops the extras (cost: at most one iMCU, 8-32 pixels, per
  side). Rows need no margin: ``jpeg_skip_scanlines`` keeps the upsampling context;
* the slow path == the fast path, bit-exact (OpenCV's reduced decode is libjpeg's DCT scaling).

Errors: anything that is not a decodable JPEG raises ``ValueError`` naming the problem (not a
JPEG, a damaged header, data ending before the image does, CMYK/YCCK on the fast path). Like Pillow
and OpenCV, a file missing only its final EOI marker counts as truncated. A crop stops reading at
its last row, so damage below a crop of a baseline (sequential) file goes unnoticed; a progressive
file is always read whole.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from minddata.errors import warn

__all__ = [
    "AVAILABLE",
    "LIBJPEG_VERSION",
    "SCALES",
    "WHY_UNAVAILABLE",
    "decode",
    "is_jpeg",
    "note_fallback",
    "read_header",
    "scaled_crop_box",
    "scaled_size",
    "scan_shortfall",
]

SCALES = (1, 2, 4, 8)
_FIX = "install libjpeg62-turbo-dev (Debian) or libjpeg-turbo-devel and reinstall"
_HEADER_DIRS = ("/usr/include", "/usr/local/include")
_BUILD_IN_PLACE = "python setup.py build_ext --inplace"


def _checkout_root() -> str | None:
    """The repository root when this module was imported from a source checkout (``<root>/ops/cpu/``
    beside ``<root>/setup.py``), None when from an installed package (``minddata/ops/cpu/``)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(root, "setup.py")) and os.path.isdir(os.path.join(root, "minddata")):
        return root
    return None


CHECKOUT_ROOT = _checkout_root()


def _headers_found() -> bool:
    explicit = os.environ.get("JPEG_INCLUDE_DIR")  # setup.py looks only there when it is set
    where = [explicit] if explicit is not None else list(_HEADER_DIRS)
    return any(d and os.path.isfile(os.path.join(d, "jpeglib.h")) for d in where)


def _installed_extension() -> str | None:
    """The built extension of an installed minddata (which the checkout hides), if there is one."""
    try:
        from importlib import metadata

        for dist in metadata.distributions(name="minddata"):
            for file in dist.files or ():
                if file.name.startswith("_jpeg.") and file.suffix in (".so", ".pyd"):
                    path = str(dist.locate_file(file))
                    if os.path.isfile(path):
                        return path
    except Exception:  # noqa: BLE001 - only a detail of a message
        return None
    return None


def _why_not_in_checkout(root: str) -> str:
    installed = _installed_extension()
    where = (
        f"`pip install .` built it into the installed copy ({os.path.dirname(installed)}), which is not what "
        "was imported" if installed else "`pip install .` builds it into the installed copy only"
    )
    needs = []  # what the build needs that is missing here
    if not _headers_found():
        needs.append("installing libjpeg-turbo's headers (libjpeg62-turbo-dev on Debian, libjpeg-turbo-devel)")
    if importlib.util.find_spec("Cython") is None:
        needs.append("`pip install 'Cython>=3.0'`")
    first = f" after {' and '.join(needs)}" if needs else ""
    return (
        f"the _jpeg extension is not built in the source checkout {root}, which Python imported instead of the "
        f"installed package (a script or `python -m pytest` run from the repository root imports the checkout); "
        f"{where}. Fix: run `{_BUILD_IN_PLACE}` in {root}{first}, or run the script from another folder"
    )


def _why_unavailable(error: ImportError) -> str:
    if isinstance(error, ModuleNotFoundError) and error.name == "minddata.ops.cpu._jpeg":
        if CHECKOUT_ROOT is not None:
            return _why_not_in_checkout(CHECKOUT_ROOT)
        if _headers_found():
            return (
                "the _jpeg extension was not built, although libjpeg-turbo's jpeglib.h is present now: "
                "the headers arrived after the install, JPEG_INCLUDE_DIR pointed elsewhere, or the build "
                "failed (reinstall with `pip install -v` and look for 'minddata setup' and compiler errors)"
            )
        return (
            "the _jpeg extension was not built: libjpeg-turbo headers (jpeglib.h) were not found at "
            f"install time; {_FIX}"
        )
    return f"the _jpeg extension failed to import ({type(error).__name__}: {error}); {_FIX}"


try:
    import minddata.ops.cpu._jpeg as _jpeg  # ModuleNotFoundError(name=...) when it was not built
except ImportError as _error:
    _jpeg = None
    AVAILABLE = False
    WHY_UNAVAILABLE = _why_unavailable(_error)
    LIBJPEG_VERSION: str | None = None
else:
    AVAILABLE = True
    WHY_UNAVAILABLE = ""
    LIBJPEG_VERSION = _jpeg.LIBJPEG_VERSION  # e.g. 'libjpeg-turbo 2.1.5 (libjpeg API 62)'


_noted = False


def note_fallback() -> None:
    """Warn once per process, from a source checkout without the extension, that JPEGs take the
    slower fallback, why, and the fix (installed without it, setup.py already said so at install)."""
    global _noted
    if _noted or AVAILABLE or CHECKOUT_ROOT is None:
        return
    _noted = True
    warn("JPEGs are decoded by the slower fallback (Pillow, OpenCV): %s.", WHY_UNAVAILABLE)


# ---------------------------------------------------------------------------------------------- sizes


def _check_scale(scale_denom: int) -> int:
    if isinstance(scale_denom, bool) or scale_denom not in SCALES:
        raise ValueError(f"JPEG decode: scale_denom must be one of {SCALES}. Found {scale_denom!r}")
    return int(scale_denom)


def scaled_size(height: int, width: int, scale_denom: int) -> tuple[int, int]:
    """``(ceil(height/s), ceil(width/s))``: the size of a whole image decoded at 1/``s``."""
    s = _check_scale(scale_denom)
    return -(-height // s), -(-width // s)


def scaled_crop_box(
    top: int, left: int, height: int, width: int, scale_denom: int, image_h: int, image_w: int
) -> tuple[int, int, int, int]:
    """The crop ``(top, left, height, width)`` of an ``image_h`` x ``image_w`` image, in the image
    decoded at 1/``scale_denom``: ``(top_s, left_s, h_s, w_s)`` with

    ``top_s = floor(top/s)``, ``h_s = ceil((top+height)/s) - top_s`` (columns alike).

    Rounding outwards keeps every requested pixel; the box always lies inside
    :func:`scaled_size`. Raises ``ValueError`` for an empty crop or one outside the image.

    >>> scaled_crop_box(10, 3, 100, 50, 4, 375, 500)
    (2, 0, 26, 14)
    """
    s = _check_scale(scale_denom)
    if image_h < 1 or image_w < 1:
        raise ValueError(f"JPEG decode: image size must be positive. Found {image_h}x{image_w} (HxW)")
    if top < 0 or left < 0 or height < 1 or width < 1 or top + height > image_h or left + width > image_w:
        raise ValueError(
            f"JPEG decode: crop (top={top}, left={left}, height={height}, width={width}) must be a "
            f"non-empty region inside the {image_h}x{image_w} (HxW) image"
        )
    t, lf = top // s, left // s
    return t, lf, -(-(top + height) // s) - t, -(-(left + width) // s) - lf


# ---------------------------------------------------------------------------------------------- header


def _as_bytes_array(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray):
        if data.ndim != 1 or data.dtype.itemsize != 1 or data.dtype.kind not in "uiS":
            raise TypeError(
                "JPEG decode: expected encoded bytes (bytes or a 1-D uint8 array). "
                f"Found an array of shape {data.shape}, dtype {data.dtype}"
            )
        return data.view(np.uint8)
    try:
        return np.frombuffer(data, dtype=np.uint8)
    except TypeError:
        raise TypeError(
            f"JPEG decode: expected encoded bytes (bytes or a 1-D uint8 array). Found: {type(data).__name__}"
        ) from None


def is_jpeg(data: Any) -> bool:
    """True when ``data`` starts like a JPEG: the SOI marker ``ff d8`` followed by a marker byte ``ff``."""
    try:
        head = bytes(_as_bytes_array(data)[:3])
    except TypeError:
        return False
    return head == b"\xff\xd8\xff"


# Start-of-frame markers (SOF0-3, 5-7, 9-11, 13-15; not DHT c4, JPG c8, DAC cc) and the progressive ones.
_SOF = frozenset((0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF))
_PROGRESSIVE = frozenset((0xC2, 0xC6, 0xCA, 0xCE))
_STANDALONE = frozenset((0x01, 0xD8, *range(0xD0, 0xD8)))  # TEM, SOI, RST0-7: no length field


def _py_read_header(data: Any) -> tuple[int, int, int, bool]:
    """:func:`read_header` without libjpeg: walk the marker segments up to the frame header."""
    height, width, components, marker = _py_frame(data)
    return height, width, components, marker in _PROGRESSIVE


# Frame types whose entropy coding is Huffman over 8x8 DCT blocks: every block of a component costs at
# least one bit (a DC code in a sequential scan and in a progressive DC-first scan). Arithmetic coding
# can spend less than a bit on a block, and lossless frames have no blocks, so they are not bounded.
_HUFFMAN_DCT = frozenset((0xC0, 0xC1, 0xC2))


def scan_shortfall(data: Any) -> str:
    """Why ``data`` cannot hold the image its frame header claims ("" when it can).

    libjpeg, Pillow and OpenCV only warn when the scan ends before the frame does ("premature end of
    data segment") and pad the missing rows with grey, so a 20 KB file whose header claims
    13000x13000 decodes into 500 MB of grey. The bound is cheap and never refuses a valid file: a
    Huffman-coded DCT frame spends at least one bit on each 8x8 block of its fullest component.
    """
    height, width, _, marker = _py_frame(data)
    if marker not in _HUFFMAN_DCT:
        return ""
    blocks = -(-height // 8) * -(-width // 8)
    size = len(_as_bytes_array(data))
    if size * 8 >= blocks:
        return ""
    return (f"its {size} bytes cannot hold the {height}x{width} image its frame header claims "
            f"({blocks} blocks of 8x8 pixels need at least {-(-blocks // 8)} bytes)")


def _py_frame(data: Any) -> tuple[int, int, int, int]:
    """``(height, width, components, SOF marker)`` from the marker segments up to the frame header."""
    b = bytes(_as_bytes_array(data))
    n = len(b)
    if n == 0:
        raise ValueError("JPEG decode: the input is empty (0 bytes)")
    if b[:2] != b"\xff\xd8":
        raise ValueError(
            f"JPEG decode: not a JPEG (no SOI marker ff d8 at the start; first bytes {b[:8].hex(' ')}, "
            f"{n} bytes)"
        )
    truncated = (
        f"JPEG decode: corrupt or unsupported JPEG header: the data ({n} bytes) ends before the frame header"
    )
    i = 2
    while True:
        if i >= n:
            raise ValueError(truncated)
        if b[i] != 0xFF:
            raise ValueError(
                f"JPEG decode: corrupt or unsupported JPEG header: expected a marker at byte {i}, "
                f"found 0x{b[i]:02x} ({n} bytes)"
            )
        while i < n and b[i] == 0xFF:  # a marker may be preceded by any number of fill bytes
            i += 1
        if i >= n:
            raise ValueError(truncated)
        marker = b[i]
        i += 1
        if marker in _STANDALONE:
            continue
        if marker in (0xD9, 0xDA):
            raise ValueError(
                "JPEG decode: corrupt or unsupported JPEG header: "
                f"{'end of image' if marker == 0xD9 else 'a scan'} before the frame header ({n} bytes)"
            )
        if i + 2 > n:
            raise ValueError(truncated)
        length = (b[i] << 8) | b[i + 1]
        if length < 2:
            raise ValueError(
                f"JPEG decode: corrupt or unsupported JPEG header: marker 0x{marker:02x} at byte {i - 1} "
                f"has length {length} ({n} bytes)"
            )
        if marker in _SOF:
            if i + 8 > n:
                raise ValueError(truncated)
            height = (b[i + 3] << 8) | b[i + 4]
            width = (b[i + 5] << 8) | b[i + 6]
            components = b[i + 7]
            if height == 0 or width == 0 or components == 0:
                raise ValueError(
                    f"JPEG decode: corrupt or unsupported JPEG header: the frame header says "
                    f"{height}x{width} (HxW) with {components} components ({n} bytes)"
                )
            return height, width, components, marker
        i += length


def read_header(data: Any) -> tuple[int, int, int, bool]:
    """``(height, width, components, progressive)`` from a JPEG's header, without decoding pixels.

    ``data``: ``bytes``-like or a 1-D ``uint8`` array. ``components`` is 1 (grayscale), 3 (YCbCr or
    RGB) or 4 (CMYK/YCCK). Raises ``ValueError`` naming the problem for data that is not a JPEG or
    whose header is damaged or truncated. Uses libjpeg when the extension is built, else a small
    pure-Python marker parser (which also reads frame types libjpeg 2.1 cannot decode, e.g. lossless).
    """
    if AVAILABLE:
        return _jpeg.read_header(data)
    return _py_read_header(data)


# ---------------------------------------------------------------------------------------------- decode


def _check_out(out: Any, shape: tuple[int, int, int]) -> None:
    if not isinstance(out, np.ndarray) or out.dtype != np.uint8:
        raise TypeError(f"JPEG decode: out must be a uint8 numpy array. Found {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"JPEG decode: out has shape {out.shape}; this decode gives {shape}")
    if not out.flags.writeable:
        raise ValueError("JPEG decode: out is read-only")


def decode(
    data: Any,
    scale_denom: int = 1,
    crop: tuple[int, int, int, int] | None = None,
    out: np.ndarray | None = None,
    *,
    strict: bool = False,
    check_size: Callable[[int, int], None] | None = None,
    contiguous: bool = True,
) -> np.ndarray:
    """Decode a JPEG to an RGB ``uint8`` ``(H, W, 3)`` array, at 1/``scale_denom`` and/or cropped.

    * ``scale_denom``: 1, 2, 4 or 8 (libjpeg's DCT scaling; output ``ceil(H/s) x ceil(W/s)``).
    * ``crop``: ``(top, left, height, width)`` in original pixels; the result is the
      :func:`scaled_crop_box` of it. Only that region is decoded (fast path).
    * ``out``: a preallocated ``uint8`` array of exactly the result's shape to write into (and
      return); the fast path needs each row contiguous (strides ``(any, 3, 1)``), e.g. one image of
      a C-contiguous batch.
    * ``strict``: turn libjpeg's corrupt-data warnings (e.g. a bad Huffman code) into errors; by
      default they are tolerated like Pillow and OpenCV do. Data ending early is always an error.
    * ``check_size``: called as ``check_size(width, height)`` with the size the decoder's own header
      read found, before anything is allocated; it raises to refuse the image (the pixel limit).
    * ``contiguous=False`` (a crop, no ``out``): the result may be a view of the crop's rows decoded
      at their full width: the same pixels, each row contiguous, without copying each row out of
      libjpeg's row buffer (for a caller that reads it once, e.g. a resize).

    Grayscale files come out with the gray replicated into R, G and B. CMYK/YCCK files raise
    ``ValueError`` (mentioning CMYK) on the fast path so the caller can use OpenCV/Pillow; the slow
    path decodes them through OpenCV. The GIL is released while libjpeg works.
    """
    s = _check_scale(scale_denom)
    if AVAILABLE:
        return _jpeg.decode(data, s, crop, out, strict=strict, check_size=check_size, contiguous=contiguous)
    return _slow_decode(data, s, crop, out, check_size)


def _slow_decode(
    data: Any, s: int, crop: Any, out: np.ndarray | None, check_size: Callable[[int, int], None] | None = None
) -> np.ndarray:
    """OpenCV decodes the whole image at 1/s, then the crop is cut out (see the module docstring)."""
    import cv2

    note_fallback()

    buf = _as_bytes_array(data)
    h, w, _, _ = _py_read_header(buf)
    if check_size is not None:
        check_size(w, h)
    shortfall = scan_shortfall(buf)
    if shortfall:
        raise ValueError(f"JPEG decode: the data ends before the image does (truncated file?): {shortfall}")
    hs, ws = scaled_size(h, w, s)
    if crop is None:
        box = (0, 0, hs, ws)
    else:
        try:
            ct, cl, ch, cw = map(int, crop)
        except (TypeError, ValueError):
            raise TypeError(
                f"JPEG decode: crop must be (top, left, height, width) integers. Found {crop!r}"
            ) from None
        box = scaled_crop_box(ct, cl, ch, cw, s, h, w)
    if out is not None:
        _check_out(out, (box[2], box[3], 3))
    flags = {
        1: cv2.IMREAD_COLOR,
        2: cv2.IMREAD_REDUCED_COLOR_2,
        4: cv2.IMREAD_REDUCED_COLOR_4,
        8: cv2.IMREAD_REDUCED_COLOR_8,
    }[s] | cv2.IMREAD_IGNORE_ORIENTATION
    try:
        bgr = cv2.imdecode(np.ascontiguousarray(buf), flags)
    except cv2.error:
        bgr = None
    if bgr is None or bgr.ndim != 3 or bgr.shape[2] != 3 or bgr.dtype != np.uint8:
        raise ValueError(
            f"JPEG decode (OpenCV slow path): OpenCV could not decode this {h}x{w} JPEG: the data is "
            f"corrupt or truncated ({buf.size} bytes)"
        )
    if bgr.shape[:2] != (hs, ws):
        full = cv2.imdecode(np.ascontiguousarray(buf), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        bgr = cv2.resize(full, (ws, hs), interpolation=cv2.INTER_AREA)  # type: ignore[arg-type]  # the bytes decoded (reduced) just above
    t, lf, bh, bw = box
    region = bgr[t : t + bh, lf : lf + bw, ::-1]  # BGR -> RGB
    if out is None:
        return np.ascontiguousarray(region)
    np.copyto(out, region)
    return out
