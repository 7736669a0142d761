"""Op specs → GPU kernels, written once as translations: what the family modules share.

A run of GPU-placed ops becomes one segment: a DALI pipeline (:mod:`minddata.ops.gpu.segment`) or a
torch segment (:mod:`minddata.ops.gpu.torch_segment`). Each op has a :class:`Translation`, registered
by its family's module (``resize.py``, ``crop.py``, ``adjust.py``, ... named as the CPU kernels'
modules), with three parts:

* ``plan(op, ctx, sample)`` runs on the host, per row, before the batch goes to the device. It checks
  the row as the CPU kernel would (same errors, naming the op), computes the op's device-free plan
  (:mod:`minddata.ops.plans`: sizes, crop boxes, warp matrices, random parameters from the row's RNG)
  as the CPU kernel does, and works out the output's shape. What it returns is fed to DALI as per-sample
  arguments through ``external_source`` (and to the torch driver as they are), so a seeded pipeline
  crops and flips the same rows the same way on the CPU and on the GPU, and every output shape is
  known before the device runs.
* ``build(op, node, args, env)`` adds the DALI operators to the pipeline graph (once per pipeline).
* ``supports(op)`` says, before anything runs, whether the op's parameters have a DALI equivalent
  (e.g. ``Pad`` with ``padding_mode=EDGE`` does not); the placement pass turns a reason into an error
  at iterator creation, or keeps an ``"auto"`` op on the CPU.

The torch driver runs the same plans with PyTorch kernels, registered next to the translations with
:func:`torch_kernel` (and ``supports=`` where torch lacks an equivalent the translation has), so an
op's GPU kernels for both drivers, and the facts declared with them, sit in its family's module.

Registering a translation declares the op's GPU tolerance against the CPU kernel in the op facts
(:func:`minddata.ops.registry.op_facts`); each family module states its numerics (checked by
tests/ops/test_gpu_dali.py with DALI's CPU backend, which runs these same translations; measured with
DALI 2.4) and, where they are not exact or within a level, the tolerance it declares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.registry import declare_op

__all__ = [
    "Args", "Kind", "Sample", "Translation", "TRANSLATIONS", "TORCH_KERNELS", "TORCH_SUPPORTS", "dali_type",
    "torch_cast_back", "torch_kernel", "translation", "unsupported_reason",
]

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


# How far a GPU kernel may be from the CPU kernel (largest, mean |difference|) where its family states
# nothing closer or looser: exact arithmetic, and BILINEAR resampling within a level (OpenCV rounds its
# fixed-point weights). Measured on DALI's CPU backend; declared in the op facts (tests/ops/test_contract.py).
GPU_TOLERANCE = (1.0, 0.25)


def _register(
    *names: str, tolerance: tuple[float, float] = GPU_TOLERANCE, cuda_tolerance: tuple[float, float] | None = None,
    **kwargs: Any,
) -> Callable[[Callable], Callable]:
    """Decorator over a plan: the translation of ops ``names`` (``kwargs``: :class:`Translation`'s
    other fields), and each op's GPU tolerance against its CPU kernel in the op facts; ``cuda_tolerance``
    where a real GPU (DALI's ``cuda`` backend) is further off than DALI's CPU backend."""

    def wrap(plan: Callable) -> Callable:
        for name in names:
            TRANSLATIONS[name] = Translation(plan=plan, **kwargs)
            bounds = {"GPU": tolerance[0], "GPU mean": tolerance[1]}
            if cuda_tolerance is not None:
                bounds.update({"GPU:cuda": cuda_tolerance[0], "GPU:cuda mean": cuda_tolerance[1]})
            declare_op(name, tolerances=bounds)
        return plan

    return wrap


# ---------------------------------------------------------------------------------------------- torch kernels
# The torch driver (:mod:`minddata.ops.gpu.torch_segment`) runs the same plans; its kernels are
# registered by the family modules next to their translations. A kernel takes (op, HWC tensor, the
# row's planned args, torch) and returns a tensor; a decoder's kernel takes the decoded image (the
# segment decodes the batch) and does what follows the decode. torch comes in as an argument, so
# importing a family module does not import PyTorch, which is optional.

TorchKernel = Callable[[Op, Any, Args, Any], Any]
TORCH_KERNELS: dict[str, TorchKernel] = {}
# Parameters the torch driver cannot run though DALI can (an interpolation torch lacks): op -> why not.
TORCH_SUPPORTS: dict[str, Callable[[Op], str | None]] = {}


def torch_kernel(*names: str, supports: Callable[[Op], str | None] | None = None) -> Callable[[TorchKernel], TorchKernel]:
    """Decorator over a torch kernel: the torch driver's kernel of ops ``names``, each already
    registered with :func:`_register` (the driver runs the translation's plan); ``supports`` says where
    an op's parameters have no torch equivalent though its translation takes them."""

    def wrap(kernel: TorchKernel) -> TorchKernel:
        for name in names:
            if name not in TRANSLATIONS:
                raise LookupError(f"torch_kernel({name!r}): register the op's translation first; the torch "
                                  "driver runs its plan")
            TORCH_KERNELS[name] = kernel
            if supports is not None:
                TORCH_SUPPORTS[name] = supports
        return kernel

    return wrap


def torch_cast_back(y: Any, dtype: Any, torch: Any) -> Any:
    """A float tensor back to ``dtype`` as the CPU kernels' ``_cast_back`` does: bool is ``> 0.5``;
    integers round half to even (``torch.round``, as NumPy's ``rint``) and saturate; floats are cast."""
    if dtype == torch.bool:
        return y > 0.5
    if dtype.is_floating_point:
        return y.to(dtype)
    info = torch.iinfo(dtype)
    y = y.round()
    if y.dtype == torch.float32 and info.bits >= 32:  # float32 cannot hold int32's bounds exactly
        y = y.to(torch.float64)
    return y.clamp_(info.min, info.max).to(dtype)


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


# DALI's type names for the dtypes it holds.
_DALI_TYPES = {
    "bool": "BOOL", "uint8": "UINT8", "int8": "INT8", "uint16": "UINT16", "int16": "INT16",
    "uint32": "UINT32", "int32": "INT32", "uint64": "UINT64", "int64": "INT64",
    "float16": "FLOAT16", "float32": "FLOAT", "float64": "FLOAT64",
}


def dali_type(dtype: np.dtype, types: Any) -> Any:
    return getattr(types, _DALI_TYPES[np.dtype(dtype).name])



def _arg(args: dict[str, Any], name: str, env: Any) -> Any:
    # Per-sample scalars come from the host; arithmetic on the GPU wants its operands there too.
    node = args[name]
    return node.gpu() if env.device == "gpu" else node



# ---------------------------------------------------------------------------------------------- float64 arithmetic

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
