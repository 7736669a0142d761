"""What devices this machine offers to pipelines: :func:`devices` (what ``minddata devices`` prints).

A device is *present* when pipelines can place ops on it: for the GPU, NVIDIA DALI and a visible
CUDA device (or DALI's CPU backend under ``config.set_gpu_emulation(True)``); for Dvpp, a hardware
JPEG engine driver (NVIDIA's NVJPG through DALI, or Huawei Ascend's DVPP through the CANN toolkit's
``acl`` module), or the reference model when ``config.set_dvpp_driver("reference")`` selects it.
When a device is absent, ``detail`` says why and what fixes it. Each device writes its own report
(:meth:`minddata.ops.devices.Device.report`) from the probes in :mod:`minddata.ops.probe`, which
the placement pass reads too, so this report and what pipelines get agree; an accelerator added with
:func:`minddata.ops.devices.register_device` is reported the same way. Detection imports nothing heavy
unless needed and never raises.

Examples:
    >>> import minddata as md
    >>> cpu = md.devices()[0]
    >>> cpu.name, cpu.present
    ('CPU', True)
    >>> gpu = md.devices()[1]
    >>> gpu.present or len(gpu.detail) > 0  # absent devices say why
    True
"""

from __future__ import annotations

from typing import Any

from minddata.ops.devices import DeviceInfo
from minddata.ops.devices import devices as _registered
from minddata.ops.probe import GPU_INSTALL_HINT, NVJPG_GPUS, DriverInfo, visible_gpus

__all__ = ["DeviceInfo", "DriverInfo", "devices", "visible_gpus", "GPU_INSTALL_HINT", "NVJPG_GPUS"]


def devices() -> list[DeviceInfo]:
    """CPU, GPU and Dvpp, in that order, as detected on this machine now; then any accelerator added
    with :func:`minddata.ops.devices.register_device`."""
    return [_report(device) for device in _registered()]


def _report(device: Any) -> DeviceInfo:
    # One device whose probe fails must not take the listing of the others down with it.
    try:
        return device.report()
    except Exception as error:  # noqa: BLE001 - any failure is reported as the device's own
        return DeviceInfo(device.name, False, f"its report failed ({type(error).__name__}: {error}); the device's "
                          "probe raised instead of saying why it is absent: fix its Device.probe")
