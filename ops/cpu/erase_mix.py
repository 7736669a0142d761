"""CPU kernels of NormalizePad, RandomErasing, CutOut, MixUpBatch and CutMixBatch.

Random draws come only from ``ctx.rng``, in MindSpore's order where MindSpore defines one. Kernels read
the op's attributes and never import ``minddata.vision``; enums arrive as members, read by ``name``.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.cpu.image import _image
from minddata.ops.registry import register_kernel

__all__ = ["cutmix_box"]


def _layout(img: np.ndarray, is_hwc: bool) -> tuple[int, int, int]:
    """(channels, height, width); a 2-D image is one channel in either layout."""
    if img.ndim == 2:
        return 1, img.shape[0], img.shape[1]
    if is_hwc:
        return img.shape[2], img.shape[0], img.shape[1]
    return img.shape[0], img.shape[1], img.shape[2]


def _region(img: np.ndarray, is_hwc: bool, top: int, bottom: int, left: int, right: int) -> tuple[slice, ...]:
    rows, cols = slice(top, bottom), slice(left, right)
    if img.ndim == 2 or is_hwc:
        return (rows, cols)
    return (slice(None), rows, cols)


def _to_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Fill values in ``dtype``: integers clipped to the range, then truncated as astype does."""
    if dtype == np.bool_:
        return values != 0
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(values, info.min, info.max).astype(dtype)
    return values.astype(dtype)


# ---------------------------------------------------------------------------------------------- NormalizePad


