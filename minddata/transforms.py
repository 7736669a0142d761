"""General transforms, named as in ``mindspore.dataset.transforms``: :class:`TypeCast`, :class:`Compose`,
:class:`OneHot`, :class:`Fill`, :class:`Duplicate`, :class:`Concatenate`, :class:`Mask` (with
:class:`Relational`), :class:`PadEnd`, :class:`Slice`, :class:`Unique`, :class:`RandomApply`,
:class:`RandomChoice`, :class:`RandomOrder`, and the :func:`not_random` decorator.

MindSpore's ``Plugin`` (an op loaded from a MindSpore plugin shared library through its C++ plugin
ABI) has no counterpart: there is no such ABI here, and a Python callable in ``map`` does the same job.

Specs only; the CPU kernels live in ``minddata.ops.cpu``.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

from minddata._missing import module_getattr
from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec

__all__ = [
    "Compose",
    "Concatenate",
    "Duplicate",
    "Fill",
    "Mask",
    "OneHot",
    "PadEnd",
    "RandomApply",
    "RandomChoice",
    "RandomOrder",
    "Relational",
    "Slice",
    "TypeCast",
    "Unique",
    "not_random",
]


# ---------------------------------------------------------------------------------------------- spec helpers


def one_spec(op: str, inputs: tuple[TensorSpec, ...]) -> TensorSpec:
    """The single input spec of a one-input op (a clear error instead of an unpacking one)."""
    if len(inputs) != 1:
        raise ValueError(f"{op}: expected 1 input. Found: {len(inputs)}")
    return inputs[0]


def spec_dtype(spec: TensorSpec) -> np.dtype | None:
    return None if spec.dtype is None else np.dtype(spec.dtype)


def _same_dtype(a: Any, b: Any) -> bool:
    # np.dtype(None) is float64, so None must never reach np.dtype here.
    if a is None or b is None:
        return a is None and b is None
    return bool(np.dtype(a) == np.dtype(b))


def merge_specs(op: str, specs: Sequence[TensorSpec]) -> TensorSpec:
    """One spec covering every spec in ``specs``: sizes and dtype kept where all agree, else ``None``."""
    first = specs[0]
    for other in specs[1:]:
        if len(other.shape) != len(first.shape):
            raise ValueError(
                f"{op}: its possible outputs have different ranks ({tuple(first.shape)} and "
                f"{tuple(other.shape)}), so no one shape rule covers them"
            )
    shape = tuple(d if all(s.shape[k] == d for s in specs) else None for k, d in enumerate(first.shape))
    dtype = spec_dtype(first) if all(_same_dtype(s.dtype, first.dtype) for s in specs) else None
    return TensorSpec(shape, dtype)


def _as_specs(out: TensorSpec | tuple[TensorSpec, ...]) -> tuple[TensorSpec, ...]:
    return (out,) if isinstance(out, TensorSpec) else tuple(out)


def _chain_spec(
    op: str, transforms: Sequence[Any], order: Sequence[int], inputs: tuple[TensorSpec, ...]
) -> tuple[TensorSpec, ...]:
    specs = inputs
    for i in order:
        t = transforms[i]
        if not isinstance(t, Op):
            raise NotImplementedError(
                f"{op}: transforms[{i}] is a plain callable ({getattr(t, '__name__', type(t).__name__)}), "
                "whose output shape/dtype can't be known before it runs"
            )
        if t.num_inputs >= 0 and len(specs) != t.num_inputs:
            raise ValueError(
                f"{op}: transforms[{i}] ({t.name}) expects {t.num_inputs} input(s); the previous step gives "
                f"{len(specs)}"
            )
        specs = _as_specs(t.output_spec(*specs))
    return specs


def _merge_outputs(op: str, alternatives: Sequence[tuple[TensorSpec, ...]]) -> tuple[TensorSpec, ...]:
    counts = {len(a) for a in alternatives}
    if len(counts) != 1:
        raise ValueError(
            f"{op}: its possible outputs differ in number ({sorted(counts)}), so no rule covers them"
        )
    return tuple(merge_specs(op, [a[k] for a in alternatives]) for k in range(counts.pop()))


def _unwrap(op: Op, specs: tuple[TensorSpec, ...]) -> TensorSpec | tuple[TensorSpec, ...]:
    return specs[0] if op.num_outputs == 1 and len(specs) == 1 else specs


def _check_transforms(op: str, transforms: Any) -> list[Any]:
    if isinstance(transforms, (Op, str, bytes)) or not isinstance(transforms, Sequence):
        raise TypeError(
            f"{op}: `transforms` must be a list of ops or callables. "
            f"Found: {transforms!r} ({type(transforms).__name__})"
        )
    if len(transforms) == 0:
        raise ArgumentError(f"{op}: `transforms` must not be empty. Found: []")
    for i, t in enumerate(transforms):
        if not (isinstance(t, Op) or callable(t)):
            raise TypeError(
                f"{op}: `transforms[{i}]` must be an op or a callable. Found: {t!r} ({type(t).__name__})"
            )
    return list(transforms)


def _check_prob(op: str, prob: Any) -> float:
    if not isinstance(prob, Real) or isinstance(prob, bool):
        raise TypeError(f"{op}: `prob` must be a number. Found: {prob!r} ({type(prob).__name__})")
    prob = float(prob)
    if not 0.0 <= prob <= 1.0:  # NaN fails this too
        raise ArgumentError(f"{op}: `prob` must be in [0, 1]. Found: {prob}")
    return prob


def _to_dtype(op: str, data_type: Any) -> np.dtype:
    # np.dtype(None) is float64: a silent default would hide a missing argument.
    if data_type is None:
        raise TypeError(
            f"{op}: `data_type` must be a numpy dtype or a dtype name such as 'float32'. Found: None"
        )
    try:
        dtype = np.dtype(data_type)
    except (TypeError, ValueError):
        raise TypeError(
            f"{op}: `data_type` must be a numpy dtype or a dtype name such as 'float32'. "
            f"Found: {data_type!r} ({type(data_type).__name__})"
        ) from None
    if dtype.kind in "OV":
        raise ArgumentError(
            f"{op}: `data_type` must be a numeric, bool or string dtype; object and void dtypes are not "
            f"tensor types. Found: {dtype}"
        )
    return dtype


class TypeCast(Op):
    """Cast the input array to ``data_type``, as ``numpy.ndarray.astype`` does.

    Float to integer truncates toward zero, as MindSpore's C++ cast does. ``data_type`` is anything
    ``numpy.dtype`` accepts: ``np.float32``, ``"float32"``, ``np.dtype("int64")``.

    Args:
        data_type: the output dtype.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.TypeCast("int32")(np.array([1.7, -2.5]))
        array([ 1, -2], dtype=int32)
    """

    def __init__(self, data_type: Any) -> None:
        self.data_type = _to_dtype(self.name, data_type)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        return TensorSpec(tuple(data.shape), self.data_type)


class _ChainArity:
    """Arity of ops that run ``self.transforms`` in sequence: the first's inputs, the last's outputs."""

    transforms: list[Any]

    @property
    def num_inputs(self) -> int:
        first = self.transforms[0]
        return first.num_inputs if isinstance(first, Op) else -1

    @property
    def num_outputs(self) -> int:
        # The engine reads num_outputs != 1 as "the kernel returns a sequence of outputs", so a chain
        # ending in a one-output op must say 1, or its single array would be split along axis 0.
        last = self.transforms[-1]
        return last.num_outputs if isinstance(last, Op) else -1


class Compose(_ChainArity, Op):  # type: ignore[override]  # arity from the chain, where Op has class attributes
    """Apply ``transforms`` in order, as one op.

    Each element is an op spec or a plain callable. An element returning a tuple feeds the next one
    its items as separate inputs, as MindSpore's Compose does. ``num_inputs``/``num_outputs`` are the
    first/last element's when that is an op, else ``-1`` (any). Inside a map the engine flattens a
    Compose into its elements, so each random element draws from its own stream; eager calls and the
    CPU kernel give element ``i`` the op position ``ctx.op_position + i``, which matches that
    flattening when the Compose is the map's only op.

    Args:
        transforms: a non-empty list of op specs or callables.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms, vision
        >>> op = transforms.Compose([vision.HorizontalFlip(), transforms.TypeCast("float32")])
        >>> op(np.array([[1, 2, 3]], np.uint8))
        array([[3., 2., 1.]], dtype=float32)
    """

    def __init__(self, transforms: Sequence[Op | Callable[..., Any]]) -> None:
        self.transforms = _check_transforms("Compose", transforms)

    @property
    def random(self) -> bool:  # type: ignore[override]  # from its transforms, where Op has a class attribute
        # Plain callables are opaque to the engine: their randomness is not ours to control or seed.
        return any(isinstance(t, Op) and t.random for t in self.transforms)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        return _unwrap(self, _chain_spec(self.name, self.transforms, range(len(self.transforms)), inputs))

    def __call__(self, *inputs: Any) -> Any:
        result = super().__call__(*inputs)
        # The kernel returns a tuple whenever the output count is not known to be 1; eagerly, a
        # single output reads better unwrapped.
        return result[0] if type(result) is tuple and len(result) == 1 else result


# ---------------------------------------------------------------------------------------------- labels


class OneHot(Op):
    """Encode integer labels as one-hot vectors: an input of shape ``S`` gives ``S + (num_classes,)``.

    With ``smoothing_rate`` ``s > 0`` the vectors are smoothed as ``(1 - s) * one_hot + s / num_classes``
    and come out as ``float64``; with ``s == 0`` they keep the labels' integer dtype, as in MindSpore.
    Labels must lie in ``[0, num_classes)``; anything else is an error, not a silent wrap-around.
    Unlike MindSpore, which squeezes a 1-element label vector to a scalar first, every input shape is
    kept: ``(1,)`` gives ``(1, num_classes)``.

    Args:
        num_classes: the number of classes, at least 1.
        smoothing_rate: the label-smoothing amount, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.OneHot(4)(np.array([0, 2]))
        array([[1, 0, 0, 0],
               [0, 0, 1, 0]])
        >>> transforms.OneHot(4, smoothing_rate=0.2)(np.array(1))
        array([0.05, 0.85, 0.05, 0.05])
    """

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0) -> None:
        if not isinstance(num_classes, Integral) or isinstance(num_classes, bool):
            raise TypeError(
                f"OneHot: `num_classes` must be an int. Found: {num_classes!r} ({type(num_classes).__name__})"
            )
        if not 1 <= num_classes <= 2**31 - 1:
            raise ArgumentError(f"OneHot: `num_classes` must be in [1, 2147483647]. Found: {num_classes}")
        if not isinstance(smoothing_rate, Real) or isinstance(smoothing_rate, bool):
            raise TypeError(
                f"OneHot: `smoothing_rate` must be a number. Found: {smoothing_rate!r} "
                f"({type(smoothing_rate).__name__})"
            )
        if not 0.0 <= float(smoothing_rate) <= 1.0:
            raise ArgumentError(f"OneHot: `smoothing_rate` must be in [0, 1]. Found: {smoothing_rate}")
        self.num_classes = int(num_classes)
        self.smoothing_rate = float(smoothing_rate)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        labels = one_spec(self.name, inputs)
        dtype = spec_dtype(labels)
        if dtype is not None and dtype.kind not in "iu":
            raise TypeError(
                f"OneHot: expected integer labels. Found dtype {dtype} (shape {tuple(labels.shape)})"
            )
        out = np.dtype(np.float64) if self.smoothing_rate > 0 else dtype
        return TensorSpec((*labels.shape, self.num_classes), out)


# ---------------------------------------------------------------------------------------------- tensors


class Fill(Op):
    """Fill every element with ``fill_value``, keeping the input's shape and dtype.

    A numeric ``fill_value`` is converted to the input's dtype as ``numpy.ndarray.astype`` would (a float
    into an integer tensor truncates toward zero); a value outside that dtype's range is an error rather
    than a wrap-around. String tensors take a ``str`` (or, for ``bytes`` tensors, a ``bytes``) value.

    Args:
        fill_value: an int, float, bool, str or bytes.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.Fill(7)(np.zeros((2, 3), np.uint8))
        array([[7, 7, 7],
               [7, 7, 7]], dtype=uint8)
    """

    def __init__(self, fill_value: int | float | bool | str | bytes) -> None:
        if isinstance(fill_value, np.generic):
            fill_value = fill_value.item()
        if not isinstance(fill_value, (int, float, bool, str, bytes)):
            raise TypeError(
                f"Fill: `fill_value` must be an int, float, bool, str or bytes. "
                f"Found: {fill_value!r} ({type(fill_value).__name__})"
            )
        self.fill_value = fill_value

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        dtype = spec_dtype(data)
        if dtype is not None and dtype.kind in "US":
            # A string tensor's width follows the fill value (as MindSpore's variable-length strings do).
            return TensorSpec(tuple(data.shape), np.array(self.fill_value).dtype)
        return TensorSpec(tuple(data.shape), dtype)


class Duplicate(Op):
    """Output the input and a copy of it: one input column, two output columns.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> a, b = transforms.Duplicate()(np.array([1, 2]))
        >>> a, b
        (array([1, 2]), array([1, 2]))
        >>> b is a
        False
    """

    num_outputs = 2

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        data = one_spec(self.name, inputs)
        spec = TensorSpec(tuple(data.shape), spec_dtype(data))
        return spec, spec


def _check_extra(op: str, arg: str, value: Any) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.array(value)  # a copy: the spec must not change if the caller's array does
    if arr.dtype.kind in "OV":
        raise TypeError(f"{op}: `{arg}` must be a numeric or string array. Found dtype {arr.dtype}")
    if arr.ndim == 0:
        raise ArgumentError(f"{op}: `{arg}` must have at least 1 dimension. Found a scalar: {value!r}")
    return arr


class Concatenate(Op):
    """Concatenate ``prepend``, the input column(s) and ``append`` along ``axis``.

    With several ``input_columns`` (``map(Concatenate(), input_columns=["a", "b"], output_columns="ab")``)
    they are joined in that order, as in MindSpore. MindSpore takes 1-D tensors only; here any rank
    works, as long as every part matches the first input on every other axis. Numeric parts are
    converted to the first input's dtype and must fit it exactly; string tensors join with strings.

    Args:
        axis: the axis to concatenate along (negative counts from the end).
        prepend: an array put before the input, or ``None``.
        append: an array put after the input, or ``None``.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.Concatenate(0, prepend=np.array([0]), append=np.array([8, 9]))(np.array([1, 2]))
        array([0, 1, 2, 8, 9])
    """

    num_inputs = -1  # one or more columns

    def __init__(self, axis: int = 0, prepend: Any = None, append: Any = None) -> None:
        if not isinstance(axis, Integral) or isinstance(axis, bool):
            raise TypeError(f"Concatenate: `axis` must be an int. Found: {axis!r} ({type(axis).__name__})")
        self.axis = int(axis)
        self.prepend = _check_extra(self.name, "prepend", prepend)
        self.append = _check_extra(self.name, "append", append)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        if not inputs:
            raise ValueError("Concatenate: expected at least 1 input. Found: 0")
        data = merge_columns(self.name, self.axis, inputs)
        shape = list(data.shape)
        if not shape:
            raise ValueError(
                "Concatenate: expected a tensor of at least 1 dimension. Found a scalar (shape ())"
            )
        if not -len(shape) <= self.axis < len(shape):
            raise ValueError(
                f"Concatenate: `axis` {self.axis} is out of range for an input of shape {tuple(shape)}"
            )
        axis = self.axis % len(shape)
        dtype = spec_dtype(data)
        extras = [a for a in (self.prepend, self.append) if a is not None]
        for a in extras:
            if a.ndim != len(shape):
                raise ValueError(
                    f"Concatenate: prepend/append of shape {a.shape} must have the input's rank. "
                    f"Found input shape {tuple(shape)}"
                )
        if shape[axis] is not None:
            shape[axis] += sum(a.shape[axis] for a in extras)
        if dtype is not None and dtype.kind in "US":
            dtype = np.result_type(dtype, *(a.dtype for a in extras))
        return TensorSpec(tuple(shape), dtype)


def merge_columns(op: str, axis: int, inputs: Sequence[TensorSpec]) -> TensorSpec:
    """The spec of several input columns joined along ``axis`` (the first input's dtype)."""
    first = inputs[0]
    if len(inputs) == 1 or not first.shape or not -len(first.shape) <= axis < len(first.shape):
        return first  # the single-input rules below report rank and axis errors
    k = axis % len(first.shape)
    sizes = [s.shape[k] if len(s.shape) == len(first.shape) else None for s in inputs]
    for s in inputs[1:]:
        if len(s.shape) != len(first.shape):
            raise ValueError(
                f"{op}: input columns of shapes {tuple(first.shape)} and {tuple(s.shape)} differ in rank"
            )
    shape = list(first.shape)
    shape[k] = None if any(d is None for d in sizes) else sum(sizes)  # type: ignore[arg-type]  # no None left: any() checked
    return TensorSpec(tuple(shape), first.dtype)


# ---------------------------------------------------------------------------------------------- random choice of ops


class _RandomGroup(Op):
    """Base of the ops that hold other ops and choose among them at random.

    The CPU kernel runs the inner ops' CPU kernels; inner op ``i`` draws from a stream keyed by
    (this op's position, ``i``), so output depends only on (seed, pass, row, position), never on
    worker count, and the same inner op draws the same way whatever order it runs in.
    """

    random = True

    def __init__(self, transforms: Sequence[Op | Callable[..., Any]]) -> None:
        self.transforms = _check_transforms(self.name, transforms)

    def _common(self, attr: str) -> int:
        values = {getattr(t, attr) for t in self.transforms if isinstance(t, Op)}
        if len(values) == 1 and all(isinstance(t, Op) for t in self.transforms):
            return values.pop()
        return -1

    def __call__(self, *inputs: Any) -> Any:
        result = super().__call__(*inputs)
        return result[0] if type(result) is tuple and len(result) == 1 else result


class RandomApply(_ChainArity, _RandomGroup):  # type: ignore[override]  # arity from the chain, where Op has class attributes
    """With probability ``prob``, apply ``transforms`` in order (as :class:`Compose` would); otherwise
    pass the input through unchanged.

    Args:
        transforms: a non-empty list of op specs or callables. Since the input may pass through, the
            list must give as many outputs as it takes inputs.
        prob: the probability of applying the list, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms, vision
        >>> op = transforms.RandomApply([vision.HorizontalFlip()], prob=1.0)
        >>> op(np.array([[1, 2, 3]], np.uint8))
        array([[3, 2, 1]], dtype=uint8)
    """

    def __init__(self, transforms: Sequence[Op | Callable[..., Any]], prob: float = 0.5) -> None:
        super().__init__(transforms)
        self.prob = _check_prob(self.name, prob)
        n_in, n_out = self.num_inputs, self.num_outputs
        if n_in >= 0 and n_out >= 0 and n_in != n_out:
            raise ArgumentError(
                f"RandomApply: `transforms` must give as many outputs as they take inputs, because the input "
                f"passes through unchanged when they are not applied. Found: {n_in} input(s), {n_out} output(s)"
            )

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        applied = _chain_spec(self.name, self.transforms, range(len(self.transforms)), inputs)
        return _unwrap(self, _merge_outputs(self.name, [applied, tuple(inputs)]))


class RandomChoice(_RandomGroup):
    """Apply one of ``transforms``, chosen uniformly at random.

    Args:
        transforms: a non-empty list of op specs or callables, each taking the same inputs.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms, vision
        >>> op = transforms.RandomChoice([vision.HorizontalFlip(), vision.Resize((1, 3))])
        >>> op(np.array([[1, 2, 3]], np.uint8)).shape
        (1, 3)
    """

    @property
    def num_inputs(self) -> int:  # type: ignore[override]  # from its transforms, where Op has a class attribute
        return self._common("num_inputs")

    @property
    def num_outputs(self) -> int:  # type: ignore[override]  # from its transforms, where Op has a class attribute
        return self._common("num_outputs")

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        outs = [_chain_spec(self.name, self.transforms, [i], inputs) for i in range(len(self.transforms))]
        return _unwrap(self, _merge_outputs(self.name, outs))


# Up to this many elements, RandomOrder's rule follows every order exactly (through subsets, not n!
# orders); beyond, it bounds them by letting any element follow any other.
_EXACT_ORDER_LIMIT = 8


class RandomOrder(_RandomGroup):
    """Apply all of ``transforms``, in a uniformly random order.

    Args:
        transforms: a non-empty list of op specs or callables, each giving as many outputs as it
            takes inputs.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms, vision
        >>> op = transforms.RandomOrder([vision.HorizontalFlip(), transforms.TypeCast("int16")])
        >>> op(np.array([[1, 2, 3]], np.uint8))
        array([[3, 2, 1]], dtype=int16)
    """

    def __init__(self, transforms: Sequence[Op | Callable[..., Any]]) -> None:
        super().__init__(transforms)
        for i, t in enumerate(self.transforms):
            if (
                isinstance(t, Op)
                and t.num_inputs >= 0
                and t.num_outputs >= 0
                and t.num_inputs != t.num_outputs
            ):
                raise ArgumentError(
                    f"RandomOrder: `transforms[{i}]` ({t.name}) must give as many outputs as it takes inputs, "
                    f"since any element may follow it. Found: {t.num_inputs} input(s), {t.num_outputs} output(s)"
                )

    @property
    def num_inputs(self) -> int:  # type: ignore[override]  # from its transforms, where Op has a class attribute
        return self._common("num_inputs")

    @property
    def num_outputs(self) -> int:  # type: ignore[override]  # from its transforms, where Op has a class attribute
        return self._common("num_outputs")

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        n = len(self.transforms)
        start = tuple(TensorSpec(tuple(s.shape), spec_dtype(s)) for s in inputs)
        if n <= _EXACT_ORDER_LIMIT:
            # reach[S]: every distinct output after applying exactly the elements in S, in any order.
            reach: dict[frozenset[int], set[tuple[TensorSpec, ...]]] = {frozenset(): {start}}
            for size in range(n):
                for done in [d for d in reach if len(d) == size]:
                    for i in set(range(n)) - done:
                        nxt = reach.setdefault(done | {i}, set())
                        for specs in reach[done]:
                            nxt.add(_normalised(_chain_spec(self.name, self.transforms, [i], specs)))
            finals = list(reach[frozenset(range(n))])
        else:
            finals = _bounded_orders(self.name, self.transforms, start)
        return _unwrap(self, _merge_outputs(self.name, finals))


def _normalised(specs: tuple[TensorSpec, ...]) -> tuple[TensorSpec, ...]:
    return tuple(TensorSpec(tuple(s.shape), spec_dtype(s)) for s in specs)


def _bounded_orders(
    op: str, transforms: Sequence[Any], start: tuple[TensorSpec, ...]
) -> list[tuple[TensorSpec, ...]]:
    """Specs after n steps where any element may follow any other: a superset of the real orders."""
    frontier = {start}
    for _ in range(len(transforms)):
        nxt: set[tuple[TensorSpec, ...]] = set()
        failures: list[Exception] = []
        for specs, i in itertools.product(frontier, range(len(transforms))):
            try:
                nxt.add(_normalised(_chain_spec(op, transforms, [i], specs)))
            except (ValueError, TypeError) as e:  # sequences repeating an element may be impossible
                failures.append(e)
        if not nxt:
            raise failures[0]
        frontier = nxt
    return list(frontier)


# ---------------------------------------------------------------------------------------------- masks, slices, padding


class Relational(enum.IntEnum):
    """The comparison :class:`Mask` applies: ``EQ`` (==), ``NE`` (!=), ``GT`` (>), ``GE`` (>=), ``LT`` (<),
    ``LE`` (<=), as MindSpore's ``mindspore.dataset.transforms.Relational``.

    Examples:
        >>> from minddata import transforms
        >>> transforms.Relational.GE.name
        'GE'
    """

    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


def _scalar_arg(op: str, arg: str, value: Any) -> int | float | bool | str | bytes:
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (int, float, bool, str, bytes)):
        raise TypeError(
            f"{op}: `{arg}` must be an int, float, bool, str or bytes. Found: {value!r} ({type(value).__name__})"
        )
    return value


