"""Crop plans: the box each crop op takes, and the padding that comes before it.

A box is ``CropBox(top, left, height, width)`` in the input's pixel coordinates. ``CenterCrop``'s box
may start above or left of the image (negative ``top``/``left``): MindSpore zero-pads an image
smaller than the crop, and the part of the box outside the image is that padding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

__all__ = [
    "CropBox",
    "RandomCropPlan",
    "center_crop_box",
    "check_crop_box",
    "padded_size",
    "random_crop_plan",
    "random_crop_too_large",
    "random_resized_crop_box",
]


class CropBox(NamedTuple):
    """A crop region: ``(top, left, height, width)``, unpackable as a tuple.

    Examples:
        >>> from minddata.ops.plans.crop import CropBox
        >>> top, left, height, width = CropBox(1, 2, 3, 4)
        >>> CropBox(1, 2, 3, 4).bottom, CropBox(1, 2, 3, 4).right
        (4, 6)
    """

    top: int
    left: int
    height: int
    width: int

    @property
    def bottom(self) -> int:
        return self.top + self.height

    @property
    def right(self) -> int:
        return self.left + self.width


def check_crop_box(op_name: str, shape: Sequence[int | None], box: CropBox) -> None:
    """A fixed box (``Crop``, ``ResizedCrop``) must lie inside an image of ``shape``; an unknown
    (``None``) side passes, so specs check what they know before the first row.

    Examples:
        >>> from minddata.ops.plans.crop import CropBox, check_crop_box
        >>> check_crop_box("Crop", (4, 4), CropBox(1, 1, 3, 3))
        >>> check_crop_box("Crop", (4, 4), CropBox(2, 0, 3, 1))
        Traceback (most recent call last):
        ...
        ValueError: Crop: the crop box (top=2, left=0, height=3, width=1) must lie inside the image. Found image shape (4, 4)
    """
    height, width = shape[0], shape[1]
    if (height is not None and box.bottom > height) or (width is not None and box.right > width):
        raise ValueError(
            f"{op_name}: the crop box (top={box.top}, left={box.left}, height={box.height}, width={box.width}) "
            f"must lie inside the image. Found image shape {tuple(shape)}"
        )


def center_crop_box(height: int, width: int, crop_height: int, crop_width: int) -> CropBox:
    """MindSpore's centre crop of an image, padded first where it is smaller than the crop.

    An odd leftover puts the extra cropped row/column at the bottom/right and the extra padding
    row/column at the top/left: ``(n - c) // 2`` (floor division) is both rules.

    Examples:
        >>> from minddata.ops.plans.crop import center_crop_box
        >>> center_crop_box(5, 8, 2, 4)
        CropBox(top=1, left=2, height=2, width=4)
        >>> center_crop_box(3, 3, 6, 3)  # 3 rows of padding: 2 above, 1 below
        CropBox(top=-2, left=0, height=6, width=3)
    """
    return CropBox((height - crop_height) // 2, (width - crop_width) // 2, crop_height, crop_width)


def _rint(v: float) -> int:
    # C++ std::round (half away from zero) for v >= 0; Python's round() is half-to-even.
    return int(math.floor(v + 0.5))


def random_resized_crop_box(
    rng: np.random.Generator,
    height: int,
    width: int,
    scale: tuple[float, float],
    ratio: tuple[float, float],
    max_attempts: int,
) -> CropBox:
    """The box ``RandomResizedCrop`` (and ``RandomCropDecodeResize``) crops, drawn as MindSpore's
    RandomCropAndResize draws it: up to ``max_attempts`` times an area fraction from ``scale`` and a
    log-uniform aspect ratio from ``ratio``; the first box that fits, at a uniform position; else the
    whole image clamped to the ratio bounds, centred.

    Examples:
        >>> import numpy as np
        >>> from minddata.ops.plans.crop import random_resized_crop_box
        >>> box = random_resized_crop_box(np.random.default_rng(0), 30, 40, (0.5, 1.0), (0.75, 1.33), 10)
        >>> box.bottom <= 30 and box.right <= 40 and box.height * box.width >= 0.45 * 30 * 40
        True
    """
    area = height * width
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(max_attempts):
        s = rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        cw = max(1, _rint(math.sqrt(area * s * aspect)))
        ch = max(1, _rint(cw / aspect))
        if cw <= width and ch <= height:
            left = int(rng.integers(0, width - cw, endpoint=True))
            top = int(rng.integers(0, height - ch, endpoint=True))
            return CropBox(top, left, ch, cw)
    # No draw fitted: the whole image, clamped to the ratio bounds, centred.
    img_aspect = width / height
    if img_aspect < ratio[0]:
        cw, ch = width, _rint(width / ratio[0])
    elif img_aspect > ratio[1]:
        ch, cw = height, _rint(height * ratio[1])
    else:
        ch, cw = height, width
    ch, cw = min(max(ch, 1), height), min(max(cw, 1), width)
    return CropBox(_rint((height - ch) / 2), _rint((width - cw) / 2), ch, cw)


# ---------------------------------------------------------------------------------------------- padding


def padded_size(
    height: int | None, width: int | None, padding: tuple[int, int, int, int]
) -> tuple[int | None, int | None]:
    """``(height, width)`` after padding by ``(left, top, right, bottom)``; an unknown side stays unknown.

    Examples:
        >>> from minddata.ops.plans.crop import padded_size
        >>> padded_size(4, None, (1, 2, 3, 4))
        (10, None)
    """
    left, top, right, bottom = padding
    return (
        None if height is None else height + top + bottom,
        None if width is None else width + left + right,
    )


def random_crop_too_large(
    crop: tuple[int, int], padded: tuple[int | None, int | None], shape: Sequence[int | None]
) -> ValueError:
    """``RandomCrop``'s error for a crop larger than the (padded) image, the same before and at run time."""
    return ValueError(
        f"RandomCrop: the crop size ({crop[0]}, {crop[1]}) is larger than the padded image "
        f"({padded[0]}, {padded[1]}) of an input of shape {tuple(shape)}; set pad_if_needed=True or a smaller size"
    )


