"""CPU kernels of the vision ops (the reference every other device is checked against).

OpenCV does the pixel work where it can: it releases the GIL, so thread workers scale. Kernels read
only the op's attributes and never import ``minddata.vision`` (ops/ sits below the public API).
Interpolation arrives as an ``Inter`` member; kernels key on its ``name``.
"""

from __future__ import annotations

import io
import math
import struct
from typing import Any

import cv2
import numpy as np

from minddata import config
from minddata.ops.base import KernelContext, Op
from minddata.ops.cpu import jpeg
from minddata.ops.formats import sniff_format
from minddata.ops.registry import register_kernel

__all__ = ["PixelLimitError", "check_image_pixels", "decode_image", "image_header_size", "resize_image"]

_IMREAD_FLAGS = cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION

# dtypes every cv2 interpolation accepts; others take a detour through float (see resize_image).
_CV_RESIZE_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64))
_CV_FLIP_DTYPES = frozenset(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)
)
_CV_INTER = {
    "NEAREST": cv2.INTER_NEAREST,
    "BILINEAR": cv2.INTER_LINEAR,
    "LINEAR": cv2.INTER_LINEAR,
    "BICUBIC": cv2.INTER_CUBIC,
    "CUBIC": cv2.INTER_CUBIC,
    "AREA": cv2.INTER_AREA,
    "LANCZOS": cv2.INTER_LANCZOS4,
}
# Pillow's filters are antialiased when shrinking (their support widens with the scale), which is
# what PILCUBIC/ANTIALIAS promise; OpenCV's are not.
_PIL_INTER = {"PILCUBIC": "BICUBIC", "ANTIALIAS": "LANCZOS"}


# ---------------------------------------------------------------------------------------------- inputs


def _as_array(op_name: str, x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "getbands") and hasattr(x, "mode"):  # a PIL image, e.g. from Decode(to_pil=True)
        return np.array(x)  # np.asarray of a PIL image is read-only; later ops may write in place
    raise TypeError(f"{op_name}: expected an image as a numpy array. Found: {type(x).__name__}")


def _image(op_name: str, x: Any, *, numeric: bool = False) -> np.ndarray:
    """An ``<H, W>`` or ``<H, W, C>`` array with H, W > 0."""
    img = _as_array(op_name, x)
    if img.ndim not in (2, 3):
        raise ValueError(
            f"{op_name}: expected an image of shape <H, W> or <H, W, C>. "
            f"Found shape {img.shape} ({img.ndim}-D, {img.dtype})"
        )
    if img.shape[0] == 0 or img.shape[1] == 0 or (img.ndim == 3 and img.shape[2] == 0):
        raise ValueError(f"{op_name}: expected a non-empty image. Found shape {img.shape}")
    if numeric and img.dtype.kind not in "biuf":
        raise TypeError(f"{op_name}: expected a numeric image. Found dtype {img.dtype} (shape {img.shape})")
    return img


def _interp_name(interpolation: Any) -> str:
    return getattr(interpolation, "name", str(interpolation)).upper()


# ---------------------------------------------------------------------------------------------- Decode


def _encoded_bytes(x: Any, op_name: str = "Decode") -> np.ndarray:
    if isinstance(x, (bytes, bytearray, memoryview)):
        return np.frombuffer(x, dtype=np.uint8)
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "S" and x.size == 1 and x.ndim <= 1:  # a bytes scalar, or MindRecord's shape-(1,) bytes
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


_SKIP_HINT = (
    "If some files are known to be damaged, minddata.config.set_error_samples_mode('skip') skips such rows "
    "(or 'replace' repeats the previous good row)"
)


def _not_decodable(buf: np.ndarray, reason: str, op_name: str = "Decode") -> ValueError:
    # The format and size only: echoing the bytes would show a file's contents in logs.
    fmt = sniff_format(buf)
    what = f"its signature says {fmt}" if fmt not in ("unknown", "empty") else "its signature is no known format"
    return ValueError(
        f"{op_name}: the input is not a decodable image ({buf.size} bytes; {what}); "
        f"expected JPEG, PNG, BMP, GIF, WebP or TIFF{reason}. {_SKIP_HINT}"
    )


class PixelLimitError(ValueError):
    """The decompression-bomb guard refused an image (its header is over the pixel limit)."""


def _pil_open(buf: np.ndarray) -> Any:
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


