"""GPU kernel of Decode (the CPU's :mod:`minddata.ops.cpu.decode`): DALI's image decoder, on its ``mixed``
backend (nvJPEG, or the hardware JPEG engines for the Dvpp ``nvjpg`` driver) or on its CPU backend.

The header is read and the pixel limit checked on the host, as the CPU decoder checks them. Exact on
DALI's CPU backend (libjpeg-turbo, as OpenCV); on a real GPU nvJPEG's IDCT and chroma upsampling
differ from libjpeg-turbo's by a few levels (``DECODE_CUDA_TOLERANCE``, declared for the decoders).
The torch driver decodes on the GPU the batch's JPEGs that nvJPEG reads (``torchvision.io.decode_jpeg``,
when torchvision is installed: the same few levels) and every other row with the CPU decoder, whose
result is uploaded; its Decode kernel is then the identity.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.formats import sniff_format
from minddata.ops.gpu.translation import (
    Args,
    Kind,
    Sample,
    _register,
    torch_kernel,
)
from minddata.ops.plans.decode import check_image_pixels, empty_input_error, encoded_bytes, image_header_size

# On a real GPU, nvJPEG's IDCT and chroma upsampling against libjpeg-turbo's: (largest, mean) levels.
DECODE_CUDA_TOLERANCE = (32.0, 1.5)
# What DALI's image decoder reads (no GIF): a GIF row fails on the GPU with a message saying so.
DALI_DECODE_FORMATS = ("JPEG", "PNG", "BMP", "TIFF", "WebP", "PNM", "JPEG 2000")

# ---------------------------------------------------------------------------------------------- decode


def _decode_static(op: Op, kind: Kind) -> Kind:
    return Kind("HWC", np.dtype(np.uint8), 3)


def decoder_header_size(buf: np.ndarray) -> tuple[int, int] | None:
    """(width, height) as DALI's image decoder will read them: DALI decodes through nvImageCodec, so
    its parser gives the size the pixel limit is checked on (a separate parse could disagree, e.g.
    over junk bytes before a JPEG frame header). Without nvImageCodec, the CPU's header reader."""
    try:
        import nvidia.nvimgcodec as nvimgcodec
    except ImportError:
        return image_header_size(buf)
    try:
        stream = nvimgcodec.CodeStream(buf.tobytes())
        return int(stream.width), int(stream.height)
    except Exception:  # noqa: BLE001 - nvImageCodec raises RuntimeError or its own types for bad headers
        return None


def encoded_header(op_name: str, s: Sample, limit: int | None) -> tuple[np.ndarray, int, int]:
    """The row's bytes and (height, width) from its header, checked as the CPU decoder checks them."""
    if s.value is None or s.kind.layout != "encoded":
        raise TypeError(
            f"{op_name}: expected encoded image bytes (a 1-D uint8 array or bytes). "
            f"Found a decoded {s.kind.layout} image of shape {s.shape}"
        )
    buf = np.ascontiguousarray(encoded_bytes(s.value, op_name))
    if buf.size == 0:
        raise empty_input_error(op_name)
    fmt = sniff_format(buf)
    if fmt not in DALI_DECODE_FORMATS:
        what = f"a {fmt} image" if fmt != "unknown" else "not an image DALI can decode (no known signature)"
        raise ValueError(
            f"{op_name}: the GPU decoder (DALI) reads {', '.join(DALI_DECODE_FORMATS)}; this row is {what}, "
            f"{buf.size} bytes. Place {op_name} on the CPU for it"
        )
    size = decoder_header_size(buf)
    if size is None:
        raise ValueError(
            f"{op_name}: the input is not a decodable image ({buf.size} bytes): its {fmt} header can't be "
            "read by DALI's decoder (nvImageCodec)"
        )
    width, height = size
    check_image_pixels(op_name, width, height, limit)
    return buf, height, width


def build_decode(node: Any, env: Any, anchor: Any = None, shape: Any = None) -> Any:
    kwargs: dict[str, Any] = {"device": env.decoder, "output_type": env.types.RGB, "adjust_orientation": False}
    if env.decoder == "mixed":
        # The GPU device decodes on CUDA cores; Dvpp (nvjpg) sends everything to the hardware engine.
        kwargs["hw_decoder_load"] = env.hw_decoder_load
    if anchor is None:
        return env.fn.decoders.image(node, **kwargs)
    return env.fn.decoders.image_slice(node, anchor, shape, axis_names="HW", **kwargs)


@_register("Decode", args={}, static=_decode_static, first_only=True, cuda_tolerance=DECODE_CUDA_TOLERANCE,
           supports=lambda op: "Decode(to_pil=True) has no GPU kernel: PIL images live on the host"
           if getattr(op, "to_pil", False) else None,
           build=lambda op, node, args, env: build_decode(node, env))
def _plan_decode(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    buf, h, w = encoded_header("Decode", s, ctx.options.max_image_pixels)
    s.value = buf
    return {}, Sample((h, w, 3), _decode_static(op, s.kind))


# ---------------------------------------------------------------------------------------------- torch


@torch_kernel("Decode")
def _torch_decoded(op: Op, x: Any, args: dict[str, Any], torch: Any) -> Any:
    return x  # the torch segment has decoded the batch: nothing follows
