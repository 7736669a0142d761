"""CPU kernel of RandomResize: Resize's pixel work with the interpolation drawn by the plan."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.cpu.image import _image, resize_image, resize_output_size
from minddata.ops.plans.bbox import random_interpolation
from minddata.ops.registry import register_kernel


@register_kernel("RandomResize", "CPU")
def random_resize(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomResize", image, numeric=True)
    h, w = resize_output_size(img.shape[0], img.shape[1], op.size)
    return resize_image(img, h, w, random_interpolation(ctx.rng), "RandomResize")
