"""Devices behind one interface: what the engine knows about CPU, GPU and Dvpp (DESIGN.md §5).

The placement pass, the device map and ``minddata devices`` see a device only through
:class:`Device`: whether it is present here and, when not, why and the fix (:meth:`Device.probe`;
:meth:`Device.report` is the fuller account ``minddata devices`` prints);
its backends; the ops it runs and with which parameters; whether ``device="auto"`` may choose it; its
cost factor; whether its ops run per row or as one batched segment, and how that segment is built.
Adding an accelerator is one new :class:`Device` registered with :func:`register_device`; the engine
has no device-name branches.

Data moves in and out of a device inside its :class:`Segment`: rows go in as host values and come
back as host arrays, or, when the segment ends a map whose consumer takes device tensors, still in
device memory (``output="device"``); each run reports what crossed (:class:`SegmentStats`). Devices
whose ops run per row take and give host values through their registered kernels.

Examples:
    >>> from minddata.ops.devices import devices, get_device
    >>> [device.name for device in devices()]
    ['CPU', 'GPU', 'Dvpp']
    >>> get_device("Ascend").name  # MindSpore's name for the media engine
    'Dvpp'
    >>> cpu = get_device("CPU")
    >>> presence = cpu.probe()
    >>> presence.present, cpu.auto_eligible(presence)
    (True, True)
"""

from __future__ import annotations

import importlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from minddata import config
from minddata.config import RunOptions
from minddata.errors import DeviceError
from minddata.ops.base import Op, add_device_name, remove_device_name
from minddata.ops.probe import DriverInfo
from minddata.ops.registry import get_kernel, ops_on

__all__ = [
    "DeviceInfo",
    "CpuDevice",
    "Device",
    "Presence",
    "RowFailure",
    "Segment",
    "devices",
    "get_device",
    "register_device",
    "run_options",
    "segment_needs_gpu",
    "unregister_device",
]


@dataclass(frozen=True)
class Presence:
    """What probing one device found.

    ``backend``: the backend or driver its ops run on here (``"cuda"``, ``"torch-cpu"``, ``"nvjpg"``,
    ...), ``None`` when the device is absent. ``detail``: what runs them, or why the device is absent
    (one sentence). ``fix``: when absent, what makes it present (one sentence).

    Examples:
        >>> Presence("GPU", None, "no NVIDIA GPU visible", "run on a machine with an NVIDIA GPU").present
        False
    """

    device: str
    backend: str | None
    detail: str
    fix: str = ""

    @property
    def present(self) -> bool:
        return self.backend is not None


@dataclass
class DeviceInfo:
    """One device as ``minddata devices`` reports it: ``present`` says whether pipelines can place ops
    on it.

    ``detail`` describes what was found, or why the device is absent and the fix. ``driver`` and
    ``version`` name what runs its ops here (empty when absent). ``ops`` are the ops that have a
    kernel for the device (for Dvpp: on its selected driver, else on any); ``drivers``, a device's
    drivers when it has several to choose from.
    """

    name: str
    present: bool
    detail: str
    ops: list[str] = field(default_factory=list)
    drivers: list[DriverInfo] = field(default_factory=list)
    driver: str = ""
    version: str = ""


class RowFailure:
    """A row a segment could not process: ``op_index`` is the op (in the segment) that failed.

    Examples:
        >>> RowFailure(1, ValueError("not a JPEG"))
        RowFailure(op 1: ValueError: not a JPEG)
    """

    __slots__ = ("op_index", "error")

    def __init__(self, op_index: int, error: BaseException):
        self.op_index = op_index
        self.error = error

    def __repr__(self) -> str:
        return f"RowFailure(op {self.op_index}: {type(self.error).__name__}: {self.error})"


class SegmentStats(Protocol):
    """What one :meth:`Segment.run` moved: rows fed host -> device (``to_device``), handed back
    device -> host (``to_host``), and rows that ran on the CPU kernels instead (``cpu_rows``, per op)."""

    to_device: int
    to_host: int
    cpu_rows: dict[str, int] | None


