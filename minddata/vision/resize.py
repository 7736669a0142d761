"""RandomResize, named as in ``mindspore.dataset.vision`` (2.x): :class:`Resize` with an interpolation
drawn per row. The draw is planned in ``minddata.ops.plans.bbox`` (shared with RandomResizeWithBBox);
the CPU kernel lives in ``minddata.ops.cpu.resize``.
"""

from __future__ import annotations

from collections.abc import Sequence

from minddata.ops.base import Op, TensorSpec
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._ops import image_spec_dims
from minddata.vision._validators import check_size

__all__ = ["RandomResize"]


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
        if isinstance(self.size, tuple):
            out_h, out_w = self.size
        elif h is None or w is None:
            out_h = out_w = None
        elif h <= w:  # MindSpore's rule: the shorter side becomes size
            out_h, out_w = self.size, int(w * self.size / h)
        else:
            out_h, out_w = int(h * self.size / w), self.size
        return TensorSpec((out_h, out_w, *rest), spec_dtype(image))
