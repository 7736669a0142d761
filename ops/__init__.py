"""Op specs' base class, the kernel context and the per-device kernel registry (DESIGN.md §3).

Kernels live in ``minddata.ops.cpu`` (the reference, one for every op), ``minddata.ops.dvpp`` and
``minddata.ops.gpu``; they register themselves by op name and device.
"""

from minddata.ops.base import DEVICES, KernelContext, Op, TensorSpec, canonical_device, row_rng
from minddata.ops.registry import available_devices, get_kernel, has_kernel, ops_on, register_kernel

__all__ = [
    "DEVICES",
    "KernelContext",
    "Op",
    "TensorSpec",
    "available_devices",
    "canonical_device",
    "get_kernel",
    "has_kernel",
    "ops_on",
    "register_kernel",
    "row_rng",
]
