"""Kernels registered per (op name, device); looked up by the engine and by eager calls."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from typing import Any

from minddata.errors import DeviceError

__all__ = ["register_kernel", "get_kernel", "has_kernel", "ops_on", "available_devices"]

Kernel = Callable[..., Any]

_KERNELS: dict[tuple[str, str], Kernel] = {}
# Kernel modules import lazily: device packages may need optional dependencies.
_KERNEL_PACKAGES = {"CPU": "minddata.ops.cpu", "GPU": "minddata.ops.gpu", "Dvpp": "minddata.ops.dvpp"}
_loaded: set[str] = set()
# Worker threads look up their first kernels at the same time: one imports, the others wait.
_load_lock = threading.RLock()


def register_kernel(op_name: str, device: str) -> Callable[[Kernel], Kernel]:
    """Decorator: ``@register_kernel("Decode", "CPU")`` over ``def kernel(op, ctx, *inputs)``."""

    def wrap(fn: Kernel) -> Kernel:
        _KERNELS[(op_name, device)] = fn
        return fn

    return wrap


def _load(device: str) -> None:
    if device in _loaded:
        return
    with _load_lock:
        if device in _loaded:
            return
        package = _KERNEL_PACKAGES.get(device)
        if package:
            importlib.import_module(package)
        _loaded.add(device)


def has_kernel(op_name: str, device: str) -> bool:
    _load(device)
    return (op_name, device) in _KERNELS


def ops_on(device: str) -> list[str]:
    """Names of the ops with a kernel on ``device``, sorted."""
    _load(device)
    return sorted(name for name, dev in _KERNELS if dev == device)


def available_devices(op_name: str) -> list[str]:
    return [dev for dev in _KERNEL_PACKAGES if has_kernel(op_name, dev)]


def get_kernel(op_name: str, device: str) -> Kernel:
    _load(device)
    try:
        return _KERNELS[(op_name, device)]
    except KeyError:
        have = ", ".join(ops_on(device)) or "none"
        raise DeviceError(
            f"{op_name}: no kernel on device {device!r}. Ops with a {device} kernel: {have}. "
            f"Place {op_name} on a device that has it, e.g. .device('CPU')."
        ) from None
