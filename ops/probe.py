"""What this machine has for the GPU and Dvpp devices: NVIDIA GPUs, DALI, NVJPG, Ascend's ``acl``.

Everything here is cheap to import, never raises, and imports DALI or ``acl`` only to check that they
import. ``minddata.devices()`` (the report) and the engine's placement pass (the decisions) both read
these probes, so what ``minddata devices`` prints is what pipelines get.

Examples:
    >>> from minddata.ops import probe
    >>> ok, why = probe.gpu_backend()
    >>> ok in ("cuda", "dali-cpu", None)
    True
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from minddata import config
from minddata.config import RunOptions

__all__ = [
    "DALI_INSTALL_HINT",
    "GPU_INSTALL_HINT",
    "NVJPG_GPUS",
    "DriverInfo",
    "ascend_driver",
    "dali_status",
    "dvpp_driver",
    "dvpp_drivers",
    "gpu_backend",
    "torch_status",
    "nvjpg_driver",
    "visible_gpus",
]

DALI_INSTALL_HINT = "pip install 'minddata[gpu]' (NVIDIA DALI, nvidia-dali-cuda120)"
GPU_INSTALL_HINT = "nvidia-dali-cuda120 not installed: pip install 'minddata[gpu]'"
# GPUs with NVJPG, the fixed-function JPEG decoder DALI drives through ``hw_decoder_load``.
NVJPG_GPUS = ("A100", "A800", "A30", "H100", "H800", "H200", "GH200", "B100", "B200", "GB200", "B300", "GB300")
_NVIDIA_SMI_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class DriverInfo:
    """One way a device can be driven (Dvpp has several): whether it is usable here, and why (not)."""

    name: str
    available: bool
    detail: str


def dali_status() -> tuple[bool, str]:
    """Whether ``nvidia.dali`` imports, and ``"DALI <version>"`` or why not."""
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


def _parse_smi_list(text: str) -> list[tuple[int, str, str]]:
    """``nvidia-smi -L``'s devices as CUDA numbers them: ``(index, name, uuid)``. A GPU in MIG mode is
    replaced by its MIG instances, named ``"<GPU> MIG <profile>"`` (``+me`` profiles carry the media
    engines, NVJPG among them), since those are what CUDA and ``CUDA_VISIBLE_DEVICES=MIG-...`` see.

    Examples:
        >>> _parse_smi_list("GPU 0: NVIDIA H200 (UUID: GPU-a)\\n  MIG 1g.18gb+me  Device  0: (UUID: MIG-b)\\n")
        [(0, 'NVIDIA H200 MIG 1g.18gb+me', 'MIG-b')]
    """
    gpus: list[tuple[str, str, list[tuple[str, str]]]] = []  # (name, uuid, [(profile, uuid)])
    for line in text.splitlines():
        gpu = re.match(r"GPU (\d+): (.+?) \(UUID: ([^)]+)\)", line.strip())
        if gpu:
            gpus.append((gpu.group(2), gpu.group(3), []))
            continue
        mig = re.match(r"MIG (\S+)\s+Device\s+\d+: \(UUID: ([^)]+)\)", line.strip())
        if mig and gpus:
            gpus[-1][2].append((mig.group(1), mig.group(2)))
    found: list[tuple[int, str, str]] = []
    for name, uuid, instances in gpus:
        for profile, mig_uuid in instances or [("", uuid)]:
            found.append((len(found), f"{name} MIG {profile}" if profile else name, mig_uuid))
    return found


def has_nvjpg(gpu: str) -> bool:
    """Whether the device named ``gpu`` (as :func:`visible_gpus` names it) has NVJPG engines: an
    A100/H100/H200/B200-class GPU, and for a MIG instance only a ``+me`` (media extension) or full
    ``7g`` profile, the only ones the engines are given to."""
    if not any(re.search(rf"\b{m}\b", gpu) for m in NVJPG_GPUS):
        return False
    profile = re.search(r" MIG (\S+)$", gpu)
    return profile is None or "+me" in profile.group(1) or profile.group(1).startswith("7g.")


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
            found = _parse_smi_list(out.stdout)
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


def nvjpg_driver(gpus: list[str], dali_ok: bool, dali_why: str) -> DriverInfo:
    hw = [g for g in gpus if has_nvjpg(g)]
    if not gpus:
        return DriverInfo("nvjpg", False, "no NVIDIA GPU visible")
    if not hw:
        return DriverInfo(
            "nvjpg", False, f"{gpus[0]} has no hardware JPEG decoder (needs an A100/H100/H200-class GPU, or a MIG "
            "instance with media engines: a '+me' profile)"
        )
    if not dali_ok:
        return DriverInfo("nvjpg", False, f"{hw[0]} has NVJPG, but {dali_why}")
    return DriverInfo("nvjpg", True, f"{hw[0]} NVJPG through {dali_why}")


def ascend_driver() -> DriverInfo:
    """Huawei DVPP through the CANN toolkit's ``acl`` module: detected, never assumed."""
    try:
        if importlib.util.find_spec("acl") is None:
            return DriverInfo("ascend", False, "CANN toolkit's 'acl' module not found: install Ascend CANN")
        acl = importlib.import_module("acl")
    except Exception as exc:
        return DriverInfo("ascend", False, f"'acl' module failed to import ({type(exc).__name__}: {exc})")
    version = ""
    try:  # pyACL >= CANN 6 reports its version; older ones don't, which is fine
        major, minor, patch, _ = acl.get_version()
        version = f" {major}.{minor}.{patch}"
    except Exception:  # noqa: BLE001 - the version is informative only
        pass
    return DriverInfo("ascend", True, f"Ascend DVPP through CANN 'acl'{version}")