class RandomCropPlan(NamedTuple):
    """What ``RandomCrop`` does to one row: pad by ``padding`` (left, top, right, bottom), then crop
    ``box`` (in the padded image's coordinates)."""

    padding: tuple[int, int, int, int]
    box: CropBox


def random_crop_plan(
    rng: np.random.Generator,
    shape: Sequence[int],
    size: tuple[int, int],
    padding: tuple[int, int, int, int] | None,
    pad_if_needed: bool,
) -> RandomCropPlan:
    """``RandomCrop``'s plan for an image of ``shape``, as MindSpore's: pad by ``padding``; with
    ``pad_if_needed``, pad a side still shorter than the crop by the shortfall on both ends (as
    MindSpore and torchvision do); then draw the left, then the top, uniformly.

    Examples:
        >>> import numpy as np
        >>> from minddata.ops.plans.crop import random_crop_plan
        >>> plan = random_crop_plan(np.random.default_rng(0), (2, 5), (4, 3), None, True)
        >>> plan.padding, plan.box.height, plan.box.width
        ((0, 2, 0, 2), 4, 3)
    """
    ch, cw = size
    left, top, right, bottom = padding or (0, 0, 0, 0)
    ph, pw = shape[0] + top + bottom, shape[1] + left + right
    if pad_if_needed:
        if ph < ch:
            top, bottom = top + ch - ph, bottom + ch - ph
        if pw < cw:
            left, right = left + cw - pw, right + cw - pw
        ph, pw = shape[0] + top + bottom, shape[1] + left + right
    if ph < ch or pw < cw:
        raise random_crop_too_large((ch, cw), (ph, pw), shape)
    x = int(rng.integers(0, pw - cw, endpoint=True))  # left first, as MindSpore draws
    y = int(rng.integers(0, ph - ch, endpoint=True))
    return RandomCropPlan((left, top, right, bottom), CropBox(y, x, ch, cw))
