"""Plans of the box-aware ops: MindSpore's bounding-box column rules and the random draws of the ops.

A bounding-box column is a ``<N, 4 + k>`` array of ``[x, y, width, height, ...]`` rows in the image's
pixel coordinates (``x`` to the right, ``y`` down); the extra ``k`` columns (class, difficulty, ...)
travel with their box untouched. Box arithmetic is done in float32, as MindSpore's ``BoundingBox``
does, and the column comes out float32.

Boxes and crops (MindSpore's ``BoundingBox::UpdateBBoxesForCrop``): a box is clipped to the crop and
moved into the crop's coordinates. A box that does not overlap the crop is dropped. MindSpore also keeps
a box that only touches the crop's edge, as a box of zero width or height; here a box whose clipped
area is empty is dropped too, since a zero-size box is no object and breaks IoU-based losses.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "RANDOM_RESIZE_INTERPOLATIONS",
    "RandomCropPlan",
    "check_boxes",
    "crop_boxes",
    "flip_boxes_horizontally",
    "flip_boxes_vertically",
    "pad_boxes",
    "random_crop_plan",
    "integer_box",
    "random_interpolation",
    "resize_boxes",
]


def check_boxes(op_name: str, image_shape: tuple[int, ...], boxes: Any) -> np.ndarray:
    """The boxes as a float32 ``<N, 4+>`` array, checked against the image as MindSpore checks them
    (``BoundingBox::ValidateBoundingBoxes``): every box inside the image, no negative corner."""
    arr = np.asarray(boxes)
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{op_name}: expected numeric bounding boxes ([x, y, width, height, ...] rows). Found dtype {arr.dtype} "
            f"(shape {arr.shape})"
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{op_name}: bounding boxes must be a 2-D <N, 4+> array of [x, y, width, height, ...] rows. "
            f"Found shape {arr.shape}"
        )
    if arr.shape[1] < 4:
        raise ValueError(
            f"{op_name}: bounding boxes must have at least 4 columns (x, y, width, height). Found shape {arr.shape}"
        )
    out = arr.astype(np.float32)  # a copy: the box column is updated in place below
    if not out.size:
        return out
    img_h, img_w = image_shape[0], image_shape[1]
    x, y, w, h = out[:, 0], out[:, 1], out[:, 2], out[:, 3]
    if not np.isfinite(out[:, :4]).all():
        raise ValueError(
            f"{op_name}: bounding boxes must be finite. Found: {out[~np.isfinite(out[:, :4]).all(1)][0]}"
        )
    # MindSpore compares the corner's integer part with 0: -0.5 passes, -1 does not.
    negative = (np.trunc(x) < 0) | (np.trunc(y) < 0) | (w < 0) | (h < 0)
    if negative.any():
        i = int(np.argmax(negative))
        raise ValueError(
            f"{op_name}: bounding box {i} has a negative corner or size: [x, y, width, height] = "
            f"{out[i, :4].tolist()}"
        )
    outside = (x + w > img_w) | (y + h > img_h)
    if outside.any():
        i = int(np.argmax(outside))
        raise ValueError(
            f"{op_name}: bounding box {i} ([x, y, width, height] = {out[i, :4].tolist()}) reaches x = "
            f"{float(x[i] + w[i])}, y = {float(y[i] + h[i])}, outside the image of width {img_w} and height {img_h}"
        )
    return out


def pad_boxes(boxes: np.ndarray, top: int, left: int) -> np.ndarray:
    """Boxes moved by padding ``top`` rows and ``left`` columns before the image."""
    out = boxes.copy()
    out[:, 0] += np.float32(left)
    out[:, 1] += np.float32(top)
    return out


def crop_boxes(boxes: np.ndarray, x: int, y: int, width: int, height: int) -> np.ndarray:
    """Boxes clipped to the crop ``[x, x + width) x [y, y + height)`` in the crop's coordinates; boxes
    left with no area are dropped (see the module's note)."""
    f = np.float32
    x0 = np.maximum(boxes[:, 0], f(x)) - f(x)
    y0 = np.maximum(boxes[:, 1], f(y)) - f(y)
    x1 = np.minimum(boxes[:, 0] + boxes[:, 2], f(x + width)) - f(x)
    y1 = np.minimum(boxes[:, 1] + boxes[:, 3], f(y + height)) - f(y)
    keep = (x1 > x0) & (y1 > y0)
    out = boxes[keep].copy()
    out[:, 0] = x0[keep]
    out[:, 1] = y0[keep]
    out[:, 2] = x1[keep] - x0[keep]
    out[:, 3] = y1[keep] - y0[keep]
    return out


def resize_boxes(
    boxes: np.ndarray, out_width: int, out_height: int, in_width: int, in_height: int
) -> np.ndarray:
    """Boxes scaled with the image from ``in_width x in_height`` to ``out_width x out_height``."""
    sx = np.float32(out_width / in_width)
    sy = np.float32(out_height / in_height)
    out = boxes.copy()
    out[:, 0] *= sx
    out[:, 2] *= sx
    out[:, 1] *= sy
    out[:, 3] *= sy
    return out


def flip_boxes_horizontally(boxes: np.ndarray, width: int) -> np.ndarray:
    """Boxes mirrored with an image ``width`` pixels wide: ``x`` becomes ``width - x - w``."""
    out = boxes.copy()
    out[:, 0] = np.float32(width) - boxes[:, 0] - boxes[:, 2]
    return out


def flip_boxes_vertically(boxes: np.ndarray, height: int) -> np.ndarray:
    """Boxes mirrored with an image ``height`` pixels high: ``y`` becomes ``height - y - h``."""
    out = boxes.copy()
    out[:, 1] = np.float32(height) - boxes[:, 1] - boxes[:, 3]
    return out


class RandomCropPlan(NamedTuple):
    """RandomCrop's plan: ``padding`` as (left, top, right, bottom), then ``crop`` as (x, y, width,
    height) in the padded image."""

    padding: tuple[int, int, int, int]
    crop: tuple[int, int, int, int]


def random_crop_plan(
    op_name: str,
    rng: np.random.Generator,
    height: int,
    width: int,
    size: tuple[int, int],
    padding: tuple[int, int, int, int] | None,
    pad_if_needed: bool,
) -> RandomCropPlan:
    """RandomCrop's draw: pad by ``padding``, then (with ``pad_if_needed``) by the shortfall on both ends
    of a side shorter than the crop, then the crop's left and top uniformly (left first), as MindSpore
    and ``vision.RandomCrop`` draw them."""
    ch, cw = size
    left, top, right, bottom = padding or (0, 0, 0, 0)
    ph, pw = height + top + bottom, width + left + right
    if pad_if_needed:
        if ph < ch:
            top, bottom = top + ch - ph, bottom + ch - ph
        if pw < cw:
            left, right = left + cw - pw, right + cw - pw
        ph, pw = height + top + bottom, width + left + right
    if ph < ch or pw < cw:
        raise ValueError(
            f"{op_name}: the crop size ({ch}, {cw}) is larger than the padded image ({ph}, {pw}) of an input of "
            f"height {height} and width {width}; set pad_if_needed=True or a smaller size"
        )
    x = int(rng.integers(0, pw - cw, endpoint=True))
    y = int(rng.integers(0, ph - ch, endpoint=True))
    return RandomCropPlan((left, top, right, bottom), (x, y, cw, ch))


# MindSpore's RandomResize draws one of its four interpolations uniformly, in this order.
RANDOM_RESIZE_INTERPOLATIONS = ("BILINEAR", "NEAREST", "BICUBIC", "AREA")


def random_interpolation(rng: np.random.Generator) -> str:
    """The interpolation RandomResize / RandomResizeWithBBox use for one row (a ``vision.Inter`` name)."""
    return RANDOM_RESIZE_INTERPOLATIONS[int(rng.integers(0, len(RANDOM_RESIZE_INTERPOLATIONS)))]


def integer_box(box: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, width, height) of a box truncated to whole pixels, as BoundingBoxAugment crops it."""
    return tuple(int(math.trunc(float(v))) for v in box[:4])  # type: ignore[return-value]  # a box has four values
