"""CPU kernels of the general transforms: TypeCast (and its image alias ToType), Compose, OneHot, Fill,
Duplicate, Concatenate, RandomApply, RandomChoice, RandomOrder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp, Op
from minddata.ops.registry import declare_op, get_kernel, register_kernel

__all__ = ["child_position"]

_MASK64 = 0xFFFFFFFFFFFFFFFF


declare_op("TypeCast", cost_ms_per_mp=0.5)
declare_op("ToType", cost_ms_per_mp=0.5)
@register_kernel("TypeCast", "CPU")
@register_kernel("ToType", "CPU")
def type_cast(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if arr.dtype.kind in "US" and np.dtype(op.data_type).kind not in "US":
        raise ValueError(
            f"{op.name}: cannot cast an array of dtype {arr.dtype} (shape {arr.shape}) to {op.data_type}: strings "
            "are not parsed as numbers (MindSpore refuses this cast too). Parse them in a Python function, "
            f"e.g. .map(lambda s: np.{np.dtype(op.data_type).name}(s), input_columns=...)."
        )
    try:
        # astype truncates float -> int toward zero, as MindSpore's C++ cast does.
        return arr.astype(op.data_type, copy=False)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{op.name}: cannot cast an array of dtype {arr.dtype} (shape {arr.shape}) to {op.data_type}: {e}"
        ) from None


def _run_chain(
    op: KernelOp, ctx: KernelContext, order: Sequence[int], position: Callable[[int], int], args: tuple[Any, ...]
) -> tuple[Any, ...]:
    """Run ``op.transforms[i]`` for ``i`` in ``order``, each op with a context at ``position(i)``."""
    for i in order:
        t = op.transforms[i]
        if isinstance(t, Op):
            sub = KernelContext(ctx.seed, ctx.pass_index, ctx.row_index, position(i), ctx.options)
            if t.num_inputs >= 0 and len(args) != t.num_inputs:
                raise ValueError(
                    f"{op.name}: transforms[{i}] ({t.name}) expects {t.num_inputs} input(s); "
                    f"the previous step gave {len(args)}"
                )
            try:
                out = get_kernel(t.name, "CPU")(t, sub, *args)
            except (ValueError, TypeError) as e:
                raise _named(op, i, t.name, e) from e
            # A kernel of a multi-output op returns a sequence (the engine's protocol), maybe a list.
            out = tuple(out) if t.num_outputs != 1 and isinstance(out, (tuple, list)) else out
        else:
            try:
                out = t(*args)
            except (ValueError, TypeError) as e:
                raise _named(op, i, getattr(t, "__name__", type(t).__name__), e) from e
        args = out if isinstance(out, tuple) else (out,)
    return args


def _named(op: KernelOp, i: int, inner: str, error: Exception) -> Exception:
    """The inner error, same type, prefixed with the holder: the engine reports the holder's name,
    and a user reading "Resize: ..." under "op RandomChoice failed" should see where Resize sat."""
    message = f"{op.name}: transforms[{i}] ({inner}) failed: {error}"
    try:
        return type(error)(message)
    except Exception:  # noqa: BLE001 - exception types whose constructor wants more than a message
        return (TypeError if isinstance(error, TypeError) else ValueError)(message)


def _result(op: KernelOp, args: tuple[Any, ...]) -> Any:
    # The engine's protocol: num_outputs == 1 → the output itself; otherwise a sequence of outputs.
    return args[0] if op.num_outputs == 1 and len(args) == 1 else args


@register_kernel("Compose", "CPU")
def compose(op: KernelOp, ctx: KernelContext, *inputs: Any) -> Any:
    # Element i gets its own stream, positioned as if the Compose had been flattened in place.
    base = ctx.op_position
    return _result(op, _run_chain(op, ctx, range(len(op.transforms)), lambda i: base + i, inputs))


def child_position(position: int, index: int) -> int:
    """The op position of element ``index`` inside the op at ``position`` (RandomApply/Choice/Order).

    A 64-bit mix (SplitMix64's finaliser) of the two: deterministic, distinct for every element, and far
    from the small consecutive positions the engine gives top-level ops, so an inner op never shares a
    random stream with its holder or with the next op of the map.
    """
    z = (position * 0x9E3779B97F4A7C15 + (index + 1) * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _children(ctx: KernelContext) -> Callable[[int], int]:
    base = ctx.op_position
    return lambda i: child_position(base, i)


@register_kernel("RandomApply", "CPU")
def random_apply(op: KernelOp, ctx: KernelContext, *inputs: Any) -> Any:
    if ctx.rng.random() >= op.prob:
        if op.num_outputs == 1 and len(inputs) != 1:
            raise ValueError(
                f"RandomApply: got {len(inputs)} inputs, which pass through unchanged when the transforms are "
                "not applied, but the transforms give 1 output"
            )
        return _result(op, tuple(inputs))
    return _result(op, _run_chain(op, ctx, range(len(op.transforms)), _children(ctx), inputs))


@register_kernel("RandomChoice", "CPU")
def random_choice(op: KernelOp, ctx: KernelContext, *inputs: Any) -> Any:
    i = int(ctx.rng.integers(len(op.transforms)))
    return _result(op, _run_chain(op, ctx, [i], _children(ctx), inputs))


@register_kernel("RandomOrder", "CPU")
def random_order(op: KernelOp, ctx: KernelContext, *inputs: Any) -> Any:
    order = ctx.rng.permutation(len(op.transforms)).tolist()
    return _result(op, _run_chain(op, ctx, order, _children(ctx), inputs))


# ---------------------------------------------------------------------------------------------- tensors


@register_kernel("OneHot", "CPU")
def one_hot(op: KernelOp, ctx: KernelContext, labels: Any) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"OneHot: expected integer labels. Found dtype {arr.dtype} (shape {arr.shape})")
    n = op.num_classes
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= n):
        bad = int(arr.min()) if int(arr.min()) < 0 else int(arr.max())
        raise ValueError(f"OneHot: labels must be in [0, {n}) for num_classes={n}. Found: {bad}")
    # Smoothed vectors are float64, as MindSpore computes and returns them.
    out_dtype = np.float64 if op.smoothing_rate > 0 else arr.dtype
    out = np.zeros((*arr.shape, n), dtype=out_dtype)
    np.put_along_axis(out, arr[..., None].astype(np.intp), 1, axis=-1)
    if op.smoothing_rate > 0:
        s = op.smoothing_rate
        out *= 1.0 - s
        out += s / n
    return out


def _fill_scalar(op_name: str, dtype: np.dtype, value: Any) -> Any:
    kind = dtype.kind
    if kind in "biufc":
        if isinstance(value, (str, bytes)):
            raise TypeError(
                f"{op_name}: cannot fill a {dtype} tensor with {value!r} ({type(value).__name__})"
            )
        if kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= int(value) <= info.max:
                raise ValueError(
                    f"{op_name}: fill_value {value!r} is out of range for dtype {dtype} [{info.min}, {info.max}]"
                )
        return np.array(value).astype(dtype)
    if kind == "U" and isinstance(value, str):
        return np.array(value)
    if kind == "S" and isinstance(value, bytes):
        return np.array(value)
    raise TypeError(
        f"{op_name}: cannot fill a tensor of dtype {dtype} with {value!r} ({type(value).__name__}); "
        "numeric tensors take numbers, str tensors str and bytes tensors bytes"
    )


@register_kernel("Fill", "CPU")
def fill(op: KernelOp, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    value = _fill_scalar("Fill", arr.dtype, op.fill_value)
    return np.full(arr.shape, value, dtype=value.dtype)


@register_kernel("Duplicate", "CPU")
def duplicate(op: KernelOp, ctx: KernelContext, data: Any) -> tuple[Any, np.ndarray]:
    arr = np.asarray(data)
    # Two independent arrays: an in-place op on one column must not show through the other.
    return arr, arr.copy()


def _as_input_dtype(name: str, extra: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind in "US" or extra.dtype.kind in "US":
        if extra.dtype.kind != dtype.kind:
            raise TypeError(
                f"Concatenate: cannot join {name} of dtype {extra.dtype} to a tensor of dtype {dtype}"
            )
        return extra
    if extra.dtype.kind not in "biufc" or dtype.kind not in "biufc":
        raise TypeError(
            f"Concatenate: cannot join {name} of dtype {extra.dtype} to a tensor of dtype {dtype}"
        )
    cast = extra.astype(dtype)
    if not np.array_equal(cast, extra):
        raise ValueError(
            f"Concatenate: {name} {extra.tolist()!r} does not fit the input's dtype {dtype} exactly; "
            "give it values of that dtype"
        )
    return cast


@register_kernel("Concatenate", "CPU")
def concatenate(op: KernelOp, ctx: KernelContext, *data: Any) -> np.ndarray:
    if not data:
        raise ValueError("Concatenate: expected at least 1 input column. Found: 0")
    arr = np.asarray(data[0])
    if arr.ndim == 0:
        raise ValueError("Concatenate: expected a tensor of at least 1 dimension. Found a scalar (shape ())")
    if not -arr.ndim <= op.axis < arr.ndim:
        raise ValueError(f"Concatenate: `axis` {op.axis} is out of range for an input of shape {arr.shape}")
    if arr.dtype.kind in "OV":
        raise TypeError(f"Concatenate: expected a numeric or string tensor. Found dtype {arr.dtype}")
    axis = op.axis % arr.ndim
    # MindSpore's order: prepend, every input column in input_columns order, append.
    named = [("prepend", op.prepend), ("input", arr)]
    named += [(f"input {k}", np.asarray(d)) for k, d in enumerate(data[1:], start=1)]
    named.append(("append", op.append))
    parts = []
    for name, extra in named:
        if extra is None:
            continue
        if name == "input":
            parts.append(arr)
            continue
        other = [d for k, d in enumerate(arr.shape) if k != axis]
        if extra.ndim != arr.ndim or [d for k, d in enumerate(extra.shape) if k != axis] != other:
            raise ValueError(
                f"Concatenate: {name} of shape {extra.shape} must match the input of shape {arr.shape} on every "
                f"axis but axis {op.axis}"
            )
        parts.append(_as_input_dtype(name, extra, arr.dtype))
    return np.concatenate(parts, axis=axis)
