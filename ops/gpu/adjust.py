"""GPU kernels of the pixel adjustments (the CPU's :mod:`minddata.ops.cpu.adjust`).

Exact on uint8 (each step in the CPU kernel's precision, rounded half to even as NumPy and OpenCV
round): ``Invert``, ``Posterize``, ``Solarize``, ``AdjustBrightness``, ``AdjustContrast``,
``AdjustSaturation``, ``AdjustHue``, ``RandomColor``, ``AdjustGamma`` (the CPU's own table),
``Equalize`` (DALI's equalize is OpenCV's equalizeHist), the sharpness ops, ``RandomLighting``,
``RandomGrayscale`` and their ``Random*`` forms, which draw with the CPU kernels' plan functions.
Other dtypes: exact where the CPU kernel computes in float64 or float32 step by step; one unit in the
last place where NumPy's float32/float16 power (``AdjustGamma``) or OpenCV's float and 16-bit paths
(``RandomGrayscale``, the sharpness ops) round differently; float16 within one float16 step.

The torch driver runs ``Invert``, ``Posterize``, ``Solarize``, ``AdjustBrightness``, ``RandomLighting``
and their ``Random*`` forms exactly, and ``AdjustGamma`` exactly on uint8 (the CPU's table) and within one
unit in the last place on floats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.gpu.color import _hue_shift
from minddata.ops.gpu.translation import (
    Args,
    Sample,
    _arg,
    _cast_back,
    _const64,
    _f32,
    _f64,
    _image,
    _register,
    _rint,
    _select,
    _shown_shape,
    dali_type,
    torch_cast_back,
    torch_kernel,
)

# ---------------------------------------------------------------------------------------------- pixel adjustments
# The ops of minddata.vision.adjust whose arithmetic DALI can do exactly: the CPU kernels' formulas in
# the same precision (float32 where OpenCV computes in float32, float64 where NumPy does), rounded half
# to even as NumPy's rint and OpenCV's saturate_cast do (DALI's cast rounds half away from zero, so the
# rounding is spelled out), and the random parameters from ops/plans/adjust.py with the row's RNG.


def _uint8_image(name: str, s: Sample) -> tuple[int, int]:
    h, w = _image(name, s)
    if s.kind.dtype != np.uint8:
        raise TypeError(f"{name}: expected a uint8 image. Found dtype {s.kind.dtype} (shape {_shown_shape(s)})")
    return h, w


def _rgb_uint8(name: str, s: Sample) -> tuple[int, int]:
    h, w = _image(name, s)
    if s.kind.gray2d or s.shape[2] != 3 or s.kind.dtype != np.uint8:
        raise ValueError(
            f"{name}: expected an RGB uint8 image of shape <H, W, 3>. Found shape {_shown_shape(s)}, "
            f"dtype {s.kind.dtype}"
        )
    return h, w


def _f32_factor(factor: float) -> np.ndarray:
    # The factor as the C++ float MindSpore holds it (ops/cpu/adjust.py's as_float32).
    return np.array(np.float32(factor), np.float32)


# -- Invert, Posterize, Solarize and their Random* forms

ON_ARGS = {"on": np.float32}


def _invert(x64: Any, env: Any) -> Any:
    return _const64(255.0, env) - x64


def _build_invert(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    x64 = _f64(node, env)
    y = _invert(x64, env)
    if op.name == "RandomInvert":
        y = _select(_arg(args, "on", env), y, x64, env)
    return _cast_back(y, env.kind_in.dtype, env)


@_register("Invert", "RandomInvert", args=ON_ARGS, build=_build_invert)
def _plan_invert(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import applies

    _image(op.name, s, numeric=True)
    on = applies(ctx.rng, op.prob) if op.name == "RandomInvert" else True
    return {"on": np.array(float(on), np.float32)}, Sample(s.shape, s.kind)


def _build_posterize(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    return node & _arg(args, "mask", env)


def _posterize_mask(bits: int) -> np.ndarray:
    return np.array((0xFF << (8 - bits)) & 0xFF, np.uint8)


@_register("Posterize", "RandomPosterize", args={"mask": np.uint8}, build=_build_posterize)
def _plan_posterize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import posterize_bits

    _uint8_image(op.name, s)
    bits = posterize_bits(ctx.rng, *op.bits) if op.name == "RandomPosterize" else op.bits
    return {"mask": _posterize_mask(bits)}, Sample(s.shape, s.kind)


SOLARIZE_ARGS = {"low": np.float64, "high": np.float64, "single": np.float64}


def _build_solarize(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    x64 = _f64(node, env)
    at_least = _f64(x64 >= _arg(args, "low", env), env)
    at_most = _f64(x64 <= _arg(args, "high", env), env)
    # One threshold (min == max) inverts everything from it up, as the CPU kernel does.
    inside = at_least * env.math.max(at_most, _arg(args, "single", env))
    return _cast_back(_select(inside, _invert(x64, env), x64, env), env.kind_in.dtype, env)


@_register("Solarize", "RandomSolarize", args=SOLARIZE_ARGS, build=_build_solarize)
def _plan_solarize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import solarize_range

    _image(op.name, s, numeric=True)
    low, high = solarize_range(ctx.rng, *op.threshold) if op.name == "RandomSolarize" else op.threshold
    args = {"low": np.array(low, np.float64), "high": np.array(high, np.float64),
            "single": np.array(float(low == high), np.float64)}
    return args, Sample(s.shape, s.kind)


# -- AdjustBrightness, AdjustContrast, AdjustSaturation, RandomColor, AdjustHue

FACTOR_ARGS = {"factor": np.float32}


def _build_brightness(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    factor = _arg(args, "factor", env)
    dtype = env.kind_in.dtype
    if dtype == np.uint8:
        # uint8: the float32 product, as OpenCV's convertTo computes it.
        return _cast_back(_f64(_f32(node, env) * factor, env), dtype, env)
    return _cast_back(_f64(node, env) * _f64(factor, env), dtype, env)


@_register("AdjustBrightness", args=FACTOR_ARGS, build=_build_brightness)
def _plan_brightness(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    _image("AdjustBrightness", s, numeric=True)
    return {"factor": _f32_factor(op.brightness_factor)}, Sample(s.shape, s.kind)


def _add_weighted(a: Any, alpha: Any, b: Any, beta: Any, env: Any) -> Any:
    """OpenCV's ``addWeighted(a, alpha, b, beta, 0)`` on uint8 as its vector code computes it: two
    fused multiply-adds in float32 (``fma(a, alpha, fma(b, beta, 0))``), rounded half to even."""
    inner = _f64(_f32(_f64(b, env) * _f64(beta, env), env), env)
    outer = _f64(_f32(_f64(a, env) * _f64(alpha, env) + inner, env), env)
    return _cast_back(outer, np.dtype(np.uint8), env)


def _gray3(image: Any, env: Any) -> Any:
    """OpenCV's RGB -> GRAY -> RGB of a uint8 image (DALI's conversion has the same fixed-point weights)."""
    gray = env.fn.color_space_conversion(image, image_type=env.types.RGB, output_type=env.types.GRAY,
                                         device=env.device)
    return env.fn.cat(gray, gray, gray, axis=2)


def _blend_weights(args: dict[str, Any], env: Any) -> tuple[Any, Any]:
    return _arg(args, "factor", env), _arg(args, "one_minus", env)


BLEND_ARGS = {"factor": np.float32, "one_minus": np.float32}


def _blend_args(factor: float) -> Args:
    f = float(np.float32(factor))
    # OpenCV takes the weights as doubles and multiplies in float32: 1 - f is rounded from the double.
    return {"factor": np.array(f, np.float32), "one_minus": np.array(1.0 - f, np.float32)}


def _build_contrast(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    factor, one_minus = _blend_weights(args, env)
    gray = env.fn.color_space_conversion(node, image_type=env.types.RGB, output_type=env.types.GRAY,
                                         device=env.device)
    # cv2.mean of the uint8 grey image: the exact sum times 1 / count in double, rounded half to even;
    # the flat image holds it as uint8.
    total = _f64(env.fn.reductions.sum(gray, dtype=env.types.UINT64, device=env.device), env)
    mean = env.math.min(_rint(total * _arg(args, "inv_pixels", env), env), _const64(255.0, env))
    return _add_weighted(mean, one_minus, node, factor, env)


def _build_saturation(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    factor, one_minus = _blend_weights(args, env)
    return _add_weighted(_gray3(node, env), one_minus, node, factor, env)


def _build_color(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    # RandomColor blends the other way round: addWeighted(image, f, gray, 1 - f).
    factor, one_minus = _blend_weights(args, env)
    return _add_weighted(node, factor, _gray3(node, env), one_minus, env)


@_register("AdjustContrast", "AdjustSaturation", args={**BLEND_ARGS, "inv_pixels": np.float64},
           build=lambda op, node, args, env: (_build_contrast if op.name == "AdjustContrast" else _build_saturation)(
               op, node, args, env))
def _plan_contrast_saturation(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _rgb_uint8(op.name, s)
    factor = op.contrast_factor if op.name == "AdjustContrast" else op.saturation_factor
    return {**_blend_args(factor), "inv_pixels": np.array(1.0 / (h * w), np.float64)}, Sample(s.shape, s.kind)


# Within half a grey level of 1 (or 0), RandomColor returns the image (or its grey version): weights
# of exactly 1 and 0 (or 0 and 1) give the same through the blend.
_COLOR_EPS = 0.00195


@_register("RandomColor", args=BLEND_ARGS, build=_build_color)
def _plan_random_color(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import uniform_factor

    _rgb_uint8("RandomColor", s)
    factor = float(np.float32(uniform_factor(ctx.rng, *op.degrees)))
    if abs(factor - 1.0) < _COLOR_EPS:
        return {"factor": np.array(1.0, np.float32), "one_minus": np.array(0.0, np.float32)}, Sample(s.shape, s.kind)
    if abs(factor) < _COLOR_EPS:
        return {"factor": np.array(0.0, np.float32), "one_minus": np.array(1.0, np.float32)}, Sample(s.shape, s.kind)
    return {"factor": np.array(factor, np.float32), "one_minus": np.array(1.0 - factor, np.float32)}, Sample(
        s.shape, s.kind)


def _build_hue(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    rgb = _hue_shift(node, _arg(args, "shift", env), env)
    return _cast_back(_f64(rgb, env), np.dtype(np.uint8), env)


@_register("AdjustHue", args={"shift": np.float32}, build=_build_hue)
def _plan_hue(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    _rgb_uint8("AdjustHue", s)
    # adjust_hue's shift: C++'s truncating cast, wrapped as a uint8 add wraps; 0 still converts there and back.
    return {"shift": np.array(int(op.hue_factor * 255) % 256, np.float32)}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- Equalize

# DALI's equalize builds OpenCV's equalizeHist table per image and channel (the CPU kernel calls
# equalizeHist): the same pixels.


def _build_equalize(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    equalized = env.fn.equalize(node, device=env.device)
    if op.name == "Equalize":
        return equalized
    return _cast_back(_select(_arg(args, "on", env), _f64(equalized, env), _f64(node, env), env), np.dtype(np.uint8), env)


@_register("Equalize", "RandomEqualize", args=ON_ARGS, build=_build_equalize)
def _plan_equalize(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import applies

    _uint8_image(op.name, s)
    on = applies(ctx.rng, op.prob) if op.name == "RandomEqualize" else True
    return {"on": np.array(float(on), np.float32)}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- RandomLighting, AdjustGamma


def _build_lighting(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    shift = _arg(args, "shift", env)  # (R, G, B), float32, broadcast over the pixels
    dtype = env.kind_in.dtype
    if dtype == np.float32 or dtype.kind in "biu":
        # Integers: the float32 sum rounded and saturated, as the CPU kernel's _cast_back of it.
        return _cast_back(_f64(_f32(node, env) + shift, env), dtype, env)
    # float16 / float64: the sum in the image's precision (exact in float64, then rounded once).
    return _cast_back(_f64(node, env) + _f64(env.fn.cast(shift, dtype=dali_type(dtype, env.types), device=env.device),
                                             env), dtype, env)


@_register("RandomLighting", args={"shift": np.float32}, build=_build_lighting)
def _plan_lighting(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import lighting_shift

    _image("RandomLighting", s, numeric=True)
    if s.kind.gray2d or s.shape[2] != 3:
        raise ValueError(f"RandomLighting: expected an RGB image of shape <H, W, 3>. Found shape {_shown_shape(s)}")
    return {"shift": lighting_shift(ctx.rng, op.alpha).astype(np.float32)}, Sample(s.shape, s.kind)


def gamma_table(op: KernelOp) -> list[int]:
    """AdjustGamma's uint8 lookup table: the CPU kernel's own, looked up on the device.

    Examples:
        >>> from minddata import vision
        >>> table = gamma_table(vision.AdjustGamma(2.0))
        >>> len(table), table[0], table[128], table[255]
        (256, 0, 64, 255)
    """
    from minddata.ops.cpu.adjust import gamma_image

    return gamma_image(np.arange(256, dtype=np.uint8), op.gamma, op.gain).tolist()


def _build_gamma(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    dtype = env.kind_in.dtype
    if dtype == np.uint8:
        return env.fn.lookup_table(node, keys=list(range(256)), values=gamma_table(op), dtype=env.types.UINT8,
                                   device=env.device)
    # Floats: clip((x * gain) ** gamma, 0, 1), the product in the image's precision (NumPy multiplies
    # float16 in float32 and rounds), the power in float64 and rounded once to the image's dtype (NumPy's
    # float32 power is correctly rounded; float64's rounded to float32 nearly always is the same).
    if dtype == np.float64:
        scaled = _f64(node, env) * _arg(args, "gain", env)
    else:
        gain = env.types.Constant(np.float32(dtype.type(op.gain)), device=env.const_device)
        scaled = _f64(env.fn.cast(_f32(node, env) * gain, dtype=dali_type(dtype, env.types), device=env.device), env)
    powered = env.math.clamp(env.math.pow(scaled, _arg(args, "gamma", env)), _const64(0.0, env), _const64(1.0, env))
    return env.fn.cast(powered, dtype=dali_type(dtype, env.types), device=env.device)


@_register("AdjustGamma", args={"gain": np.float64, "gamma": np.float64}, build=_build_gamma)
def _plan_gamma(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    _image("AdjustGamma", s)
    if s.kind.dtype != np.uint8 and s.kind.dtype.kind != "f":
        raise TypeError(
            f"AdjustGamma: expected a uint8 or float image. Found dtype {s.kind.dtype} (shape {_shown_shape(s)})"
        )
    return {"gain": np.array(op.gain, np.float64), "gamma": np.array(op.gamma, np.float64)}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- RandomGrayscale

# uint8: DALI's RGB -> GRAY has OpenCV's fixed-point weights (exact). Other dtypes: 0.299 R + 0.587 G +
# 0.114 B in float64, rounded back as the CPU kernel does for the dtypes OpenCV can't convert; for
# float32 and uint16 (which the CPU kernel hands to OpenCV's own float and 16-bit paths) that is within
# float32 rounding and one level.


def _build_grayscale(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    dtype = env.kind_in.dtype
    if (env.kind_in.channels or 1) == 1:
        return node  # a one-channel image is already grey (and draws nothing)
    if dtype == np.uint8:
        gray = _f64(_gray3(node, env), env)
    else:
        x = _f64(node, env)
        weight = [_arg(args, name, env) for name in ("red", "green", "blue")]
        plane = x[:, :, 0] * weight[0] + x[:, :, 1] * weight[1] + x[:, :, 2] * weight[2]
        gray = env.fn.stack(plane, plane, plane, axis=2)
    return _cast_back(_select(_arg(args, "on", env), gray, _f64(node, env), env), dtype, env)


GRAY_WEIGHTS = {"red": 0.299, "green": 0.587, "blue": 0.114}


@_register("RandomGrayscale", args={**ON_ARGS, **dict.fromkeys(GRAY_WEIGHTS, np.float64)}, build=_build_grayscale)
def _plan_grayscale(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import applies

    _image("RandomGrayscale", s, numeric=True)
    channels = s.shape[2]
    if channels not in (1, 3):
        raise ValueError(
            f"RandomGrayscale: expected a grayscale or RGB image (1 or 3 channels). Found shape {_shown_shape(s)}"
        )
    on = channels == 3 and applies(ctx.rng, op.prob)  # the CPU kernel draws for RGB images only
    weights = {name: np.array(w, np.float64) for name, w in GRAY_WEIGHTS.items()}
    return {"on": np.array(float(on), np.float32), **weights}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- sharpness

# AdjustSharpness, RandomSharpness, RandomAdjustSharpness: blend the image with Pillow's SMOOTH filter of
# it, the border keeping the original pixels (ops/cpu/adjust.py's sharpness_image). The 3x3 sums are
# multiples of 1/13, never within float error of a rounding tie, so the smoothed uint8 image is
# OpenCV's; the blend is _add_weighted's.
SMOOTH_KERNEL = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / np.float32(13.0)
SHARPNESS_ARGS = {**BLEND_ARGS, "smooth": np.float32, "box": np.float32}
SHARPNESS_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int16, np.uint16, np.float32))


def _build_sharpness(op: KernelOp, node: Any, args: dict[str, Any], env: Any) -> Any:
    dtype = env.kind_in.dtype
    x = _f32(node, env)
    smooth = env.fn.filter(x, _arg(args, "smooth", env), border="reflect_101", device=env.device)
    # Interior pixels: where a 3x3 box of ones over the image, zeros outside, sums to 9.
    ones = x * 0.0 + 1.0
    inside = env.fn.filter(ones, _arg(args, "box", env), border="constant", device=env.device) > 8.5
    inside = _f64(inside, env)
    if dtype.kind in "iu":
        smooth = _cast_back(_f64(smooth, env), dtype, env)  # filter2D writes the image's dtype
    blurred = inside * _f64(smooth, env) + (_const64(1.0, env) - inside) * _f64(node, env)
    factor, one_minus = _blend_weights(args, env)
    if dtype == np.uint8:
        return _add_weighted(node, factor, blurred, one_minus, env)
    # Other dtypes: OpenCV's addWeighted in float32, within its rounding.
    return _cast_back(_f64(_f32(node, env) * factor + _f32(blurred, env) * one_minus, env), dtype, env)


@_register("AdjustSharpness", "RandomSharpness", "RandomAdjustSharpness", args=SHARPNESS_ARGS, build=_build_sharpness)
def _plan_sharpness(op: KernelOp, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import applies, uniform_factor

    _image(op.name, s, numeric=True)
    if s.kind.dtype not in SHARPNESS_DTYPES:
        raise TypeError(
            f"{op.name}: DALI filters uint8, int16, uint16 and float32 images on the GPU. Found dtype {s.kind.dtype}; "
            f"cast first (TypeCast) or place {op.name} on the CPU"
        )
    if op.name == "AdjustSharpness":
        factor = op.sharpness_factor
    elif op.name == "RandomSharpness":
        factor = uniform_factor(ctx.rng, *op.degrees)
    else:
        factor = op.degree if applies(ctx.rng, op.prob) else 1.0  # weights 1 and 0 give the image back
    kernels = {"smooth": SMOOTH_KERNEL, "box": np.ones((3, 3), np.float32)}
    return {**_blend_args(factor), **kernels}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- torch

# The CPU kernels' formulas on tensors, in the same precision; the plans' per-row draws as above.


@torch_kernel("Invert", "RandomInvert")
def _torch_invert(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    if not float(args["on"]):
        return x
    return torch_cast_back(255.0 - x.to(torch.float64), x.dtype, torch)


@torch_kernel("Posterize", "RandomPosterize")
def _torch_posterize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return x & int(args["mask"])


@torch_kernel("Solarize", "RandomSolarize")
def _torch_solarize(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    low, high = float(args["low"]), float(args["high"])
    x64 = x.to(torch.float64)
    inside = x64 >= low if float(args["single"]) else (x64 >= low) & (x64 <= high)
    return torch_cast_back(torch.where(inside, 255.0 - x64, x64), x.dtype, torch)


@torch_kernel("AdjustBrightness")
def _torch_brightness(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    factor = float(args["factor"])  # float32 already
    if x.dtype == torch.uint8:
        # The float32 product, as OpenCV's convertTo computes it.
        return torch_cast_back((x.to(torch.float32) * factor).to(torch.float64), x.dtype, torch)
    return torch_cast_back(x.to(torch.float64) * factor, x.dtype, torch)


@torch_kernel("RandomLighting")
def _torch_lighting(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    shift = torch.from_numpy(np.asarray(args["shift"], np.float32)).to(x.device)
    if x.dtype == torch.float32 or not x.dtype.is_floating_point:
        return torch_cast_back((x.to(torch.float32) + shift).to(torch.float64), x.dtype, torch)
    return (x.to(torch.float64) + shift.to(x.dtype).to(torch.float64)).to(x.dtype)


@torch_kernel("AdjustGamma")
def _torch_gamma(op: KernelOp, x: Any, args: dict[str, Any], torch: Any) -> Any:
    if x.dtype == torch.uint8:
        return torch.tensor(gamma_table(op), dtype=torch.uint8, device=x.device)[x.long()]
    if x.dtype == torch.float64:
        scaled = x * float(args["gain"])
    else:  # the product in the image's precision (float16 through float32), as NumPy's
        gain = np.dtype(str(x.dtype).removeprefix("torch.")).type(op.gain)
        scaled = (x.to(torch.float32) * float(np.float32(gain))).to(x.dtype)
    return torch.pow(scaled.to(torch.float64), float(args["gamma"])).clamp_(0.0, 1.0).to(x.dtype)