def _pil_decode(buf: np.ndarray, op_name: str, limit: int | None) -> Any:
    """Pillow decodes; the pixel limit is checked on the size Pillow's own header parse found, on the
    image object that then loads (so whatever Pillow reads in the header is what it decodes)."""
    from PIL import UnidentifiedImageError

    try:
        with _pil_open(buf) as im:
            check_image_pixels(op_name, *im.size, limit=limit)
            return _pil_rgb(im)
    except PixelLimitError:
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
            f"(libjpeg: {libjpeg}). {_SKIP_HINT}"
        )
    return False, ValueError(f"{op_name}: the JPEG can't be decoded: {message}. {_SKIP_HINT}")


# ---------------------------------------------------------------------------------------------- headers

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Start-of-frame markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but don't.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(buf: np.ndarray) -> tuple[int, int] | None:
    """(width, height) from a JPEG's SOF segment, walking the marker segments before it."""
    data = memoryview(buf)
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
        with _pil_open(buf) as im:  # parses the header only; pixels are read on load()
            return im.size
    except Exception:  # noqa: BLE001 - unreadable headers are reported by the decoders with context
        return None


def image_header_size(data: Any, op_name: str = "Decode") -> tuple[int, int] | None:
    """(width, height) an encoded image's header claims, read without decoding any pixel; ``None``
    when the header can't be read (the decoders then report the problem)."""
    buf = np.ascontiguousarray(_encoded_bytes(data, op_name))  # struct reads need one contiguous buffer
    if buf.size >= 24 and buf[:8].tobytes() == _PNG_SIGNATURE:
        if buf[12:16].tobytes() != b"IHDR":
            return None
        width, height = struct.unpack_from(">II", memoryview(buf), 16)
        return width, height
    if buf.size >= 4 and buf[0] == 0xFF and buf[1] == 0xD8:
        return _jpeg_size(buf)
    return _pil_size(buf)


_FROM_CONFIG: Any = object()  # "read config.get_max_image_pixels()", for callers outside a pipeline


def check_image_pixels(op_name: str, width: int, height: int, limit: int | None = _FROM_CONFIG) -> None:
    """Refuse an image larger than ``limit`` pixels (the decompression-bomb guard); ``limit``
    defaults to ``config.get_max_image_pixels()``, ``None`` is no limit."""
    if limit is _FROM_CONFIG:
        limit = config.get_max_image_pixels()
    if limit is not None and width * height > limit:
        raise PixelLimitError(
            f"{op_name}: the image header says {width}x{height} = {width * height} pixels, over the limit of "
            f"{limit} pixels (a decompression-bomb guard; nothing was decoded). If the image is trusted, raise "
            "the limit with minddata.config.set_max_image_pixels(n), or pass None to remove it"
        )


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
    buf = _encoded_bytes(data, op_name)
    if buf.size == 0:
        raise ValueError(f"{op_name}: the input is empty (0 bytes); expected an encoded image")
    limit = config.get_max_image_pixels() if max_pixels is _FROM_CONFIG else max_pixels
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


@register_kernel("Decode", "CPU")
def decode(op: Op, ctx: KernelContext, data: Any) -> Any:
    return decode_image(data, to_pil=op.to_pil, max_pixels=ctx.options.max_image_pixels)


# ---------------------------------------------------------------------------------------------- Resize


def _cast_back(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return out > 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype)


def _pil_resize(img: np.ndarray, h: int, w: int, filter_name: str) -> np.ndarray:
    from PIL import Image

    resample = getattr(Image.Resampling, filter_name)
    if img.dtype == np.uint8 and (img.ndim == 2 or img.shape[2] in (1, 3, 4)):
        src = img[..., 0] if img.ndim == 3 and img.shape[2] == 1 else img
        out = np.array(Image.fromarray(np.ascontiguousarray(src)).resize((w, h), resample))
        return out.reshape(h, w, *img.shape[2:])
    # Other dtypes/channel counts: Pillow's float mode "F", one channel at a time.
    planes = img[..., None] if img.ndim == 2 else img
    out = np.stack(
        [
            np.array(
                Image.fromarray(np.ascontiguousarray(planes[..., c], dtype=np.float32)).resize(
                    (w, h), resample
                )
            )
            for c in range(planes.shape[2])
        ],
        axis=-1,
    )
    return _cast_back(out, img.dtype).reshape(h, w, *img.shape[2:])


