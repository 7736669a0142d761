"""Dvpp kernels: one per op the media engine runs, dispatching to the selected driver.

Drivers (``config.set_dvpp_driver``; what this machine has: ``minddata devices``):

* ``reference``: :mod:`minddata.ops.dvpp.rules` on the CPU: DVPP's rules and NV12 output, the CPU
  kernels' geometry. Runs every op below.
* ``nvjpg``: NVIDIA's hardware JPEG decoder through DALI (``hw_decoder_load=1.0``): Decode and the
  decode-resize / decode-crop fusions (the resize runs on the GPU in the same DALI pipeline).
* ``ascend``: Huawei DVPP through CANN's ``acl`` (:mod:`minddata.ops.dvpp.ascend`).

A row that breaks a rule raises :class:`~minddata.ops.dvpp.rules.DvppRuleError`, or, under
``config.set_dvpp_policy("cpu")``, runs on the op's CPU kernel (with the same random draws) and is
counted as ``dvpp_cpu_rows:<op>`` on the kernel context.

The engine runs ``reference`` and ``ascend`` kernels per row inside a map, and ``nvjpg`` ops as DALI
segments (batches); the per-row ``nvjpg`` path here serves eager calls and the contract test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minddata import config
from minddata.errors import DeviceError
from minddata.ops.base import KernelContext, Op
from minddata.ops.cpu.image import (
    _encoded_bytes,
    _interp_name,
    _square,
    check_crop_box,
    check_image_pixels,
    decode_image,
    random_resized_crop_box,
    resize_image,
    resize_output_size,
)
from minddata.ops.dvpp import rules
from minddata.ops.formats import sniff_format
from minddata.ops.registry import get_kernel, register_kernel

__all__ = ["DRIVER_OPS", "current_driver", "unsupported_reason"]

# Ops each driver runs. ``nvjpg`` is a decoder only: its fusions resize on the GPU, next to it.
_DECODERS = ("Decode", "FusedDecodeResize", "FusedDecodeRandomResizedCrop", "RandomCropDecodeResize")
_VPC = ("Resize", "Crop", "CenterCrop", "ResizedCrop", "RandomResizedCrop")
DRIVER_OPS: dict[str, tuple[str, ...]] = {
    "reference": _DECODERS + _VPC,
    "ascend": _DECODERS + _VPC,
    "nvjpg": _DECODERS,
}

_drivers: dict[str, tuple[str | None, str]] = {}


def current_driver(wanted: str | None = None) -> str:
    """The driver Dvpp kernels use under the setting ``wanted`` (default: the config's), or a
    :class:`DeviceError` saying why there is none."""
    if wanted is None:
        wanted = config.get_dvpp_driver()
    if wanted == "reference":
        return "reference"
    found = _drivers.get(wanted)
    if found is None or found[0] is None:  # asked again when absent: it may have been fixed
        from minddata.ops import probe

        found = _drivers[wanted] = probe.dvpp_driver()
    driver, why = found
    if driver is None:
        raise DeviceError(f"Dvpp: no driver available here ({why})")
    return driver


def _vpc_interpolation(op: Op) -> str | None:
    spec = op.resize if op.name == "FusedDecodeResize" else op.crop if op.name == "FusedDecodeRandomResizedCrop" else op
    if not hasattr(spec, "interpolation"):
        return None
    name = _interp_name(spec.interpolation)
    if name not in rules.VPC_INTERPOLATIONS:
        return f"{op.name}: Dvpp resizes with BILINEAR or NEAREST interpolation only; this op asks for {name}"
    return None


def unsupported_reason(op: Op, driver: str) -> str | None:
    """``None`` when ``driver`` runs ``op`` with these parameters, else why not (decided before any
    row runs: the placement pass reports it when the iterator is created)."""
    ops = DRIVER_OPS.get(driver, ())
    if op.name not in ops:
        return f"{op.name} has no kernel on the Dvpp driver {driver!r} (it runs {', '.join(ops)})"
    if op.name == "Decode" and getattr(op, "to_pil", False):
        return "Decode(to_pil=True) has no Dvpp kernel: PIL images live on the host"
    if driver == "nvjpg":
        from minddata.ops.gpu.translate import unsupported_reason as gpu_reason

        return gpu_reason(op)
    return _vpc_interpolation(op)


# ---------------------------------------------------------------------------------------------- policy


def _with_policy(name: str, model: Callable[[Op, KernelContext, Any], Any]) -> Callable[..., Any]:
    def kernel(op: Op, ctx: KernelContext, data: Any) -> Any:
        # The placement's resolved driver travels on the op; the settings come from the run's options.
        driver = getattr(op, "_dvpp_driver", None) or current_driver(ctx.options.dvpp_driver)
        policy = ctx.options.dvpp_policy
        reason = unsupported_reason(op, driver)
        if reason is not None:
            raise DeviceError(reason)
        if driver == "nvjpg":
            from minddata.ops.gpu.kernels import run_one

            return run_one(op, ctx, data, hw_decoder_load=1.0)
        if driver == "ascend":
            from minddata.ops.dvpp import ascend

            run = lambda: ascend.run(op, ctx, data)  # noqa: E731
        else:
            run = lambda: model(op, ctx, data)  # noqa: E731
        # The random draws are the first thing either path does with the context, so a row that
        # falls back to the CPU gets the crop it would have got on Dvpp.
        state = _rng_state(ctx) if op.random else None
        try:
            return run()
        except rules.DvppRuleError:
            if policy != "cpu":
                raise
        if state is not None:
            _restore_rng(ctx, state)
        ctx.count(f"dvpp_cpu_rows:{getattr(op, 'label', op.name)}")
        return get_kernel(name, "CPU")(op, ctx, data)

    kernel.__name__ = f"dvpp_{name}"
    return kernel


def _rng_state(ctx: KernelContext) -> Any:
    return ctx.rng.bit_generator.state


def _restore_rng(ctx: KernelContext, state: Any) -> None:
    ctx.rng.bit_generator.state = state


def _register(*names: str) -> Callable[[Callable], Callable]:
    def wrap(model: Callable) -> Callable:
        for name in names:
            register_kernel(name, "Dvpp")(_with_policy(name, model))
        return model

    return wrap


# ---------------------------------------------------------------------------------------------- reference model


def _decode(op_name: str, data: Any, limit: int | None) -> np.ndarray:
    buf = _encoded_bytes(data, op_name)
    if buf.size == 0:
        raise ValueError(f"{op_name}: the input is empty (0 bytes); expected an encoded image")
    height, width = rules.check_decode(op_name, buf, sniff_format(buf))
    check_image_pixels(op_name, width, height, limit)
    image = decode_image(buf, op_name=op_name, max_pixels=limit)
    return rules.nv12_roundtrip(image, "decode")


def _vpc_resize(op_name: str, image: np.ndarray, out_h: int, out_w: int, interpolation: Any) -> np.ndarray:
    rules.check_vpc_output(op_name, out_h, out_w)
    return rules.nv12_roundtrip(resize_image(image, out_h, out_w, interpolation, op_name), "vpc")


def _vpc_crop(op_name: str, image: np.ndarray, top: int, left: int, ch: int, cw: int) -> np.ndarray:
    h, w = image.shape[:2]
    if top < 0 or left < 0 or top + ch > h or left + cw > w:
        raise rules.DvppRuleError(
            f"Dvpp {op_name} crops inside the image only (it can't pad); the crop (top={top}, left={left}, "
            f"height={ch}, width={cw}) leaves the {h}x{w} (HxW) image: place it on the CPU, or "
            "minddata.config.set_dvpp_policy('cpu') to run such rows on the CPU",
            "crop-inside",
        )
    rules.check_vpc_output(op_name, ch, cw)
    return rules.nv12_roundtrip(np.ascontiguousarray(image[top : top + ch, left : left + cw]), "vpc")


@_register("Decode")
def _decode_kernel(op: Op, ctx: KernelContext, data: Any) -> np.ndarray:
    return _decode("Decode", data, ctx.options.max_image_pixels)


@_register("Resize")
def _resize_kernel(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input("Resize", image)
    out_h, out_w = resize_output_size(img.shape[0], img.shape[1], op.size)
    return _vpc_resize("Resize", img, out_h, out_w, op.interpolation)


@_register("Crop")
def _crop_kernel(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input("Crop", image)
    top, left = op.coordinates
    ch, cw = _square(op.size)
    check_crop_box("Crop", img, top, left, ch, cw)
    return _vpc_crop("Crop", img, top, left, ch, cw)


@_register("CenterCrop")
def _center_crop_kernel(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input("CenterCrop", image)
    ch, cw = _square(op.size)
    h, w = img.shape[:2]
    return _vpc_crop("CenterCrop", img, (h - ch) // 2, (w - cw) // 2, ch, cw)


@_register("ResizedCrop")
def _resized_crop_kernel(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input("ResizedCrop", image)
    if op.top + op.height > img.shape[0] or op.left + op.width > img.shape[1]:
        raise ValueError(
            f"ResizedCrop: the crop box (top={op.top}, left={op.left}, height={op.height}, width={op.width}) "
            f"must lie inside the image. Found image shape {img.shape}"
        )
    region = img[op.top : op.top + op.height, op.left : op.left + op.width]
    return _vpc_resize("ResizedCrop", region, *_square(op.size), op.interpolation)


@_register("RandomResizedCrop")
def _random_resized_crop_kernel(op: Op, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input("RandomResizedCrop", image)
    top, left, ch, cw = random_resized_crop_box(ctx.rng, img.shape[0], img.shape[1], op.scale, op.ratio, op.max_attempts)
    return _vpc_resize("RandomResizedCrop", img[top : top + ch, left : left + cw], *_square(op.size), op.interpolation)


@_register("FusedDecodeResize")
def _decode_resize_kernel(op: Op, ctx: KernelContext, data: Any) -> np.ndarray:
    image = _decode("Decode", data, ctx.options.max_image_pixels)
    out_h, out_w = resize_output_size(image.shape[0], image.shape[1], op.resize.size)
    return _vpc_resize("Resize", image, out_h, out_w, op.resize.interpolation)


def _decode_crop(crop: Op, ctx: KernelContext, data: Any, decode_name: str, crop_name: str) -> np.ndarray:
    buf = _encoded_bytes(data, decode_name)
    if buf.size == 0:
        raise ValueError(f"{decode_name}: the input is empty (0 bytes); expected an encoded image")
    height, width = rules.check_decode(decode_name, buf, sniff_format(buf))
    # Drawn from the header's size with the crop's stream before decoding, as the CPU kernel draws it.
    top, left, ch, cw = random_resized_crop_box(ctx.rng, height, width, crop.scale, crop.ratio, crop.max_attempts)
    out_h, out_w = _square(crop.size)
    rules.check_vpc_output(crop_name, out_h, out_w)
    limit = ctx.options.max_image_pixels
    check_image_pixels(decode_name, width, height, limit)
    image = rules.nv12_roundtrip(decode_image(buf, op_name=decode_name, max_pixels=limit), "decode")
    return _vpc_resize(crop_name, image[top : top + ch, left : left + cw], out_h, out_w, crop.interpolation)


@_register("FusedDecodeRandomResizedCrop")
def _decode_random_crop_kernel(op: Op, ctx: KernelContext, data: Any) -> np.ndarray:
    return _decode_crop(op.crop, ctx, data, "Decode", "RandomResizedCrop")


@_register("RandomCropDecodeResize")
def _random_crop_decode_resize_kernel(op: Op, ctx: KernelContext, data: Any) -> np.ndarray:
    return _decode_crop(op, ctx, data, "RandomCropDecodeResize", "RandomCropDecodeResize")