class Segment(Protocol):
    """A run of one device's ops compiled into one executable unit (a DALI pipeline, a torch
    segment), fed a batch of rows per :meth:`run`. One thread uses it at a time, under ``lock``.

    ``run(values, contexts)`` returns one result per row (the output, or a :class:`RowFailure`) and
    the batch's :class:`SegmentStats`; ``contexts[i]`` holds row ``i``'s kernel context per op.
    """

    lock: threading.Lock

    def run(self, values: list[Any], contexts: list[list[Any]]) -> tuple[list[Any], SegmentStats]: ...

    def close(self) -> None: ...


def run_options(options: RunOptions | None) -> RunOptions:
    """``options``, or the settings now when a caller has no run's options (eager tools, listings)."""
    return options if options is not None else config.snapshot()


class Device(ABC):
    """One device the engine can place ops on. Subclasses set the class attributes and implement
    :meth:`probe` and :meth:`backends`; the rest has defaults for a device that runs its registered
    kernels per row.

    Attributes:
        name: the canonical name ops are placed with (``op.device(name)``).
        aliases: other names for it, any case (``"Ascend"`` for ``"Dvpp"``).
        cost_factor: how fast it runs an op relative to one CPU core (smaller is cheaper); placement
            weights device time lightly, since the point of offload is to free the CPU.
        on_host: whether its data lives in host memory (moving data between two devices on the same
            side costs nothing).
        hw_decoder_load: for ops of this device inside a segment with a hardware JPEG decoder, the
            share of decoding sent to that decoder.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    cost_factor: ClassVar[float] = 1.0
    on_host: ClassVar[bool] = False
    hw_decoder_load: ClassVar[float] = 0.0

    @abstractmethod
    def probe(self, options: RunOptions | None = None) -> Presence:
        """Whether this device is present under a run's ``options`` (default: the settings now), the
        backend chosen, and, when absent, why and the fix. Never raises; imports nothing heavy."""

    @abstractmethod
    def backends(self) -> tuple[str, ...]:
        """Every backend or driver this device can run on (present here or not)."""

    def ops(self, presence: Presence) -> list[str]:
        """Names of the ops this device runs with the backend ``presence`` names, sorted."""
        return ops_on(self.name)

    def report(self) -> DeviceInfo:
        """This device as ``minddata devices`` reports it, from the settings now (its probe's verdict,
        what runs its ops, their names). Never raises."""
        presence = self.probe()
        detail = presence.detail if presence.present else f"{presence.detail}; fix: {presence.fix}"
        return DeviceInfo(self.name, presence.present, detail, self.ops(presence), driver=presence.backend or "")

    def unsupported_reason(self, op: Op, presence: Presence) -> str | None:
        """Why this device can't run ``op`` with its parameters on ``presence``'s backend, or ``None``.
        Only asked about ops with a kernel registered for the device."""
        return None

    def auto_eligible(self, presence: Presence) -> bool:
        """Whether ``device="auto"`` may choose this device: real hardware, not an emulation."""
        return presence.present

    def segment_host(self, presence: Presence) -> str | None:
        """The device whose segment runs this device's ops as a batch, or ``None`` when they run per
        row in the map's workers (each op on its registered kernel)."""
        return None

    def segment_backend(self, presence: Presence) -> str | None:
        """The backend of a segment holding this device's ops (see :meth:`segment_host`)."""
        return presence.backend

    def describe_segment(self, backend: str | None) -> str:
        """What a segment of this device on ``backend`` is, for ``explain()``."""
        return f"one segment on {backend}"

    def build_segment(self, ops: list[Op], *, backend: str | None, options: RunOptions, batch_size: int,
                      num_threads: int, output: str = "host") -> Segment:
        """The executable segment that runs ``ops`` (a run of ops that :meth:`segment_host` puts in one
        segment; a device riding in another's hands the building to it) on ``backend``, fed up to
        ``batch_size`` rows at a time. ``output``: ``"host"`` for
        host arrays, ``"device"`` to hand rows on in device memory (torch/CuPy tensors)."""
        raise DeviceError(f"{self.name}: its ops run per row; it builds no segments. Place them with .device('CPU')")

    def bind(self, op: Op, presence: Presence) -> Op:
        """``op`` with what the probe decided that its kernels need (e.g. the driver), as a copy; the
        op itself when nothing is needed."""
        return op

    def driver_note(self, presence: Presence) -> str:
        """What error messages add after the device's name to say which driver answered."""
        return ""

    def row_falls_back(self, op: Op, options: RunOptions) -> bool:
        """Whether a row this device refuses for ``op`` runs on the op's CPU kernel instead."""
        return False

    def occupies_gpu(self, backend: str | None) -> bool:
        """Whether a segment on ``backend`` needs a GPU of its own (executors reserve one for it)."""
        return False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class CpuDevice(Device):
    """The host: the CPU kernels (Pillow, OpenCV, NumPy), always present, every op's baseline."""

    name = "CPU"
    on_host = True

    def probe(self, options: RunOptions | None = None) -> Presence:
        cores = os.cpu_count() or 1
        return Presence(self.name, "cpu", f"minddata CPU kernels on {cores} core(s)")

    def backends(self) -> tuple[str, ...]:
        return ("cpu",)

    def report(self) -> DeviceInfo:
        total = os.cpu_count() or 1
        try:
            usable = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            usable = total
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
        return DeviceInfo(self.name, True, detail, ops_on(self.name), driver="minddata CPU kernels",
                          version=version.strip(", "))


