"""GPU kernel of RandomColorAdjust (the CPU's :mod:`minddata.ops.cpu.color`), and the hue shift that
AdjustHue shares. Exact: OpenCV's uint8 HSV conversion and rounding reproduced step by step (ties may
round the other way).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _arg,
    _image,
    _register,
    _shown_shape,
)
from minddata.ops.plans.color import ADJUSTMENTS, color_adjustments

# ---------------------------------------------------------------------------------------------- RandomColorAdjust

# The CPU kernel applies brightness, contrast, saturation and hue in an order shuffled per row. The DALI
# graph is fixed, so it has four slots; each slot can apply any of the four, and the row's plan makes
# slot s apply the s-th adjustment of the row's order, with every other adjustment at its identity
# (which is exact: x * 1 and x + 0 round back to x). Each step rounds to uint8 as the CPU's does.
_ADJUSTMENTS = tuple(name for name, _ in ADJUSTMENTS)
COLOR_ARGS = {f"{name}{s}": np.float32 for s in range(4) for name in (*_ADJUSTMENTS, "hue_on")}


def _u8(x: Any, env: Any) -> Any:
    """Round half away from zero and saturate, as OpenCV's saturate_cast does (up to ties)."""
    return env.fn.cast(env.math.clamp(x, 0.0, 255.0), dtype=env.types.UINT8, device=env.device)


def _gray(image: Any, env: Any) -> Any:
    gray = env.fn.color_space_conversion(image, image_type=env.types.RGB, output_type=env.types.GRAY,
                                         device=env.device)
    return env.fn.cast(gray, dtype=env.types.FLOAT, device=env.device)




def _hue_shift(image: Any, shift: Any, env: Any) -> Any:
    """OpenCV's RGB -> HSV_FULL (uint8) -> H + shift -> RGB, in arithmetic: its fixed-point divisions
    (12-bit tables, in float64 where the products outgrow float32's integers) and its float HSV -> RGB."""
    m, fn, T = env.math, env.fn, env.types
    x = fn.cast(image, dtype=T.FLOAT64, device=env.device)
    r, g, b = x[:, :, 0], x[:, :, 1], x[:, :, 2]
    v = m.max(r, m.max(g, b))
    diff = v - m.min(r, m.min(g, b))
    # sdiv_table[v] = round((255 << 12) / v); s = (diff * sdiv + (1 << 11)) >> 12
    sdiv = m.floor(255.0 * 4096.0 / m.max(v, 1.0) + 0.5)
    s = m.floor((diff * sdiv + 2048.0) / 4096.0)
    is_r = fn.cast(v == r, dtype=T.FLOAT64, device=env.device)
    is_g = fn.cast(v == g, dtype=T.FLOAT64, device=env.device) * (1.0 - is_r)
    raw = is_r * (g - b) + (1.0 - is_r) * (is_g * (b - r + 2.0 * diff) + (1.0 - is_g) * (r - g + 4.0 * diff))
    # hdiv_table[diff] = round((256 << 12) / (6 * diff)); h = (raw * hdiv + (1 << 11)) >> 12
    has = fn.cast(diff > 0.0, dtype=T.FLOAT64, device=env.device)
    hdiv = m.floor(256.0 * 4096.0 / (6.0 * m.max(diff, 1.0)) + 0.5) * has
    h = m.floor((raw * hdiv + 2048.0) / 4096.0)
    h = h + 256.0 * fn.cast(h < 0.0, dtype=T.FLOAT64, device=env.device)
    h = h + fn.cast(shift, dtype=T.FLOAT64, device=env.device)
    h = h - 256.0 * fn.cast(h >= 256.0, dtype=T.FLOAT64, device=env.device)
    # HSV -> RGB as OpenCV's HSV2RGB_FULL for uint8: float32, and h in 255ths of the circle (OpenCV's
    # forward conversion divides the circle in 256, its inverse in 255).
    h = fn.cast(h, dtype=T.FLOAT, device=env.device) * np.float32(6.0 / 255.0)
    h = h - 6.0 * fn.cast(h >= 6.0, dtype=T.FLOAT, device=env.device)  # h = 255 is a full turn
    sv = fn.cast(s, dtype=T.FLOAT, device=env.device) * np.float32(1.0 / 255.0)
    vv = fn.cast(v, dtype=T.FLOAT, device=env.device) * np.float32(1.0 / 255.0)
    sector = m.floor(h)
    f = h - sector
    p, q, t = vv * (1.0 - sv), vv * (1.0 - sv * f), vv * (1.0 - sv * (1.0 - f))
    picks = ((vv, t, p), (q, vv, p), (p, vv, t), (p, q, vv), (t, p, vv), (vv, p, q))
    channels = []
    for c in range(3):
        total = None
        for k, values in enumerate(picks):
            term = fn.cast(sector == float(k), dtype=T.FLOAT, device=env.device) * values[c]
            total = term if total is None else total + term
        channels.append(total * 255.0)  # type: ignore[operator]  # six picks: total is set
    return fn.stack(*channels, axis=2)


