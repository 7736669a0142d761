"""Vision op specs, named as in ``mindspore.dataset.vision`` (2.x).

Specs validate and hold parameters only; the CPU kernels live in ``minddata.ops.cpu.image``. Images
are HWC arrays (``<H, W>`` for one channel) unless an op says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.crop import CropBox, check_crop_box
from minddata.ops.plans.image import square
from minddata.ops.plans.resize import resize_output_size
from minddata.transforms import TypeCast, one_spec, spec_dtype
from minddata.vision._utils import Inter
from minddata.vision._validators import (
    MAX_INT_SIZE,
    check_bool,
    check_int,
    check_inter,
    check_pair,
    check_range,
    check_real,
    check_size,
)

__all__ = [
    "CenterCrop",
    "Crop",
    "Decode",
    "HWC2CHW",
    "HorizontalFlip",
    "Normalize",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "Rescale",
    "Resize",
    "ToType",
]


def image_spec_dims(
    op: str, spec: TensorSpec, *, numeric: bool = False
) -> tuple[int | None, int | None, tuple[int | None, ...]]:
    """(height, width, channel dims) of an ``<H, W>``/``<H, W, C>`` input spec, checked as the CPU
    kernels check the array: the engine can then reject a bad graph before the first row."""
    shape = tuple(spec.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{op}: expected an image of shape <H, W> or <H, W, C>. Found shape {shape}")
    if any(d == 0 for d in shape):
        raise ValueError(f"{op}: expected a non-empty image. Found shape {shape}")
    if numeric and spec.dtype is not None and np.dtype(spec.dtype).kind not in "biuf":
        raise TypeError(f"{op}: expected a numeric image. Found dtype {np.dtype(spec.dtype)} (shape {shape})")
    return shape[0], shape[1], shape[2:]


class Decode(Op):
    """Decode an encoded image (JPEG, PNG, BMP, GIF, WebP, TIFF) into an RGB ``uint8`` HWC array.

    Grayscale, palette, RGBA, CMYK and 16-bit images all come out as 3-channel 8-bit RGB (alpha is
    dropped, not composited). GIF and multi-page TIFF give their first frame. EXIF orientation is not
    applied, as in MindSpore.

    Args:
        to_pil: return a ``PIL.Image.Image`` in mode ``"RGB"`` instead of an array.

    Examples:
        >>> import io
        >>> import numpy as np
        >>> from PIL import Image
        >>> from minddata import vision
        >>> buf = io.BytesIO()
        >>> Image.new("L", (5, 4), 200).save(buf, "PNG")
        >>> img = vision.Decode()(np.frombuffer(buf.getvalue(), np.uint8))
        >>> img.shape, img.dtype, int(img[0, 0, 2])
        ((4, 5, 3), dtype('uint8'), 200)
    """

    def __init__(self, to_pil: bool = False) -> None:
        self.to_pil = check_bool(self.name, "to_pil", to_pil)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        dtype = spec_dtype(data)
        # Encoded bytes: a 1-D uint8/int8 array, or a 0-d bytes scalar as a bytes column stores it.
        is_bytes = dtype is None or dtype.kind == "S" or (dtype.kind in "iu" and dtype.itemsize == 1)
        if len(data.shape) > 1 or not is_bytes:
            raise TypeError(
                f"Decode: expected encoded image bytes (a 1-D uint8 array or bytes). "
                f"Found a tensor of shape {tuple(data.shape)}, dtype {dtype}"
            )
        # to_pil gives a PIL image in mode RGB: the same pixels as this array.
        return TensorSpec((None, None, 3), np.dtype(np.uint8))


class Resize(Op):
    """Resize an image to ``size``.

    Args:
        size: an int resizes the shorter side to ``size`` keeping the aspect ratio (the longer side
            becomes ``int(long * size / short)``, as in MindSpore); ``(height, width)`` resizes to exactly
            that.
        interpolation: a :class:`Inter` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Resize(4)(np.zeros((8, 18, 3), np.uint8)).shape
        (4, 9, 3)
        >>> vision.Resize((2, 3), vision.Inter.NEAREST)(np.zeros((8, 18), np.float32)).shape
        (2, 3)
    """

    def __init__(self, size: int | Sequence[int], interpolation: Inter = Inter.BILINEAR) -> None:
        self.size = check_size(self.name, size)
        self.interpolation = check_inter(self.name, interpolation)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        h, w, rest = image_spec_dims(self.name, image, numeric=True)
        return TensorSpec((*resize_output_size(h, w, self.size), *rest), spec_dtype(image))


class CenterCrop(Op):
    """Crop the central ``size`` region; an image smaller than ``size`` is first zero-padded around.

    As in MindSpore, an odd leftover puts the extra padding row/column at the top/left and the extra
    cropped row/column at the bottom/right.

    Args:
        size: an int for a square crop, or ``(height, width)``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.CenterCrop(2)(np.arange(16).reshape(4, 4))
        array([[ 5,  6],
               [ 9, 10]])
    """

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = check_size(self.name, size)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        _, _, rest = image_spec_dims(self.name, image)
        return TensorSpec((*square(self.size), *rest), spec_dtype(image))


class Crop(Op):
    """Crop the region of ``size`` whose top-left corner is ``coordinates``.

    Args:
        coordinates: ``(top, left)`` of the crop, both >= 0.
        size: an int for a square crop, or ``(height, width)``. The box must fit inside the image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Crop((1, 2), (2, 1))(np.arange(16).reshape(4, 4))
        array([[ 6],
               [10]])
    """

    def __init__(self, coordinates: Sequence[int], size: int | Sequence[int]) -> None:
        top, left = check_pair(self.name, "coordinates", coordinates, "ints (top, left)")
        self.coordinates = (
            check_int(self.name, "coordinates[0] (top)", top, low=0),
            check_int(self.name, "coordinates[1] (left)", left, low=0),
        )
        self.size = check_size(self.name, size)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        _, _, rest = image_spec_dims(self.name, image)
        box = CropBox(*self.coordinates, *square(self.size))
        check_crop_box(self.name, tuple(image.shape), box)
        return TensorSpec((box.height, box.width, *rest), spec_dtype(image))


class HorizontalFlip(Op):
    """Mirror an image left to right.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.HorizontalFlip()(np.array([[1, 2, 3]], np.uint8))
        array([[3, 2, 1]], dtype=uint8)
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        image_spec_dims(self.name, image)
        return TensorSpec(tuple(image.shape), spec_dtype(image))