class Mask(Op):
    """Compare every element with ``constant`` and output the result as ``dtype`` (bool by default).

    ``Mask(Relational.GT, 2)`` on ``[1, 2, 3]`` gives ``[False, False, True]``. The constant is converted
    to the input's dtype first, as in MindSpore (``2.7`` against an int tensor compares with ``2``); string
    tensors take a ``str`` constant and compare lexicographically.

    Args:
        operator: a :class:`Relational`.
        constant: an int, float, bool or str.
        dtype: the output dtype (anything ``numpy.dtype`` accepts), default bool.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.Mask(transforms.Relational.EQ, 3)(np.array([1, 2, 3, 4, 5]))
        array([False, False,  True, False, False])
        >>> transforms.Mask(transforms.Relational.LE, 2, "int32")(np.array([1, 2, 3]))
        array([1, 1, 0], dtype=int32)
    """

    def __init__(
        self, operator: Relational, constant: int | float | bool | str, dtype: Any = np.bool_
    ) -> None:
        if not isinstance(operator, Relational):
            raise TypeError(
                f"Mask: `operator` must be a Relational (EQ, NE, GT, GE, LT, LE). Found: {operator!r} "
                f"({type(operator).__name__})"
            )
        self.operator = operator
        self.constant = _scalar_arg(self.name, "constant", constant)
        self.dtype = _to_dtype(self.name, dtype)
        if self.dtype.kind in "US":
            raise ArgumentError(f"Mask: `dtype` must be a numeric or bool dtype. Found: {self.dtype}")

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        return TensorSpec(tuple(data.shape), self.dtype)