def _active(op: Op) -> list[str]:
    """The adjustments ``op`` can apply (an identity range never draws, on either device)."""
    return [name for name, identity in ADJUSTMENTS if tuple(getattr(op, name)) != (identity,) * 2]


def _build_color_adjust(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    x = node
    active = _active(op)
    for s in range(len(active)):  # one slot per adjustment the row may apply
        if "brightness" in active:
            xf = env.fn.cast(x, dtype=env.types.FLOAT, device=env.device)
            x = _u8(xf * _arg(args, f"brightness{s}", env), env)
        if "contrast" in active:
            c = _arg(args, f"contrast{s}", env)
            mean = env.math.floor(env.fn.reductions.mean(_gray(x, env), device=env.device) + 0.5)
            xf = env.fn.cast(x, dtype=env.types.FLOAT, device=env.device)
            x = _u8(xf * c + mean * (1.0 - c), env)
        if "saturation" in active:
            sat = _arg(args, f"saturation{s}", env)
            gray = _gray(x, env)
            xf = env.fn.cast(x, dtype=env.types.FLOAT, device=env.device)
            gray3 = env.fn.stack(gray[:, :, 0], gray[:, :, 0], gray[:, :, 0], axis=2)
            x = _u8(xf * sat + gray3 * (1.0 - sat), env)
        if "hue" in active:
            hue_on = _arg(args, f"hue_on{s}", env)
            shifted = env.fn.cast(_u8(_hue_shift(x, _arg(args, f"hue{s}", env), env), env),
                                  dtype=env.types.FLOAT, device=env.device)
            xf = env.fn.cast(x, dtype=env.types.FLOAT, device=env.device)
            x = _u8(shifted * hue_on + xf * (1.0 - hue_on), env)
    return x


@_register("RandomColorAdjust", args=COLOR_ARGS, build=_build_color_adjust)
def _plan_color_adjust(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("RandomColorAdjust", s)
    if s.kind.gray2d or s.shape[2] != 3 or s.kind.dtype != np.uint8:
        shape = _shown_shape(s)
        raise ValueError(
            f"RandomColorAdjust: expected an RGB uint8 image of shape <H, W, 3>. Found shape {shape}, "
            f"dtype {s.kind.dtype}"
        )
    args = {name: np.array(1.0 if not name.startswith("hue") else 0.0, np.float32) for name in COLOR_ARGS}
    # The CPU kernel's plan: the row's order of adjustments and their factors.
    for slot, (k, factor) in enumerate(color_adjustments(ctx.rng, op)):
        name = _ADJUSTMENTS[k]
        if name == "hue":
            args[f"hue{slot}"] = np.array(int(factor * 255) % 256, np.float32)  # as adjust_hue shifts
            args[f"hue_on{slot}"] = np.array(1.0, np.float32)
        else:
            args[f"{name}{slot}"] = np.array(factor, np.float32)
    return args, Sample(s.shape, s.kind)