REFERENCE_DRIVER = DriverInfo("reference", True, "CPU model of DVPP's rules; used only when selected explicitly")


def dvpp_drivers(gpus: list[str] | None = None, dali: tuple[bool, str] | None = None) -> list[DriverInfo]:
    """Every Dvpp driver and whether it is usable here (``reference`` always is)."""
    if gpus is None:
        gpus, _ = visible_gpus()
    dali_ok, dali_why = dali if dali is not None else dali_status()
    return [nvjpg_driver(gpus, dali_ok, dali_why), ascend_driver(), REFERENCE_DRIVER]


def dvpp_driver(options: RunOptions | None = None) -> tuple[str | None, str]:
    """The driver Dvpp ops run on under a run's ``options.dvpp_driver`` (default: the settings now,
    ``config.snapshot()``), or ``None`` and why not.

    ``"auto"`` takes the first hardware driver found and never the reference model, which is a
    preview, not an accelerator.
    """
    wanted = (options if options is not None else config.snapshot()).dvpp_driver
    if wanted == "reference":
        return "reference", REFERENCE_DRIVER.detail
    if wanted == "ascend":
        info = ascend_driver()
        return ("ascend", info.detail) if info.available else (None, f"ascend: {info.detail}")
    gpus, gpu_why = visible_gpus()
    dali = dali_status()
    nvjpg = nvjpg_driver(gpus, *dali)
    if wanted == "nvjpg":
        return ("nvjpg", nvjpg.detail) if nvjpg.available else (None, f"nvjpg: {nvjpg.detail}")
    ascend = ascend_driver()
    for info in (nvjpg, ascend):
        if info.available:
            return info.name, info.detail
    return None, (
        f"no hardware JPEG engine (nvjpg: {nvjpg.detail}; ascend: {ascend.detail}); "
        "minddata.config.set_dvpp_driver('reference') runs Dvpp ops on a CPU model of DVPP's rules"
    )


