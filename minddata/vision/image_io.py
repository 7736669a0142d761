"""Image file functions, named as in ``mindspore.dataset.vision`` (2.x): :func:`read_file`,
:func:`write_file`, :func:`read_image` (with :class:`ImageReadMode`), :func:`encode_jpeg`,
:func:`encode_png`, :func:`write_jpeg`, :func:`write_png`, :func:`get_image_num_channels` and
:func:`get_image_size`. They run eagerly on NumPy arrays (``uint8`` bytes and ``<H, W, C>`` images);
the work is done in ``minddata.ops.cpu.image_io``.
"""

from __future__ import annotations

import enum
import os
from types import ModuleType
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.vision._validators import is_int

__all__ = [
    "ImageReadMode",
    "encode_jpeg",
    "encode_png",
    "get_image_num_channels",
    "get_image_size",
    "read_file",
    "read_image",
    "write_file",
    "write_jpeg",
    "write_png",
]


def _io_module() -> ModuleType:
    # Imported on first use: the kernels package loads OpenCV and every kernel.
    from minddata.ops.cpu import image_io

    return image_io


class ImageReadMode(enum.IntEnum):
    """How :func:`read_image` decodes, named and valued as in ``mindspore.dataset.vision.ImageReadMode``.

    - ``UNCHANGED``: as stored: 1 channel for grey, 3 for colour, 4 with alpha.
    - ``GRAYSCALE``: 1 channel.
    - ``COLOR``: 3 channels, RGB.

    Examples:
        >>> from minddata.vision import ImageReadMode
        >>> int(ImageReadMode.COLOR)
        2
    """

    UNCHANGED = 0
    GRAYSCALE = 1
    COLOR = 2

    def __repr__(self) -> str:
        return f"ImageReadMode.{self.name}"


def _filename(func: str, filename: Any) -> str:
    if not isinstance(filename, (str, os.PathLike)):
        raise TypeError(
            f"{func}: `filename` must be a str or a path. Found: {filename!r} ({type(filename).__name__})"
        )
    return os.fspath(filename)


def _level(func: str, arg: str, value: Any, low: int, high: int) -> int:
    if not is_int(value):
        raise TypeError(f"{func}: `{arg}` must be an int. Found: {value!r} ({type(value).__name__})")
    if not low <= value <= high:
        raise ArgumentError(f"{func}: `{arg}` must be in [{low}, {high}]. Found: {value}")
    return int(value)


def read_file(filename: str | os.PathLike) -> np.ndarray:
    """Read a file's bytes as a 1-D ``uint8`` array.

    Examples:
        >>> import tempfile, os
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "f.bin")
        ...     with open(path, "wb") as f:
        ...         _ = f.write(b"abc")
        ...     vision.read_file(path)
        array([97, 98, 99], dtype=uint8)
    """
    return _io_module().read_file_bytes("read_file", _filename("read_file", filename))


def write_file(filename: str | os.PathLike, data: np.ndarray) -> None:
    """Write a 1-D ``uint8`` array to a file as its bytes (replacing the file).

    Examples:
        >>> import tempfile, os
        >>> import numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "f.bin")
        ...     vision.write_file(path, np.array([104, 105], np.uint8))
        ...     with open(path, "rb") as f:
        ...         f.read()
        b'hi'
    """
    name = _filename("write_file", filename)
    if not isinstance(data, np.ndarray):
        raise TypeError(f"write_file: `data` must be a numpy.ndarray. Found: {type(data).__name__}")
    if data.dtype != np.uint8 or data.ndim != 1:
        raise ValueError(
            f"write_file: `data` must be a 1-D uint8 array. Found shape {data.shape}, dtype {data.dtype}"
        )
    _io_module().write_file_bytes("write_file", name, data)


def read_image(filename: str | os.PathLike, mode: ImageReadMode = ImageReadMode.UNCHANGED) -> np.ndarray:
    """Read and decode an image file (JPEG, PNG, BMP, TIFF, ...) to a ``<H, W, C>`` ``uint8`` array.

    Args:
        filename: the file.
        mode: an :class:`ImageReadMode` member.

    Examples:
        >>> import tempfile, os
        >>> import numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "a.png")
        ...     vision.write_png(path, np.full((2, 3, 3), 50, np.uint8))
        ...     vision.read_image(path).shape, vision.read_image(path, vision.ImageReadMode.GRAYSCALE).shape
        ((2, 3, 3), (2, 3, 1))
    """
    name = _filename("read_image", filename)
    if not isinstance(mode, ImageReadMode):
        raise TypeError(
            f"read_image: `mode` must be a vision.ImageReadMode member, e.g. ImageReadMode.COLOR. "
            f"Found: {mode!r} ({type(mode).__name__})"
        )
    return _io_module().read_image_array("read_image", name, mode.name)