def _pad_shape(op: str, pad_shape: Any) -> list[int | None]:
    if isinstance(pad_shape, (str, bytes)) or not isinstance(pad_shape, Sequence):
        raise TypeError(
            f"{op}: `pad_shape` must be a list of ints (None keeps a dimension). Found: {pad_shape!r}"
        )
    shape: list[int | None] = []
    for i, d in enumerate(pad_shape):
        if d is None:
            shape.append(None)
            continue
        if not isinstance(d, Integral) or isinstance(d, bool):
            raise TypeError(
                f"{op}: `pad_shape[{i}]` must be an int or None. Found: {d!r} ({type(d).__name__})"
            )
        if d < 0:
            raise ArgumentError(f"{op}: `pad_shape[{i}]` must be >= 0. Found: {d}")
        shape.append(int(d))
    return shape


class PadEnd(Op):
    """Pad (or cut) each dimension at its end to ``pad_shape``: longer dimensions are truncated, shorter
    ones filled with ``pad_value``; a ``None`` entry keeps that dimension as it is.

    ``pad_shape`` must have one entry per input dimension. ``pad_value`` defaults to 0 for numeric
    tensors and ``""`` for string tensors; a number must fit the input's dtype.

    Args:
        pad_shape: the output shape, ``None`` for dimensions left alone.
        pad_value: the fill value, or None.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.PadEnd([4], pad_value=9)(np.array([1, 2, 3]))
        array([1, 2, 3, 9])
        >>> transforms.PadEnd([2, None])(np.array([[1, 2], [3, 4], [5, 6]]))
        array([[1, 2],
               [3, 4]])
    """

    def __init__(
        self, pad_shape: Sequence[int | None], pad_value: int | float | str | bytes | None = None
    ) -> None:
        self.pad_shape = _pad_shape(self.name, pad_shape)
        self.pad_value = None if pad_value is None else _scalar_arg(self.name, "pad_value", pad_value)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        if len(data.shape) != len(self.pad_shape):
            raise ValueError(
                f"PadEnd: `pad_shape` {self.pad_shape} has {len(self.pad_shape)} dimension(s); the input has "
                f"{len(data.shape)} (shape {tuple(data.shape)})"
            )
        shape = tuple(d if p is None else p for d, p in zip(data.shape, self.pad_shape))
        dtype = spec_dtype(data)
        if dtype is not None and dtype.kind in "US" and self.pad_value is not None:
            dtype = np.result_type(dtype, np.array(self.pad_value).dtype)
        return TensorSpec(shape, dtype)


