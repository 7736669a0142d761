"""CPU kernels of the box-aware ops: each takes (image, boxes) and returns both.

The box rules and the random draws are the plans of ``minddata.ops.plans.bbox``; the pixel work is the
same as the image-only ops' (``resize_image``, ``pad_image``, flips), so a box-aware op and its
image-only twin give the same pixels for the same draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.crop import pad_image
from minddata.ops.cpu.flip import _hflip
from minddata.ops.cpu.image import _image
from minddata.ops.cpu.resize import resize_image
from minddata.ops.plans.bbox import (
    check_boxes,
    crop_boxes,
    flip_boxes_horizontally,
    flip_boxes_vertically,
    integer_box,
    pad_boxes,
    random_crop_plan,
    random_interpolation,
    resize_boxes,
)
from minddata.ops.plans.crop import random_resized_crop_box
from minddata.ops.plans.image import square as _square
from minddata.ops.plans.resize import resize_output_size
from minddata.ops.registry import get_kernel, register_kernel


def _inputs(op_name: str, image: Any, boxes: Any, *, numeric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    img = _image(op_name, image, numeric=numeric)
    return img, check_boxes(op_name, img.shape, boxes)


def _resize_with_boxes(
    op_name: str, img: np.ndarray, boxes: np.ndarray, size: Any, interpolation: Any
) -> tuple[np.ndarray, np.ndarray]:
    h, w = resize_output_size(img.shape[0], img.shape[1], size)
    out = resize_image(img, h, w, interpolation, op_name)
    return out, resize_boxes(boxes, w, h, img.shape[1], img.shape[0])


@register_kernel("ResizeWithBBox", "CPU")
def resize_with_bbox(op: KernelOp, ctx: KernelContext, image: Any, boxes: Any) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("ResizeWithBBox", image, boxes, numeric=True)
    return _resize_with_boxes("ResizeWithBBox", img, bxs, op.size, op.interpolation)


@register_kernel("RandomResizeWithBBox", "CPU")
def random_resize_with_bbox(
    op: KernelOp, ctx: KernelContext, image: Any, boxes: Any
) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("RandomResizeWithBBox", image, boxes, numeric=True)
    return _resize_with_boxes("RandomResizeWithBBox", img, bxs, op.size, random_interpolation(ctx.rng))


@register_kernel("RandomCropWithBBox", "CPU")
def random_crop_with_bbox(
    op: KernelOp, ctx: KernelContext, image: Any, boxes: Any
) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("RandomCropWithBBox", image, boxes)
    plan = random_crop_plan(
        "RandomCropWithBBox",
        ctx.rng,
        img.shape[0],
        img.shape[1],
        _square(op.size),
        op.padding,
        op.pad_if_needed,
    )
    left, top, right, bottom = plan.padding
    if left or top or right or bottom:
        img = pad_image(img, left, top, right, bottom, op.padding_mode, op.fill_value, "RandomCropWithBBox")
        bxs = pad_boxes(bxs, top, left)
    x, y, cw, ch = plan.crop
    return img[y : y + ch, x : x + cw].copy(), crop_boxes(bxs, x, y, cw, ch)


@register_kernel("RandomHorizontalFlipWithBBox", "CPU")
def random_horizontal_flip_with_bbox(
    op: KernelOp, ctx: KernelContext, image: Any, boxes: Any
) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("RandomHorizontalFlipWithBBox", image, boxes)
    if ctx.rng.random() < op.prob:
        return _hflip(img), flip_boxes_horizontally(bxs, img.shape[1])
    return img, bxs


@register_kernel("RandomVerticalFlipWithBBox", "CPU")
def random_vertical_flip_with_bbox(
    op: KernelOp, ctx: KernelContext, image: Any, boxes: Any
) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("RandomVerticalFlipWithBBox", image, boxes)
    if ctx.rng.random() < op.prob:
        return np.ascontiguousarray(img[::-1]), flip_boxes_vertically(bxs, img.shape[0])
    return img, bxs


@register_kernel("RandomResizedCropWithBBox", "CPU")
def random_resized_crop_with_bbox(
    op: KernelOp, ctx: KernelContext, image: Any, boxes: Any
) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("RandomResizedCropWithBBox", image, boxes, numeric=True)
    top, left, ch, cw = random_resized_crop_box(
        ctx.rng, img.shape[0], img.shape[1], op.scale, op.ratio, op.max_attempts
    )
    oh, ow = _square(op.size)
    out = resize_image(
        img[top : top + ch, left : left + cw], oh, ow, op.interpolation, "RandomResizedCropWithBBox"
    )
    return out, resize_boxes(crop_boxes(bxs, left, top, cw, ch), ow, oh, cw, ch)


@register_kernel("BoundingBoxAugment", "CPU")
def bounding_box_augment(op: KernelOp, ctx: KernelContext, image: Any, boxes: Any) -> tuple[np.ndarray, np.ndarray]:
    img, bxs = _inputs("BoundingBoxAugment", image, boxes)
    transform = op.transform
    kernel = get_kernel(transform.name, "CPU")
    rng = ctx.rng
    out = img.copy()
    for box in bxs:
        # One draw per box, chosen or not, as MindSpore draws: the choices do not depend on box sizes.
        if rng.random() >= op.ratio:
            continue
        x, y, w, h = integer_box(box)
        if w <= 0 or h <= 0:
            continue
        region = np.asarray(kernel(transform, ctx, out[y : y + h, x : x + w].copy()))
        if region.shape[:2] != (h, w):
            region = resize_image(region, h, w, "BILINEAR", "BoundingBoxAugment")
        if region.shape[2:] != out.shape[2:]:
            raise ValueError(
                f"BoundingBoxAugment: the transform {transform.name} turned a region of shape "
                f"{(h, w, *out.shape[2:])} into one of shape {region.shape}; it must keep the channels"
            )
        out[y : y + h, x : x + w] = region
    return out, bxs
