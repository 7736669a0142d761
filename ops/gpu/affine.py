"""GPU kernels of the affine family (the CPU's :mod:`minddata.ops.cpu.affine`): Rotate and RandomRotation, as
DALI's ``warp_affine`` with the CPU kernel's matrix (:mod:`minddata.ops.plans.affine`) moved to DALI's
pixel coordinates. BILINEAR within 1 level of OpenCV's (its fixed-point weights); NEAREST picks the
neighbour for a few pixels on exact half-pixel boundaries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _hwc,
    _image,
    _register,
)
from minddata.ops.plans.affine import rotation, rotation_degrees
from minddata.ops.plans.image import interpolation_name

# ---------------------------------------------------------------------------------------------- rotations

WARP_ARGS = {"matrix": np.float32, "size": np.float32}
_WARP_INTERP = {"NEAREST": "INTERP_NN", "BILINEAR": "INTERP_LINEAR", "LINEAR": "INTERP_LINEAR", "AREA": "INTERP_LINEAR"}


def _rotate_supported(op: Op) -> str | None:
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


def _build_rotate(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    fill = op.fill_value if isinstance(op.fill_value, (int, np.integer)) else op.fill_value[0]
    return env.fn.warp_affine(
        node, matrix=args["matrix"], size=args["size"], fill_value=float(fill), inverse_map=False,
        interp_type=getattr(env.types, _WARP_INTERP[interpolation_name(op.resample)]), device=env.device,
    )


def _plan_rotation(name: str, random: bool) -> Callable:
    def plan(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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