@register_kernel("NormalizePad", "CPU")
def normalize_pad(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("NormalizePad", image, numeric=True)
    layout = "HWC" if op.is_hwc else "CHW"
    if img.ndim != 3:
        raise ValueError(
            f"NormalizePad: expected a 3-D {layout} image (it appends a channel). Found shape {img.shape}; "
            "give a grayscale image a channel axis first"
        )
    n = len(op.mean)
    channels = img.shape[2] if op.is_hwc else img.shape[0]
    if n != 1 and channels != n:
        raise ValueError(
            f"NormalizePad: expected an {layout} image with {n} channels matching mean/std of length {n}. "
            f"Found shape {img.shape}"
        )
    shape = (-1,) if op.is_hwc else (-1, 1, 1)
    mean = np.asarray(op.mean, np.float32).reshape(shape)
    std = np.asarray(op.std, np.float32).reshape(shape)
    normalized = (img.astype(np.float32) - mean) / std
    if op.is_hwc:
        out = np.zeros((img.shape[0], img.shape[1], channels + 1), dtype=op.dtype)
        out[..., :channels] = normalized
    else:
        out = np.zeros((channels + 1, img.shape[1], img.shape[2]), dtype=op.dtype)
        out[:channels] = normalized
    return out


# ---------------------------------------------------------------------------------------------- RandomErasing


def _erase_fill(op: KernelOp, rng: np.random.Generator, channels: int, eh: int, ew: int) -> np.ndarray:
    """Fill values shaped (C, eh, ew) or broadcastable to it."""
    if op.value == "random":
        # Drawn channel-first, as MindSpore's CHW op draws them, so both layouts get the same pixels.
        return rng.standard_normal((channels, eh, ew))
    if isinstance(op.value, tuple):
        return np.asarray(op.value, np.float64).reshape(3, 1, 1)
    return np.full((1, 1, 1), op.value, np.float64)


@register_kernel("RandomErasing", "CPU")
def random_erasing(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("RandomErasing", image, numeric=True)
    channels, h, w = _layout(img, op.is_hwc)
    # Checked before drawing, so that a bad input fails on every row rather than on some.
    if isinstance(op.value, tuple) and channels != 3:
        layout = "HWC" if op.is_hwc else "CHW"
        raise ValueError(
            f"RandomErasing: `value` has 3 entries (R, G, B) but the {layout} image has {channels} channel(s). "
            f"Found shape {img.shape}"
        )
    rng = ctx.rng
    if rng.random() >= op.prob:
        return img
    area = h * w
    for _ in range(op.max_attempts):
        erase_area = rng.uniform(op.scale[0], op.scale[1]) * area
        aspect = rng.uniform(op.ratio[0], op.ratio[1])
        # Python's round (half to even), as MindSpore's Python implementation rounds.
        ew = int(round(math.sqrt(erase_area * aspect)))
        eh = int(round(ew / aspect))
        if eh < h and ew < w:
            top = int(rng.integers(0, h - eh, endpoint=True))
            left = int(rng.integers(0, w - ew, endpoint=True))
            fill = _to_dtype(
                np.broadcast_to(_erase_fill(op, rng, channels, eh, ew), (channels, eh, ew)), img.dtype
            )
            if img.ndim == 2:
                fill = fill[0]
            elif op.is_hwc:
                fill = fill.transpose(1, 2, 0)
            out = img if op.inplace and img.flags.writeable else img.copy()
            out[_region(img, op.is_hwc, top, top + eh, left, left + ew)] = fill
            return out
    return img


# ---------------------------------------------------------------------------------------------- CutOut


@register_kernel("CutOut", "CPU")
def cut_out(op: KernelOp, ctx: KernelContext, image: Any) -> np.ndarray:
    img = _image("CutOut", image, numeric=True)
    _, h, w = _layout(img, op.is_hwc)
    out = img.copy()
    rng = ctx.rng
    size = op.length
    for _ in range(op.num_patches):
        # MindSpore's unbounded draw: corners in [-length, H] x [-length, W], boxes clipped to the image.
        top = int(rng.integers(0, h + size, endpoint=True)) - size
        left = int(rng.integers(0, w + size, endpoint=True)) - size
        region = _region(img, op.is_hwc, max(top, 0), min(top + size, h), max(left, 0), min(left + size, w))
        out[region] = 0
    return out


# ---------------------------------------------------------------------------------------------- batch mixing


def _batch(op_name: str, images: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    imgs = np.asarray(images)
    labs = np.asarray(labels)
    if imgs.ndim != 4:
        raise ValueError(
            f"{op_name}: expected a batch of images of shape <N, H, W, C> or <N, C, H, W>. Found shape "
            f"{imgs.shape}. Batch the rows (Dataset.batch) before this op"
        )
    if labs.ndim not in (2, 3):
        raise ValueError(
            f"{op_name}: expected one-hot labels of shape <N, num_classes> or <N, L, num_classes>. "
            f"Found shape {labs.shape}. Use transforms.OneHot before batching"
        )
    if imgs.shape[0] != labs.shape[0]:
        raise ValueError(
            f"{op_name}: images and labels must have the same batch size. Found {imgs.shape} and {labs.shape}"
        )
    for what, arr in (("images", imgs), ("labels", labs)):
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"{op_name}: expected numeric {what}. Found dtype {arr.dtype} (shape {arr.shape})"
            )
    return imgs, labs


def _cast_images(mixed: np.ndarray, dtype: np.dtype) -> np.ndarray:
    # Integers round and saturate, as OpenCV's arithmetic does in MindSpore's kernel.
    if dtype == np.bool_:
        return mixed >= 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(mixed), info.min, info.max).astype(dtype)
    return mixed.astype(dtype)


@register_kernel("MixUpBatch", "CPU")
def mix_up_batch(op: KernelOp, ctx: KernelContext, images: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    imgs, labs = _batch("MixUpBatch", images, labels)
    rng = ctx.rng
    lam = float(rng.beta(op.alpha, op.alpha))
    perm = rng.permutation(imgs.shape[0])
    out_labels = (labs.astype(np.float64) * lam + labs[perm].astype(np.float64) * (1.0 - lam)).astype(
        np.float32
    )
    return _mix(imgs, imgs[perm], lam), out_labels


_CV_ADD_WEIGHTED = frozenset(
    np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float32, np.float64)
)


def _mix(a: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    """``lam * a + (1 - lam) * b`` in ``a``'s dtype, integers rounded and saturated."""
    if a.dtype in _CV_ADD_WEIGHTED and a.size and a.shape[0] * a.shape[1] < 2**31:
        # OpenCV's addWeighted is MindSpore's own arithmetic here, and several times faster than
        # NumPy's temporaries on large batches. It takes 2-D matrices: fold N*H rows, W*C columns.
        flat = (a.shape[0] * a.shape[1], -1)
        out = cv2.addWeighted(np.ascontiguousarray(a).reshape(flat), lam, b.reshape(flat), 1.0 - lam, 0.0)
        return out.reshape(a.shape)
    mixed = a.astype(np.float64) * lam + b.astype(np.float64) * (1.0 - lam)
    return _cast_images(mixed, a.dtype)


def cutmix_box(rng: np.random.Generator, height: int, width: int, lam: float) -> tuple[int, int, int, int]:
    """(top, left, box_height, box_width) as MindSpore's CutMixBatch draws it (sides scale by 1 - lam)."""
    cut_w = int(width * (1.0 - lam))
    cut_h = int(height * (1.0 - lam))
    cx = int(rng.integers(0, width, endpoint=True))
    cy = int(rng.integers(0, height, endpoint=True))
    x1 = min(max(cx - cut_w // 2, 0), width - 1)
    y1 = min(max(cy - cut_h // 2, 0), height - 1)
    x2 = min(max(cx + cut_w // 2, 0), width - 1)
    y2 = min(max(cy + cut_h // 2, 0), height - 1)
    # At least one pixel; MindSpore also caps at W-1/H-1 (std::clamp, undefined for a 1-pixel side).
    box_w = min(max(x2 - x1, 1), max(width - 1, 1))
    box_h = min(max(y2 - y1, 1), max(height - 1, 1))
    return y1, x1, box_h, box_w


@register_kernel("CutMixBatch", "CPU")
def cut_mix_batch(op: KernelOp, ctx: KernelContext, images: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    imgs, labs = _batch("CutMixBatch", images, labels)
    nhwc = op.image_batch_format.name == "NHWC"
    height, width = (imgs.shape[1], imgs.shape[2]) if nhwc else (imgs.shape[2], imgs.shape[3])
    if height == 0 or width == 0:
        raise ValueError(
            f"CutMixBatch: expected images of non-zero height and width. Found shape {imgs.shape}"
        )
    rng = ctx.rng
    perm = rng.permutation(imgs.shape[0])
    out = imgs.copy()
    out_labels = labs.astype(np.float64)
    for i in range(imgs.shape[0]):
        lam = float(rng.beta(op.alpha, op.alpha))
        if rng.random() >= op.prob:
            continue
        top, left, bh, bw = cutmix_box(rng, height, width, lam)
        rows, cols = slice(top, top + bh), slice(left, left + bw)
        # The patch comes from the partner's original image, not one already mixed in this batch.
        if nhwc:
            out[i, rows, cols, :] = imgs[perm[i], rows, cols, :]
        else:
            out[i, :, rows, cols] = imgs[perm[i], :, rows, cols]
        keep = 1.0 - (bh * bw) / (height * width)
        out_labels[i] = keep * labs[i] + (1.0 - keep) * labs[perm[i]]
    return out, out_labels.astype(np.float32)
