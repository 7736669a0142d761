"""GPU kernels of the flip family (the CPU's :mod:`minddata.ops.cpu.flip`): the flips and their random
forms, as DALI's ``flip`` with the row's draw as a per-sample argument, and as ``Tensor.flip`` on the torch
driver. Exact on both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _image,
    _register,
    torch_kernel,
)
from minddata.ops.plans.flip import flips

# ---------------------------------------------------------------------------------------------- flips

FLIP_ARGS = {"flip": np.int32}


def _build_flip(horizontal: bool) -> Callable:
    def build(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
        if horizontal:
            return env.fn.flip(node, horizontal=args["flip"], vertical=0, device=env.device)
        return env.fn.flip(node, horizontal=0, vertical=args["flip"], device=env.device)

    return build


def _plan_flip(name: str, random: bool) -> Callable:
    def plan(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
        _image(name, s)  # validate before drawing, as the CPU kernel does
        flip = flips(ctx.rng, op.prob) if random else True
        return {"flip": np.array(int(flip), np.int32)}, Sample(s.shape, s.kind)

    return plan


for _name, _h, _random in (
    ("HorizontalFlip", True, False),
    ("RandomHorizontalFlip", True, True),
    ("VerticalFlip", False, False),
    ("RandomVerticalFlip", False, True),
):
    _register(_name, args=FLIP_ARGS, build=_build_flip(_h))(_plan_flip(_name, _random))


# ---------------------------------------------------------------------------------------------- torch


@torch_kernel("HorizontalFlip", "RandomHorizontalFlip")
def _torch_flip_horizontal(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return x.flip(1) if int(args["flip"]) else x


@torch_kernel("VerticalFlip", "RandomVerticalFlip")
def _torch_flip_vertical(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return x.flip(0) if int(args["flip"]) else x
