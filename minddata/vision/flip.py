"""Flip op specs, named as in ``mindspore.dataset.vision`` (2.x): :class:`HorizontalFlip`,
:class:`RandomHorizontalFlip`, :class:`VerticalFlip` and :class:`RandomVerticalFlip`.

Specs validate and hold parameters only; the random draw is ``minddata.ops.plans.flip``, the CPU
kernels ``minddata.ops.cpu.flip``.
"""

from __future__ import annotations

from minddata.ops.base import Op, TensorSpec
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._validators import check_prob, image_spec_dims, one_image_spec

__all__ = ["HorizontalFlip", "RandomHorizontalFlip", "RandomVerticalFlip", "VerticalFlip"]


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
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        image_spec_dims(self.name, image)
        return TensorSpec(tuple(image.shape), spec_dtype(image))


class VerticalFlip(Op):
    """Mirror an image top to bottom.

    The output is a view of the input (``image[::-1]``), not a copy: it costs nothing, and later ops
    read views as they read arrays.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.VerticalFlip()(np.array([[1], [2], [3]], np.uint8))
        array([[3],
               [2],
               [1]], dtype=uint8)
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype)


class RandomVerticalFlip(Op):
    """Mirror an image top to bottom with probability ``prob`` (a view of the input, as
    :class:`VerticalFlip`).

    Args:
        prob: the probability of flipping, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomVerticalFlip(prob=1.0)(np.array([[1], [2]], np.uint8))
        array([[2],
               [1]], dtype=uint8)
    """

    random = True

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype)