def _slice_option(op: str, k: int, item: Any) -> Any:
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        for part in ("start", "stop", "step"):
            v = getattr(item, part)
            if v is not None and (not isinstance(v, Integral) or isinstance(v, bool)):
                raise TypeError(f"{op}: `slices[{k}]`'s {part} must be an int or None. Found: {v!r}")
        if item.step == 0:
            raise ArgumentError(f"{op}: `slices[{k}]`'s step must not be 0. Found: {item!r}")
        return item
    if isinstance(item, Integral) and not isinstance(item, bool):
        return int(item)
    if isinstance(item, (list, tuple)) and all(
        isinstance(i, Integral) and not isinstance(i, bool) for i in item
    ):
        return [int(i) for i in item]
    raise TypeError(
        f"{op}: `slices[{k}]` must be an int, a list of ints, a slice, None or Ellipsis. "
        f"Found: {item!r} ({type(item).__name__})"
    )


def slice_length(option: Any, size: int | None) -> int | None:
    """How many elements ``option`` (one :class:`Slice` argument) keeps of a dimension of ``size``."""
    if isinstance(option, int):
        return 1
    if isinstance(option, list):
        return len(option)
    if option is None or option is Ellipsis:
        return size
    return None if size is None else len(range(*option.indices(size)))


class Slice(Op):
    """Slice the input, one argument per dimension from the first, as NumPy's indexing does but
    keeping every dimension.

    Each argument is an ``int`` (that index, negative from the end: the dimension keeps 1 element), a
    ``list`` of ints (those indices, in that order), a ``slice`` (``slice(1, 3)``, ``slice(None, None,
    -1)``), or ``None`` / ``Ellipsis`` (the whole dimension). Dimensions past the arguments are kept
    whole. MindSpore documents 1-D inputs only; here any rank works. An index outside the dimension is
    an error.

    Args:
        slices: one argument per leading dimension (at least one).

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.Slice(slice(1, 3))(np.array([1, 2, 3]))
        array([2, 3])
        >>> transforms.Slice([2, 0])(np.array([1, 2, 3]))
        array([3, 1])
        >>> transforms.Slice(-1, Ellipsis)(np.array([[1, 2], [3, 4]]))
        array([[3, 4]])
    """

    def __init__(self, *slices: int | list[int] | slice | None | Any) -> None:
        if not slices:
            raise ArgumentError(
                "Slice: give at least one slice argument (an int, list of ints, slice, None or Ellipsis)"
            )
        self.slices = tuple(_slice_option(self.name, k, s) for k, s in enumerate(slices))

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        if len(self.slices) > len(data.shape):
            raise ValueError(
                f"Slice: {len(self.slices)} slice argument(s) for an input of {len(data.shape)} dimension(s) "
                f"(shape {tuple(data.shape)})"
            )
        shape = [slice_length(s, d) for s, d in zip(self.slices, data.shape)]
        return TensorSpec((*shape, *data.shape[len(self.slices) :]), spec_dtype(data))


