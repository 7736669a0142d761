"""CPU kernels of the tensor transforms Mask, PadEnd, Slice and Unique."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.registry import register_kernel

__all__: list[str] = []

# Relational's values, in order: EQ, NE, GT, GE, LT, LE.
_COMPARE = (operator.eq, operator.ne, operator.gt, operator.ge, operator.lt, operator.le)


def _constant_as(op_name: str, arg: str, value: Any, dtype: np.dtype) -> np.ndarray:
    """``value`` as a 0-d array of ``dtype``, as MindSpore casts the constant to the input's type."""
    if dtype.kind in "US":
        if dtype.kind == "U" and isinstance(value, str):
            return np.array(value)
        if dtype.kind == "S" and isinstance(value, bytes):
            return np.array(value)
        raise TypeError(
            f"{op_name}: a {dtype} tensor takes a {'str' if dtype.kind == 'U' else 'bytes'} `{arg}`. "
            f"Found: {value!r} ({type(value).__name__})"
        )
    if dtype.kind not in "biuf":
        raise TypeError(f"{op_name}: expected a numeric, bool or string tensor. Found dtype {dtype}")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{op_name}: a {dtype} tensor takes a number as `{arg}`. Found: {value!r}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise ValueError(
                f"{op_name}: `{arg}` {value!r} is out of range for the input's dtype {dtype} [{info.min}, {info.max}]"
            )
    return np.array(value).astype(dtype)


@register_kernel("Mask", "CPU")
def mask(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    constant = _constant_as("Mask", "constant", op.constant, arr.dtype)
    return _COMPARE[int(op.operator)](arr, constant).astype(op.dtype)


@register_kernel("PadEnd", "CPU")
def pad_end(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if arr.ndim != len(op.pad_shape):
        raise ValueError(
            f"PadEnd: `pad_shape` {op.pad_shape} has {len(op.pad_shape)} dimension(s); the input has {arr.ndim} "
            f"(shape {arr.shape})"
        )
    target = tuple(d if p is None else p for d, p in zip(arr.shape, op.pad_shape))
    if op.pad_value is None:
        fill = np.zeros((), arr.dtype)  # 0, False or "" (MindSpore's defaults)
    else:
        fill = _constant_as("PadEnd", "pad_value", op.pad_value, arr.dtype)
    dtype = np.result_type(arr.dtype, fill.dtype) if arr.dtype.kind in "US" else arr.dtype
    out = np.full(target, fill, dtype=dtype)
    kept = tuple(slice(0, min(d, t)) for d, t in zip(arr.shape, target))
    out[kept] = arr[kept]
    return out


def _index(op_name: str, k: int, option: Any, size: int) -> Any:
    """One Slice argument as a NumPy index of a dimension of ``size`` that keeps the dimension."""
    if option is None or option is Ellipsis:
        return slice(None)
    if isinstance(option, slice):
        return option
    indices = [option] if isinstance(option, int) else option
    for i in indices:
        if not -size <= i < size:
            raise ValueError(
                f"Slice: index {i} of `slices[{k}]` is out of range for dimension {k} of size {size}"
            )
    return np.asarray(indices, dtype=np.intp)


@register_kernel("Slice", "CPU")
def slice_tensor(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if len(op.slices) > arr.ndim:
        raise ValueError(
            f"Slice: {len(op.slices)} slice argument(s) for an input of {arr.ndim} dimension(s) (shape {arr.shape})"
        )
    out = arr
    # One axis at a time: lists on two axes select their outer product, not NumPy's paired indices.
    for k, option in enumerate(op.slices):
        index = _index("Slice", k, option, arr.shape[k])
        where = (slice(None),) * k + (index,)
        out = out[where]
    return np.ascontiguousarray(out)


@register_kernel("Unique", "CPU")
def unique(op: KernelOp, ctx: KernelContext, data: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arr = np.asarray(data)
    if arr.ndim == 0:
        raise ValueError(f"Unique: expected an input of at least one dimension. Found shape {arr.shape}")
    arr = arr.reshape(-1)  # as MindSpore: any rank, read flattened
    values, first, inverse, counts = np.unique(
        arr, return_index=True, return_inverse=True, return_counts=True
    )
    # np.unique sorts; MindSpore lists values in order of first appearance.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[order], rank[inverse.reshape(-1)].astype(np.int32), counts[order].astype(np.int32)