# ---------------------------------------------------------------------------------------------- registry

# Implementations of the bundled accelerators load on first use: their packages register kernels.
_BUILTIN = (("GPU", "minddata.ops.gpu.device"), ("Dvpp", "minddata.ops.dvpp.device"))
_registry: dict[str, Device] = {}
_lock = threading.RLock()


def _load_builtin() -> None:
    if _registry:
        return
    with _lock:
        if _registry:
            return
        found: dict[str, Device] = {"CPU": CpuDevice()}
        for name, module in _BUILTIN:
            found[name] = importlib.import_module(module).DEVICE
        _registry.update(found)


def register_device(device: Device) -> Device:
    """Add ``device`` (or replace the one of the same name); returns it.

    Examples:
        >>> from minddata.ops.devices import CpuDevice, Presence, register_device, unregister_device
        >>> class Spare(CpuDevice):
        ...     name = "Spare"
        ...     on_host = False
        ...     def probe(self, options=None):
        ...         return Presence(self.name, None, "no spare device here", "install one")
        >>> register_device(Spare()).name
        'Spare'
        >>> get_device("spare").probe().present
        False
        >>> unregister_device("Spare")
    """
    _load_builtin()
    if not isinstance(device, Device):
        raise TypeError(f"register_device: expected a minddata.ops.devices.Device. Found: {type(device).__name__}")
    with _lock:
        _registry[device.name] = device
        add_device_name(device.name, device.aliases)  # so op.device(name) accepts it
    return device


def unregister_device(name: str) -> None:
    """Remove a device added by :func:`register_device`; the bundled CPU, GPU and Dvpp stay."""
    device = get_device(name)
    if device.name in ("CPU", *(n for n, _ in _BUILTIN)):
        raise ValueError(f"unregister_device: {device.name} is bundled with minddata and can't be removed")
    with _lock:
        _registry.pop(device.name, None)
        remove_device_name(device.name)


def devices() -> list[Device]:
    """Every device, the CPU first, then in the order they were registered."""
    _load_builtin()
    return list(_registry.values())


def get_device(name: str) -> Device:
    """The device called ``name`` or one of its aliases (any case), or a :class:`DeviceError`."""
    _load_builtin()
    found = _registry.get(name)
    if found is not None:
        return found
    wanted = str(name).lower()
    for device in _registry.values():
        if wanted == device.name.lower() or wanted in (a.lower() for a in device.aliases):
            return device
    raise DeviceError(f"no device {name!r}; devices: {', '.join(_registry)}. Place the op on one of them")


def segment_needs_gpu(backend: str | None) -> bool:
    """Whether a segment on ``backend`` needs a GPU of its own: an executor that hands out GPUs (Ray)
    reserves one for it; an emulated segment needs none.

    Examples:
        >>> segment_needs_gpu("cuda"), segment_needs_gpu("dali-cpu")
        (True, False)
    """
    return any(device.occupies_gpu(backend) for device in devices())


def cpu_kernels(ops: list[Op]) -> list[Callable[..., Any]]:
    """Each op's CPU kernel: what a segment runs a row on when its device refuses it."""
    return [get_kernel(op.name, "CPU") for op in ops]
