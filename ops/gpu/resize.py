"""GPU kernels of the resize family (the CPU's :mod:`minddata.ops.cpu.resize`): Resize, RandomResizedCrop,
ResizedCrop and RandomResize, as DALI's ``resize`` (after a ``slice`` for the crops).

Numerics against the CPU kernels (DALI 2.4, its CPU backend):

* NEAREST picks the same source pixels except about 0.5% of them (DALI's NN samples pixel centres,
  OpenCV's ``INTER_NEAREST`` the top-left corner: the region is shifted by half a source pixel to
  match; what is left is OpenCV's double rounding at exact pixel edges);
* BILINEAR within 1 level (OpenCV rounds its fixed-point weights);
* filters that differ by design (tolerances declared below): BICUBIC (DALI's cubic uses a = -0.5,
  OpenCV's a = -0.75), LANCZOS (DALI's Lanczos-3 vs OpenCV's Lanczos-4), AREA (DALI's antialiased
  linear filter vs OpenCV's exact box average), PILCUBIC/ANTIALIAS;
* ``RandomResize``: each row draws the CPU kernel's interpolation and is resized exactly as ``Resize``
  resizes with it (so AREA and BICUBIC differ from OpenCV's as above).

The torch driver (``torch.nn.functional.interpolate``, in float): BILINEAR within 1 level (OpenCV rounds
fixed-point weights); integer images of every width rounded half to even and saturated, as OpenCV does.
Filters that differ by design, not within a level: BICUBIC (torch's cubic uses a = -0.75 like OpenCV,
without its fixed-point rounding: a few levels at edges), AREA (torch's antialiased bilinear, where OpenCV
averages exact pixel areas: a few levels when shrinking, more on fine texture; upscaling differs like
BILINEAR vs OpenCV's area weights), ANTIALIAS and PILCUBIC (torch's antialiased bilinear and bicubic,
where the CPU kernel uses Pillow's Lanczos-3 and bicubic: several levels at edges); LANCZOS has no torch
kernel. Place those resizes on the CPU where pixels must match. ``RandomResize`` resizes as ``Resize``
does with the row's drawn filter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.crop import SLICE_ARGS, _slice_args, build_slice, torch_slice
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _arg,
    _f32,
    _hwc,
    _image,
    _register,
    dali_type,
    torch_cast_back,
    torch_kernel,
)
from minddata.ops.plans.crop import CropBox
from minddata.ops.plans.image import interpolation_name
from minddata.ops.plans.resize import crop_resize, resize_output_size

# ---------------------------------------------------------------------------------------------- resize

# DESIGN: interpolation name -> (DALI interp attribute, antialias). OpenCV's filters are not
# antialiased, so neither are these, except AREA and Pillow's (antialiased) filters.
_INTERP = {
    "NEAREST": ("INTERP_NN", False),
    "BILINEAR": ("INTERP_LINEAR", False),
    "LINEAR": ("INTERP_LINEAR", False),
    "BICUBIC": ("INTERP_CUBIC", False),
    "CUBIC": ("INTERP_CUBIC", False),
    "AREA": ("INTERP_LINEAR", True),
    "LANCZOS": ("INTERP_LANCZOS3", False),
    "PILCUBIC": ("INTERP_CUBIC", True),
    "ANTIALIAS": ("INTERP_LANCZOS3", True),
}
RESIZE_ARGS = {"size": np.float32, "roi_start": np.float32, "roi_end": np.float32}


def _interp_supported(op: KernelOp, attr: str = "interpolation") -> str | None:
    name = interpolation_name(getattr(op, attr))
    return None if name in _INTERP else f"{op.name}: interpolation {name} has no GPU equivalent"


def resize_args(h: int, w: int, out_h: int, out_w: int, interpolation: Any) -> Args:
    """Output size and source region of a resize from ``h x w`` to ``out_h x out_w``."""
    if interpolation_name(interpolation) == "NEAREST":
        # OpenCV's INTER_NEAREST takes source pixel floor(dst * scale); DALI's NN takes
        # floor((dst + 0.5) * scale) over its region. Shifting the region by half a scaled pixel
        # makes them the same pixel.
        # A sample landing exactly on a pixel edge (dst * in / out a whole number) is where float32
        # and OpenCV's double arithmetic may disagree; a quarter of the smallest gap between sample
        # positions (1/out of a pixel) puts it after the edge, as exact arithmetic does, without
        # moving any other sample. OpenCV (floor(dst * (1 / (out / in))) in double) still takes
        # the pixel before the edge for some ratios: about 0.5% of pixels differ.
        sy, sx = h / out_h, w / out_w
        ey, ex = 0.25 / out_h, 0.25 / out_w
        start, end = [-0.5 * sy + ey, -0.5 * sx + ex], [h - 0.5 * sy + ey, w - 0.5 * sx + ex]
    else:
        start, end = [0.0, 0.0], [float(h), float(w)]
    return {
        "size": np.array([out_h, out_w], np.float32),
        "roi_start": np.array(start, np.float32),
        "roi_end": np.array(end, np.float32),
    }


def build_resize(node: Any, args: dict[str, Any], interpolation: Any, env: Any) -> Any:
    interp, antialias = _INTERP[interpolation_name(interpolation)]
    return env.fn.resize(
        node,
        size=args["size"],
        roi_start=args["roi_start"],
        roi_end=args["roi_end"],
        roi_relative=False,
        interp_type=getattr(env.types, interp),
        antialias=antialias,
        device=env.device,
    )


@_register("Resize", args=RESIZE_ARGS, supports=_interp_supported,
           build=lambda op, node, args, env: build_resize(node, args, op.interpolation, env))
def _plan_resize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Resize", s, resample=True)
    out_h, out_w = resize_output_size(h, w, op.size)
    return resize_args(h, w, out_h, out_w, op.interpolation), _hwc(s, out_h, out_w)



CROP_RESIZE_ARGS = {**SLICE_ARGS, **RESIZE_ARGS}


def _build_crop_resize(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    return build_resize(build_slice(node, args, env), args, op.interpolation, env)


def _crop_resize_args(box: CropBox, out: Any, interpolation: Any) -> Args:
    top, left, ch, cw = box
    return {**_slice_args(top, left, ch, cw), **resize_args(ch, cw, out[0], out[1], interpolation)}


# Inter.AREA (the contract case): DALI's antialiased linear filter against OpenCV's exact box average.
@_register("RandomResizedCrop", args=CROP_RESIZE_ARGS, supports=_interp_supported, build=_build_crop_resize,
           tolerance=(8.0, 1.5))
def _plan_random_resized_crop(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("RandomResizedCrop", s, resample=True)
    box, *out = crop_resize(op, h, w, ctx.rng)
    return _crop_resize_args(box, out, op.interpolation), _hwc(s, out[0], out[1])


@_register("ResizedCrop", args=CROP_RESIZE_ARGS, supports=_interp_supported, build=_build_crop_resize)
def _plan_resized_crop(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("ResizedCrop", s, resample=True)
    box, *out = crop_resize(op, h, w, shape=s.shape)
    return _crop_resize_args(box, out, op.interpolation), _hwc(s, out[0], out[1])


# ---------------------------------------------------------------------------------------------- RandomResize

# Each row's interpolation is drawn by the plan; DALI's resize takes the filter per row but antialiasing
# once per operator, so AREA (Resize's antialiased linear filter) is a second resize, and each row keeps
# the one its draw asked for.
# DALIInterpType's values (INTERP_NN, INTERP_LINEAR, INTERP_CUBIC): plans run without DALI for the torch
# driver, so they are spelled here (tests/ops/test_gpu_dali.py checks them against DALI's).
ROW_INTERP = {"NEAREST": 0, "BILINEAR": 1, "BICUBIC": 2, "AREA": 1}
RANDOM_RESIZE_ARGS = {**RESIZE_ARGS, "interp": np.int32, "area": np.float32, "drawn": np.int32}


def _build_random_resize(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    common = {"size": args["size"], "roi_start": args["roi_start"], "roi_end": args["roi_end"], "roi_relative": False,
              "device": env.device}
    interp = env.fn.cast(args["interp"], dtype=env.types.INTERP_TYPE, device="cpu")
    sharp = env.fn.resize(node, interp_type=interp, antialias=False, **common)
    area = env.fn.resize(node, interp_type=env.types.INTERP_LINEAR, antialias=True, **common)
    flag = _arg(args, "area", env)
    # uint8, int16, uint16 and float32 values are exact in float32: choosing by arithmetic changes none.
    chosen = flag * _f32(area, env) + (1.0 - flag) * _f32(sharp, env)
    return env.fn.cast(chosen, dtype=dali_type(env.kind_in.dtype, env.types), device=env.device)


# A row drawing AREA (shrinking: up to 14 levels) or BICUBIC (a = -0.5 against OpenCV's -0.75).
@_register("RandomResize", args=RANDOM_RESIZE_ARGS, build=_build_random_resize, tolerance=(16.0, 1.5))
def _plan_random_resize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.bbox import RANDOM_RESIZE_INTERPOLATIONS, random_interpolation

    h, w = _image("RandomResize", s, resample=True)
    out_h, out_w = resize_output_size(h, w, op.size)
    # The CPU kernel's draw: one interpolation per row from the row's RNG.
    name = random_interpolation(ctx.rng)
    args = resize_args(h, w, out_h, out_w, name)
    args["interp"] = np.array(ROW_INTERP[name], np.int32)
    args["area"] = np.array(float(name == "AREA"), np.float32)
    args["drawn"] = np.array(RANDOM_RESIZE_INTERPOLATIONS.index(name), np.int32)  # for the torch driver
    return args, _hwc(s, out_h, out_w)


# ---------------------------------------------------------------------------------------------- torch
# Numerics: see the module docstring.

# interpolation -> (torch mode, antialias). OpenCV's filters are not antialiased; AREA and Pillow's are.
TORCH_INTERP = {
    "NEAREST": ("nearest", False),
    "BILINEAR": ("bilinear", False),
    "LINEAR": ("bilinear", False),
    "BICUBIC": ("bicubic", False),
    "CUBIC": ("bicubic", False),
    "AREA": ("bilinear", True),
    "PILCUBIC": ("bicubic", True),
    "ANTIALIAS": ("bilinear", True),
}


def torch_interp_supported(op: KernelOp, geometry: Any) -> str | None:
    """Why ``op`` cannot resize on the torch driver with the interpolation of ``geometry`` (``op``, or the
    resize or crop of a fused decoder: :func:`~minddata.ops.plans.resize.geometry_op`), or None."""
    name = interpolation_name(geometry.interpolation)
    return None if name in TORCH_INTERP else f"{op.name}: interpolation {name} has no torch equivalent"


def torch_resize(x: Any, size: Any, interpolation: Any, torch: Any) -> Any:
    """The HWC tensor ``x`` resized to ``size`` (height, width) with ``interpolation``."""
    out_h, out_w = (int(v) for v in size)
    if (out_h, out_w) == tuple(x.shape[:2]):
        return x
    mode, antialias = TORCH_INTERP[interpolation_name(interpolation)]
    dtype = x.dtype
    batch = x.permute(2, 0, 1).unsqueeze(0).to(torch.float32)
    kwargs = {} if mode == "nearest" else {"align_corners": False, "antialias": antialias}
    out = torch.nn.functional.interpolate(batch, size=(out_h, out_w), mode=mode, **kwargs)
    return torch_cast_back(out.squeeze(0).permute(1, 2, 0), dtype, torch)


def torch_crop_resize(x: Any, args: dict[str, Any], interpolation: Any, torch: Any) -> Any:
    return torch_resize(torch_slice(x, args, torch), args["size"], interpolation, torch)


@torch_kernel("Resize", supports=lambda op: torch_interp_supported(op, op))
def _torch_resize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_resize(x, args["size"], op.interpolation, torch)


@torch_kernel("RandomResizedCrop", "ResizedCrop", supports=lambda op: torch_interp_supported(op, op))
def _torch_crop_resize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return torch_crop_resize(x, args, op.interpolation, torch)


@torch_kernel("RandomResize")
def _torch_random_resize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    from minddata.ops.plans.bbox import RANDOM_RESIZE_INTERPOLATIONS

    # The row's drawn filter, resized as Resize resizes with it.
    return torch_resize(x, args["size"], RANDOM_RESIZE_INTERPOLATIONS[int(args["drawn"])], torch)
