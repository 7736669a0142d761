"""GPU kernels of the affine family (the CPU's :mod:`minddata.ops.cpu.affine`): Rotate and RandomRotation, as
DALI's ``warp_affine`` with the CPU kernel's matrix (:mod:`minddata.ops.plans.affine`) moved to DALI's
pixel coordinates. BILINEAR within 1 level of OpenCV's (its fixed-point weights); NEAREST picks the
neighbour for a few pixels on exact half-pixel boundaries. The torch driver warps with ``grid_sample`` in
float: within 2 levels, integer images of every width rounded half to even and saturated as OpenCV does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _hwc,
    _image,
    _register,
    torch_cast_back,
    torch_kernel,
)
from minddata.ops.plans.affine import rotation, rotation_degrees
from minddata.ops.plans.image import interpolation_name

# ---------------------------------------------------------------------------------------------- rotations

WARP_ARGS = {"matrix": np.float32, "size": np.float32}
_WARP_INTERP = {"NEAREST": "INTERP_NN", "BILINEAR": "INTERP_LINEAR", "LINEAR": "INTERP_LINEAR", "AREA": "INTERP_LINEAR"}


def _rotate_supported(op: KernelOp) -> str | None:
    name = interpolation_name(op.resample)
    if name not in _WARP_INTERP:
        return f"{op.name}: resample={name} has no GPU equivalent (DALI warps with NEAREST or BILINEAR)"
    fill = op.fill_value
    if not isinstance(fill, (int, np.integer)) and len(set(fill)) > 1:
        return f"{op.name}: a per-channel fill_value {fill} has no GPU equivalent (DALI fills with one value)"
    return None


def warp_matrix(forward: np.ndarray) -> np.ndarray:
    """OpenCV's forward matrix (pixel indices) in DALI's coordinates, where pixel (0, 0) spans
    [0, 1) and its centre is 0.5: ``T(+0.5) · M · T(-0.5)``."""
    m = np.vstack([np.asarray(forward, np.float64), [0.0, 0.0, 1.0]])
    shift = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
    back = np.array([[1.0, 0.0, -0.5], [0.0, 1.0, -0.5], [0.0, 0.0, 1.0]])
    return (shift @ m @ back)[:2].astype(np.float32)


def _build_rotate(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    fill = op.fill_value if isinstance(op.fill_value, (int, np.integer)) else op.fill_value[0]
    return env.fn.warp_affine(
        node, matrix=args["matrix"], size=args["size"], fill_value=float(fill), inverse_map=False,
        interp_type=getattr(env.types, _WARP_INTERP[interpolation_name(op.resample)]), device=env.device,
    )


def _plan_rotation(name: str, random: bool) -> Callable:
    def plan(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
        h, w = _image(name, s, resample=True)
        degrees = rotation_degrees(ctx.rng, op.degrees) if random else op.degrees
        # The CPU kernel's plan (ops/plans/affine.py), so both devices rotate about the same point.
        matrix, out_h, out_w = rotation(h, w, degrees, op.center, op.expand)
        args = {"matrix": warp_matrix(matrix), "size": np.array([out_h, out_w], np.float32)}
        return args, _hwc(s, out_h, out_w)

    return plan


_register("Rotate", args=WARP_ARGS, supports=_rotate_supported, build=_build_rotate)(_plan_rotation("Rotate", False))
# NEAREST warps: a few pixels on exact half-pixel boundaries pick the neighbour (a large difference, rarely).
_register("RandomRotation", args=WARP_ARGS, supports=_rotate_supported, build=_build_rotate, tolerance=(255.0, 0.05))(
    _plan_rotation("RandomRotation", True)
)


# ---------------------------------------------------------------------------------------------- torch


_TORCH_WARP_MODES = {"NEAREST": "nearest", "BILINEAR": "bilinear", "LINEAR": "bilinear", "AREA": "bilinear"}


@torch_kernel("Rotate", "RandomRotation")
def _torch_warp(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    """An affine warp given DALI's forward matrix (pixel centres at +0.5) and output size."""
    out_h, out_w = (int(v) for v in args["size"])
    forward = np.vstack([np.asarray(args["matrix"], np.float64), [0.0, 0.0, 1.0]])
    inverse = np.linalg.inv(forward)
    height, width, channels = x.shape
    ys, xs = torch.meshgrid(torch.arange(out_h, dtype=torch.float64) + 0.5,
                            torch.arange(out_w, dtype=torch.float64) + 0.5, indexing="ij")
    inv = torch.from_numpy(inverse)
    src_x = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    src_y = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    # grid_sample's normalized coordinates (align_corners=False): -1 and 1 are the outer pixel edges.
    grid = torch.stack([src_x / width * 2 - 1, src_y / height * 2 - 1], dim=-1).to(torch.float32)
    grid = grid.unsqueeze(0).to(x.device)
    image = x.permute(2, 0, 1).unsqueeze(0).to(torch.float32)
    mode = _TORCH_WARP_MODES[interpolation_name(op.resample)]
    sampled = torch.nn.functional.grid_sample(image, grid, mode=mode, padding_mode="zeros", align_corners=False)
    fill = op.fill_value if isinstance(op.fill_value, (int, np.integer)) else op.fill_value[0]
    if fill:
        coverage = torch.nn.functional.grid_sample(torch.ones_like(image[:, :1]), grid, mode=mode,
                                                   padding_mode="zeros", align_corners=False)
        sampled = sampled + float(fill) * (1.0 - coverage)
    # Integers of every width are rounded and saturated, as OpenCV's warps and resizes do (a bare
    # ``.to(int16)`` truncates: about half the pixels one level low).
    return torch_cast_back(sampled.squeeze(0).permute(1, 2, 0), x.dtype, torch)
