"""Op specs that turn pixels into a model's input, named as in ``mindspore.dataset.vision`` (2.x):
:class:`Normalize`, :class:`Rescale`, :class:`HWC2CHW` and :class:`ToType`.

Specs validate and hold parameters only; the CPU kernels are ``minddata.ops.cpu.normalize``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.transforms import TypeCast, one_spec, spec_dtype
from minddata.vision._validators import (
    MAX_INT_SIZE,
    check_bool,
    check_channel_values,
    check_real,
    image_spec_dims,
)

__all__ = ["HWC2CHW", "Normalize", "Rescale", "ToType"]


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
        self.mean = check_channel_values(self.name, "mean", mean, positive=False)
        self.std = check_channel_values(self.name, "std", std, positive=True)
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