def resize_image(img: np.ndarray, h: int, w: int, interpolation: Any, op_name: str = "Resize") -> np.ndarray:
    """Resize an ``<H, W>``/``<H, W, C>`` array to ``(h, w)``; shared by Resize and RandomResizedCrop."""
    name = _interp_name(interpolation)
    if name in _PIL_INTER:
        return _pil_resize(img, h, w, _PIL_INTER[name])
    flag = _CV_INTER.get(name)
    if flag is None:
        raise ValueError(f"{op_name}: unknown interpolation {interpolation!r}")
    if img.ndim == 3 and img.shape[2] > 4:
        # Some cv2 paths (INTER_AREA when shrinking) take at most 4 channels: resize in groups of 4.
        groups = [_cv_resize(img[..., c : c + 4], h, w, flag) for c in range(0, img.shape[2], 4)]
        return np.concatenate([g.reshape(h, w, -1) for g in groups], axis=2)
    # cv2 drops a trailing channel axis of length 1.
    return _cv_resize(img, h, w, flag).reshape(h, w, *img.shape[2:])


def _cv_resize(img: np.ndarray, h: int, w: int, flag: int) -> np.ndarray:
    if img.dtype in _CV_RESIZE_DTYPES:
        return cv2.resize(img, (w, h), interpolation=flag)
    # float16, bool, int8, 32/64-bit ints: resample in float64 (exact for every int32), cast back.
    return _cast_back(cv2.resize(img.astype(np.float64), (w, h), interpolation=flag), img.dtype)


def resize_output_size(height: int, width: int, size: int | tuple[int, int]) -> tuple[int, int]:
    """MindSpore's rule: an int is the shorter side; the longer becomes ``int(long * size / short)``."""
    if isinstance(size, tuple):
        return size
    if height <= width:
        return size, int(width * size / height)
    return int(height * size / width), size


