"""The GPU's registry kernels: one op on one row, run as a one-op segment of the driver the engine uses.

The engine does not call these for pipelines: it groups consecutive GPU ops into one segment
(:func:`~minddata.ops.gpu.drivers.make_segment`: a DALI pipeline or a torch segment) and runs it batch
by batch. These run that same segment (same translation, same plan, same driver) on a batch of one row
with the row's own context, so they draw the random parameters the CPU kernel and the engine's segment
draw. They are what runs for eager GPU calls, for the Dvpp ``nvjpg`` driver's per-row path and for the
contract test, and the registry's GPU entries are how placement and ``minddata devices`` know which ops
the GPU has. Results come back as NumPy arrays.

Segments are cached per (op, backend) and closed when evicted (at most ``_CACHE_SIZE``) or by
:func:`close_cached_segments`.
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from minddata.errors import DeviceError
from minddata.ops.base import KernelContext, Op
from minddata.ops.devices import run_options
from minddata.ops.gpu import (  # noqa: F401  (imported to register the families' translations)
    adjust,
    affine,
    color,
    convert,
    crop,
    decode,
    flip,
    fused,
    generic,
    normalize,
    pad_erase,
    perspective,
    resize,
)
from minddata.ops.gpu.drivers import make_segment
from minddata.ops.gpu.segment import GPU_HW_DECODER_LOAD, RowFailure
from minddata.ops.gpu.translation import TRANSLATIONS
from minddata.ops.registry import register_kernel

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = ["close_cached_segments", "gpu_kernel", "row_backend"]

_CACHE_SIZE = 32
_cache: OrderedDict[tuple, Any] = OrderedDict()
_lock = threading.Lock()
# (emulate, gpu_driver, gpu_device_id): what the probe said under those settings (all it reads).
_backends: dict[tuple[bool, str, int | None], tuple[str | None, str]] = {}


def row_backend(emulate: bool | None = None, *, options: RunOptions | None = None, op_name: str = "") -> str:
    """The backend of per-row GPU kernels here (``"cuda"``, ``"dali-cpu"``, ``"torch-cuda"`` or
    ``"torch-cpu"``) under a run's ``options`` (its ``gpu_driver`` and ``gpu_emulation``; default: the
    settings now), ``emulate`` overriding ``options.gpu_emulation``, or a :class:`DeviceError` (naming
    ``op_name``, the op that asked, when given)."""
    from minddata.ops import probe

    options = run_options(options)
    if emulate is None:
        emulate = options.gpu_emulation
    key = (emulate, options.gpu_driver, options.gpu_device_id)
    found = _backends.get(key)
    if found is None or found[0] is None:  # an absent GPU is asked about again: it may be fixed now
        found = _backends[key] = probe.gpu_backend(emulate, options=options)
    backend, why = found
    if backend is None:
        op = op_name or "the op"
        raise DeviceError(
            f"{op_name + ' on the ' if op_name else ''}GPU: not available here ({why}). Place {op} on the CPU "
            "(.device('CPU')), or minddata.config.set_gpu_emulation(True) to run the GPU kernels on the CPU "
            "(DALI's CPU backend, or torch CPU tensors)"
        )
    return backend


def _segment(op: Op, backend: str, hw_decoder_load: float, options: RunOptions) -> Any:
    # The run's settings a segment keeps (its device; rows bring the rest in their contexts).
    key = (op.name, repr(op), backend, hw_decoder_load, options.gpu_device_id)
    with _lock:
        seg = _cache.get(key)
        if seg is not None:
            _cache.move_to_end(key)
            return seg
        seg = _cache[key] = make_segment([op], backend=backend, hw_decoder_load=hw_decoder_load, batch_size=1,
                                         num_threads=1, options=options)
        while len(_cache) > _CACHE_SIZE:
            _, old = _cache.popitem(last=False)
            with old.lock:
                old.close()
        return seg


def close_cached_segments() -> None:
    """Release the DALI pipelines of per-row GPU kernels."""
    with _lock:
        segments = list(_cache.values())
        _cache.clear()
    for seg in segments:
        with seg.lock:
            seg.close()


atexit.register(close_cached_segments)


def run_one(op: Op, ctx: KernelContext, value: Any, *, hw_decoder_load: float = GPU_HW_DECODER_LOAD) -> Any:
    """``op`` on one row through DALI, as a host array; the row's error is raised as it is."""
    seg = _segment(op, row_backend(options=ctx.options, op_name=op.name), hw_decoder_load, ctx.options)
    with seg.lock:
        results, _ = seg.run([value], [[ctx]])
    result = results[0]
    if isinstance(result, RowFailure):
        raise result.error
    return result


def gpu_kernel(op: Op, ctx: KernelContext, image: Any) -> Any:
    return run_one(op, ctx, image)


for _name in TRANSLATIONS:
    register_kernel(_name, "GPU")(gpu_kernel)
