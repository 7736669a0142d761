"""Op specs → NVIDIA DALI operators: the GPU kernels, written once as translations.

A run of GPU-placed ops becomes one DALI pipeline (:mod:`minddata.ops.gpu.segment`). Each op here has
a :class:`Translation` with three parts:

* ``plan(op, ctx, sample)`` runs on the host, per row, before the batch goes to DALI. It checks the
  row as the CPU kernel would (same errors, naming the op), computes the op's device-free plan
  (:mod:`minddata.ops.plans`: sizes, crop boxes, warp matrices, random parameters from the row's RNG)
  as the CPU kernel does, and works out the output's shape. What it returns is fed to DALI as per-sample
  arguments through ``external_source``, so a seeded pipeline crops and flips the same rows the same
  way on the CPU and on the GPU, and every output shape is known before DALI runs.
* ``build(op, node, args, env)`` adds the DALI operators to the pipeline graph (once per pipeline).
* ``supports(op)`` says, before anything runs, whether the op's parameters have a DALI equivalent
  (e.g. ``Pad`` with ``padding_mode=EDGE`` does not); the placement pass turns a reason into an error
  at iterator creation, or keeps an ``"auto"`` op on the CPU.

Numerics against the CPU kernels (checked by tests/ops/test_gpu_dali.py with DALI's CPU backend,
which runs these same translations; measured with DALI 2.4):

* exact: crops, pads, flips, ``HWC2CHW``, ``Normalize`` and ``Rescale`` (the same float32 operations),
  ``TypeCast`` of in-range values, decode on DALI's CPU backend (libjpeg-turbo, as OpenCV), and ``RandomColorAdjust`` (OpenCV's
  uint8 HSV conversion and rounding reproduced step by step; ties may round the other way);
* NEAREST resizes pick the same source pixels except about 0.5% of them (DALI's NN samples pixel
  centres, OpenCV's ``INTER_NEAREST`` the top-left corner: the region is shifted by half a source
  pixel to match; what is left is OpenCV's double rounding at exact pixel edges);
* within 1 level: BILINEAR resizes and rotations (OpenCV rounds its fixed-point weights);
* resampling filters that differ by design (stated tolerances in tests/ops/test_contract.py): BICUBIC
  (DALI's cubic uses a = -0.5, OpenCV's a = -0.75), LANCZOS (DALI's Lanczos-3 vs OpenCV's Lanczos-4),
  AREA (DALI's antialiased linear filter vs OpenCV's exact box average), PILCUBIC/ANTIALIAS;
* decode on a real GPU (nvJPEG's IDCT and chroma upsampling differ from libjpeg-turbo's by a few levels);
* ``TypeCast``: out-of-range values saturate on the GPU where NumPy wraps around.

The ops of ``minddata.vision``'s pixel, pad/erase, resize and warp families (measured the same way):

* exact on uint8 (each step in the CPU kernel's precision, rounded half to even as NumPy and OpenCV
  round): ``Invert``, ``Posterize``, ``Solarize``, ``AdjustBrightness``, ``AdjustContrast``,
  ``AdjustSaturation``, ``AdjustHue``, ``RandomColor``, ``AdjustGamma`` (the CPU's own table),
  ``Equalize`` (DALI's equalize is OpenCV's equalizeHist), the sharpness ops, ``RandomLighting``,
  ``RandomGrayscale``, ``ToTensor``, ``PadToSize``, ``Erase``, and their ``Random*`` forms, which draw
  with the CPU kernels' plan functions;
* other dtypes: exact where the CPU kernel computes in float64 or float32 step by step; one unit in the
  last place where NumPy's float32/float16 power (``AdjustGamma``) or OpenCV's float and 16-bit paths
  (``RandomGrayscale``, the sharpness ops) round differently; float16 within one float16 step;
* ``Perspective``/``RandomPerspective`` (DALI's warp_perspective, OpenCV's pixel centres): within one
  level for BILINEAR and BICUBIC; NEAREST picks the neighbour for a few pixels at exact edges (the
  homography travels as float32 where OpenCV keeps doubles);
* ``RandomResize``: each row draws the CPU kernel's interpolation and is resized exactly as ``Resize``
  resizes with it (so AREA and BICUBIC differ from OpenCV's by design, as above).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.formats import sniff_format
from minddata.ops.plans.affine import rotation, rotation_degrees
from minddata.ops.plans.color import ADJUSTMENTS, color_adjustments
from minddata.ops.plans.crop import CropBox, center_crop_box
from minddata.ops.plans.decode import check_image_pixels, empty_input_error, encoded_bytes, image_header_size
from minddata.ops.plans.flip import flips
from minddata.ops.plans.image import fill_values, interpolation_name, square
from minddata.ops.plans.resize import crop_resize, geometry_op, resize_output_size

__all__ = ["Kind", "Sample", "Translation", "TRANSLATIONS", "translation", "unsupported_reason"]

# What DALI's image decoder reads (no GIF): a GIF row fails on the GPU with a message saying so.
DALI_DECODE_FORMATS = ("JPEG", "PNG", "BMP", "TIFF", "WebP", "PNM", "JPEG 2000")
# dtypes DALI's resampling operators (resize, warp_affine) take.
RESAMPLE_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int16, np.uint16, np.float32))
NUMERIC = frozenset(
    np.dtype(t)
    for t in (np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
              np.float16, np.float32, np.float64)
)


@dataclass(frozen=True)
class Kind:
    """What every sample of a pipeline's input (and of each op's output) is, statically.

    ``layout``: ``"encoded"`` (1-D bytes), ``"HWC"`` or ``"CHW"``; ``gray2d``: the row was an
    ``<H, W>`` array, carried through DALI as ``<H, W, 1>`` and given back 2-D.
    """

    layout: str
    dtype: np.dtype
    channels: int | None
    gray2d: bool = False


@dataclass
class Sample:
    """One row as the host plans it: its shape as DALI holds it (``(H, W, C)``, ``(C, H, W)`` or the
    byte count), its kind, and, for the segment's first op only, the value itself (decoders read the
    header)."""

    shape: tuple[int, ...]
    kind: Kind
    value: Any = None


Args = dict[str, np.ndarray]


@dataclass(frozen=True)
class Translation:
    plan: Callable[[Op, KernelContext, Sample], tuple[Args, Sample]]
    build: Callable[[Op, Any, dict[str, Any], Any], Any]
    args: dict[str, Any]  # per-sample argument name -> numpy dtype
    static: Callable[[Op, Kind], Kind] = lambda op, kind: kind
    supports: Callable[[Op], str | None] = lambda op: None
    first_only: bool = False  # reads encoded bytes: must be its segment's first op


TRANSLATIONS: dict[str, Translation] = {}


def translation(name: str) -> Translation | None:
    return TRANSLATIONS.get(name)


def unsupported_reason(op: Op) -> str | None:
    """``None`` when ``op`` (with these parameters) has a DALI translation, else why not."""
    tr = TRANSLATIONS.get(op.name)
    if tr is None:
        return f"{op.name} has no GPU kernel"
    return tr.supports(op)


def _register(*names: str, **kwargs: Any) -> Callable[[Callable], Callable]:
    def wrap(plan: Callable) -> Callable:
        for name in names:
            TRANSLATIONS[name] = Translation(plan=plan, **kwargs)
        return plan

    return wrap


# ---------------------------------------------------------------------------------------------- checks


def _image(op_name: str, s: Sample, *, numeric: bool = False, resample: bool = False) -> tuple[int, int]:
    """(H, W) of an HWC sample, with the CPU kernels' checks and messages."""
    if s.kind.layout == "encoded":
        raise TypeError(
            f"{op_name}: expected an image as a numpy array. Found encoded bytes ({s.shape[0]} bytes); "
            "put Decode first"
        )
    if s.kind.layout != "HWC":
        raise ValueError(
            f"{op_name}: on the GPU, expected an HWC image. Found a {s.kind.layout} tensor of shape {s.shape} "
            f"(an earlier HWC2CHW); move HWC2CHW after {op_name}"
        )
    h, w, c = s.shape
    if h == 0 or w == 0 or c == 0:
        shape = (h, w) if s.kind.gray2d else (h, w, c)
        raise ValueError(f"{op_name}: expected a non-empty image. Found shape {shape}")
    dtype = s.kind.dtype
    if (numeric or resample) and dtype.kind not in "biuf":
        raise TypeError(f"{op_name}: expected a numeric image. Found dtype {dtype} (shape {s.shape})")
    if resample and dtype not in RESAMPLE_DTYPES:
        raise TypeError(
            f"{op_name}: DALI resamples uint8, int16, uint16 and float32 images on the GPU. Found dtype {dtype}; "
            f"cast first (TypeCast) or place {op_name} on the CPU"
        )
    return h, w