class Unique(Op):
    """The distinct elements of the input in order of first appearance, with, for every input
    element, the index of its value in that list, and each value's count: three output columns
    (``map(Unique(), input_columns="x", output_columns=["x", "idx", "count"])``), as MindSpore's
    ``Unique``. An input of several dimensions is read flattened (so ``idx`` is 1-D), as MindSpore
    does. ``idx`` and ``count`` are int32.

    Examples:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.Unique()(np.array([0, 1, 2, 0, 1, 1]))
        (array([0, 1, 2]), array([0, 1, 2, 0, 1, 1], dtype=int32), array([2, 3, 1], dtype=int32))
        >>> [a.shape for a in transforms.Unique()(np.array([[0, -1, -2, -1, 2], [2, -0, 2, 1, -3]]))]
        [(6,), (10,), (6,)]
    """

    num_outputs = 3

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
        data = one_spec(self.name, inputs)
        if len(data.shape) == 0:
            raise ValueError(f"Unique: expected an input of at least one dimension. Found shape {tuple(data.shape)}")
        index = np.dtype(np.int32)
        flat = None if any(d is None for d in data.shape) else int(np.prod(data.shape))
        return (
            TensorSpec((None,), spec_dtype(data)),
            TensorSpec((flat,), index),
            TensorSpec((None,), index),
        )


def not_random(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a Python function used in ``map`` as deterministic (it sets ``function.random = False``).

    MindSpore treats Python functions as random, which keeps a cache from being placed after them;
    this decorator says otherwise. minddata never seeds or reorders plain callables, so the mark is
    only read by code that asks for it (``getattr(f, "random", True)``).

    Examples:
        >>> from minddata import transforms
        >>> @transforms.not_random
        ... def double(x):
        ...     return x * 2
        >>> double.random
        False
    """
    if not callable(function):
        raise TypeError(f"not_random: expected a function. Found: {function!r} ({type(function).__name__})")
    function.random = False  # type: ignore[attr-defined]  # a mark on the user's function, read as op.random
    return function


__getattr__ = module_getattr(__name__)
