"""What devices this machine offers to pipelines: :func:`devices` (what ``minddata devices`` prints).

A device is *present* only when everything its kernels need is here: for the GPU, NVIDIA DALI and a
visible CUDA device; for Dvpp, a hardware JPEG engine driver (NVIDIA's NVJPG through DALI, or Huawei
Ascend's DVPP through the CANN toolkit's ``acl`` module). When a device is absent, ``detail`` says why
and what fixes it. Detection imports nothing heavy unless needed and never raises.

Example:
    >>> import minddata as md
    >>> cpu = md.devices()[0]
    >>> cpu.name, cpu.present
    ('CPU', True)
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DeviceInfo", "DriverInfo", "devices", "visible_gpus"]

GPU_INSTALL_HINT = "nvidia-dali-cuda120 not installed: pip install 'minddata[gpu]'"
# GPUs with NVJPG, the fixed-function JPEG decoder DALI drives through ``hw_decoder_load``.
NVJPG_GPUS = ("A100", "A800", "A30", "H100", "H800", "H200", "GH200")
_NVIDIA_SMI_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class DriverInfo:
    """One way a device can be driven (Dvpp has several): whether it is usable here, and why (not)."""

    name: str
    available: bool
    detail: str


@dataclass
class DeviceInfo:
    """One device: ``present`` says whether pipelines can place ops on it.

    ``detail`` describes what was found, or why the device is absent and the fix. ``ops`` are the
    ops that have a kernel for the device (whether or not it is present).
    """

    name: str
    present: bool
    detail: str
    ops: list[str] = field(default_factory=list)
    drivers: list[DriverInfo] = field(default_factory=list)


def devices() -> list[DeviceInfo]:
    """CPU, GPU and Dvpp, in that order, as detected on this machine now."""
    gpus, gpu_why = visible_gpus()
    dali_ok, dali_why = _dali()
    return [_cpu(), _gpu(gpus, gpu_why, dali_ok, dali_why), _dvpp(gpus, dali_ok, dali_why)]


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
    try:
        import PIL
        from PIL import features

        turbo = features.check_feature("libjpeg_turbo")
        decoders.append(f"Pillow {PIL.__version__} ({'libjpeg-turbo' if turbo else 'libjpeg, not turbo'})")
    except Exception as exc:  # Pillow is a core dependency, but say so rather than crash
        decoders.append(f"Pillow unavailable ({type(exc).__name__})")
    try:
        import cv2

        decoders.append(f"OpenCV {cv2.__version__}")
    except Exception:
        pass
    detail = f"{cores}; JPEG decoders: {', '.join(decoders)}"
    return DeviceInfo("CPU", True, detail, _ops_on("CPU"))


# --- GPU ------------------------------------------------------------------------------------------


def _dali() -> tuple[bool, str]:
    """Whether ``nvidia.dali`` imports, and its version or why not."""
    try:
        if importlib.util.find_spec("nvidia.dali") is None:
            return False, GPU_INSTALL_HINT
    except (ImportError, ValueError):  # the ``nvidia`` namespace itself is missing
        return False, GPU_INSTALL_HINT
    try:
        dali = importlib.import_module("nvidia.dali")
    except Exception as exc:
        return False, f"nvidia.dali is installed but failed to import ({type(exc).__name__}: {exc})"
    return True, f"DALI {getattr(dali, '__version__', '?')}"


def _cuda_visible_filter(gpus: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """Apply ``CUDA_VISIBLE_DEVICES`` (indices or UUIDs, comma-separated) the way CUDA does: an
    entry that names no device ends the list."""
    spec = os.environ.get("CUDA_VISIBLE_DEVICES")
    if spec is None:
        return gpus
    chosen = []
    for token in (t.strip() for t in spec.split(",")):
        match = [g for g in gpus if (token.isdigit() and g[0] == int(token)) or (token and g[2].startswith(token))]
        if not match:
            break
        chosen.append(match[0])
    return chosen


def visible_gpus() -> tuple[list[str], str]:
    """Names of the NVIDIA GPUs CUDA would see here, and, when there are none, why.

    Asks ``nvidia-smi -L`` (with a short timeout), falling back to the driver's ``/proc`` entries;
    honours ``CUDA_VISIBLE_DEVICES``.
    """
    found: list[tuple[int, str, str]] = []  # (index, name, uuid)
    why = "no NVIDIA GPU visible"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run(
                [smi, "-L"], capture_output=True, text=True, timeout=_NVIDIA_SMI_TIMEOUT_S, check=False
            )
            for line in out.stdout.splitlines():
                m = re.match(r"GPU (\d+): (.+?) \(UUID: ([^)]+)\)", line.strip())
                if m:
                    found.append((int(m.group(1)), m.group(2), m.group(3)))
            if not found:
                why = f"no NVIDIA GPU visible (nvidia-smi -L: {(out.stderr or out.stdout).strip()[:120] or 'none'})"
        except subprocess.TimeoutExpired:
            why = f"no NVIDIA GPU visible (nvidia-smi -L did not answer in {_NVIDIA_SMI_TIMEOUT_S:.0f} s)"
        except OSError as exc:
            why = f"no NVIDIA GPU visible (nvidia-smi failed: {exc})"
    else:
        # No nvidia-smi (e.g. a container without the utilities): the driver still lists its GPUs.
        proc = Path("/proc/driver/nvidia/gpus")
        try:
            for i, entry in enumerate(sorted(proc.iterdir())):
                info = (entry / "information").read_text()
                model = re.search(r"Model:\s*(.+)", info)
                uuid = re.search(r"GPU UUID:\s*(\S+)", info)
                found.append((i, model.group(1).strip() if model else "NVIDIA GPU", uuid.group(1) if uuid else ""))
        except OSError:
            pass
        if not found:
            why = "no NVIDIA GPU visible (no nvidia-smi, no NVIDIA driver in /proc)"
    visible = _cuda_visible_filter(found)
    if found and not visible:
        why = f"no NVIDIA GPU visible (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} hides all)"
    return [name for _, name, _ in visible], ("" if visible else why)


def _gpu(gpus: list[str], gpu_why: str, dali_ok: bool, dali_why: str) -> DeviceInfo:
    ops = _ops_on("GPU")
    if gpus and dali_ok:
        return DeviceInfo("GPU", True, f"{', '.join(gpus)}; {dali_why}", ops)
    reasons = [r for r in (gpu_why, "" if dali_ok else dali_why) if r]
    return DeviceInfo("GPU", False, "; ".join(reasons), ops)


# --- Dvpp -----------------------------------------------------------------------------------------


def _nvjpg(gpus: list[str], dali_ok: bool, dali_why: str) -> DriverInfo:
    hw = [g for g in gpus if any(re.search(rf"\b{m}\b", g) for m in NVJPG_GPUS)]
    if not gpus:
        return DriverInfo("nvjpg", False, "no NVIDIA GPU visible")
    if not hw:
        return DriverInfo(
            "nvjpg", False, f"{gpus[0]} has no hardware JPEG decoder (needs an A100/H100/H200-class GPU)"
        )
    if not dali_ok:
        return DriverInfo("nvjpg", False, f"{hw[0]} has NVJPG, but {dali_why}")
    return DriverInfo("nvjpg", True, f"{hw[0]} NVJPG through {dali_why}")


def _ascend() -> DriverInfo:
    try:
        if importlib.util.find_spec("acl") is None:
            return DriverInfo("ascend", False, "CANN toolkit's 'acl' module not found: install Ascend CANN")
        importlib.import_module("acl")
    except Exception as exc:
        return DriverInfo("ascend", False, f"'acl' module failed to import ({type(exc).__name__}: {exc})")
    return DriverInfo("ascend", True, "Ascend DVPP through CANN 'acl'")


def _dvpp(gpus: list[str], dali_ok: bool, dali_why: str) -> DeviceInfo:
    drivers = [
        _nvjpg(gpus, dali_ok, dali_why),
        _ascend(),
        # The reference model runs DVPP's rules on the CPU: it previews output differences and tests
        # placement, but is never a speed-up, so automatic placement never picks it.
        DriverInfo("reference", True, "CPU model of DVPP's rules; used only when selected explicitly"),
    ]
    hardware = [d for d in drivers if d.available and d.name != "reference"]
    if hardware:
        detail = "; ".join(f"{d.name}: {d.detail}" for d in hardware)
        return DeviceInfo("Dvpp", True, detail, _ops_on("Dvpp"), drivers)
    missing = "; ".join(f"{d.name}: {d.detail}" for d in drivers if d.name != "reference")
    detail = f"no hardware JPEG engine ({missing}); reference CPU model available when selected explicitly"
    return DeviceInfo("Dvpp", False, detail, _ops_on("Dvpp"), drivers)


def _ops_on(device: str) -> list[str]:
    # A device's kernel package may need its optional dependency to import; listing must not fail.
    try:
        from minddata.ops import ops_on

        return list(ops_on(device))
    except Exception:
        return []