class RandomHorizontalFlip(Op):
    """Mirror an image left to right with probability ``prob``.

    Args:
        prob: the probability of flipping, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomHorizontalFlip(prob=1.0)(np.array([[1, 2, 3]], np.uint8))
        array([[3, 2, 1]], dtype=uint8)
    """

    random = True

    def __init__(self, prob: float = 0.5) -> None:
        prob = check_real(self.name, "prob", prob)
        if not 0.0 <= prob <= 1.0:
            raise ArgumentError(f"{self.name}: `prob` must be in [0, 1]. Found: {prob}")
        self.prob = prob

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        image_spec_dims(self.name, image)
        return TensorSpec(tuple(image.shape), spec_dtype(image))


def set_random_crop_params(op: Op, size: Any, scale: Any, ratio: Any, interpolation: Any, max_attempts: Any) -> None:
    """Validate and store RandomResizedCrop's parameters on ``op`` (RandomCropDecodeResize shares them:
    one crop-drawing function reads these attributes for both)."""
    op.size = check_size(op.name, size)
    op.scale = check_range(op.name, "scale", scale, low=0.0, need_positive_high=True)
    op.ratio = check_range(op.name, "ratio", ratio, low=0.0, low_open=True)
    op.interpolation = check_inter(op.name, interpolation)
    op.max_attempts = check_int(op.name, "max_attempts", max_attempts, low=1, high=2**31 - 1)


class RandomResizedCrop(Op):
    """Crop a random region of random area and aspect ratio, then resize it to ``size``.

    The crop is drawn as MindSpore and torchvision draw it: up to ``max_attempts`` times, draw an area
    fraction uniformly from ``scale`` and an aspect ratio (width / height) log-uniformly from
    ``ratio``; take the first box that fits, at a uniformly drawn position. If none fits, crop the
    centre of the image clamped to the ``ratio`` bounds.

    Args:
        size: output size, an int for a square or ``(height, width)``.
        scale: bounds of the crop's area as a fraction of the image's.
        ratio: bounds of the crop's aspect ratio, width / height.
        interpolation: a :class:`Inter` member used to resize the crop.
        max_attempts: draws before falling back to the centre crop.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomResizedCrop((5, 7))(np.zeros((30, 40, 3), np.uint8)).shape
        (5, 7, 3)
    """

    random = True

    def __init__(
        self,
        size: int | Sequence[int],
        scale: Sequence[float] = (0.08, 1.0),
        ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: Inter = Inter.BILINEAR,
        max_attempts: int = 10,
    ) -> None:
        set_random_crop_params(self, size, scale, ratio, interpolation, max_attempts)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        _, _, rest = image_spec_dims(self.name, image, numeric=True)
        return TensorSpec((*square(self.size), *rest), spec_dtype(image))


