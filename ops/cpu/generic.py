"""CPU kernels of the general transforms: TypeCast (and its image alias ToType), Compose."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, Op
from minddata.ops.registry import get_kernel, register_kernel


@register_kernel("TypeCast", "CPU")
@register_kernel("ToType", "CPU")
def type_cast(op: Op, ctx: KernelContext, data: Any) -> np.ndarray:
    arr = np.asarray(data)
    try:
        # astype truncates float -> int toward zero, as MindSpore's C++ cast does.
        return arr.astype(op.data_type, copy=False)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"{op.name}: cannot cast an array of dtype {arr.dtype} (shape {arr.shape}) to {op.data_type}: {e}"
        ) from None


@register_kernel("Compose", "CPU")
def compose(op: Op, ctx: KernelContext, *inputs: Any) -> Any:
    args: tuple[Any, ...] = inputs
    for i, t in enumerate(op.transforms):
        if isinstance(t, Op):
            # Element i gets its own stream, positioned as if the Compose had been flattened in place.
            sub = KernelContext(ctx.seed, ctx.pass_index, ctx.row_index, ctx.op_position + i)
            if t.num_inputs >= 0 and len(args) != t.num_inputs:
                raise ValueError(
                    f"Compose: transforms[{i}] ({t.name}) expects {t.num_inputs} input(s); "
                    f"the previous step gave {len(args)}"
                )
            out = get_kernel(t.name, "CPU")(t, sub, *args)
        else:
            out = t(*args)
        args = out if isinstance(out, tuple) else (out,)
    # The engine's protocol: num_outputs == 1 → the output itself; otherwise a sequence of outputs.
    return args[0] if op.num_outputs == 1 and len(args) == 1 else args
