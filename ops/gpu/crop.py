"""GPU kernels of the crop family (the CPU's :mod:`minddata.ops.cpu.crop`): CenterCrop, Crop and Pad, as
DALI's ``slice`` (its out-of-bounds padding is MindSpore's zero padding of a too-small image, and Pad's
constant border), and on the torch driver as tensor slicing. Exact on both. Pad with an
EDGE/REFLECT/SYMMETRIC border has no GPU kernel (refused before anything runs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _hwc,
    _image,
    _register,
    _shown_shape,
    torch_kernel,
)
from minddata.ops.plans.crop import center_crop_box
from minddata.ops.plans.image import fill_values, square
from minddata.ops.plans.resize import crop_resize

# ---------------------------------------------------------------------------------------------- crops

SLICE_ARGS = {"anchor": np.int32, "shape": np.int32}


def build_slice(node: Any, args: dict[str, Any], env: Any, fill: Any = 0) -> Any:
    return env.fn.slice(
        node, args["anchor"], args["shape"], axis_names="HW", out_of_bounds_policy="pad",
        fill_values=fill, device=env.device,
    )


def _slice_args(top: int, left: int, h: int, w: int) -> Args:
    return {"anchor": np.array([top, left], np.int32), "shape": np.array([h, w], np.int32)}


@_register("CenterCrop", args=SLICE_ARGS, build=lambda op, node, args, env: build_slice(node, args, env))
def _plan_center_crop(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("CenterCrop", s)
    # MindSpore pads a too-small image with zeros around it, the odd pixel first: a negative anchor
    # into the zero padding of DALI's slice is exactly that.
    box = center_crop_box(h, w, *square(op.size))
    return _slice_args(*box), _hwc(s, box.height, box.width)


@_register("Crop", args=SLICE_ARGS, build=lambda op, node, args, env: build_slice(node, args, env))
def _plan_crop(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Crop", s)
    box = crop_resize(op, h, w, shape=_shown_shape(s)).box
    return _slice_args(*box), _hwc(s, box.height, box.width)


# ---------------------------------------------------------------------------------------------- Pad


def _pad_supported(op: KernelOp) -> str | None:
    mode = str(getattr(op.padding_mode, "value", op.padding_mode)).lower()
    if mode != "constant":
        return f"{op.name}: padding_mode={mode!r} has no GPU equivalent (DALI pads with a constant only)"
    return None


def _build_pad(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    fill = list(fill_values(op.fill_value, env.kind_in.channels or 1))
    return build_slice(node, args, env, fill=fill)


@_register("Pad", args=SLICE_ARGS, supports=_pad_supported, build=_build_pad)
def _plan_pad(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Pad", s)
    left, top, right, bottom = op.padding
    return _slice_args(-top, -left, h + top + bottom, w + left + right), _hwc(s, h + top + bottom, w + left + right)


# ---------------------------------------------------------------------------------------------- torch


def torch_slice(x: Any, args: dict[str, Any], torch: Any, fill: Any = 0) -> Any:
    """The region ``anchor``/``shape`` of the HWC tensor ``x``; parts outside the image are ``fill``
    (DALI's ``out_of_bounds_policy="pad"``, and the CPU kernels' pad-then-crop)."""
    top, left = (int(v) for v in args["anchor"])
    h, w = (int(v) for v in args["shape"])
    height, width, channels = x.shape
    y0, y1, x0, x1 = max(top, 0), min(top + h, height), max(left, 0), min(left + w, width)
    if (top, left, h, w) == (0, 0, height, width):
        return x
    if y0 == top and x0 == left and y1 == top + h and x1 == left + w:
        return x[y0:y1, x0:x1]
    values = fill_values(fill, channels)
    out = torch.tensor(values, dtype=torch.float64).to(x.dtype).to(x.device).expand(h, w, channels).clone()
    if y1 > y0 and x1 > x0:
        out[y0 - top : y1 - top, x0 - left : x1 - left] = x[y0:y1, x0:x1]
    return out


@torch_kernel("CenterCrop", "Crop")
def _torch_crop(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_slice(x, args, torch)


@torch_kernel("Pad")
def _torch_pad(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_slice(x, args, torch, fill=op.fill_value)
