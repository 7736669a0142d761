"""GPU kernels of the optimizer's fused decoders (the CPU's :mod:`minddata.ops.cpu.fused`) and of
RandomCropDecodeResize: the decode and the resize (or the crop, decoded as a region) in one DALI graph.
On the torch driver the segment decodes and these kernels resize (or crop and resize) the decoded image.
Their numerics are Decode's and Resize's (:mod:`minddata.ops.gpu.decode`, :mod:`minddata.ops.gpu.resize`).
"""

from __future__ import annotations

from typing import Any

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.decode import DECODE_CUDA_TOLERANCE, _decode_static, build_decode, encoded_header
from minddata.ops.gpu.resize import (
    CROP_RESIZE_ARGS,
    RESIZE_ARGS,
    _crop_resize_args,
    _interp_supported,
    build_resize,
    resize_args,
    torch_crop_resize,
    torch_interp_supported,
    torch_resize,
)
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _register,
    torch_kernel,
)
from minddata.ops.plans.resize import crop_resize, geometry_op, resize_output_size


@_register("FusedDecodeResize", args=RESIZE_ARGS, static=_decode_static, first_only=True, cuda_tolerance=DECODE_CUDA_TOLERANCE,
           supports=lambda op: _interp_supported(op.resize),
           build=lambda op, node, args, env: build_resize(build_decode(node, env), args, op.resize.interpolation, env))
def _plan_decode_resize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    buf, h, w = encoded_header("Decode", s, ctx.options.max_image_pixels)
    s.value = buf
    out_h, out_w = resize_output_size(h, w, op.resize.size)
    return resize_args(h, w, out_h, out_w, op.resize.interpolation), Sample((out_h, out_w, 3), _decode_static(op, s.kind))


def _build_decode_crop(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    region = build_decode(node, env, args["anchor"], args["shape"])
    return build_resize(region, args, geometry_op(op).interpolation, env)


@_register("FusedDecodeRandomResizedCrop", "RandomCropDecodeResize", args=CROP_RESIZE_ARGS, static=_decode_static,
           cuda_tolerance=DECODE_CUDA_TOLERANCE,
           first_only=True, supports=lambda op: _interp_supported(geometry_op(op)), build=_build_decode_crop)
def _plan_decode_crop(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    crop = geometry_op(op)
    name = "Decode" if op.name == "FusedDecodeRandomResizedCrop" else op.name
    buf, h, w = encoded_header(name, s, ctx.options.max_image_pixels)
    s.value = buf
    # The crop is drawn from the header's size with the crop op's stream, as the CPU kernel draws it;
    # DALI then decodes only that region (decoders.image_slice).
    box, *out = crop_resize(op, h, w, ctx.rng)
    return _crop_resize_args(box, out, crop.interpolation), Sample((*out, 3), _decode_static(op, s.kind))


# ---------------------------------------------------------------------------------------------- torch
# The torch segment decodes the batch (nvJPEG, or the CPU decoder); these resize or crop-and-resize the
# decoded image as the plan says.


@torch_kernel("FusedDecodeResize", supports=lambda op: torch_interp_supported(op, geometry_op(op)))
def _torch_decode_resize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_resize(x, args["size"], geometry_op(op).interpolation, torch)


@torch_kernel("FusedDecodeRandomResizedCrop", "RandomCropDecodeResize",
              supports=lambda op: torch_interp_supported(op, geometry_op(op)))
def _torch_decode_crop(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_crop_resize(x, args, geometry_op(op).interpolation, torch)
