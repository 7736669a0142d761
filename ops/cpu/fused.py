"""CPU kernels of the fused ops (see ``minddata.ops.fused``) and of RandomCropDecodeResize."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu import jpeg
from minddata.ops.cpu.decode import decode_image
from minddata.ops.cpu.image import _image
from minddata.ops.cpu.normalize import hwc2chw, normalize, normalize_into
from minddata.ops.cpu.resize import resize_image
from minddata.ops.plans.decode import check_image_pixels, choose_scale, encoded_bytes
from minddata.ops.plans.resize import crop_resize
from minddata.ops.registry import declare_op, register_kernel

__all__ = ["choose_scale", "decode_random_resized_crop"]

def _header(op_name: str, buf: np.ndarray, limit: int | None) -> tuple[int, int] | None:
    """(height, width) of a JPEG the fast path can decode, else None (fall back to Decode). The
    pixel ``limit`` is checked on libjpeg's own header read (the library that then decodes)."""
    if not jpeg.is_jpeg(buf):
        return None
    try:
        height, width, components, _ = jpeg.read_header(buf)
    except ValueError:
        return None
    if components not in (1, 3):
        return None  # CMYK/YCCK: the full decoder converts those
    check_image_pixels(op_name, width, height, limit)
    return height, width


def _decode_region(buf: np.ndarray, scale: int, box: tuple[int, int, int, int] | None) -> np.ndarray | None:
    try:
        return jpeg.decode(buf, scale_denom=scale, crop=box, contiguous=False)  # read once, by the resize
    except ValueError:
        return None


declare_op("FusedDecodeResize", cost_ms_per_mp=5.0, decodes=True)
@register_kernel("FusedDecodeResize", "CPU")
def fused_decode_resize(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    buf = encoded_bytes(data)
    limit = ctx.options.max_image_pixels
    header = _header("Decode", buf, limit)
    image = None
    if header is not None:
        height, width = header
        _, out_h, out_w = crop_resize(op, height, width)
        scale = choose_scale(height, width, out_h, out_w)
        image = _decode_region(buf, scale, None) if scale > 1 else None
        if image is not None:
            if image.shape[0] == out_h and image.shape[1] == out_w:
                return image
            return resize_image(image, out_h, out_w, op.resize.interpolation, "Resize")
    full = decode_image(buf, max_pixels=limit)
    _, out_h, out_w = crop_resize(op, full.shape[0], full.shape[1])
    return resize_image(full, out_h, out_w, op.resize.interpolation, "Resize")


def decode_random_resized_crop(op: KernelOp, ctx: KernelContext, data: Any, op_name: str) -> np.ndarray:
    """Shared by the fused Decode→RandomResizedCrop and by RandomCropDecodeResize: the crop is drawn
    from the header's size, then only that region is decoded, at the smallest adequate scale."""
    decode_name = "Decode" if op_name == "RandomResizedCrop" else op_name
    interpolation = op.crop.interpolation if op.name == "FusedDecodeRandomResizedCrop" else op.interpolation
    buf = encoded_bytes(data, decode_name)
    limit = ctx.options.max_image_pixels
    header = _header(op_name, buf, limit)
    if header is not None:
        (top, left, ch, cw), out_h, out_w = crop_resize(op, *header, ctx.rng)
        scale = choose_scale(ch, cw, out_h, out_w)
        region = _decode_region(buf, scale, (top, left, ch, cw))
        if region is not None:
            return resize_image(region, out_h, out_w, interpolation, op_name)
        image = decode_image(buf, op_name=decode_name, max_pixels=limit)
    else:
        image = decode_image(buf, op_name=decode_name, max_pixels=limit)
        (top, left, ch, cw), out_h, out_w = crop_resize(op, image.shape[0], image.shape[1], ctx.rng)
    return resize_image(image[top : top + ch, left : left + cw], out_h, out_w, interpolation, op_name)


declare_op("FusedDecodeRandomResizedCrop", cost_ms_per_mp=4.0, decodes=True)
@register_kernel("FusedDecodeRandomResizedCrop", "CPU")
def fused_decode_random_resized_crop(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return decode_random_resized_crop(op, ctx, data, "RandomResizedCrop")


declare_op("RandomCropDecodeResize", cost_ms_per_mp=4.0, decodes=True)
@register_kernel("RandomCropDecodeResize", "CPU")
def random_crop_decode_resize(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return decode_random_resized_crop(op, ctx, data, "RandomCropDecodeResize")


declare_op("FusedNormalizeHWC2CHW", float_output=True)
@register_kernel("FusedNormalizeHWC2CHW", "CPU")
def fused_normalize_hwc2chw(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    norm = op.normalize
    img = _image("Normalize", image, numeric=True)
    if img.dtype == np.uint8 and img.ndim == 3 and img.flags.c_contiguous and img.shape[2] == len(norm.mean) > 1:
        out = np.empty((img.shape[2], img.shape[0], img.shape[1]), np.float32)
        normalize_into(img, op._mean32, op._std32, out, True)
        return out
    # Anything else (other dtypes, one-value mean/std, a bad image) goes through the two kernels as
    # written: the same result, and the same errors naming the op that raised them.
    return hwc2chw(op.hwc2chw, ctx, normalize(norm, ctx, img))
