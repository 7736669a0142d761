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

from minddata.config import RunOptions
from minddata.errors import DeviceError
from minddata.ops.base import KernelContext, KernelOp, Op
from minddata.ops.cpu.decode import decode_image
from minddata.ops.cpu.resize import resize_image
from minddata.ops.devices import run_options
from minddata.ops.dvpp import rules
from minddata.ops.formats import sniff_format
from minddata.ops.plans.decode import check_image_pixels, empty_input_error, encoded_bytes
from minddata.ops.plans.image import interpolation_name
from minddata.ops.plans.resize import CropResize, crop_resize, geometry_op
from minddata.ops.registry import get_kernel, register_kernel

__all__ = ["DRIVER_OPS", "DVPP_TOLERANCE", "current_driver", "unsupported_reason"]

# How far the reference model may be from the CPU kernel (largest, mean |difference|) where an op
# states nothing else: it keeps the CPU's geometry, and the NV12 intermediate loses colour detail finer
# than 2x2 pixels (2-3 levels on average on photos with sensor noise). Declared in the op facts.
DVPP_TOLERANCE = (32.0, 4.0)
# driver -> the ops it runs, filled as the kernels below register with the drivers that run them: the
# decoders, the VPC's crops and resizes, and DVPP's tensor ops (RGB in, RGB out). ``nvjpg`` is a decoder
# only (its fusions resize on the GPU, next to it); the tensor ops run on the reference model only,
# until the ascend driver binds CANN's operators for them.
DRIVER_OPS: dict[str, tuple[str, ...]] = {}
_DECODER_DRIVERS = ("reference", "ascend", "nvjpg")
_VPC_DRIVERS = ("reference", "ascend")

_drivers: dict[str, tuple[str | None, str]] = {}


def current_driver(options: RunOptions | None = None, op_name: str = "") -> str:
    """The driver Dvpp kernels use under a run's ``options.dvpp_driver`` (default: the settings now),
    or a :class:`DeviceError` saying why there is none (naming ``op_name``, the op that asked, when
    given) and the fix."""
    wanted = run_options(options).dvpp_driver
    if wanted == "reference":
        return "reference"
    found = _drivers.get(wanted)
    if found is None or found[0] is None:  # asked again when absent: it may have been fixed
        from minddata.ops import probe

        found = _drivers[wanted] = probe.dvpp_driver(options=options)
    driver, why = found
    if driver is None:
        raise DeviceError(
            f"{op_name + ' on ' if op_name else ''}Dvpp: no driver available here ({why}). Place "
            f"{op_name or 'the op'} on the CPU (.device('CPU')), or minddata.config.set_dvpp_driver('reference') "
            "to preview it on the CPU model of DVPP"
        )
    return driver


def _vpc_interpolation(op: KernelOp) -> str | None:
    spec = geometry_op(op)
    if not hasattr(spec, "interpolation"):
        return None
    name = interpolation_name(spec.interpolation)
    if name not in rules.VPC_INTERPOLATIONS:
        return f"{op.name}: Dvpp resizes with BILINEAR or NEAREST interpolation only; this op asks for {name}"
    return None


def unsupported_reason(op: KernelOp, driver: str) -> str | None:
    """``None`` when ``driver`` runs ``op`` with these parameters, else why not (decided before any
    row runs: the placement pass reports it when the iterator is created)."""
    ops = DRIVER_OPS.get(driver, ())
    if op.name not in ops:
        return f"{op.name} has no kernel on the Dvpp driver {driver!r} (it runs {', '.join(ops)})"
    if op.name == "Decode" and getattr(op, "to_pil", False):
        return "Decode(to_pil=True) has no Dvpp kernel: PIL images live on the host"
    if driver == "nvjpg":
        from minddata.ops.gpu.translation import unsupported_reason as gpu_reason

        return gpu_reason(op)
    tensor_rule = rules.TENSOR_OPS.get(op.name)
    if tensor_rule is not None:
        if tensor_rule.interpolations:
            name = interpolation_name(op.interpolation)
            if name not in tensor_rule.interpolations:
                return f"{op.name}: Dvpp warps with BILINEAR or NEAREST interpolation only; this op asks for {name}"
        return None
    return _vpc_interpolation(op)


# ---------------------------------------------------------------------------------------------- policy


def _with_policy(name: str, model: Callable[[Op, KernelContext, Any], Any]) -> Callable[..., Any]:
    def kernel(op: KernelOp, ctx: KernelContext, data: Any) -> Any:
        # The placement's resolved driver travels on the op; the settings come from the run's options.
        driver = getattr(op, "_dvpp_driver", None) or current_driver(ctx.options, op.name)
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


