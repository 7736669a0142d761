"""Resize plans: the output size of ``Resize``, and the (crop box, output size) pair that every op of
the resize and crop family comes down to.

``crop_resize`` is the one place that knows, per op, which region is taken and what size it becomes:
the Dvpp drivers (whose hardware does exactly "crop, then resize") and the fused decoders run any
op of the family through it; the CPU and GPU kernels call the same functions op by op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, overload

import numpy as np

from minddata.ops.plans.crop import CropBox, center_crop_box, check_crop_box, random_resized_crop_box
from minddata.ops.plans.image import square

__all__ = ["CROP_RESIZE_OPS", "CropResize", "crop_resize", "geometry_op", "resize_output_size"]


@overload
def resize_output_size(height: int, width: int, size: int | tuple[int, int]) -> tuple[int, int]: ...
@overload
def resize_output_size(
    height: int | None, width: int | None, size: int | tuple[int, int]
) -> tuple[int | None, int | None]: ...
def resize_output_size(
    height: int | None, width: int | None, size: int | tuple[int, int]
) -> tuple[int | None, int | None]:
    """MindSpore's rule: ``(h, w)`` is exact; an int is the shorter side, and the longer becomes
    ``int(long * size / short)``. An unknown input side (``None``, in a spec) leaves both unknown.

    Examples:
        >>> from minddata.ops.plans.resize import resize_output_size
        >>> resize_output_size(8, 18, 4), resize_output_size(640, 480, 224), resize_output_size(None, 5, (2, 3))
        ((4, 9), (298, 224), (2, 3))
    """
    if isinstance(size, tuple):
        return size
    if height is None or width is None:
        return None, None
    if height <= width:
        return size, int(width * size / height)
    return int(height * size / width), size


class CropResize(NamedTuple):
    """Take ``box`` of the input, then resize it to ``out_height`` x ``out_width`` (a crop without a
    resize has the box's size; a resize without a crop has the whole image as its box)."""

    box: CropBox
    out_height: int
    out_width: int


def geometry_op(op: Any) -> Any:
    """The op whose parameters say the geometry: a fused decode's resize or crop, else ``op`` itself."""
    if op.name == "FusedDecodeResize":
        return op.resize
    if op.name == "FusedDecodeRandomResizedCrop":
        return op.crop
    return op


def _resize(op: Any, height: int, width: int, rng: Any, shape: Any) -> CropResize:
    out_h, out_w = resize_output_size(height, width, op.size)
    return CropResize(CropBox(0, 0, height, width), out_h, out_w)


def _random_resized_crop(op: Any, height: int, width: int, rng: Any, shape: Any) -> CropResize:
    box = random_resized_crop_box(rng, height, width, op.scale, op.ratio, op.max_attempts)
    return CropResize(box, *square(op.size))


def _resized_crop(op: Any, height: int, width: int, rng: Any, shape: Any) -> CropResize:
    box = CropBox(op.top, op.left, op.height, op.width)
    check_crop_box(op.name, shape, box)
    return CropResize(box, *square(op.size))


def _crop(op: Any, height: int, width: int, rng: Any, shape: Any) -> CropResize:
    top, left = op.coordinates
    box = CropBox(top, left, *square(op.size))
    check_crop_box(op.name, shape, box)
    return CropResize(box, box.height, box.width)


def _center_crop(op: Any, height: int, width: int, rng: Any, shape: Any) -> CropResize:
    box = center_crop_box(height, width, *square(op.size))
    return CropResize(box, box.height, box.width)


_PLANS: dict[str, Callable[..., CropResize]] = {
    "Resize": _resize,
    "RandomResizedCrop": _random_resized_crop,
    "RandomCropDecodeResize": _random_resized_crop,
    "ResizedCrop": _resized_crop,
    "Crop": _crop,
    "CenterCrop": _center_crop,
}
CROP_RESIZE_OPS = (*_PLANS, "FusedDecodeResize", "FusedDecodeRandomResizedCrop")


def crop_resize(
    op: Any, height: int, width: int, rng: np.random.Generator | None = None, shape: Any = None
) -> CropResize:
    """The plan of any op in ``CROP_RESIZE_OPS`` for a ``height`` x ``width`` image: a random op draws
    from ``rng`` (the row's); a fixed box is checked against ``shape`` (what the error shows; default
    ``(height, width)``).

    Examples:
        >>> from minddata import vision
        >>> from minddata.ops.plans.resize import crop_resize
        >>> crop_resize(vision.Resize(4), 8, 18)
        CropResize(box=CropBox(top=0, left=0, height=8, width=18), out_height=4, out_width=9)
        >>> crop_resize(vision.CenterCrop(2), 4, 4).box
        CropBox(top=1, left=1, height=2, width=2)
    """
    geometry = geometry_op(op)
    plan = _PLANS.get(geometry.name)
    if plan is None:
        raise ValueError(f"{op.name} is not a crop or resize op: it has no crop-resize plan")
    return plan(geometry, height, width, rng, (height, width) if shape is None else shape)
