"""How the optimizer fuses op pairs into one op, read by both the fusion pass
(:mod:`minddata.engine.optimizer`) and the placement pass (:mod:`minddata.engine.placement`, which
accepts a device op that the device runs only fused with the op before it).

Which ops fuse is an op fact: the first op declares the second among its ``fusion_partners`` where its
CPU kernel declares its facts (:func:`minddata.ops.registry.op_facts`); tests/ops/test_op_facts.py
checks that every pair here is declared and that the optimizer fuses every declared pair.

Examples:
    >>> from minddata.engine.fusions import fusion_of
    >>> fusion_of("Decode", "Resize").fused.__name__
    'FusedDecodeResize'
    >>> fusion_of("Decode", "Pad") is None
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minddata.ops.base import Op
from minddata.ops.fused import FusedDecodeRandomResizedCrop, FusedDecodeResize

__all__ = ["Fusion", "FUSIONS", "fusion_of"]


@dataclass(frozen=True)
class Fusion:
    """``first`` followed by ``second`` (op names) run as ``fused(first_op, second_op)``.

    ``bound`` keys :data:`minddata.engine.optimizer.BOUNDS`; ``what`` says what the fused op does
    (``explain()`` prints it). ``cpu_opt_in``: on the CPU the pair fuses only with
    ``config.set_fast_decode_resize(True)``, and otherwise stays as written (bound ``bound_off``).
    """

    first: str
    second: str
    fused: Callable[[Op, Op], Op]
    bound: str
    what: str
    cpu_opt_in: bool = False
    bound_off: str = ""


FUSIONS: tuple[Fusion, ...] = (
    Fusion(
        "Decode",
        "Resize",
        FusedDecodeResize,
        "decode_resize",
        "decode JPEGs at a reduced DCT scale, then resize",
        cpu_opt_in=True,
        bound_off="decode_resize_off",
    ),
    Fusion(
        "Decode",
        "RandomResizedCrop",
        FusedDecodeRandomResizedCrop,
        "decode_random_resized_crop",
        "crop drawn from the JPEG header, only that region decoded at a reduced DCT scale",
    ),
)


def fusion_of(first: str, second: str) -> Fusion | None:
    """The fusion of op ``first`` followed by op ``second`` (names), or ``None``."""
    for fusion in FUSIONS:
        if fusion.first == first and fusion.second == second:
            return fusion
    return None