def _register(
    *names: str, drivers: tuple[str, ...] = ("reference",), tolerance: tuple[float, float] = DVPP_TOLERANCE
) -> Callable[[Callable], Callable]:
    """Decorator over a reference model: the Dvpp kernel of ops ``names``, run by ``drivers``, with
    their tolerance against the CPU kernels (largest, mean |difference|)."""

    def wrap(model: Callable) -> Callable:
        for name in names:
            register_kernel(name, "Dvpp", tolerance=tolerance[0], mean_tolerance=tolerance[1])(_with_policy(name, model))
            for driver in drivers:
                DRIVER_OPS[driver] = (*DRIVER_OPS.get(driver, ()), name)
        return model

    return wrap


# ---------------------------------------------------------------------------------------------- reference model


def _decode(op_name: str, data: Any, limit: int | None) -> np.ndarray:
    buf = encoded_bytes(data, op_name)
    if buf.size == 0:
        raise empty_input_error(op_name)
    height, width = rules.check_decode(op_name, buf, sniff_format(buf))
    check_image_pixels(op_name, width, height, limit)
    image = decode_image(buf, op_name=op_name, max_pixels=limit)
    return rules.nv12_roundtrip(image, "decode")


def _vpc(op_name: str, image: np.ndarray, plan: CropResize, interpolation: Any = None) -> np.ndarray:
    """VPC's crop-and-resize of ``image`` by ``plan`` (the crop must lie inside: VPC can't pad)."""
    rules.check_crop_inside(op_name, plan.box, image.shape[0], image.shape[1])
    rules.check_vpc_output(op_name, plan.out_height, plan.out_width)
    top, left, ch, cw = plan.box
    region = image[top : top + ch, left : left + cw]
    if interpolation is None:  # a crop without a resize
        return rules.nv12_roundtrip(np.ascontiguousarray(region), "vpc")
    return rules.nv12_roundtrip(resize_image(region, plan.out_height, plan.out_width, interpolation, op_name), "vpc")


@_register("Decode", drivers=_DECODER_DRIVERS)
def _decode_kernel(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return _decode("Decode", data, ctx.options.max_image_pixels)


# Resize: more where the op resizes without antialiasing.
@_register("Resize", drivers=_VPC_DRIVERS, tolerance=(48.0, 6.0))
@_register("ResizedCrop", "RandomResizedCrop", drivers=_VPC_DRIVERS)
def _resize_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input(op.name, image)
    return _vpc(op.name, img, crop_resize(op, img.shape[0], img.shape[1], ctx.rng, img.shape), op.interpolation)


@_register("Crop", "CenterCrop", drivers=_VPC_DRIVERS)
def _crop_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = rules.check_vpc_input(op.name, image)
    return _vpc(op.name, img, crop_resize(op, img.shape[0], img.shape[1], shape=img.shape))


# Against the CPU's fused kernels, which decode at a reduced DCT scale where DVPP decodes in full.
@_register("FusedDecodeResize", drivers=_DECODER_DRIVERS, tolerance=(48.0, 6.5))
def _decode_resize_kernel(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    image = _decode("Decode", data, ctx.options.max_image_pixels)
    return _vpc("Resize", image, crop_resize(op, image.shape[0], image.shape[1]), op.resize.interpolation)


def _decode_crop(op: KernelOp, ctx: KernelContext, data: Any, decode_name: str, crop_name: str) -> np.ndarray:
    buf = encoded_bytes(data, decode_name)
    if buf.size == 0:
        raise empty_input_error(decode_name)
    height, width = rules.check_decode(decode_name, buf, sniff_format(buf))
    # Drawn from the header's size with the crop's stream before decoding, as the CPU kernel draws it.
    plan = crop_resize(op, height, width, ctx.rng)
    rules.check_vpc_output(crop_name, plan.out_height, plan.out_width)
    limit = ctx.options.max_image_pixels
    check_image_pixels(decode_name, width, height, limit)
    image = rules.nv12_roundtrip(decode_image(buf, op_name=decode_name, max_pixels=limit), "decode")
    return _vpc(crop_name, image, plan, geometry_op(op).interpolation)


@_register("FusedDecodeRandomResizedCrop", drivers=_DECODER_DRIVERS, tolerance=(40.0, 5.5))
def _decode_random_crop_kernel(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return _decode_crop(op, ctx, data, "Decode", "RandomResizedCrop")


@_register("RandomCropDecodeResize", drivers=_DECODER_DRIVERS, tolerance=(40.0, 5.5))
def _random_crop_decode_resize_kernel(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    return _decode_crop(op, ctx, data, "RandomCropDecodeResize", "RandomCropDecodeResize")


@_register(*rules.TENSOR_OPS)
def _tensor_kernel(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    # DVPP's tensor ops read and write HWC images (no NV12 buffer): the model is the CPU kernel's
    # arithmetic behind DVPP's rules.
    return get_kernel(op.name, "CPU")(op, ctx, rules.check_tensor_op(op.name, image))

