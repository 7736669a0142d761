"""What devices this machine offers to pipelines: :func:`devices` (what ``minddata devices`` prints).

A device is *present* when pipelines can place ops on it: for the GPU, NVIDIA DALI and a visible
CUDA device (or DALI's CPU backend under ``config.set_gpu_emulation(True)``); for Dvpp, a hardware
JPEG engine driver (NVIDIA's NVJPG through DALI, or Huawei Ascend's DVPP through the CANN toolkit's
``acl`` module), or the reference model when ``config.set_dvpp_driver("reference")`` selects it.
When a device is absent, ``detail`` says why and what fixes it. The probes live in
:mod:`minddata.ops.probe`, which the devices the placement pass sees (:mod:`minddata.ops.devices`)
read too, so this report and what pipelines get agree. Detection imports nothing heavy unless needed and never raises.

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

import os
import shutil
import subprocess
from dataclasses import dataclass, field

from minddata import config
from minddata._version import __version__
from minddata.ops.probe import (
    GPU_INSTALL_HINT,
    NVJPG_GPUS,
    REFERENCE_DRIVER,
    DriverInfo,
    visible_gpus,
)
from minddata.ops.probe import ascend_driver as _ascend
from minddata.ops.probe import dali_status as _dali
from minddata.ops.probe import nvjpg_driver as _nvjpg

__all__ = ["DeviceInfo", "DriverInfo", "devices", "visible_gpus", "GPU_INSTALL_HINT", "NVJPG_GPUS"]


@dataclass
class DeviceInfo:
    """One device: ``present`` says whether pipelines can place ops on it.

    ``detail`` describes what was found, or why the device is absent and the fix. ``driver`` and
    ``version`` name what runs its ops here (empty when absent). ``ops`` are the ops that have a
    kernel for the device (for Dvpp: on its selected driver, else on any).
    """

    name: str
    present: bool
    detail: str
    ops: list[str] = field(default_factory=list)
    drivers: list[DriverInfo] = field(default_factory=list)
    driver: str = ""
    version: str = ""


def devices() -> list[DeviceInfo]:
    """CPU, GPU and Dvpp, in that order, as detected on this machine now; then any accelerator added
    with :func:`minddata.ops.devices.register_device`."""
    gpus, gpu_why = visible_gpus()
    dali_ok, dali_why = _dali()
    return [_cpu(), _gpu(gpus, gpu_why, dali_ok, dali_why), _dvpp(gpus, dali_ok, dali_why), *_registered()]


def _registered() -> list[DeviceInfo]:
    """What each added accelerator's probe says (the bundled devices are described above, in detail)."""
    from minddata.ops.devices import devices as registered

    found = []
    for device in registered():
        if device.name in ("CPU", "GPU", "Dvpp"):
            continue
        presence = device.probe()
        detail = presence.detail if presence.present else f"{presence.detail}; fix: {presence.fix}"
        found.append(DeviceInfo(device.name, presence.present, detail, device.ops(presence),
                                driver=presence.backend or ""))
    return found


# --- CPU ------------------------------------------------------------------------------------------


def _usable_cores() -> tuple[int, int]:
    total = os.cpu_count() or 1
    try:
        return len(os.sched_getaffinity(0)), total
    except AttributeError:  # not Linux
        return total, total


def _cpu() -> DeviceInfo:
    usable, total = _usable_cores()
    cores = f"{usable} cores" if usable == total else f"{usable} cores usable (of {total})"
    decoders = []
    version = ""
    try:
        import PIL
        from PIL import features

        turbo = features.check_feature("libjpeg_turbo")
        decoders.append(f"Pillow {PIL.__version__} ({'libjpeg-turbo' if turbo else 'libjpeg, not turbo'})")
        version = f"Pillow {PIL.__version__}"
    except Exception as exc:  # Pillow is a core dependency, but say so rather than crash
        decoders.append(f"Pillow unavailable ({type(exc).__name__})")
    try:
        import cv2

        decoders.append(f"OpenCV {cv2.__version__}")
        version += f", OpenCV {cv2.__version__}"
    except Exception:
        pass
    detail = f"{cores}; JPEG decoders: {', '.join(decoders)}"
    return DeviceInfo("CPU", True, detail, _ops_on("CPU"), driver="minddata CPU kernels", version=version.strip(", "))


# --- GPU ------------------------------------------------------------------------------------------