def encode_jpeg(image: np.ndarray, quality: int = 75) -> np.ndarray:
    """Encode a ``uint8`` ``<H, W>``, ``<H, W, 1>`` or ``<H, W, 3>`` (RGB) image as JPEG bytes (1-D ``uint8``).

    Args:
        image: the image.
        quality: JPEG quality, in [1, 100].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> data = vision.encode_jpeg(np.zeros((8, 8, 3), np.uint8))
        >>> data.dtype, data[:2].tolist()
        (dtype('uint8'), [255, 216])
    """
    return _io_module().encode_jpeg_bytes(
        "encode_jpeg", image, _level("encode_jpeg", "quality", quality, 1, 100)
    )


def encode_png(image: np.ndarray, compression_level: int = 6) -> np.ndarray:
    """Encode a ``uint8`` ``<H, W>``, ``<H, W, 1>`` or ``<H, W, 3>`` (RGB) image as PNG bytes (1-D ``uint8``).

    Args:
        image: the image.
        compression_level: zlib's level, in [0, 9].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.encode_png(np.zeros((8, 8), np.uint8))[1:4].tobytes()
        b'PNG'
    """
    level = _level("encode_png", "compression_level", compression_level, 0, 9)
    return _io_module().encode_png_bytes("encode_png", image, level)


def write_jpeg(filename: str | os.PathLike, image: np.ndarray, quality: int = 75) -> None:
    """Encode ``image`` as :func:`encode_jpeg` does and write it to ``filename``.

    Examples:
        >>> import tempfile, os
        >>> import numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "a.jpg")
        ...     vision.write_jpeg(path, np.zeros((4, 4, 3), np.uint8))
        ...     vision.read_image(path).shape
        (4, 4, 3)
    """
    name = _filename("write_jpeg", filename)
    data = _io_module().encode_jpeg_bytes(
        "write_jpeg", image, _level("write_jpeg", "quality", quality, 1, 100)
    )
    _io_module().write_file_bytes("write_jpeg", name, data)


def write_png(filename: str | os.PathLike, image: np.ndarray, compression_level: int = 6) -> None:
    """Encode ``image`` as :func:`encode_png` does and write it to ``filename``.

    Examples:
        >>> import tempfile, os
        >>> import numpy as np
        >>> from minddata import vision
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = os.path.join(folder, "a.png")
        ...     vision.write_png(path, np.zeros((4, 5), np.uint8))
        ...     vision.read_image(path).shape
        (4, 5, 1)
    """
    name = _filename("write_png", filename)
    level = _level("write_png", "compression_level", compression_level, 0, 9)
    _io_module().write_file_bytes("write_png", name, _io_module().encode_png_bytes("write_png", image, level))


def _is_pil(image: Any) -> bool:
    return hasattr(image, "getbands") and hasattr(image, "size")


def get_image_num_channels(image: Any) -> int:
    """The channel count of an array image (1 for ``<H, W>``, ``C`` for ``<H, W, C>``) or a PIL image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.get_image_num_channels(np.zeros((4, 5, 3))), vision.get_image_num_channels(np.zeros((4, 5)))
        (3, 1)
    """
    if _is_pil(image):
        return len(image.getbands())
    if not isinstance(image, np.ndarray):
        raise TypeError(
            f"get_image_num_channels: `image` must be a numpy.ndarray or a PIL image. Found: {type(image).__name__}"
        )
    if image.ndim < 2:
        raise ValueError(
            f"get_image_num_channels: `image` must have at least 2 dimensions. Found shape {image.shape}"
        )
    return 1 if image.ndim == 2 else int(image.shape[-1])


def get_image_size(image: Any) -> list[int]:
    """``[height, width]`` of an array image (``<H, W>`` or ``<..., H, W, C>``) or a PIL image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.get_image_size(np.zeros((4, 5, 3)))
        [4, 5]
    """
    if _is_pil(image):
        return [int(image.size[1]), int(image.size[0])]
    if not isinstance(image, np.ndarray):
        raise TypeError(
            f"get_image_size: `image` must be a numpy.ndarray or a PIL image. Found: {type(image).__name__}"
        )
    if image.ndim < 2:
        raise ValueError(
            f"get_image_size: `image` must have at least 2 dimensions. Found shape {image.shape}"
        )
    if image.ndim == 2:
        return [int(image.shape[0]), int(image.shape[1])]
    return [int(image.shape[-3]), int(image.shape[-2])]
