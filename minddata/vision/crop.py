"""Crop and pad op specs, named as in ``mindspore.dataset.vision`` (2.x): :class:`CenterCrop`,
:class:`Crop`, :class:`RandomCrop` and :class:`Pad`.

Specs validate and hold parameters only. Their plan (boxes, padding, random positions) is
``minddata.ops.plans.crop``; the CPU kernels are ``minddata.ops.cpu.crop``.
"""

from __future__ import annotations

from collections.abc import Sequence

from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.crop import CropBox, check_crop_box, padded_size, random_crop_too_large
from minddata.ops.plans.image import square
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._utils import Border
from minddata.vision._validators import (
    check_bool,
    check_border,
    check_fill_value,
    check_int,
    check_padding,
    check_pair,
    check_size,
    image_spec_dims,
    one_image_spec,
)

__all__ = ["CenterCrop", "Crop", "Pad", "RandomCrop"]


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


class RandomCrop(Op):
    """Crop a region of ``size`` at a random position, padding the image first if asked to.

    As MindSpore's RandomCrop: the image is first padded by ``padding``; then, with ``pad_if_needed``, a
    side still shorter than the crop is padded by the shortfall on *both* ends (as MindSpore and
    torchvision do); then the crop's left and top are drawn uniformly (left first).

    Args:
        size: an int for a square crop, or ``(height, width)``.
        padding: as :class:`Pad`'s ``padding``; ``None`` pads nothing.
        pad_if_needed: pad an image smaller than ``size`` instead of failing.
        fill_value: as :class:`Pad`'s.
        padding_mode: a :class:`Border` member.

    An image (after ``padding``) smaller than ``size`` without ``pad_if_needed`` fails, naming its shape.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomCrop((2, 3))(np.zeros((5, 6, 3), np.uint8)).shape
        (2, 3, 3)
        >>> vision.RandomCrop(4, pad_if_needed=True)(np.ones((2, 2), np.uint8)).shape
        (4, 4)
    """

    random = True

    def __init__(
        self,
        size: int | Sequence[int],
        padding: int | Sequence[int] | None = None,
        pad_if_needed: bool = False,
        fill_value: int | Sequence[int] = 0,
        padding_mode: Border = Border.CONSTANT,
    ) -> None:
        self.size = check_size(self.name, size)
        self.padding = None if padding is None else check_padding(self.name, padding)
        self.pad_if_needed = check_bool(self.name, "pad_if_needed", pad_if_needed)
        self.fill_value = check_fill_value(self.name, fill_value)
        self.padding_mode = check_border(self.name, padding_mode)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        ch, cw = square(self.size)
        ph, pw = padded_size(h, w, self.padding or (0, 0, 0, 0))
        if not self.pad_if_needed and ((ph is not None and ph < ch) or (pw is not None and pw < cw)):
            raise random_crop_too_large((ch, cw), (ph, pw), inputs[0].shape)
        return TensorSpec((ch, cw, *rest), dtype)


class Pad(Op):
    """Pad the borders of an image.

    Args:
        padding: pixels to add. An int pads every side; ``(lr, tb)`` pads left and right with the first
            value and top and bottom with the second (MindSpore 2.x's rule); ``(left, top, right,
            bottom)`` pads each side. Stored as ``(left, top, right, bottom)``. Each value >= 0.
        fill_value: for ``Border.CONSTANT``: an int for every channel or an ``(R, G, B)`` tuple, each in
            [0, 255]. A one-channel image takes the first value, a fourth channel (alpha) 0.
        padding_mode: a :class:`Border` member.

    A padding of 0 everywhere returns the input itself.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Pad((1, 0))(np.array([[1, 2]], np.uint8))
        array([[0, 1, 2, 0]], dtype=uint8)
        >>> vision.Pad(1, padding_mode=vision.Border.EDGE)(np.array([[5]], np.uint8))
        array([[5, 5, 5],
               [5, 5, 5],
               [5, 5, 5]], dtype=uint8)
    """

    def __init__(
        self,
        padding: int | Sequence[int],
        fill_value: int | Sequence[int] = 0,
        padding_mode: Border = Border.CONSTANT,
    ) -> None:
        self.padding = check_padding(self.name, padding)
        self.fill_value = check_fill_value(self.name, fill_value)
        self.padding_mode = check_border(self.name, padding_mode)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        return TensorSpec((*padded_size(h, w, self.padding), *rest), dtype)