def _nvidia_driver_version() -> str:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return ""
    try:
        out = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=5.0, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if out.returncode == 0 and lines else ""


def _gpu(gpus: list[str], gpu_why: str, dali_ok: bool, dali_why: str) -> DeviceInfo:
    ops = _ops_on("GPU")
    wanted = config.get_gpu_driver()
    if wanted == "torch" or (wanted == "auto" and not dali_ok and gpus):
        from minddata.ops import probe

        backend, why = probe.gpu_backend()
        if backend is not None and backend.startswith("torch"):
            from minddata.ops.devices import Presence, get_device

            torch_ops = get_device("GPU").ops(Presence("GPU", backend, why))
            driver = "torch" if backend == "torch-cuda" else "torch (CPU tensors)"
            return DeviceInfo("GPU", True, why, torch_ops, driver=driver, version=why.rsplit("PyTorch ", 1)[-1])
        if wanted == "torch":
            return DeviceInfo("GPU", False, why, ops)
    dali_version = dali_why.removeprefix("DALI ") if dali_ok else ""
    if gpus and dali_ok and not config.get_gpu_emulation():
        nvidia = _nvidia_driver_version()
        where = f"{', '.join(gpus)}" + (f" (NVIDIA driver {nvidia})" if nvidia else "")
        return DeviceInfo("GPU", True, f"{where}; {dali_why}", ops, driver="DALI", version=dali_version)
    reasons = [r for r in (gpu_why, "" if dali_ok else dali_why) if r]
    if dali_ok and config.get_gpu_emulation():
        reasons = reasons or [", ".join(gpus)]  # a visible GPU, not used: emulation was asked for
        detail = f"{'; '.join(reasons)}; emulated on {dali_why}'s CPU backend (config.set_gpu_emulation)"
        return DeviceInfo("GPU", True, detail, ops, driver="DALI (CPU backend)", version=dali_version)
    return DeviceInfo("GPU", False, "; ".join(reasons), ops)


# --- Dvpp -----------------------------------------------------------------------------------------


def _dvpp(gpus: list[str], dali_ok: bool, dali_why: str) -> DeviceInfo:
    drivers = [
        _nvjpg(gpus, dali_ok, dali_why),
        _ascend(),
        # The reference model runs DVPP's rules on the CPU: it previews output differences and tests
        # placement, but is never a speed-up, so automatic placement never picks it.
        REFERENCE_DRIVER,
    ]
    wanted = config.get_dvpp_driver()
    by_name = {d.name: d for d in drivers}
    if wanted == "auto":
        chosen = next((d for d in drivers if d.available and d.name != "reference"), None)
    else:
        chosen = by_name[wanted] if by_name[wanted].available else None
    if chosen is not None:
        hardware = [d for d in drivers if d.available and d.name != "reference"]
        shown = [chosen] + [d for d in hardware if d is not chosen]
        detail = "; ".join(f"{d.name}: {d.detail}" for d in shown)
        if chosen.name == "reference":
            detail += " (config.set_dvpp_driver('reference'))"
        return DeviceInfo("Dvpp", True, detail, _dvpp_ops(chosen.name), drivers, driver=chosen.name,
                          version=_driver_version(chosen, dali_why))
    missing = "; ".join(f"{d.name}: {d.detail}" for d in drivers if d.name != "reference")
    if wanted != "auto":
        detail = f"the selected driver {wanted!r} is not available ({by_name[wanted].detail})"
    else:
        detail = f"no hardware JPEG engine ({missing}); reference CPU model available when selected explicitly"
    return DeviceInfo("Dvpp", False, detail, _ops_on("Dvpp"), drivers)


def _driver_version(driver: DriverInfo, dali_why: str) -> str:
    if driver.name == "nvjpg":
        return dali_why
    if driver.name == "ascend":
        return driver.detail.rsplit("'acl'", 1)[-1].strip() or "CANN"
    return f"minddata {__version__}"


def _dvpp_ops(driver: str) -> list[str]:
    try:
        from minddata.ops.devices import Presence, get_device

        return get_device("Dvpp").ops(Presence("Dvpp", driver, ""))
    except Exception:
        return _ops_on("Dvpp")


def _ops_on(device: str) -> list[str]:
    # A device's kernel package may need its optional dependency to import; listing must not fail.
    try:
        from minddata.ops import ops_on

        return list(ops_on(device))
    except Exception:
        return []
