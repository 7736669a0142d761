"""The image file functions of ``minddata.vision`` (read_file, read_image, encode_jpeg, ...): Pillow reads,
OpenCV encodes (libjpeg-turbo, libpng), as MindSpore's CPU functions do. Arguments arrive checked by
``minddata.vision.image_io``; these functions check the data.
"""

from __future__ import annotations

import os
from typing import Any

import cv2
import numpy as np

from minddata.ops.file_bytes import read_file

__all__ = ["encode_jpeg_bytes", "encode_png_bytes", "read_file_bytes", "read_image_array", "write_file_bytes"]


def read_file_bytes(func: str, filename: str | os.PathLike) -> np.ndarray:
    path = os.fspath(filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{func}: {path!r} does not exist or is not a regular file")
    return read_file(path)


def write_file_bytes(func: str, filename: str | os.PathLike, data: np.ndarray) -> None:
    path = os.fspath(filename)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{func}: the folder of {path!r} does not exist")
    with open(path, "wb") as f:
        f.write(np.ascontiguousarray(data).tobytes())


def _grey_high_byte(im: Any) -> np.ndarray:
    # 16-bit grey: keep the high byte (libpng's strip_16), not convert()'s clip to 255.
    return (np.asarray(im, dtype=np.uint16) >> 8).astype(np.uint8)


def read_image_array(func: str, filename: str | os.PathLike, mode: str) -> np.ndarray:
    """Decode a file to ``<H, W, C>`` uint8: ``mode`` is ``"UNCHANGED"`` (1, 3 or 4 channels as stored),
    ``"GRAYSCALE"`` (1) or ``"COLOR"`` (3, RGB)."""
    from PIL import Image, UnidentifiedImageError

    path = os.fspath(filename)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{func}: {path!r} does not exist or is not a regular file")
    try:
        with Image.open(path) as im:
            im.load()
            sixteen_bit = im.mode.startswith("I;16")
            if mode == "GRAYSCALE":
                arr = _grey_high_byte(im) if sixteen_bit else np.asarray(im.convert("L"))
            elif mode == "COLOR":
                arr = np.asarray(
                    Image.fromarray(_grey_high_byte(im)).convert("RGB") if sixteen_bit else im.convert("RGB")
                )
            elif sixteen_bit or im.mode in ("1", "L", "I", "F"):
                arr = _grey_high_byte(im) if sixteen_bit else np.asarray(im.convert("L"))
            elif im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
                arr = np.asarray(im.convert("RGBA"))
            else:
                arr = np.asarray(im.convert("RGB"))
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as e:
        raise ValueError(
            f"{func}: cannot decode {path!r} as an image (JPEG, PNG, BMP, TIFF, ...): {e}"
        ) from None
    arr = np.array(arr, dtype=np.uint8)
    return arr[..., None] if arr.ndim == 2 else arr


def _encodable(func: str, image: Any) -> np.ndarray:
    if hasattr(image, "asnumpy"):  # a framework tensor
        image = image.asnumpy()
    if not isinstance(image, np.ndarray):
        raise TypeError(f"{func}: `image` must be a numpy.ndarray. Found: {type(image).__name__}")
    if image.dtype != np.uint8:
        raise TypeError(f"{func}: `image` must be uint8. Found dtype {image.dtype}")
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] in (1, 3))) or 0 in image.shape:
        raise ValueError(
            f"{func}: `image` must have shape <H, W>, <H, W, 1> or <H, W, 3>. Found shape {image.shape}"
        )
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2BGR)
    return np.ascontiguousarray(image.reshape(image.shape[0], image.shape[1]))


def encode_jpeg_bytes(func: str, image: Any, quality: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", _encodable(func, image), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError(f"{func}: OpenCV could not encode the image as JPEG")
    return buf.reshape(-1)


def encode_png_bytes(func: str, image: Any, compression_level: int) -> np.ndarray:
    ok, buf = cv2.imencode(".png", _encodable(func, image), [cv2.IMWRITE_PNG_COMPRESSION, compression_level])
    if not ok:
        raise ValueError(f"{func}: OpenCV could not encode the image as PNG")
    return buf.reshape(-1)
