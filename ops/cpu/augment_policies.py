"""CPU kernels of the augmentation policies (``minddata.vision.augment_policies``): AutoAugment,
RandAugment, TrivialAugmentWide, UniformAugment and RandomSelectSubpolicy.

They execute the plans of ``minddata.ops.plans.augment_policies``: each step is one augmentation at a signed
magnitude, applied with the pixel kernels of ``minddata.ops.cpu.adjust`` and the warps of
``minddata.ops.cpu.affine``, as MindSpore's ``ApplyAugment`` does. Ops held by UniformAugment and
RandomSelectSubpolicy run their own CPU kernels, each with a random stream of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp, Op
from minddata.ops.cpu import adjust
from minddata.ops.cpu.affine import rotate_image, warp_affine
from minddata.ops.cpu.generic import child_position
from minddata.ops.cpu.image import _image
from minddata.ops.plans import augment_policies as augment_plan
from minddata.ops.plans.affine import affine_matrix
from minddata.ops.registry import get_kernel, register_kernel

__all__ = ["apply_augment", "augment_names"]


def _shear(img: np.ndarray, shear_x: float, shear_y: float, interpolation: Any, fill: Any) -> np.ndarray:
    h, w = img.shape[:2]
    matrix = affine_matrix(h, w, 0.0, 0.0, 0.0, 1.0, shear_x, shear_y)
    return warp_affine(img, matrix, h, w, interpolation, fill, "Shear")


def _translate(img: np.ndarray, dx: float, dy: float, interpolation: Any, fill: Any) -> np.ndarray:
    h, w = img.shape[:2]
    matrix = affine_matrix(h, w, 0.0, dx, dy, 1.0, 0.0, 0.0)
    return warp_affine(img, matrix, h, w, interpolation, fill, "Translate")


def _degrees(magnitude: float) -> float:
    # MindSpore turns a shear magnitude (a slope) into degrees as if it were radians, not by atan.
    return float(np.float32(magnitude * 180.0 / math.pi))


_AUGMENTS: dict[str, Callable[[np.ndarray, float, Any, Any], np.ndarray]] = {
    "Identity": lambda img, m, interp, fill: img,
    "ShearX": lambda img, m, interp, fill: _shear(img, _degrees(m), 0.0, interp, fill),
    "ShearY": lambda img, m, interp, fill: _shear(img, 0.0, _degrees(m), interp, fill),
    "TranslateX": lambda img, m, interp, fill: _translate(img, float(int(m)), 0.0, interp, fill),
    "TranslateY": lambda img, m, interp, fill: _translate(img, 0.0, float(int(m)), interp, fill),
    "Rotate": lambda img, m, interp, fill: rotate_image(img, m, interp, False, None, fill, "Rotate"),
    "Brightness": lambda img, m, interp, fill: adjust.brightness_image(img, 1.0 + m),
    "Color": lambda img, m, interp, fill: adjust.saturation_image(img, 1.0 + m),
    "Contrast": lambda img, m, interp, fill: adjust.contrast_image(img, 1.0 + m),
    "Sharpness": lambda img, m, interp, fill: adjust.sharpness_image(img, 1.0 + m),
    "Posterize": lambda img, m, interp, fill: adjust.posterize_image(img, int(m)),
    "Solarize": lambda img, m, interp, fill: adjust.solarize_image(img, m, m),
    "AutoContrast": lambda img, m, interp, fill: adjust.auto_contrast_image(img),
    "Equalize": lambda img, m, interp, fill: adjust.equalize_image(img),
    "Invert": lambda img, m, interp, fill: adjust.invert_image(img),
}


def augment_names() -> list[str]:
    """The augmentations a plan step may name."""
    return sorted(_AUGMENTS)


def apply_augment(img: np.ndarray, name: str, magnitude: float, interpolation: Any, fill: Any) -> np.ndarray:
    """One policy step on an RGB ``uint8`` image, as MindSpore's ``ApplyAugment``: shears by
    ``magnitude * 180 / pi`` degrees about the centre, translations by ``int(magnitude)`` pixels, rotations
    by ``magnitude`` degrees counter-clockwise (same size), enhancements by the factor ``1 + magnitude``,
    Posterize to ``int(magnitude)`` bits, Solarize from the level ``magnitude`` up."""
    return _AUGMENTS[name](img, magnitude, interpolation, fill)


def _run_steps(img: np.ndarray, steps: Sequence[augment_plan.Step], op: KernelOp) -> np.ndarray:
    for name, magnitude in steps:
        img = apply_augment(img, name, magnitude, op.interpolation, op.fill_value)
    return img


@register_kernel("AutoAugment", "CPU")
def auto_augment(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = adjust.rgb_uint8("AutoAugment", image)
    policy = str(getattr(op.policy, "value", op.policy))
    steps = augment_plan.auto_augment_plan(policy, img.shape[0], img.shape[1], ctx.rng)
    return _run_steps(img, steps, op)


@register_kernel("RandAugment", "CPU")
def rand_augment(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = adjust.rgb_uint8("RandAugment", image)
    steps = augment_plan.rand_augment_plan(
        op.num_ops, op.magnitude, op.num_magnitude_bins, img.shape[0], img.shape[1], ctx.rng
    )
    return _run_steps(img, steps, op)


@register_kernel("TrivialAugmentWide", "CPU")
def trivial_augment_wide(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = adjust.rgb_uint8("TrivialAugmentWide", image)
    return _run_steps(img, augment_plan.trivial_augment_plan(op.num_magnitude_bins, ctx.rng), op)


def _run_held(
    op: KernelOp, ctx: KernelContext, held: Op | Callable[..., Any], key: int, image: Any, where: str
) -> Any:
    """Run one op held by ``op`` on the CPU, with its own random stream (``key`` identifies it)."""
    try:
        if isinstance(held, Op):
            sub = KernelContext(
                ctx.seed, ctx.pass_index, ctx.row_index, child_position(ctx.op_position, key), ctx.options
            )
            return get_kernel(held.name, "CPU")(held, sub, image)
        return held(image)
    except (ValueError, TypeError) as e:
        inner = held.name if isinstance(held, Op) else getattr(held, "__name__", type(held).__name__)
        raise type(e)(f"{op.name}: {where} ({inner}) failed: {e}") from e


@register_kernel("UniformAugment", "CPU")
def uniform_augment(op: KernelOp, ctx: KernelContext, image: Any) -> Any:
    _image("UniformAugment", image)  # every row fails alike, whichever ops its draws pick
    for i in augment_plan.uniform_augment_plan(len(op.transforms), op.num_ops, ctx.rng):
        image = _run_held(op, ctx, op.transforms[i], i, image, f"transforms[{i}]")
    return image


@register_kernel("RandomSelectSubpolicy", "CPU")
def random_select_subpolicy(op: KernelOp, ctx: KernelContext, image: Any) -> Any:
    _image("RandomSelectSubpolicy", image)  # every row fails alike, whichever ops its draws pick
    probs = [[prob for _, prob in sub] for sub in op.policy]
    index, applied = augment_plan.select_subpolicy_plan(probs, ctx.rng)
    offset = sum(len(sub) for sub in op.policy[:index])  # a distinct stream per (sub-policy, op)
    for k in applied:
        image = _run_held(op, ctx, op.policy[index][k][0], offset + k, image, f"policy[{index}][{k}]")
    return image
