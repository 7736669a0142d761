"""CPU kernels of FiveCrop, TenCrop and SlicePatches: slices of the image (copied, so that the pieces
do not pin the whole image), as planned in ``minddata.ops.plans.multi_crop``."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.crop import pad_image
from minddata.ops.cpu.flip import _hflip
from minddata.ops.cpu.image import _image
from minddata.ops.plans.image import square as _square
from minddata.ops.plans.multi_crop import five_crop_boxes, slice_patch_grid
from minddata.ops.registry import register_kernel


def _crops(img: np.ndarray, boxes: list[tuple[int, int, int, int]]) -> list[np.ndarray]:
    return [img[t : t + h, s : s + w].copy() for t, s, h, w in boxes]


@register_kernel("FiveCrop", "CPU")
def five_crop(op: KernelOp, ctx: KernelContext, image: Any) -> tuple[np.ndarray, ...]:
    img = _image("FiveCrop", image)
    ch, cw = _square(op.size)
    return tuple(_crops(img, five_crop_boxes("FiveCrop", img.shape[0], img.shape[1], ch, cw)))


@register_kernel("TenCrop", "CPU")
def ten_crop(op: KernelOp, ctx: KernelContext, image: Any) -> tuple[np.ndarray, ...]:
    img = _image("TenCrop", image)
    ch, cw = _square(op.size)
    boxes = five_crop_boxes("TenCrop", img.shape[0], img.shape[1], ch, cw)
    flipped = img[::-1] if op.use_vertical_flip else _hflip(img)
    return tuple(_crops(img, boxes) + _crops(flipped, boxes))


@register_kernel("SlicePatches", "CPU")
def slice_patches(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray | tuple[np.ndarray, ...]:
    img = _image("SlicePatches", image)
    if op.num_height == 1 and op.num_width == 1:
        return img
    pad = getattr(op.slice_mode, "value", op.slice_mode) == "pad"
    ph, pw, boxes = slice_patch_grid(
        "SlicePatches", img.shape[0], img.shape[1], op.num_height, op.num_width, pad
    )
    if pad and (ph > img.shape[0] or pw > img.shape[1]):
        img = pad_image(
            img, 0, 0, pw - img.shape[1], ph - img.shape[0], "constant", op.fill_value, "SlicePatches"
        )
    return tuple(_crops(img, boxes))