def _shown_shape(s: Sample) -> tuple[int, ...]:
    """The row's shape as the user's array had it (a 2-D image is carried as ``<H, W, 1>``)."""
    return s.shape[:2] if s.kind.gray2d else s.shape


def _hwc(s: Sample, h: int, w: int, dtype: np.dtype | None = None) -> Sample:
    kind = s.kind if dtype is None else replace(s.kind, dtype=np.dtype(dtype))
    return Sample((h, w, s.shape[2]), kind)


def _layout(kind: Kind) -> str:
    return "HW" if kind.layout in ("HWC", "encoded") else kind.layout


# ---------------------------------------------------------------------------------------------- resize

# DESIGN: interpolation name -> (DALI interp attribute, antialias). OpenCV's filters are not
# antialiased, so neither are these, except AREA and Pillow's (antialiased) filters.
_INTERP = {
    "NEAREST": ("INTERP_NN", False),
    "BILINEAR": ("INTERP_LINEAR", False),
    "LINEAR": ("INTERP_LINEAR", False),
    "BICUBIC": ("INTERP_CUBIC", False),
    "CUBIC": ("INTERP_CUBIC", False),
    "AREA": ("INTERP_LINEAR", True),
    "LANCZOS": ("INTERP_LANCZOS3", False),
    "PILCUBIC": ("INTERP_CUBIC", True),
    "ANTIALIAS": ("INTERP_LANCZOS3", True),
}
RESIZE_ARGS = {"size": np.float32, "roi_start": np.float32, "roi_end": np.float32}


def _interp_supported(op: Op, attr: str = "interpolation") -> str | None:
    name = interpolation_name(getattr(op, attr))
    return None if name in _INTERP else f"{op.name}: interpolation {name} has no GPU equivalent"


