"""Resize op specs, named as in ``mindspore.dataset.vision`` (2.x): :class:`Resize`,
:class:`RandomResizedCrop`, :class:`ResizedCrop` and :class:`RandomCropDecodeResize`.

Specs validate and hold parameters only. Their plan (output sizes, crop boxes, random draws) is
``minddata.ops.plans.resize``; the CPU kernels are ``minddata.ops.cpu.resize`` (RandomCropDecodeResize:
``minddata.ops.cpu.fused``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.crop import CropBox, check_crop_box
from minddata.ops.plans.image import square
from minddata.ops.plans.resize import resize_output_size
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._utils import Inter
from minddata.vision._validators import (
    check_int,
    check_inter,
    check_range,
    check_size,
    image_spec_dims,
    one_image_spec,
)

__all__ = ["RandomCropDecodeResize", "RandomResize", "RandomResizedCrop", "ResizedCrop", "Resize"]


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


def set_random_crop_params(
    op: Op, size: Any, scale: Any, ratio: Any, interpolation: Any, max_attempts: Any
) -> None:
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


class ResizedCrop(Op):
    """Crop the region ``(top, left, height, width)``, then resize it to ``size``.

    Args:
        top: the crop's top row, >= 0.
        left: the crop's left column, >= 0.
        height: the crop's height, > 0.
        width: the crop's width, > 0. The box must lie inside the image.
        size: the output size: an int for a square, or ``(height, width)``. (This is what MindSpore's
            code does; its 2.x docs describe an int as the shorter side.)
        interpolation: a :class:`Inter` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.arange(16, dtype=np.uint8).reshape(4, 4)
        >>> vision.ResizedCrop(1, 1, 2, 2, (4, 4), vision.Inter.NEAREST)(img)
        array([[ 5,  5,  6,  6],
               [ 5,  5,  6,  6],
               [ 9,  9, 10, 10],
               [ 9,  9, 10, 10]], dtype=uint8)
    """

    def __init__(
        self,
        top: int,
        left: int,
        height: int,
        width: int,
        size: int | Sequence[int],
        interpolation: Inter = Inter.BILINEAR,
    ) -> None:
        self.top = check_int(self.name, "top", top, low=0)
        self.left = check_int(self.name, "left", left, low=0)
        self.height = check_int(self.name, "height", height, low=1)
        self.width = check_int(self.name, "width", width, low=1)
        self.size = check_size(self.name, size)
        self.interpolation = check_inter(self.name, interpolation)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        _, _, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        check_crop_box(
            self.name, tuple(inputs[0].shape), CropBox(self.top, self.left, self.height, self.width)
        )
        return TensorSpec((*square(self.size), *rest), dtype)


class RandomCropDecodeResize(Op):
    """Decode an encoded image, crop a random region as :class:`RandomResizedCrop` does and resize it to
    ``size``: one op, so the decoder can decode only the crop.

    The crop box is drawn exactly as RandomResizedCrop draws it (same rule, same row RNG), so
    ``RandomCropDecodeResize`` and ``Decode`` then ``RandomResizedCrop`` crop the same region.

    Args:
        size: output size, an int for a square or ``(height, width)``.
        scale: bounds of the crop's area as a fraction of the image's.
        ratio: bounds of the crop's aspect ratio, width / height.
        interpolation: a :class:`Inter` member used to resize the crop.
        max_attempts: draws before falling back to the centre crop.

    Input: encoded image bytes (a 1-D ``uint8`` array). Output: an RGB ``uint8`` ``<size, 3>`` array.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> from minddata.ops import TensorSpec
        >>> op = vision.RandomCropDecodeResize((32, 48), scale=(0.5, 1.0))
        >>> op.output_spec(TensorSpec((None,), np.dtype(np.uint8)))
        TensorSpec(shape=(32, 48, 3), dtype=dtype('uint8'))
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
        if len(inputs) != 1:
            raise ValueError(f"{self.name}: expected 1 input. Found: {len(inputs)}")
        data = inputs[0]
        dtype = None if data.dtype is None else np.dtype(data.dtype)
        if len(data.shape) > 1 or (dtype is not None and dtype.kind not in "iuS"):
            raise TypeError(
                f"{self.name}: expected encoded image bytes (a 1-D uint8 array or bytes). "
                f"Found a tensor of shape {tuple(data.shape)}, dtype {dtype}"
            )
        return TensorSpec((*square(self.size), 3), np.dtype(np.uint8))


class RandomResize(Op):
    """Resize the image as :class:`Resize` does, with an interpolation drawn uniformly per row among
    ``Inter.BILINEAR``, ``NEAREST``, ``BICUBIC`` and ``AREA`` (MindSpore's four, in its order).

    Args:
        size: an int resizes the shorter side to ``size`` keeping the aspect ratio; ``(height, width)``
            resizes to exactly that.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomResize((4, 6))(np.zeros((8, 9, 3), np.uint8)).shape
        (4, 6, 3)
    """

    random = True

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = check_size(self.name, size)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        h, w, rest = image_spec_dims(self.name, image, numeric=True)
        out_h, out_w = resize_output_size(h, w, self.size)
        return TensorSpec((out_h, out_w, *rest), spec_dtype(image))