def torch_status() -> tuple[bool, bool, str]:
    """Whether PyTorch imports, whether it sees a CUDA GPU, and ``"PyTorch <version>"`` or why not.

    Imports torch only when it is installed (it takes a second or two), so only when asked.
    """
    try:
        if importlib.util.find_spec("torch") is None:
            return False, False, "PyTorch not installed: pip install 'minddata[torch]'"
        torch = importlib.import_module("torch")
    except Exception as exc:  # noqa: BLE001 - a broken install is reported, not raised
        return False, False, f"torch failed to import ({type(exc).__name__}: {exc})"
    try:
        cuda = bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001
        cuda = False
    build = getattr(torch.version, "cuda", None)
    return True, cuda, f"PyTorch {torch.__version__}" + ("" if build else " (a CPU-only build)")


def _chosen_gpu(gpus: list[str], why: str, device_id: int | None) -> tuple[list[str], str]:
    """``gpus`` with the one ``config.set_gpu_device_id`` chose first (so details name it), or none and
    why when it names a GPU that is not visible."""
    if device_id is None or not gpus:
        return gpus, why
    if device_id >= len(gpus):
        return [], (
            f"config.set_gpu_device_id({device_id}) names GPU {device_id}, but {len(gpus)} NVIDIA GPU(s) are visible "
            f"here ({', '.join(gpus)}): set a device id below {len(gpus)}, or None to follow the training framework"
        )
    return [gpus[device_id], *gpus[:device_id], *gpus[device_id + 1 :]], why


def gpu_backend(emulate: bool | None = None, *, options: RunOptions | None = None) -> tuple[str | None, str]:
    """How GPU-placed ops run here, under a run's ``options.gpu_driver`` (default: the settings now,
    ``config.snapshot()``):

    * ``"cuda"``: DALI on a visible NVIDIA GPU; ``"torch-cuda"``: PyTorch CUDA tensors;
    * ``"dali-cpu"`` / ``"torch-cpu"``: the same driver on the CPU, whenever
      ``config.set_gpu_emulation(True)`` asks for it (GPU or not);
    * ``None``, with what is missing.

    ``"auto"`` takes DALI where it is installed, else torch. ``emulate`` overrides
    ``options.gpu_emulation``. With ``options.gpu_device_id`` set, that GPU is the one named, and a
    GPU that is not visible makes the device absent.
    """
    options = options if options is not None else config.snapshot()
    wanted = options.gpu_driver
    emulate = options.gpu_emulation if emulate is None else emulate
    dali_ok, dali_why = dali_status() if wanted in ("auto", "dali") else (False, "")
    use_dali = wanted == "dali" or (wanted == "auto" and dali_ok)
    gpus, gpu_why = _chosen_gpu(*visible_gpus(), options.gpu_device_id)
    if use_dali:
        # Emulation is asked for by name: it wins over a visible GPU, so tests that compare the DALI
        # translation with the CPU kernels bit for bit run the same graph on a GPU machine.
        if dali_ok and emulate:
            where = gpus[0] if gpus else gpu_why
            return "dali-cpu", f"{where}; emulated on {dali_why}'s CPU backend (config.set_gpu_emulation)"
        if dali_ok and gpus:
            return "cuda", f"{gpus[0]}; {dali_why}"
        return None, "; ".join(why for why in (gpu_why, "" if dali_ok else dali_why) if why)
    torch_ok, torch_cuda, torch_why = torch_status()
    if torch_ok and emulate:
        return "torch-cpu", f"{gpus[0] if gpus else gpu_why}; emulated on {torch_why}'s CPU tensors " \
            "(config.set_gpu_emulation)"
    if torch_ok and gpus and torch_cuda:
        return "torch-cuda", f"{gpus[0]}; {torch_why}"
    missing = [gpu_why] if gpu_why else []
    if torch_ok and gpus:
        missing.append(f"{gpus[0]} is visible but {torch_why} has no CUDA: install a CUDA build of PyTorch")
    elif not torch_ok:
        missing.append(torch_why)
    if wanted == "auto":  # neither driver can run: name DALI's install too, the default driver
        missing.append(dali_why or GPU_INSTALL_HINT)
    return None, "; ".join(missing)
