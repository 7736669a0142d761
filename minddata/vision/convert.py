"""Op specs that convert an image's type or layout, named as in ``mindspore.dataset.vision`` (2.x):
:class:`ToTensor`, :class:`ToPIL`, :class:`ToNumpy` and :class:`LinearTransformation`. The CPU
kernels live in ``minddata.ops.cpu.convert``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.transforms import _to_dtype, one_spec, spec_dtype

__all__ = ["LinearTransformation", "ToNumpy", "ToPIL", "ToTensor"]


def _image_dims(op: str, spec: TensorSpec) -> tuple[int | None, ...]:
    shape = tuple(spec.shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"{op}: expected an image of shape <H, W> or <H, W, C>. Found shape {shape}")
    return shape


class ToTensor(Op):
    """HWC image → CHW array of ``output_type`` with values divided by 255 (``[0, 255]`` → ``[0, 1]``).

    A 2-D ``<H, W>`` image gets one channel: ``<1, H, W>``. Every input dtype is divided by 255, as
    in MindSpore. PIL images are accepted.

    Args:
        output_type: the output's dtype (anything ``numpy.dtype`` takes).

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> out = vision.ToTensor()(np.full((2, 3, 3), 255, np.uint8))
        >>> out.shape, out.dtype, float(out.max())
        ((3, 2, 3), dtype('float32'), 1.0)
    """

    def __init__(self, output_type: Any = np.float32) -> None:
        self.output_type = _to_dtype(self.name, output_type)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        shape = _image_dims(self.name, one_spec(self.name, inputs))
        if len(shape) == 2:
            return TensorSpec((1, *shape), self.output_type)
        return TensorSpec((shape[2], shape[0], shape[1]), self.output_type)


class ToPIL(Op):
    """Array → ``PIL.Image.Image`` (a PIL image passes through unchanged).

    ``uint8`` images of 1 (``<H, W>`` or ``<H, W, 1>``), 3 or 4 channels become modes ``L``, ``RGB``,
    ``RGBA``; 2-D ``float32`` and ``int32`` images become modes ``F`` and ``I``. Other arrays fail.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = vision.ToPIL()(np.zeros((2, 3, 3), np.uint8))
        >>> img.mode, img.size
        ('RGB', (3, 2))
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_spec(self.name, inputs)
        shape = _image_dims(self.name, spec)
        dtype = spec_dtype(spec)
        if len(shape) == 3 and shape[2] == 1:
            shape = shape[:2]
        return TensorSpec(shape, dtype)


class ToNumpy(Op):
    """``PIL.Image.Image`` → array (an array passes through unchanged).

    Examples:
        >>> from PIL import Image
        >>> from minddata import vision
        >>> arr = vision.ToNumpy()(Image.new("RGB", (3, 2), (1, 2, 3)))
        >>> arr.shape, arr[0, 0].tolist()
        ((2, 3, 3), [1, 2, 3])
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_spec(self.name, inputs)
        return TensorSpec(tuple(spec.shape), spec_dtype(spec))


class LinearTransformation(Op):
    """Flatten the image to a vector of ``D`` values, subtract ``mean_vector``, multiply by
    ``transformation_matrix`` (``x @ M``) and reshape back, as MindSpore does (e.g. ZCA whitening).

    ``D`` is the image's size (``C * H * W``); the output dtype is NumPy's for the three operands
    (float64 for a float64 matrix).

    Args:
        transformation_matrix: a ``<D, D>`` ``numpy.ndarray``.
        mean_vector: a ``<D,>`` ``numpy.ndarray``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> swap = np.array([[0, 1], [1, 0]], np.float32)
        >>> vision.LinearTransformation(swap, np.array([1, 0], np.float32))(np.array([[5, 7]], np.float32))
        array([[7., 4.]], dtype=float32)
    """

    def __init__(self, transformation_matrix: np.ndarray, mean_vector: np.ndarray) -> None:
        for arg, value in (("transformation_matrix", transformation_matrix), ("mean_vector", mean_vector)):
            if not isinstance(value, np.ndarray):
                raise TypeError(
                    f"{self.name}: `{arg}` must be a numpy.ndarray. Found: {type(value).__name__}"
                )
            if value.dtype.kind not in "biuf":
                raise TypeError(f"{self.name}: `{arg}` must be numeric. Found dtype {value.dtype}")
        matrix, mean = transformation_matrix, mean_vector
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ArgumentError(
                f"{self.name}: `transformation_matrix` must be a square <D, D> matrix. Found shape {matrix.shape}"
            )
        if mean.ndim != 1 or mean.shape[0] != matrix.shape[0]:
            raise ArgumentError(
                f"{self.name}: `mean_vector` must have shape <D,> = ({matrix.shape[0]},), matching "
                f"`transformation_matrix`. Found shape {mean.shape}"
            )
        self.transformation_matrix = matrix.copy()
        self.mean_vector = mean.copy()

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        spec = one_spec(self.name, inputs)
        shape = tuple(spec.shape)
        size = int(np.prod(shape)) if all(d is not None for d in shape) else None
        if size is not None and size != self.transformation_matrix.shape[0]:
            raise ValueError(
                f"{self.name}: an input of shape {shape} has {size} values; `transformation_matrix` is for "
                f"D = {self.transformation_matrix.shape[0]}"
            )
        dtype = spec_dtype(spec)
        out = (
            None
            if dtype is None
            else np.result_type(dtype, self.mean_vector.dtype, self.transformation_matrix.dtype)
        )
        return TensorSpec(shape, out)