def resize_args(h: int, w: int, out_h: int, out_w: int, interpolation: Any) -> Args:
    """Output size and source region of a resize from ``h x w`` to ``out_h x out_w``."""
    if interpolation_name(interpolation) == "NEAREST":
        # OpenCV's INTER_NEAREST takes source pixel floor(dst * scale); DALI's NN takes
        # floor((dst + 0.5) * scale) over its region. Shifting the region by half a scaled pixel
        # makes them the same pixel.
        # A sample landing exactly on a pixel edge (dst * in / out a whole number) is where float32
        # and OpenCV's double arithmetic may disagree; a quarter of the smallest gap between sample
        # positions (1/out of a pixel) puts it after the edge, as exact arithmetic does, without
        # moving any other sample. OpenCV (floor(dst * (1 / (out / in))) in double) still takes
        # the pixel before the edge for some ratios: about 0.5% of pixels differ.
        sy, sx = h / out_h, w / out_w
        ey, ex = 0.25 / out_h, 0.25 / out_w
        start, end = [-0.5 * sy + ey, -0.5 * sx + ex], [h - 0.5 * sy + ey, w - 0.5 * sx + ex]
    else:
        start, end = [0.0, 0.0], [float(h), float(w)]
    return {
        "size": np.array([out_h, out_w], np.float32),
        "roi_start": np.array(start, np.float32),
        "roi_end": np.array(end, np.float32),
    }


def build_resize(node: Any, args: dict[str, Any], interpolation: Any, env: Any) -> Any:
    interp, antialias = _INTERP[interpolation_name(interpolation)]
    return env.fn.resize(
        node,
        size=args["size"],
        roi_start=args["roi_start"],
        roi_end=args["roi_end"],
        roi_relative=False,
        interp_type=getattr(env.types, interp),
        antialias=antialias,
        device=env.device,
    )


@_register("Resize", args=RESIZE_ARGS, supports=_interp_supported,
           build=lambda op, node, args, env: build_resize(node, args, op.interpolation, env))
def _plan_resize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Resize", s, resample=True)
    out_h, out_w = resize_output_size(h, w, op.size)
    return resize_args(h, w, out_h, out_w, op.interpolation), _hwc(s, out_h, out_w)


# ---------------------------------------------------------------------------------------------- crops

SLICE_ARGS = {"anchor": np.int32, "shape": np.int32}


def build_slice(node: Any, args: dict[str, Any], env: Any, fill: Any = 0) -> Any:
    return env.fn.slice(
        node, args["anchor"], args["shape"], axis_names="HW", out_of_bounds_policy="pad",
        fill_values=fill, device=env.device,
    )


def _slice_args(top: int, left: int, h: int, w: int) -> Args:
    return {"anchor": np.array([top, left], np.int32), "shape": np.array([h, w], np.int32)}