class Normalize(Op):
    """``(image - mean) / std`` per channel, output ``float32``.

    ``mean`` and ``std`` are on the 0-255 scale of a ``uint8`` image, as in MindSpore. One value
    applies to every channel.

    Args:
        mean: per-channel means, each in [0, 255].
        std: per-channel standard deviations, each in (0, 255].
        is_hwc: ``True`` for HWC input, ``False`` for CHW.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.Normalize(mean=[100, 50, 0], std=[2, 5, 10])
        >>> op(np.full((1, 1, 3), 200, np.uint8))
        array([[[50., 30., 20.]]], dtype=float32)
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float], is_hwc: bool = True) -> None:
        self.mean = _check_channel_values(self.name, "mean", mean, positive=False)
        self.std = _check_channel_values(self.name, "std", std, positive=True)
        if len(self.mean) != len(self.std):
            raise ArgumentError(
                f"{self.name}: `mean` and `std` must have the same length. "
                f"Found: {len(self.mean)} and {len(self.std)}"
            )
        self.is_hwc = check_bool(self.name, "is_hwc", is_hwc)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        shape = tuple(image.shape)
        image_spec_dims(self.name, image, numeric=True)
        n = len(self.mean)
        channels = 1 if len(shape) == 2 else shape[2] if self.is_hwc else shape[0]
        if n != 1 and channels is not None and channels != n:
            layout = "HWC" if self.is_hwc else "CHW"
            raise ValueError(
                f"Normalize: expected an {layout} image with {n} channels matching mean/std of length {n}. "
                f"Found shape {shape}"
            )
        return TensorSpec(shape, np.dtype(np.float32))


def _check_channel_values(op: str, arg: str, values: Any, *, positive: bool) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(
            f"{op}: `{arg}` must be a sequence of numbers, one per channel. "
            f"Found: {values!r} ({type(values).__name__})"
        )
    if len(values) == 0:
        raise ArgumentError(f"{op}: `{arg}` must not be empty. Found: {values!r}")
    out = []
    for i, v in enumerate(values):
        f = check_real(op, f"{arg}[{i}]", v)
        if positive and not 0.0 < f <= 255.0:
            raise ArgumentError(f"{op}: `{arg}[{i}]` must be in (0, 255]. Found: {f}")
        if not positive and not 0.0 <= f <= 255.0:
            raise ArgumentError(f"{op}: `{arg}[{i}]` must be in [0, 255]. Found: {f}")
        out.append(f)
    return tuple(out)


class HWC2CHW(Op):
    """Transpose an HWC image to CHW (a contiguous copy). A 2-D ``<H, W>`` image passes unchanged.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.HWC2CHW()(np.zeros((4, 5, 3), np.uint8)).shape
        (3, 4, 5)
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        h, w, rest = image_spec_dims(self.name, image)
        return TensorSpec((*rest, h, w), spec_dtype(image))


class Rescale(Op):
    """``image * rescale + shift``, output ``float32``.

    Args:
        rescale: the scale factor, e.g. ``1 / 255``.
        shift: the offset added after scaling.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Rescale(1 / 255, -0.5)(np.array([0, 255], np.uint8))
        array([-0.5,  0.5], dtype=float32)
    """

    def __init__(self, rescale: float, shift: float) -> None:
        self.rescale = check_real(self.name, "rescale", rescale)
        self.shift = check_real(self.name, "shift", shift)
        for arg, v in (("rescale", self.rescale), ("shift", self.shift)):
            if abs(v) > MAX_INT_SIZE:
                raise ArgumentError(
                    f"{self.name}: `{arg}` must be in [-{MAX_INT_SIZE}, {MAX_INT_SIZE}]. Found: {v}"
                )

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        dtype = spec_dtype(data)
        # Any numeric array, not only images: the kernel scales elementwise.
        if dtype is not None and dtype.kind not in "biuf":
            raise TypeError(
                f"Rescale: expected a numeric array. Found dtype {dtype} (shape {tuple(data.shape)})"
            )
        return TensorSpec(tuple(data.shape), np.dtype(np.float32))


class ToType(TypeCast):
    """Cast an image to ``data_type``: the same op as :class:`minddata.transforms.TypeCast`.

    Args:
        data_type: anything ``numpy.dtype`` accepts.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.ToType(np.float32)(np.zeros((2, 2, 3), np.uint8)).dtype
        dtype('float32')
    """
