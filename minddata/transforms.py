"""General transforms, named as in ``mindspore.dataset.transforms``: :class:`TypeCast`, :class:`Compose`.

Specs only; the CPU kernels live in ``minddata.ops.cpu``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op

__all__ = ["Compose", "TypeCast"]


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

    Example:
        >>> import numpy as np
        >>> from minddata import transforms
        >>> transforms.TypeCast("int32")(np.array([1.7, -2.5]))
        array([ 1, -2], dtype=int32)
    """

    def __init__(self, data_type: Any) -> None:
        self.data_type = _to_dtype(self.name, data_type)


class Compose(Op):
    """Apply ``transforms`` in order, as one op.

    Each element is an op spec or a plain callable. An element returning a tuple feeds the next one
    its items as separate inputs, as MindSpore's Compose does. ``num_inputs``/``num_outputs`` are the
    first/last element's when that is an op, else ``-1`` (any). Inside a map the engine flattens a
    Compose into its elements, so each random element draws from its own stream; eager calls and the
    CPU kernel give element ``i`` the op position ``ctx.op_position + i``, which matches that
    flattening when the Compose is the map's only op.

    Args:
        transforms: a non-empty list of op specs or callables.

    Example:
        >>> import numpy as np
        >>> from minddata import transforms, vision
        >>> op = transforms.Compose([vision.HorizontalFlip(), transforms.TypeCast("float32")])
        >>> op(np.array([[1, 2, 3]], np.uint8))
        array([[3., 2., 1.]], dtype=float32)
    """

    def __init__(self, transforms: Sequence[Op | Callable[..., Any]]) -> None:
        if isinstance(transforms, (Op, str, bytes)) or not isinstance(transforms, Sequence):
            raise TypeError(
                f"Compose: `transforms` must be a list of ops or callables. "
                f"Found: {transforms!r} ({type(transforms).__name__})"
            )
        if len(transforms) == 0:
            raise ArgumentError("Compose: `transforms` must not be empty. Found: []")
        for i, t in enumerate(transforms):
            if not (isinstance(t, Op) or callable(t)):
                raise TypeError(
                    f"Compose: `transforms[{i}]` must be an op or a callable. Found: {t!r} ({type(t).__name__})"
                )
        self.transforms = list(transforms)

    @property  # type: ignore[override]
    def random(self) -> bool:  # type: ignore[override]
        # Plain callables are opaque to the engine: their randomness is not ours to control or seed.
        return any(isinstance(t, Op) and t.random for t in self.transforms)

    @property  # type: ignore[override]
    def num_inputs(self) -> int:  # type: ignore[override]
        first = self.transforms[0]
        return first.num_inputs if isinstance(first, Op) else -1

    @property  # type: ignore[override]
    def num_outputs(self) -> int:  # type: ignore[override]
        # The engine reads num_outputs != 1 as "the kernel returns a sequence of outputs", so a chain
        # ending in a one-output op must say 1, or its single array would be split along axis 0.
        last = self.transforms[-1]
        return last.num_outputs if isinstance(last, Op) else -1

    def __call__(self, *inputs: Any) -> Any:
        result = super().__call__(*inputs)
        # The kernel returns a tuple whenever the output count is not known to be 1; eagerly, a
        # single output reads better unwrapped.
        return result[0] if type(result) is tuple and len(result) == 1 else result
