"""GPU kernels of Perspective and RandomPerspective (the CPU's :mod:`minddata.ops.cpu.perspective`), as
DALI's ``warp_perspective`` with OpenCV's pixel centres: within one level for BILINEAR and BICUBIC;
NEAREST picks the neighbour for a few pixels at exact edges (the homography travels as float32 where
OpenCV keeps doubles).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _arg,
    _image,
    _register,
)
from minddata.ops.plans.image import interpolation_name

# ---------------------------------------------------------------------------------------------- Perspective

# OpenCV's warpPerspective with the CPU kernel's homography (ops/plans/perspective.py), pixel centres at
# integer coordinates as OpenCV's; zeros outside. A warp has no area filter (AREA is bilinear, as in
# OpenCV's warp) and PILCUBIC is bicubic.
_PERSPECTIVE_INTERP = {"NEAREST": "INTERP_NN", "BILINEAR": "INTERP_LINEAR", "AREA": "INTERP_LINEAR",
                       "BICUBIC": "INTERP_CUBIC", "PILCUBIC": "INTERP_CUBIC"}


def _perspective_supported(op: KernelOp) -> str | None:
    name = interpolation_name(op.interpolation)
    if name not in _PERSPECTIVE_INTERP:
        return f"{op.name}: interpolation {name} has no GPU equivalent"
    return None


def _build_perspective(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    interp = getattr(env.types, _PERSPECTIVE_INTERP[interpolation_name(op.interpolation)])
    return env.fn.experimental.warp_perspective(
        node, _arg(args, "matrix", env), size=args["size"], inverse_map=False, pixel_origin="center",
        interp_type=interp, border_mode="constant", fill_value=0.0, device=env.device,
    )


@_register("Perspective", "RandomPerspective", args={"matrix": np.float32, "size": np.float32},
           supports=_perspective_supported, build=_build_perspective)
def _plan_perspective(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.perspective import perspective_matrix, random_perspective_points

    h, w = _image(op.name, s, resample=True)
    matrix = np.eye(3)  # a row RandomPerspective leaves alone: the identity warp moves no pixel
    if op.name == "Perspective":
        matrix = perspective_matrix(op.start_points, op.end_points)
    elif ctx.rng.random() < op.prob:  # the CPU kernel's draws, in its order
        start, end = random_perspective_points(ctx.rng, h, w, op.distortion_scale)
        try:
            matrix = perspective_matrix(start, end)
        except ValueError:
            pass  # a degenerate draw (images of a pixel or two): nothing to warp, as on the CPU
    return {"matrix": matrix.astype(np.float32), "size": np.array([h, w], np.float32)}, Sample(s.shape, s.kind)
