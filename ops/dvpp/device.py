"""Dvpp, the accelerator's fixed-function media engine, as the engine sees it
(:class:`~minddata.ops.devices.Device`).

Its drivers (:func:`~minddata.ops.probe.dvpp_driver` picks one): ``nvjpg`` (NVIDIA's hardware JPEG
decoder; its ops ride in the GPU's DALI segment), ``ascend`` (Huawei DVPP through CANN; per row) and
``reference`` (a CPU model of DVPP's rules, per row; chosen only by name, never by ``device="auto"``).

Examples:
    >>> from minddata.ops.devices import get_device
    >>> dvpp = get_device("Ascend")  # MindSpore's name for it
    >>> dvpp.name, dvpp.backends()
    ('Dvpp', ('nvjpg', 'ascend', 'reference'))
    >>> from minddata.ops.devices import Presence
    >>> "Decode" in dvpp.ops(Presence("Dvpp", "reference", "CPU model of DVPP's rules"))
    True
"""

from __future__ import annotations

import copy

from minddata._version import __version__
from minddata.config import RunOptions
from minddata.ops import probe
from minddata.ops.base import Op
from minddata.ops.devices import Device, DeviceInfo, Presence, Segment, get_device, run_options
from minddata.ops.dvpp.kernels import DRIVER_OPS, unsupported_reason
from minddata.ops.registry import ops_on

__all__ = ["DEVICE", "DvppDevice"]

DVPP_FIX = ("run where a media engine is (an A100/H100/H200 GPU with `pip install 'minddata[gpu]'`, or Ascend "
            "with CANN), place the op with .device('CPU'), minddata.config.set_device_fallback('cpu') to run it on "
            "the CPU with a warning, or minddata.config.set_dvpp_driver('reference') to preview it on the CPU "
            "model of DVPP")
# Drivers that are the media engine itself; the reference model previews DVPP's output on the CPU.
_HARDWARE = ("nvjpg", "ascend")
# The driver whose ops run inside the GPU's segment, on the GPU's hardware JPEG decoder.
_ON_GPU = "nvjpg"


class DvppDevice(Device):
    """Dvpp-placed ops: decode and crop/resize (VPC) on the media engine, under DVPP's rules."""

    name = "Dvpp"
    aliases = ("Ascend",)
    cost_factor = 0.03
    # Every decode of a Dvpp op goes to the hardware decoder: that is what placing it there asks for.
    hw_decoder_load = 1.0

    def probe(self, options: RunOptions | None = None) -> Presence:
        driver, why = probe.dvpp_driver(options=run_options(options))
        return Presence(self.name, driver, why, "" if driver else DVPP_FIX)

    def backends(self) -> tuple[str, ...]:
        return (*_HARDWARE, "reference")  # hardware first, as the probe looks for them

    def _driver(self, presence: Presence) -> str:
        return presence.backend or "reference"

    def ops(self, presence: Presence) -> list[str]:
        return sorted(DRIVER_OPS.get(self._driver(presence), ()))

    def report(self) -> DeviceInfo:
        # The probe's verdict (what pipelines get), with every driver and whether it is usable here.
        presence = self.probe()
        drivers = probe.dvpp_drivers()
        if not presence.present:
            return DeviceInfo(self.name, False, f"{presence.detail}; fix: {presence.fix}", ops_on(self.name), drivers)
        chosen = next(d for d in drivers if d.name == presence.backend)
        shown = [chosen, *(d for d in drivers if d.available and d.name not in (chosen.name, "reference"))]
        detail = "; ".join(f"{d.name}: {d.detail}" for d in shown)
        if chosen.name == "reference":
            detail += " (config.set_dvpp_driver('reference'))"
        return DeviceInfo(self.name, True, detail, self.ops(presence), drivers, driver=chosen.name,
                          version=_driver_version(chosen))

    def unsupported_reason(self, op: Op, presence: Presence) -> str | None:
        driver = self._driver(presence)
        if op.name not in DRIVER_OPS.get(driver, ()):
            return f"no {op.name} kernel on its {driver!r} driver"
        return unsupported_reason(op, driver)

    def auto_eligible(self, presence: Presence) -> bool:
        return presence.backend in _HARDWARE

    def segment_host(self, presence: Presence) -> str | None:
        return "GPU" if presence.backend == _ON_GPU else None

    def segment_backend(self, presence: Presence) -> str | None:
        return "cuda"  # NVJPG is hardware: the segment must run on the real GPU, never an emulation

    def describe_segment(self, backend: str | None) -> str:
        return get_device("GPU").describe_segment(backend)

    def build_segment(self, ops: list[Op], *, backend: str | None, options: RunOptions, batch_size: int,
                      num_threads: int, output: str = "host") -> Segment:
        return get_device("GPU").build_segment(ops, backend=backend, options=options, batch_size=batch_size,
                                               num_threads=num_threads, output=output)

    def bind(self, op: Op, presence: Presence) -> Op:
        if presence.backend is None:
            return op
        clone = copy.copy(op)
        vars(clone)["_dvpp_driver"] = presence.backend  # a placement decision (what the probe found), not a setting
        return clone

    def driver_note(self, presence: Presence) -> str:
        return f" (driver {presence.backend!r})"

    def row_falls_back(self, op: Op, options: RunOptions) -> bool:
        return options.dvpp_policy == "cpu"  # config.set_dvpp_policy: a refused row runs on the CPU

    def occupies_gpu(self, backend: str | None) -> bool:
        return False  # its nvjpg ops ride in a GPU segment, which reserves the GPU


DEVICE = DvppDevice()


def _driver_version(driver: probe.DriverInfo) -> str:
    if driver.name == "nvjpg":
        return probe.dali_status()[1]
    if driver.name == "ascend":
        return driver.detail.rsplit("'acl'", 1)[-1].strip() or "CANN"
    return f"minddata {__version__}"
