"""Op specs the graph optimizer substitutes for runs of user ops ("graph kernel fusion").

They are not public API: ``Dataset.explain()`` shows them, users never build them. Each keeps the
ops it replaces, so its kernel reproduces their semantics and their random draws exactly.
Their facts (decoding, placement cost, float output) are declared with their CPU kernels
(:mod:`minddata.ops.cpu.fused`); which user ops fuse is declared as the first op's ``fusion_partners``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelOp, Op, TensorSpec

__all__ = ["FusedDecodeResize", "FusedDecodeRandomResizedCrop", "FusedNormalizeHWC2CHW", "NormalizeInputCheck"]


class _Fused(Op):
    def __init__(self, *parts: Op):
        self.parts = list(parts)

    @property
    def label(self) -> str:
        return "+".join(p.name for p in self.parts)

    def __repr__(self) -> str:
        return f"{self.name}[{' + '.join(repr(p) for p in self.parts)}]"


class FusedDecodeResize(_Fused):
    """Decode → Resize: decode a JPEG at the smallest DCT scale (1/2, 1/4, 1/8) that still leaves the
    resize's output resolution, then resize. Other formats decode in full."""

    def __init__(self, decode: Op, resize: Op):
        super().__init__(decode, resize)
        self.decode, self.resize = decode, resize

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        return self.resize.output_spec(self.decode.output_spec(*inputs))  # type: ignore[arg-type]  # Decode: one output


class FusedDecodeRandomResizedCrop(_Fused):
    """Decode → RandomResizedCrop: draw the crop from the header's size with the crop op's own
    random stream, decode only that region at the smallest adequate DCT scale, then resize."""

    random = True

    def __init__(self, decode: Op | None, crop: Op):
        super().__init__(*([decode] if decode is not None else []), crop)
        self.decode, self.crop = decode, crop

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        return self.crop.output_spec(TensorSpec((None, None, 3), None))


class FusedNormalizeHWC2CHW(_Fused):
    """Normalize (HWC) → HWC2CHW on one row: a uint8 image is normalized straight into a CHW float32
    array, without the HWC float image and its transposed copy. Bit-identical to the two ops."""

    def __init__(self, normalize: KernelOp, hwc2chw: Op):
        super().__init__(normalize, hwc2chw)
        self.normalize, self.hwc2chw = normalize, hwc2chw
        # The kernel's operands, made once per op rather than once per row (private: not parameters).
        self._mean32 = np.asarray(normalize.mean, np.float32)
        self._std32 = np.asarray(normalize.std, np.float32)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec | tuple[TensorSpec, ...]:
        return self.hwc2chw.output_spec(self.normalize.output_spec(*inputs))


class NormalizeInputCheck(Op):
    """Left in a map whose Normalize moved into the batch: checks each row as Normalize would, so a bad
    row still fails in the map, with its row, file and the error policy (skip/replace) applying."""

    def __init__(self, normalize: Op):
        self.normalize = normalize

    @property
    def label(self) -> str:
        # Errors name the op the user wrote; explain() says its arithmetic moved.
        return self.normalize.name

    @property
    def timing_label(self) -> str:
        return "Normalize check"

    def output_spec(self, *inputs: TensorSpec) -> Any:
        return inputs[0]