@_register("CenterCrop", args=SLICE_ARGS, build=lambda op, node, args, env: build_slice(node, args, env))
def _plan_center_crop(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("CenterCrop", s)
    # MindSpore pads a too-small image with zeros around it, the odd pixel first: a negative anchor
    # into the zero padding of DALI's slice is exactly that.
    box = center_crop_box(h, w, *square(op.size))
    return _slice_args(*box), _hwc(s, box.height, box.width)


@_register("Crop", args=SLICE_ARGS, build=lambda op, node, args, env: build_slice(node, args, env))
def _plan_crop(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Crop", s)
    box = crop_resize(op, h, w, shape=_shown_shape(s)).box
    return _slice_args(*box), _hwc(s, box.height, box.width)


CROP_RESIZE_ARGS = {**SLICE_ARGS, **RESIZE_ARGS}


def _build_crop_resize(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    return build_resize(build_slice(node, args, env), args, op.interpolation, env)


def _crop_resize_args(box: CropBox, out: Any, interpolation: Any) -> Args:
    top, left, ch, cw = box
    return {**_slice_args(top, left, ch, cw), **resize_args(ch, cw, out[0], out[1], interpolation)}


@_register("RandomResizedCrop", args=CROP_RESIZE_ARGS, supports=_interp_supported, build=_build_crop_resize)
def _plan_random_resized_crop(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("RandomResizedCrop", s, resample=True)
    box, *out = crop_resize(op, h, w, ctx.rng)
    return _crop_resize_args(box, out, op.interpolation), _hwc(s, *out)


@_register("ResizedCrop", args=CROP_RESIZE_ARGS, supports=_interp_supported, build=_build_crop_resize)
def _plan_resized_crop(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("ResizedCrop", s, resample=True)
    box, *out = crop_resize(op, h, w, shape=s.shape)
    return _crop_resize_args(box, out, op.interpolation), _hwc(s, *out)


# ---------------------------------------------------------------------------------------------- decode


def _decode_static(op: Op, kind: Kind) -> Kind:
    return Kind("HWC", np.dtype(np.uint8), 3)


def decoder_header_size(buf: np.ndarray) -> tuple[int, int] | None:
    """(width, height) as DALI's image decoder will read them: DALI decodes through nvImageCodec, so
    its parser gives the size the pixel limit is checked on (a separate parse could disagree, e.g.
    over junk bytes before a JPEG frame header). Without nvImageCodec, the CPU's header reader."""
    try:
        from nvidia import nvimgcodec
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


@_register("Decode", args={}, static=_decode_static, first_only=True,
           supports=lambda op: "Decode(to_pil=True) has no GPU kernel: PIL images live on the host"
           if getattr(op, "to_pil", False) else None,
           build=lambda op, node, args, env: build_decode(node, env))
def _plan_decode(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    buf, h, w = encoded_header("Decode", s, ctx.options.max_image_pixels)
    s.value = buf
    return {}, Sample((h, w, 3), _decode_static(op, s.kind))


@_register("FusedDecodeResize", args=RESIZE_ARGS, static=_decode_static, first_only=True,
           supports=lambda op: _interp_supported(op.resize),
           build=lambda op, node, args, env: build_resize(build_decode(node, env), args, op.resize.interpolation, env))
def _plan_decode_resize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    buf, h, w = encoded_header("Decode", s, ctx.options.max_image_pixels)
    s.value = buf
    out_h, out_w = resize_output_size(h, w, op.resize.size)
    return resize_args(h, w, out_h, out_w, op.resize.interpolation), Sample((out_h, out_w, 3), _decode_static(op, s.kind))


def _build_decode_crop(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    region = build_decode(node, env, args["anchor"], args["shape"])
    return build_resize(region, args, geometry_op(op).interpolation, env)


@_register("FusedDecodeRandomResizedCrop", "RandomCropDecodeResize", args=CROP_RESIZE_ARGS, static=_decode_static,
           first_only=True, supports=lambda op: _interp_supported(geometry_op(op)), build=_build_decode_crop)
def _plan_decode_crop(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    crop = geometry_op(op)
    name = "Decode" if op.name == "FusedDecodeRandomResizedCrop" else op.name
    buf, h, w = encoded_header(name, s, ctx.options.max_image_pixels)
    s.value = buf
    # The crop is drawn from the header's size with the crop op's stream, as the CPU kernel draws it;
    # DALI then decodes only that region (decoders.image_slice).
    box, *out = crop_resize(op, h, w, ctx.rng)
    return _crop_resize_args(box, out, crop.interpolation), Sample((*out, 3), _decode_static(op, s.kind))


# ---------------------------------------------------------------------------------------------- flips

FLIP_ARGS = {"flip": np.int32}


def _build_flip(horizontal: bool) -> Callable:
    def build(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
        if horizontal:
            return env.fn.flip(node, horizontal=args["flip"], vertical=0, device=env.device)
        return env.fn.flip(node, horizontal=0, vertical=args["flip"], device=env.device)

    return build


def _plan_flip(name: str, random: bool) -> Callable:
    def plan(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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


# ---------------------------------------------------------------------------------------------- pixels


def _float_static(op: Op, kind: Kind) -> Kind:
    return replace(kind, dtype=np.dtype(np.float32))


def _build_normalize(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    n = len(op.mean)
    shape = (-1,) if op.is_hwc else (-1, 1, 1)
    mean = np.asarray(op.mean, np.float32).reshape(shape if n > 1 else ())
    std = np.asarray(op.std, np.float32).reshape(shape if n > 1 else ())
    # (x - mean) / std in float32, as the CPU kernel computes it: the results are bit-identical.
    x = env.fn.cast(node, dtype=env.types.FLOAT, device=env.device)
    return (x - env.types.Constant(mean, device=env.const_device)) / env.types.Constant(std, device=env.const_device)


@_register("Normalize", args={}, static=_float_static, build=_build_normalize)
def _plan_normalize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.layout == "encoded":
        _image("Normalize", s)
    if any(d == 0 for d in s.shape):
        raise ValueError(f"Normalize: expected a non-empty image. Found shape {s.shape}")
    if s.kind.dtype.kind not in "biuf":
        raise TypeError(f"Normalize: expected a numeric image. Found dtype {s.kind.dtype} (shape {s.shape})")
    n = len(op.mean)
    layout = "HWC" if op.is_hwc else "CHW"
    if s.kind.gray2d:
        channels = 1
    else:
        channels = s.shape[2] if op.is_hwc else s.shape[0]
    if n != 1 and channels != n:
        shape = _shown_shape(s)
        raise ValueError(
            f"Normalize: expected an {layout} image with {n} channels matching mean/std of length {n}. "
            f"Found shape {shape}"
        )
    return {}, Sample(s.shape, _float_static(op, s.kind))


def _build_rescale(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    x = env.fn.cast(node, dtype=env.types.FLOAT, device=env.device)
    scale = env.types.Constant(np.float32(op.rescale), device=env.const_device)
    shift = env.types.Constant(np.float32(op.shift), device=env.const_device)
    return x * scale + shift


@_register("Rescale", args={}, static=_float_static, build=_build_rescale)
def _plan_rescale(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.layout == "encoded" or s.kind.dtype.kind not in "biuf":
        raise TypeError(f"Rescale: expected a numeric array. Found dtype {s.kind.dtype} (shape {s.shape})")
    return {}, Sample(s.shape, _float_static(op, s.kind))


def _chw_static(op: Op, kind: Kind) -> Kind:
    return kind if kind.gray2d else replace(kind, layout="CHW")


def _build_hwc2chw(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    if env.kind_in.gray2d:
        return node  # HWC2CHW leaves a 2-D image as it is
    return env.fn.transpose(node, perm=[2, 0, 1], output_layout="CHW", device=env.device)


@_register("HWC2CHW", args={}, static=_chw_static, build=_build_hwc2chw)
def _plan_hwc2chw(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("HWC2CHW", s)
    if s.kind.gray2d:
        return {}, Sample(s.shape, s.kind)
    return {}, Sample((s.shape[2], h, w), _chw_static(op, s.kind))


# DALI's type names for the dtypes it holds.
_DALI_TYPES = {
    "bool": "BOOL", "uint8": "UINT8", "int8": "INT8", "uint16": "UINT16", "int16": "INT16",
    "uint32": "UINT32", "int32": "INT32", "uint64": "UINT64", "int64": "INT64",
    "float16": "FLOAT16", "float32": "FLOAT", "float64": "FLOAT64",
}


def dali_type(dtype: np.dtype, types: Any) -> Any:
    return getattr(types, _DALI_TYPES[np.dtype(dtype).name])


def _cast_supported(op: Op) -> str | None:
    dtype = np.dtype(op.data_type)
    return None if dtype.name in _DALI_TYPES else f"{op.name}: DALI has no {dtype} type"


def _build_cast(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    target = np.dtype(op.data_type)
    source = env.kind_in.dtype
    if source.kind == "f" and target.kind in "iub" and target != np.bool_:
        # DALI's cast rounds to nearest; NumPy's astype (and MindSpore's C++ cast) truncates toward
        # zero: truncate first, so the cast only sees whole numbers.
        dmath = env.math
        positive = env.fn.cast(node >= 0, dtype=dali_type(source, env.types), device=env.device)
        node = dmath.floor(node) * positive + dmath.ceil(node) * (1 - positive)
    return env.fn.cast(node, dtype=dali_type(target, env.types), device=env.device)


@_register("TypeCast", "ToType", args={}, supports=_cast_supported, build=_build_cast,
           static=lambda op, kind: replace(kind, dtype=np.dtype(op.data_type)))
def _plan_cast(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.dtype not in NUMERIC:
        raise ValueError(f"{op.name}: cannot cast an array of dtype {s.kind.dtype} (shape {s.shape}) to {op.data_type}")
    return {}, Sample(s.shape, replace(s.kind, dtype=np.dtype(op.data_type)))


# ---------------------------------------------------------------------------------------------- Pad


def _pad_supported(op: Op) -> str | None:
    mode = str(getattr(op.padding_mode, "value", op.padding_mode)).lower()
    if mode != "constant":
        return f"{op.name}: padding_mode={mode!r} has no GPU equivalent (DALI pads with a constant only)"
    return None


def _build_pad(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    fill = list(fill_values(op.fill_value, env.kind_in.channels or 1))
    return build_slice(node, args, env, fill=fill)


@_register("Pad", args=SLICE_ARGS, supports=_pad_supported, build=_build_pad)
def _plan_pad(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Pad", s)
    left, top, right, bottom = op.padding
    return _slice_args(-top, -left, h + top + bottom, w + left + right), _hwc(s, h + top + bottom, w + left + right)


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
_register("RandomRotation", args=WARP_ARGS, supports=_rotate_supported, build=_build_rotate)(
    _plan_rotation("RandomRotation", True)
)


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


def _arg(args: dict[str, Any], name: str, env: Any) -> Any:
    # Per-sample scalars come from the host; arithmetic on the GPU wants its operands there too.
    node = args[name]
    return node.gpu() if env.device == "gpu" else node


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
        channels.append(total * 255.0)
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


# ---------------------------------------------------------------------------------------------- pixel adjustments
# The ops of minddata.vision.adjust whose arithmetic DALI can do exactly: the CPU kernels' formulas in
# the same precision (float32 where OpenCV computes in float32, float64 where NumPy does), rounded half
# to even as NumPy's rint and OpenCV's saturate_cast do (DALI's cast rounds half away from zero, so the
# rounding is spelled out), and the random parameters from ops/plans/adjust.py with the row's RNG.


def _f64(node: Any, env: Any) -> Any:
    return env.fn.cast(node, dtype=env.types.FLOAT64, device=env.device)


def _f32(node: Any, env: Any) -> Any:
    return env.fn.cast(node, dtype=env.types.FLOAT, device=env.device)


def _const64(value: float, env: Any) -> Any:
    """A constant for float64 arithmetic. DALI keeps constants in float32: only values float32 holds
    exactly (0.5, 255, ...) may be written so; other values travel as per-sample float64 arguments."""
    if float(np.float32(value)) != float(value):
        raise ValueError(f"{value!r} is not exact in float32: pass it as a per-sample float64 argument")
    return env.types.Constant(np.float64(value), device=env.const_device)


def _rint(y: Any, env: Any) -> Any:
    """Round a float64 node half to even (NumPy's ``rint``, OpenCV's ``cvRound``)."""
    m = env.math
    up = m.floor(y + _const64(0.5, env))
    tie = _f64(up - y == _const64(0.5, env), env)
    odd = up - _const64(2.0, env) * m.floor(up * _const64(0.5, env))
    return up - tie * odd


def _cast_back(y: Any, dtype: np.dtype, env: Any) -> Any:
    """A float64 node back to the image's dtype as the CPU kernels' ``_cast_back`` does: bool is
    ``> 0.5``; integers round half to even and saturate; floats are cast."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return y > _const64(0.5, env)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        y = _rint(y, env)
        if dtype.itemsize <= 2:  # wider types: DALI's cast saturates on its own
            y = env.math.clamp(y, _const64(float(info.min), env), _const64(float(info.max), env))
    return env.fn.cast(y, dtype=dali_type(dtype, env.types), device=env.device)


def _select(on: Any, yes: Any, no: Any, env: Any) -> Any:
    """``yes`` where the per-sample flag ``on`` is 1, else ``no`` (float64 nodes; exact for finite values)."""
    flag = _f64(on, env)
    return flag * yes + (_const64(1.0, env) - flag) * no


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


def _build_invert(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    x64 = _f64(node, env)
    y = _invert(x64, env)
    if op.name == "RandomInvert":
        y = _select(_arg(args, "on", env), y, x64, env)
    return _cast_back(y, env.kind_in.dtype, env)


@_register("Invert", "RandomInvert", args=ON_ARGS, build=_build_invert)
def _plan_invert(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import applies

    _image(op.name, s, numeric=True)
    on = applies(ctx.rng, op.prob) if op.name == "RandomInvert" else True
    return {"on": np.array(float(on), np.float32)}, Sample(s.shape, s.kind)


def _build_posterize(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    return node & _arg(args, "mask", env)


def _posterize_mask(bits: int) -> np.ndarray:
    return np.array((0xFF << (8 - bits)) & 0xFF, np.uint8)


@_register("Posterize", "RandomPosterize", args={"mask": np.uint8}, build=_build_posterize)
def _plan_posterize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import posterize_bits

    _uint8_image(op.name, s)
    bits = posterize_bits(ctx.rng, *op.bits) if op.name == "RandomPosterize" else op.bits
    return {"mask": _posterize_mask(bits)}, Sample(s.shape, s.kind)


SOLARIZE_ARGS = {"low": np.float64, "high": np.float64, "single": np.float64}


def _build_solarize(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    x64 = _f64(node, env)
    at_least = _f64(x64 >= _arg(args, "low", env), env)
    at_most = _f64(x64 <= _arg(args, "high", env), env)
    # One threshold (min == max) inverts everything from it up, as the CPU kernel does.
    inside = at_least * env.math.max(at_most, _arg(args, "single", env))
    return _cast_back(_select(inside, _invert(x64, env), x64, env), env.kind_in.dtype, env)


@_register("Solarize", "RandomSolarize", args=SOLARIZE_ARGS, build=_build_solarize)
def _plan_solarize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import solarize_range

    _image(op.name, s, numeric=True)
    low, high = solarize_range(ctx.rng, *op.threshold) if op.name == "RandomSolarize" else op.threshold
    args = {"low": np.array(low, np.float64), "high": np.array(high, np.float64),
            "single": np.array(float(low == high), np.float64)}
    return args, Sample(s.shape, s.kind)


# -- AdjustBrightness, AdjustContrast, AdjustSaturation, RandomColor, AdjustHue

FACTOR_ARGS = {"factor": np.float32}


def _build_brightness(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    factor = _arg(args, "factor", env)
    dtype = env.kind_in.dtype
    if dtype == np.uint8:
        # uint8: the float32 product, as OpenCV's convertTo computes it.
        return _cast_back(_f64(_f32(node, env) * factor, env), dtype, env)
    return _cast_back(_f64(node, env) * _f64(factor, env), dtype, env)


@_register("AdjustBrightness", args=FACTOR_ARGS, build=_build_brightness)
def _plan_brightness(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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


def _build_contrast(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    factor, one_minus = _blend_weights(args, env)
    gray = env.fn.color_space_conversion(node, image_type=env.types.RGB, output_type=env.types.GRAY,
                                         device=env.device)
    # cv2.mean of the uint8 grey image: the exact sum times 1 / count in double, rounded half to even;
    # the flat image holds it as uint8.
    total = _f64(env.fn.reductions.sum(gray, dtype=env.types.UINT64, device=env.device), env)
    mean = env.math.min(_rint(total * _arg(args, "inv_pixels", env), env), _const64(255.0, env))
    return _add_weighted(mean, one_minus, node, factor, env)


def _build_saturation(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    factor, one_minus = _blend_weights(args, env)
    return _add_weighted(_gray3(node, env), one_minus, node, factor, env)


def _build_color(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    # RandomColor blends the other way round: addWeighted(image, f, gray, 1 - f).
    factor, one_minus = _blend_weights(args, env)
    return _add_weighted(node, factor, _gray3(node, env), one_minus, env)


@_register("AdjustContrast", "AdjustSaturation", args={**BLEND_ARGS, "inv_pixels": np.float64},
           build=lambda op, node, args, env: (_build_contrast if op.name == "AdjustContrast" else _build_saturation)(
               op, node, args, env))
def _plan_contrast_saturation(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _rgb_uint8(op.name, s)
    factor = op.contrast_factor if op.name == "AdjustContrast" else op.saturation_factor
    return {**_blend_args(factor), "inv_pixels": np.array(1.0 / (h * w), np.float64)}, Sample(s.shape, s.kind)


# Within half a grey level of 1 (or 0), RandomColor returns the image (or its grey version): weights
# of exactly 1 and 0 (or 0 and 1) give the same through the blend.
_COLOR_EPS = 0.00195


@_register("RandomColor", args=BLEND_ARGS, build=_build_color)
def _plan_random_color(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import uniform_factor

    _rgb_uint8("RandomColor", s)
    factor = float(np.float32(uniform_factor(ctx.rng, *op.degrees)))
    if abs(factor - 1.0) < _COLOR_EPS:
        return {"factor": np.array(1.0, np.float32), "one_minus": np.array(0.0, np.float32)}, Sample(s.shape, s.kind)
    if abs(factor) < _COLOR_EPS:
        return {"factor": np.array(0.0, np.float32), "one_minus": np.array(1.0, np.float32)}, Sample(s.shape, s.kind)
    return {"factor": np.array(factor, np.float32), "one_minus": np.array(1.0 - factor, np.float32)}, Sample(
        s.shape, s.kind)


def _build_hue(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    rgb = _hue_shift(node, _arg(args, "shift", env), env)
    return _cast_back(_f64(rgb, env), np.dtype(np.uint8), env)


@_register("AdjustHue", args={"shift": np.float32}, build=_build_hue)
def _plan_hue(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    _rgb_uint8("AdjustHue", s)
    # adjust_hue's shift: C++'s truncating cast, wrapped as a uint8 add wraps; 0 still converts there and back.
    return {"shift": np.array(int(op.hue_factor * 255) % 256, np.float32)}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- PadToSize, Erase


@_register("PadToSize", args=SLICE_ARGS, supports=_pad_supported, build=_build_pad)
def _plan_pad_to_size(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.pad_erase import pad_to_size_padding

    h, w = _image("PadToSize", s)
    # The CPU kernel's plan: where the image sits in the target size (or the error saying it can't fit).
    left, top, right, bottom = pad_to_size_padding("PadToSize", h, w, square(op.size), op.offset)
    return _slice_args(-top, -left, h + top + bottom, w + left + right), _hwc(s, h + top + bottom, w + left + right)


def erase_fill(value: Any, dtype: np.dtype) -> list[float]:
    """Erase's (R, G, B) fill as the image's dtype holds it: clipped to an integer dtype's range, then
    converted as NumPy's ``astype`` converts (truncating toward zero).

    Examples:
        >>> import numpy as np
        >>> erase_fill((10.7, 300, 3), np.dtype(np.uint8)), erase_fill(3.5, np.dtype(np.float32))
        ([10.0, 255.0, 3.0], [3.5, 3.5, 3.5])
    """
    dtype = np.dtype(dtype)
    fill = np.asarray(value if isinstance(value, tuple) else (value,) * 3, np.float64)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        fill = np.clip(fill, info.min, info.max)
    return [float(v) for v in fill.astype(dtype)]


ERASE_ARGS = {"anchor": np.float32, "shape": np.float32}


def _build_erase(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    return env.fn.erase(node, anchor=args["anchor"], shape=args["shape"], axis_names="HW",
                        fill_value=erase_fill(op.value, env.kind_in.dtype), device=env.device)


@_register("Erase", args=ERASE_ARGS, build=_build_erase)
def _plan_erase(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    h, w = _image("Erase", s, numeric=True)
    if s.kind.gray2d or s.shape[2] != 3:
        raise ValueError(f"Erase: expected an image of shape <H, W, 3>. Found shape {_shown_shape(s)}")
    # The rectangle clipped to the image, as the CPU kernel's slicing clips it.
    top, left = min(op.top, h), min(op.left, w)
    height, width = min(op.height, h - top), min(op.width, w - left)
    return {"anchor": np.array([top, left], np.float32), "shape": np.array([height, width], np.float32)}, Sample(
        s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- RandomResize

# Each row's interpolation is drawn by the plan; DALI's resize takes the filter per row but antialiasing
# once per operator, so AREA (Resize's antialiased linear filter) is a second resize, and each row keeps
# the one its draw asked for.
# DALIInterpType's values (INTERP_NN, INTERP_LINEAR, INTERP_CUBIC): plans run without DALI for the torch
# driver, so they are spelled here (tests/ops/test_gpu_dali.py checks them against DALI's).
ROW_INTERP = {"NEAREST": 0, "BILINEAR": 1, "BICUBIC": 2, "AREA": 1}
RANDOM_RESIZE_ARGS = {**RESIZE_ARGS, "interp": np.int32, "area": np.float32, "drawn": np.int32}


def _build_random_resize(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    common = {"size": args["size"], "roi_start": args["roi_start"], "roi_end": args["roi_end"], "roi_relative": False,
              "device": env.device}
    interp = env.fn.cast(args["interp"], dtype=env.types.INTERP_TYPE, device="cpu")
    sharp = env.fn.resize(node, interp_type=interp, antialias=False, **common)
    area = env.fn.resize(node, interp_type=env.types.INTERP_LINEAR, antialias=True, **common)
    flag = _arg(args, "area", env)
    # uint8, int16, uint16 and float32 values are exact in float32: choosing by arithmetic changes none.
    chosen = flag * _f32(area, env) + (1.0 - flag) * _f32(sharp, env)
    return env.fn.cast(chosen, dtype=dali_type(env.kind_in.dtype, env.types), device=env.device)


@_register("RandomResize", args=RANDOM_RESIZE_ARGS, build=_build_random_resize)
def _plan_random_resize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.bbox import RANDOM_RESIZE_INTERPOLATIONS, random_interpolation

    h, w = _image("RandomResize", s, resample=True)
    out_h, out_w = resize_output_size(h, w, op.size)
    # The CPU kernel's draw: one interpolation per row from the row's RNG.
    name = random_interpolation(ctx.rng)
    args = resize_args(h, w, out_h, out_w, name)
    args["interp"] = np.array(ROW_INTERP[name], np.int32)
    args["area"] = np.array(float(name == "AREA"), np.float32)
    args["drawn"] = np.array(RANDOM_RESIZE_INTERPOLATIONS.index(name), np.int32)  # for the torch driver
    return args, _hwc(s, out_h, out_w)


# ---------------------------------------------------------------------------------------------- Equalize

# DALI's equalize builds OpenCV's equalizeHist table per image and channel (the CPU kernel calls
# equalizeHist): the same pixels.


def _build_equalize(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    equalized = env.fn.equalize(node, device=env.device)
    if op.name == "Equalize":
        return equalized
    return _cast_back(_select(_arg(args, "on", env), _f64(equalized, env), _f64(node, env), env), np.dtype(np.uint8), env)


@_register("Equalize", "RandomEqualize", args=ON_ARGS, build=_build_equalize)
def _plan_equalize(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import applies

    _uint8_image(op.name, s)
    on = applies(ctx.rng, op.prob) if op.name == "RandomEqualize" else True
    return {"on": np.array(float(on), np.float32)}, Sample(s.shape, s.kind)


# ---------------------------------------------------------------------------------------------- Perspective

# OpenCV's warpPerspective with the CPU kernel's homography (ops/plans/perspective.py), pixel centres at
# integer coordinates as OpenCV's; zeros outside. A warp has no area filter (AREA is bilinear, as in
# OpenCV's warp) and PILCUBIC is bicubic.
_PERSPECTIVE_INTERP = {"NEAREST": "INTERP_NN", "BILINEAR": "INTERP_LINEAR", "AREA": "INTERP_LINEAR",
                       "BICUBIC": "INTERP_CUBIC", "PILCUBIC": "INTERP_CUBIC"}


def _perspective_supported(op: Op) -> str | None:
    name = interpolation_name(op.interpolation)
    if name not in _PERSPECTIVE_INTERP:
        return f"{op.name}: interpolation {name} has no GPU equivalent"
    return None


def _build_perspective(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    interp = getattr(env.types, _PERSPECTIVE_INTERP[interpolation_name(op.interpolation)])
    return env.fn.experimental.warp_perspective(
        node, _arg(args, "matrix", env), size=args["size"], inverse_map=False, pixel_origin="center",
        interp_type=interp, border_mode="constant", fill_value=0.0, device=env.device,
    )


@_register("Perspective", "RandomPerspective", args={"matrix": np.float32, "size": np.float32},
           supports=_perspective_supported, build=_build_perspective)
def _plan_perspective(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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


# ---------------------------------------------------------------------------------------------- RandomLighting, AdjustGamma


def _build_lighting(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    shift = _arg(args, "shift", env)  # (R, G, B), float32, broadcast over the pixels
    dtype = env.kind_in.dtype
    if dtype == np.float32 or dtype.kind in "biu":
        # Integers: the float32 sum rounded and saturated, as the CPU kernel's _cast_back of it.
        return _cast_back(_f64(_f32(node, env) + shift, env), dtype, env)
    # float16 / float64: the sum in the image's precision (exact in float64, then rounded once).
    return _cast_back(_f64(node, env) + _f64(env.fn.cast(shift, dtype=dali_type(dtype, env.types), device=env.device),
                                             env), dtype, env)


@_register("RandomLighting", args={"shift": np.float32}, build=_build_lighting)
def _plan_lighting(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    from minddata.ops.plans.adjust import lighting_shift

    _image("RandomLighting", s, numeric=True)
    if s.kind.gray2d or s.shape[2] != 3:
        raise ValueError(f"RandomLighting: expected an RGB image of shape <H, W, 3>. Found shape {_shown_shape(s)}")
    return {"shift": lighting_shift(ctx.rng, op.alpha).astype(np.float32)}, Sample(s.shape, s.kind)


def gamma_table(op: Op) -> list[int]:
    """AdjustGamma's uint8 lookup table: the CPU kernel's own, looked up on the device.

    Examples:
        >>> from minddata import vision
        >>> table = gamma_table(vision.AdjustGamma(2.0))
        >>> len(table), table[0], table[128], table[255]
        (256, 0, 64, 255)
    """
    from minddata.ops.cpu.adjust import gamma_image

    return gamma_image(np.arange(256, dtype=np.uint8), op.gamma, op.gain).tolist()


def _build_gamma(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
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
def _plan_gamma(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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


def _build_grayscale(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
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
def _plan_grayscale(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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


# ---------------------------------------------------------------------------------------------- ToTensor


def _to_tensor_static(op: Op, kind: Kind) -> Kind:
    return replace(kind, layout="CHW", dtype=np.dtype(op.output_type), gray2d=False)


def _build_to_tensor(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
    out = np.dtype(op.output_type)
    chw = env.fn.transpose(node, perm=[2, 0, 1], output_layout="CHW", device=env.device)
    if out == np.float64 or out.kind != "f":
        scaled = _f64(chw, env) / _const64(255.0, env)  # float64 for integer outputs, as the CPU kernel
    else:
        # float32 in float32; float16 as NumPy divides it: the input cast to float16 first, the quotient
        # computed in float32 and rounded to float16.
        values = chw if out == np.float32 else env.fn.cast(chw, dtype=env.types.FLOAT16, device=env.device)
        scaled = _f32(values, env) / env.types.Constant(np.float32(255.0), device=env.const_device)
    if out.kind in "iu":
        # NumPy's astype truncates toward zero (the quotient is never negative for unsigned inputs).
        dmath = env.math
        positive = _f64(scaled >= _const64(0.0, env), env)
        scaled = dmath.floor(scaled) * positive + dmath.ceil(scaled) * (_const64(1.0, env) - positive)
    return env.fn.cast(scaled, dtype=dali_type(out, env.types), device=env.device)


def _to_tensor_supported(op: Op) -> str | None:
    dtype = np.dtype(op.output_type)
    return None if dtype.name in _DALI_TYPES else f"ToTensor: DALI has no {dtype} type"


@_register("ToTensor", args={}, static=_to_tensor_static, supports=_to_tensor_supported, build=_build_to_tensor)
def _plan_to_tensor(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
    if s.kind.layout == "encoded":
        _image("ToTensor", s)
    if s.kind.layout != "HWC":
        raise ValueError(f"ToTensor: on the GPU, expected an HWC image. Found a {s.kind.layout} tensor of shape {s.shape}")
    if s.kind.dtype.kind not in "biuf":
        raise TypeError(f"ToTensor: expected a numeric image. Found dtype {s.kind.dtype} (shape {_shown_shape(s)})")
    h, w, c = s.shape
    return {}, Sample((c, h, w), _to_tensor_static(op, s.kind))


# ---------------------------------------------------------------------------------------------- sharpness

# AdjustSharpness, RandomSharpness, RandomAdjustSharpness: blend the image with Pillow's SMOOTH filter of
# it, the border keeping the original pixels (ops/cpu/adjust.py's sharpness_image). The 3x3 sums are
# multiples of 1/13, never within float error of a rounding tie, so the smoothed uint8 image is
# OpenCV's; the blend is _add_weighted's.
SMOOTH_KERNEL = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / np.float32(13.0)
SHARPNESS_ARGS = {**BLEND_ARGS, "smooth": np.float32, "box": np.float32}
SHARPNESS_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int16, np.uint16, np.float32))


def _build_sharpness(op: Op, node: Any, args: dict[str, Any], env: Any) -> Any:
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
def _plan_sharpness(op: Op, ctx: KernelContext, s: Sample) -> tuple[Args, Sample]:
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