@register_kernel("Resize", "CPU")
def resize(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    # numeric: cv2/Pillow give cryptic errors (or silently drop imaginary parts) on other dtypes.
    img = _image("Resize", image, numeric=True)
    h, w = resize_output_size(img.shape[0], img.shape[1], op.size)
    return resize_image(img, h, w, op.interpolation, "Resize")


# ---------------------------------------------------------------------------------------------- crops


def _square(size: int | tuple[int, int]) -> tuple[int, int]:
    return (size, size) if isinstance(size, int) else size


def _center_axis(n: int, c: int) -> tuple[slice, slice]:
    """(source slice, destination slice) along one axis for MindSpore's pad-then-centre-crop."""
    if c > n:
        before = (c - n + 1) // 2  # the odd padding pixel goes first (top/left), as in MindSpore
        return slice(0, n), slice(before, before + n)
    off = (n - c) // 2
    return slice(off, off + c), slice(0, c)


@register_kernel("CenterCrop", "CPU")
def center_crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("CenterCrop", image)
    ch, cw = _square(op.size)
    src_y, dst_y = _center_axis(img.shape[0], ch)
    src_x, dst_x = _center_axis(img.shape[1], cw)
    if ch <= img.shape[0] and cw <= img.shape[1]:
        return img[src_y, src_x].copy()  # a copy: see crop()
    out = np.zeros((ch, cw, *img.shape[2:]), dtype=img.dtype)
    out[dst_y, dst_x] = img[src_y, src_x]
    return out


def check_crop_box(op_name: str, img: np.ndarray, top: int, left: int, height: int, width: int) -> None:
    """The fixed crop box must lie inside the image (shared by the CPU and Dvpp Crop kernels)."""
    if top + height > img.shape[0] or left + width > img.shape[1]:
        raise ValueError(
            f"{op_name}: the crop box (top={top}, left={left}, height={height}, width={width}) must lie inside "
            f"the image. Found image shape {img.shape}"
        )


@register_kernel("Crop", "CPU")
def crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Crop", image)
    top, left = op.coordinates
    ch, cw = _square(op.size)
    check_crop_box("Crop", img, top, left, ch, cw)
    # A copy, not a view: a view would pin the whole source image and let in-place ops alias it.
    return img[top : top + ch, left : left + cw].copy()


def _rint(v: float) -> int:
    # C++ std::round (half away from zero) for v >= 0; Python's round() is half-to-even.
    return int(math.floor(v + 0.5))


def random_resized_crop_box(
    rng: np.random.Generator,
    height: int,
    width: int,
    scale: tuple[float, float],
    ratio: tuple[float, float],
    max_attempts: int,
) -> tuple[int, int, int, int]:
    """(top, left, crop_height, crop_width), drawn as MindSpore's RandomCropAndResize draws it."""
    area = height * width
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(max_attempts):
        s = rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        cw = max(1, _rint(math.sqrt(area * s * aspect)))
        ch = max(1, _rint(cw / aspect))
        if cw <= width and ch <= height:
            left = int(rng.integers(0, width - cw, endpoint=True))
            top = int(rng.integers(0, height - ch, endpoint=True))
            return top, left, ch, cw
    # No draw fitted: the whole image, clamped to the ratio bounds, centred.
    img_aspect = width / height
    if img_aspect < ratio[0]:
        cw, ch = width, _rint(width / ratio[0])
    elif img_aspect > ratio[1]:
        ch, cw = height, _rint(height * ratio[1])
    else:
        ch, cw = height, width
    ch, cw = min(max(ch, 1), height), min(max(cw, 1), width)
    return _rint((height - ch) / 2), _rint((width - cw) / 2), ch, cw


@register_kernel("RandomResizedCrop", "CPU")
def random_resized_crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomResizedCrop", image, numeric=True)
    top, left, ch, cw = random_resized_crop_box(
        ctx.rng, img.shape[0], img.shape[1], op.scale, op.ratio, op.max_attempts
    )
    oh, ow = _square(op.size)
    return resize_image(img[top : top + ch, left : left + cw], oh, ow, op.interpolation, "RandomResizedCrop")


# ---------------------------------------------------------------------------------------------- flips


def _hflip(img: np.ndarray) -> np.ndarray:
    if img.dtype in _CV_FLIP_DTYPES and (img.ndim == 2 or img.shape[2] <= 4):
        return cv2.flip(img, 1).reshape(img.shape)
    return np.ascontiguousarray(img[:, ::-1])


@register_kernel("HorizontalFlip", "CPU")
def horizontal_flip(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    return _hflip(_image("HorizontalFlip", image))


@register_kernel("RandomHorizontalFlip", "CPU")
def random_horizontal_flip(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    # Validate before drawing so that a bad input fails on every row, not on half of them.
    img = _image("RandomHorizontalFlip", image)
    return _hflip(img) if ctx.rng.random() < op.prob else img


# ---------------------------------------------------------------------------------------------- pixels


@register_kernel("Normalize", "CPU")
def normalize(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Normalize", image, numeric=True)
    layout = "HWC" if op.is_hwc else "CHW"
    n = len(op.mean)
    if img.ndim == 2:
        channels = 1
    else:
        channels = img.shape[2] if op.is_hwc else img.shape[0]
    if n != 1 and channels != n:
        raise ValueError(
            f"Normalize: expected an {layout} image with {n} channels matching mean/std of length {n}. "
            f"Found shape {img.shape}"
        )
    if op.is_hwc and img.dtype == np.uint8 and img.ndim == 3 and img.flags.c_contiguous:
        # The one-pass table kernel: same float32 arithmetic, bit-identical, several times faster.
        from minddata.ops.cpu.fused import normalize_into

        out = np.empty(img.shape, np.float32)
        normalize_into(img, np.asarray(op.mean, np.float32), np.asarray(op.std, np.float32), out, False)
        return out
    shape = (-1,) if op.is_hwc or img.ndim == 2 else (-1, 1, 1)
    mean = np.asarray(op.mean, np.float32).reshape(shape) if n > 1 else np.float32(op.mean[0])
    std = np.asarray(op.std, np.float32).reshape(shape) if n > 1 else np.float32(op.std[0])
    out = img.astype(np.float32)  # always a copy: the input is left untouched
    out -= mean
    out /= std
    return out


@register_kernel("HWC2CHW", "CPU")
def hwc2chw(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("HWC2CHW", image)
    if img.ndim == 2:
        return img
    return np.ascontiguousarray(img.transpose(2, 0, 1))


@register_kernel("Rescale", "CPU")
def rescale(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _as_array("Rescale", image)
    if img.dtype.kind not in "biuf":
        raise TypeError(f"Rescale: expected a numeric array. Found dtype {img.dtype} (shape {img.shape})")
    out = img.astype(np.float32)
    out *= np.float32(op.rescale)
    out += np.float32(op.shift)
    return out
