"""Op specs that cut one image into several, named as in ``mindspore.dataset.vision`` (2.x):
:class:`FiveCrop`, :class:`TenCrop` and :class:`SlicePatches` (with :class:`SliceMode`). Each returns
its pieces as separate outputs: name as many ``output_columns`` in a map, or stack them in a
``Compose``. The boxes are planned in ``minddata.ops.plans.multi_crop``; the CPU kernels live in
``minddata.ops.cpu.multi_crop``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.image import square
from minddata.vision._validators import check_bool, check_int, check_size, one_image_spec

__all__ = ["FiveCrop", "SliceMode", "SlicePatches", "TenCrop"]


class SliceMode(str, enum.Enum):
    """What :class:`SlicePatches` does with an image whose side does not divide into the patches,
    named and valued as in ``mindspore.dataset.vision.SliceMode``.

    - ``PAD``: pad the bottom and right with ``fill_value`` up to whole patches.
    - ``DROP``: drop the rows and columns left over.

    Examples:
        >>> from minddata.vision import SliceMode
        >>> SliceMode("drop") is SliceMode.DROP
        True
    """

    PAD = "pad"
    DROP = "drop"

    def __repr__(self) -> str:
        return f"SliceMode.{self.name}"


def _crop_specs(
    op: str, inputs: tuple[TensorSpec, ...], size: tuple[int, int], count: int
) -> tuple[TensorSpec, ...]:
    h, w, rest, dtype = one_image_spec(op, inputs)
    ch, cw = size
    if (h is not None and ch > h) or (w is not None and cw > w):
        raise ValueError(f"{op}: the crop size ({ch}, {cw}) is larger than the image ({h}, {w})")
    return (TensorSpec((ch, cw, *rest), dtype),) * count


class FiveCrop(Op):
    """Crop the four corners and the centre of the image, each of ``size``: five outputs, in the order
    top-left, top-right, bottom-left, bottom-right, centre (MindSpore's).

    MindSpore takes PIL images only and returns PIL images; this op takes arrays or PIL images and
    returns arrays. A crop larger than the image fails.

    Args:
        size: an int for square crops, or ``(height, width)``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.arange(16, dtype=np.uint8).reshape(4, 4)
        >>> [int(crop[0, 0]) for crop in vision.FiveCrop(2)(img)]
        [0, 2, 8, 10, 5]
    """

    num_outputs = 5

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = check_size(self.name, size)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, ...]:
        return _crop_specs(self.name, inputs, square(self.size), 5)


class TenCrop(Op):
    """:class:`FiveCrop`'s five crops, then the five crops of the flipped image (left-right, or
    top-bottom with ``use_vertical_flip``): ten outputs.

    Args:
        size: an int for square crops, or ``(height, width)``.
        use_vertical_flip: flip top to bottom instead of left to right.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.arange(16, dtype=np.uint8).reshape(4, 4)
        >>> crops = vision.TenCrop(2)(img)
        >>> len(crops), crops[5].tolist()
        (10, [[3, 2], [7, 6]])
    """

    num_outputs = 10

    def __init__(self, size: int | Sequence[int], use_vertical_flip: bool = False) -> None:
        self.size = check_size(self.name, size)
        self.use_vertical_flip = check_bool(self.name, "use_vertical_flip", use_vertical_flip)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, ...]:
        return _crop_specs(self.name, inputs, square(self.size), 10)


def _check_slice_mode(op: str, value: Any) -> SliceMode:
    if not isinstance(value, SliceMode):
        raise TypeError(
            f"{op}: `slice_mode` must be a vision.SliceMode member, e.g. SliceMode.PAD. "
            f"Found: {value!r} ({type(value).__name__})"
        )
    return value


class SlicePatches(Op):
    """Cut the image into ``num_height`` x ``num_width`` patches of equal size: that many outputs, in
    row-major order. With both 1 the image comes back unchanged.

    A side that does not divide evenly is padded at the bottom/right with ``fill_value`` up to whole
    patches (``SliceMode.PAD``: patches of ``ceil(side / num)``) or its remainder dropped
    (``SliceMode.DROP``: patches of ``side // num``). MindSpore rejects more patches than pixels along a
    side in either mode; here ``PAD`` pads such an image out (``DROP`` still fails).

    Args:
        num_height: patches down, at least 1.
        num_width: patches across, at least 1.
        slice_mode: a :class:`SliceMode` member.
        fill_value: the padding value, in [0, 255].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.arange(15, dtype=np.uint8).reshape(3, 5)
        >>> [p.tolist() for p in vision.SlicePatches(1, 2)(img)]
        [[[0, 1, 2], [5, 6, 7], [10, 11, 12]], [[3, 4, 0], [8, 9, 0], [13, 14, 0]]]
    """

    def __init__(
        self,
        num_height: int = 1,
        num_width: int = 1,
        slice_mode: SliceMode = SliceMode.PAD,
        fill_value: int = 0,
    ) -> None:
        self.num_height = check_int(self.name, "num_height", num_height, low=1)
        self.num_width = check_int(self.name, "num_width", num_width, low=1)
        self.slice_mode = _check_slice_mode(self.name, slice_mode)
        self.fill_value = check_int(self.name, "fill_value", fill_value, low=0, high=255)

    @property
    def num_outputs(self) -> int:  # type: ignore[override]  # per instance, where Op has a class attribute
        return self.num_height * self.num_width

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        count = self.num_outputs
        if count == 1:
            return TensorSpec((h, w, *rest), dtype)
        pad = self.slice_mode is SliceMode.PAD

        def patch(side: int | None, num: int) -> int | None:
            if side is None:
                return None
            if not pad and side < num:
                raise ValueError(
                    f"{self.name}: an image of shape {tuple(inputs[0].shape)} cannot be cut into "
                    f"{self.num_height} x {self.num_width} patches of at least one pixel with SliceMode.DROP"
                )
            return -(-side // num) if pad else side // num

        return (TensorSpec((patch(h, self.num_height), patch(w, self.num_width), *rest), dtype),) * count
