"""Op specs that write a fixed region of the image, named as in ``mindspore.dataset.vision`` (2.x):
:class:`Erase` (fill a rectangle) and :class:`PadToSize` (pad out to a size). The CPU kernels live in
``minddata.ops.cpu.pad_erase``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.image import square
from minddata.vision._utils import Border
from minddata.vision._validators import (
    check_bool,
    check_border,
    check_fill_value,
    check_int,
    check_real,
    check_size,
    is_int,
    is_real,
    one_image_spec,
)

__all__ = ["Erase", "PadToSize"]


def _check_erase_value(op: str, value: Any) -> float | tuple[float, float, float]:
    if is_real(value):
        v = check_real(op, "value", value)
        if not 0.0 <= v <= 255.0:
            raise ArgumentError(f"{op}: `value` must be in [0, 255]. Found: {v}")
        return v
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 3:
        vals = tuple(check_real(op, f"value[{i}]", v) for i, v in enumerate(value))
        for i, v in enumerate(vals):
            if not 0.0 <= v <= 255.0:
                raise ArgumentError(f"{op}: `value[{i}]` must be in [0, 255]. Found: {v}")
        return vals  # type: ignore[return-value]  # three values: the length was checked
    raise TypeError(
        f"{op}: `value` must be a number or a sequence of 3 numbers (R, G, B). Found: {value!r} ({type(value).__name__})"
    )


class Erase(Op):
    """Fill the rectangle of ``height`` x ``width`` at (``top``, ``left``) with ``value``.

    As in MindSpore the image must be ``<H, W, 3>``. The rectangle is clipped to the image (a
    rectangle outside it changes nothing). Integer images get the value truncated to their dtype.

    Args:
        top: the rectangle's top row, at least 0.
        left: the rectangle's left column, at least 0.
        height: its height, at least 1.
        width: its width, at least 1.
        value: a number for every channel, or 3 numbers for R, G, B; each in [0, 255].
        inplace: write into the input array itself (when it is writable) instead of a copy.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> out = vision.Erase(1, 1, 2, 2, value=(9, 8, 7))(np.zeros((4, 4, 3), np.uint8))
        >>> out[1, 1].tolist(), out[0, 0].tolist(), int((out[..., 0] == 9).sum())
        ([9, 8, 7], [0, 0, 0], 4)
    """

    def __init__(
        self,
        top: int,
        left: int,
        height: int,
        width: int,
        value: float | Sequence[float] = 0,
        inplace: bool = False,
    ) -> None:
        self.top = check_int(self.name, "top", top, low=0)
        self.left = check_int(self.name, "left", left, low=0)
        self.height = check_int(self.name, "height", height, low=1)
        self.width = check_int(self.name, "width", width, low=1)
        self.value = _check_erase_value(self.name, value)
        self.inplace = check_bool(self.name, "inplace", inplace)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        if len(rest) != 1 or rest[0] not in (3, None):
            raise ValueError(
                f"{self.name}: expected an image of shape <H, W, 3>. Found shape {tuple(inputs[0].shape)}"
            )
        return TensorSpec((h, w, *rest), dtype)


def _check_offset(op: str, value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if is_int(value):
        v = check_int(op, "offset", value, low=0)
        return (v, v)
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 2:
        return (
            check_int(op, "offset[0] (top)", value[0], low=0),
            check_int(op, "offset[1] (left)", value[1], low=0),
        )
    raise TypeError(
        f"{op}: `offset` must be None, an int or a sequence of 2 ints (top, left). Found: {value!r} "
        f"({type(value).__name__})"
    )


class PadToSize(Op):
    """Pad the image to ``size``: by ``offset`` rows and columns at the top and left and the rest at the
    bottom and right, or, without ``offset``, evenly around (the odd pixel at the bottom/right).

    An image larger than ``size``, or one that does not fit at ``offset``, fails.

    Args:
        size: the output size, an int for a square or ``(height, width)``.
        offset: ``None``; an int for both the top and left padding; or ``(top, left)``.
        fill_value: as :class:`Pad`'s, for ``Border.CONSTANT``.
        padding_mode: a :class:`Border` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.PadToSize((3, 4), fill_value=7)(np.ones((1, 1), np.uint8)).tolist()
        [[7, 7, 7, 7], [7, 1, 7, 7], [7, 7, 7, 7]]
    """

    def __init__(
        self,
        size: int | Sequence[int],
        offset: int | Sequence[int] | None = None,
        fill_value: int | Sequence[int] = 0,
        padding_mode: Border = Border.CONSTANT,
    ) -> None:
        self.size = check_size(self.name, size)
        self.offset = _check_offset(self.name, offset)
        self.fill_value = check_fill_value(self.name, fill_value)
        self.padding_mode = check_border(self.name, padding_mode)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        th, tw = square(self.size)
        top, left = self.offset or (0, 0)
        if (h is not None and h + top > th) or (w is not None and w + left > tw):
            raise ValueError(
                f"{self.name}: an image of shape {tuple(inputs[0].shape)} at offset (top={top}, left={left}) does "
                f"not fit in the target size ({th}, {tw})"
            )
        return TensorSpec((th, tw, *rest), dtype)
