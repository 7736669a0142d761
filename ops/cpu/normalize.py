"""CPU kernels of the ops that turn pixels into a model's input: Normalize (per row, and straight into
the batch buffer once the optimizer has moved it there, with the check it leaves behind in the map,
NormalizeInputCheck), Rescale and HWC2CHW.

``normalize_into`` is the arithmetic both paths share: ``(x - mean) / std`` in float32, through the
compiled one-pass kernel (``_pixels.pyx``) for uint8 images, so the two paths are bit-identical.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _as_array, _image
from minddata.ops.registry import declare_op, register_kernel

__all__ = ["check_normalize_input", "normalize_into"]


declare_op("Normalize", cost_ms_per_mp=1.2, float_output=True, fusion_partners=("HWC2CHW", "TypeCast", "ToType"))
@register_kernel("Normalize", "CPU")
def normalize(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("Normalize", image, numeric=True)
    layout = "HWC" if op.is_hwc else "CHW"
    n = len(op.mean)
    if img.ndim == 2:
        channels = 1
    else:
        channels = img.shape[2] if op.is_hwc else img.shape[0]
    if n != 1 and channels != n:
        raise ValueError(
            f"Normalize: expected an {layout} image with {n} channels matching mean/std of length {n}. "
            f"Found shape {img.shape}"
        )
    if op.is_hwc and img.dtype == np.uint8 and img.ndim == 3 and img.flags.c_contiguous:
        # The one-pass table kernel: same float32 arithmetic, bit-identical, several times faster.
        out = np.empty(img.shape, np.float32)
        normalize_into(img, np.asarray(op.mean, np.float32), np.asarray(op.std, np.float32), out, False)
        return out
    shape = (-1,) if op.is_hwc or img.ndim == 2 else (-1, 1, 1)
    mean = np.asarray(op.mean, np.float32).reshape(shape) if n > 1 else np.float32(op.mean[0])
    std = np.asarray(op.std, np.float32).reshape(shape) if n > 1 else np.float32(op.std[0])
    out = img.astype(np.float32)  # always a copy: the input is left untouched
    out -= mean
    out /= std
    return out


declare_op("HWC2CHW", cost_ms_per_mp=0.6)
@register_kernel("HWC2CHW", "CPU")
def hwc2chw(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("HWC2CHW", image)
    if img.ndim == 2:
        return img
    return np.ascontiguousarray(img.transpose(2, 0, 1))


declare_op("Rescale", cost_ms_per_mp=1.0, float_output=True)
@register_kernel("Rescale", "CPU")
def rescale(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _as_array("Rescale", image)
    if img.dtype.kind not in "biuf":
        raise TypeError(f"Rescale: expected a numeric array. Found dtype {img.dtype} (shape {img.shape})")
    out = img.astype(np.float32)
    out *= np.float32(op.rescale)
    out += np.float32(op.shift)
    return out


def check_normalize_input(normalize: KernelOp, image: Any) -> None:
    img = _image("Normalize", image, numeric=True)
    n = len(normalize.mean)
    channels = 1 if img.ndim == 2 else img.shape[2]
    if n != 1 and channels != n:
        raise ValueError(
            f"Normalize: expected an HWC image with {n} channels matching mean/std of length {n}. "
            f"Found shape {img.shape}"
        )


@register_kernel("NormalizeInputCheck", "CPU")
def normalize_input_check(op: KernelOp, ctx: KernelContext, image: Any) -> Any:
    check_normalize_input(op.normalize, image)
    return image


try:
    from minddata.ops.cpu._pixels import normalize_table as _normalize_table
    from minddata.ops.cpu._pixels import normalize_u8 as _normalize_u8
except ImportError:  # built without Cython: the NumPy path below does the same arithmetic
    _normalize_u8 = _normalize_table = None

_tables: dict[tuple, np.ndarray] = {}


def _table(mean: np.ndarray, std: np.ndarray, channels: int) -> np.ndarray:
    key = (mean.tobytes(), std.tobytes(), channels)
    table = _tables.get(key)
    if table is None:
        table = _tables[key] = _normalize_table(mean, std, channels)
    return table


def normalize_into(image: np.ndarray, mean: np.ndarray, std: np.ndarray, out: np.ndarray, chw: bool) -> None:
    """Normalize an HWC image straight into ``out`` (float32, CHW or HWC).

    The same float32 operations as the Normalize kernel (``(x - mean) / std``), so the result is
    bit-identical, without the full-size float temporaries of ``astype`` + transpose + stack. uint8
    images take a one-pass compiled kernel (reads each pixel once, writes each float once).
    """
    if image.ndim == 2:
        image = image[:, :, None]
    if (
        _normalize_u8 is not None
        and image.dtype == np.uint8
        and image.flags.c_contiguous
        and out.dtype == np.float32
        and out.flags.c_contiguous
    ):
        _normalize_u8(image, _table(mean, std, image.shape[2]), out, chw)
        return
    channels = image.shape[2]
    # Contiguous planes make the ufuncs below run at memory speed; cv2.split is the fastest way there.
    planes = (
        cv2.split(image)
        if image.dtype == np.uint8 and 1 < channels <= 4 and image.flags.c_contiguous
        else [image[:, :, c] for c in range(channels)]
    )
    for c, plane in enumerate(planes):
        m = mean[c] if len(mean) > 1 else mean[0]
        s = std[c] if len(std) > 1 else std[0]
        dst = out[c] if chw else out[:, :, c]
        np.subtract(plane, m, out=dst, dtype=np.float32)
        np.divide(dst, s, out=dst)
