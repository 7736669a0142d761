"""CPU kernels of the vision ops (the reference every other device is checked against).

OpenCV does the pixel work where it can: it releases the GIL, so thread workers scale. Kernels read
only the op's attributes and never import ``minddata.vision`` (ops/ sits below the public API).
Interpolation arrives as an ``Inter`` member; kernels key on its ``name``.
"""

from __future__ import annotations

import struct
from typing import Any

import cv2
import numpy as np

from minddata import config
from minddata.ops.base import KernelContext, Op
from minddata.ops.cpu import jpeg
from minddata.ops.formats import pil_open, sniff_format
from minddata.ops.plans.crop import CropBox, center_crop_box
from minddata.ops.plans.decode import PixelLimitError, check_image_pixels, encoded_bytes
from minddata.ops.plans.flip import flips
from minddata.ops.plans.image import interpolation_name, square
from minddata.ops.plans.resize import crop_resize, resize_output_size
from minddata.ops.registry import register_kernel

__all__ = ["PixelLimitError", "check_image_pixels", "crop_padded", "decode_image", "resize_image"]

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


# ---------------------------------------------------------------------------------------------- Decode


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
        with pil_open(buf) as im:
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
    name = interpolation_name(interpolation)
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


@register_kernel("Resize", "CPU")
def resize(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    # numeric: cv2/Pillow give cryptic errors (or silently drop imaginary parts) on other dtypes.
    img = _image("Resize", image, numeric=True)
    h, w = resize_output_size(img.shape[0], img.shape[1], op.size)
    return resize_image(img, h, w, op.interpolation, "Resize")


# ---------------------------------------------------------------------------------------------- crops


@register_kernel("CenterCrop", "CPU")
def center_crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("CenterCrop", image)
    return crop_padded(img, center_crop_box(img.shape[0], img.shape[1], *square(op.size)))


def _inside(n: int, start: int, length: int) -> tuple[slice, slice]:
    """(source slice, destination slice) along one axis of a box that may start before the image."""
    first, last = max(start, 0), min(start + length, n)
    return slice(first, last), slice(first - start, last - start)


def crop_padded(img: np.ndarray, box: CropBox) -> np.ndarray:
    """``box`` of ``img``, zero where the box leaves the image (CenterCrop's padding)."""
    if box.top >= 0 and box.left >= 0 and box.bottom <= img.shape[0] and box.right <= img.shape[1]:
        return img[box.top : box.bottom, box.left : box.right].copy()  # a copy: see crop()
    src_y, dst_y = _inside(img.shape[0], box.top, box.height)
    src_x, dst_x = _inside(img.shape[1], box.left, box.width)
    out = np.zeros((box.height, box.width, *img.shape[2:]), dtype=img.dtype)
    out[dst_y, dst_x] = img[src_y, src_x]
    return out


@register_kernel("Crop", "CPU")
def crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Crop", image)
    box = crop_resize(op, img.shape[0], img.shape[1], shape=img.shape).box
    # A copy, not a view: a view would pin the whole source image and let in-place ops alias it.
    return img[box.top : box.bottom, box.left : box.right].copy()


@register_kernel("RandomResizedCrop", "CPU")
def random_resized_crop(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomResizedCrop", image, numeric=True)
    (top, left, ch, cw), oh, ow = crop_resize(op, img.shape[0], img.shape[1], ctx.rng)
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
    return _hflip(img) if flips(ctx.rng, op.prob) else img


# ---------------------------------------------------------------------------------------------- pixels


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
