"""The GPU as the engine sees it (:class:`~minddata.ops.devices.Device`): NVIDIA DALI or PyTorch CUDA
tensors, a run of GPU ops compiled into one segment (:mod:`minddata.ops.gpu.drivers`).

Examples:
    >>> from minddata.ops.devices import get_device
    >>> gpu = get_device("gpu")
    >>> gpu.backends()
    ('cuda', 'dali-cpu', 'torch-cuda', 'torch-cpu')
    >>> presence = gpu.probe()
    >>> presence.present or "minddata[gpu]" in presence.fix  # absent: the fix names the install
    True
"""

from __future__ import annotations

import shutil
import subprocess

from minddata.config import RunOptions
from minddata.ops import probe
from minddata.ops.base import Op
from minddata.ops.devices import Device, DeviceInfo, Presence, Segment, cpu_kernels, get_device, run_options
from minddata.ops.gpu.drivers import BACKENDS, describe, is_real_gpu, make_segment, unsupported_reason
from minddata.ops.gpu.segment import GPU_HW_DECODER_LOAD
from minddata.ops.registry import ops_on

__all__ = ["DEVICE", "GpuDevice"]

GPU_FIX = ("run on a machine with an NVIDIA GPU and `pip install 'minddata[gpu]'`, place the op with "
           ".device('CPU'), or minddata.config.set_device_fallback('cpu') to run it on the CPU with a warning")


_DRIVER_NAMES = {"cuda": "DALI", "dali-cpu": "DALI (CPU backend)", "torch-cuda": "torch", "torch-cpu": "torch (CPU tensors)"}


class GpuDevice(Device):
    """GPU-placed ops: probed by :func:`~minddata.ops.probe.gpu_backend`; consecutive ones run as one
    DALI pipeline or torch segment, fed a batch of rows per run."""

    name = "GPU"
    cost_factor = 0.05
    hw_decoder_load = GPU_HW_DECODER_LOAD

    def probe(self, options: RunOptions | None = None) -> Presence:
        backend, why = probe.gpu_backend(options=run_options(options))
        return Presence(self.name, backend, why, "" if backend else GPU_FIX)

    def backends(self) -> tuple[str, ...]:
        return BACKENDS

    def ops(self, presence: Presence) -> list[str]:
        ops = ops_on(self.name)
        if presence.backend is not None and presence.backend.startswith("torch"):
            from minddata.ops.gpu.torch_segment import TORCH_OPS

            return sorted(set(ops) & set(TORCH_OPS))  # the ops the torch driver has
        return ops

    def report(self) -> DeviceInfo:
        # The probe's verdict (what pipelines get), then what runs the ops and its version.
        presence = self.probe()
        if not presence.present:
            return super().report()
        backend = presence.backend
        detail = presence.detail
        if backend in ("cuda", "dali-cpu"):
            version = probe.dali_status()[1].removeprefix("DALI ")
            nvidia = _nvidia_driver_version() if backend == "cuda" else ""
            if nvidia:
                gpu, _, rest = detail.partition("; ")
                detail = f"{gpu} (NVIDIA driver {nvidia}); {rest}"
        else:
            version = detail.rsplit("PyTorch ", 1)[-1]
        return DeviceInfo(self.name, True, detail, self.ops(presence), driver=_DRIVER_NAMES[backend or ""],
                          version=version)

    def unsupported_reason(self, op: Op, presence: Presence) -> str | None:
        return unsupported_reason(op, presence.backend)

    def auto_eligible(self, presence: Presence) -> bool:
        return is_real_gpu(presence.backend)  # an emulated GPU is a preview, never a speed-up

    def segment_host(self, presence: Presence) -> str | None:
        return self.name

    def segment_backend(self, presence: Presence) -> str | None:
        # Unprobed (a plan made elsewhere): DALI on the GPU, the default driver.
        return presence.backend or "cuda"

    def describe_segment(self, backend: str | None) -> str:
        return describe(backend)

    def build_segment(self, ops: list[Op], *, backend: str | None, options: RunOptions, batch_size: int,
                      num_threads: int, output: str = "host") -> Segment:
        """A DALI pipeline or torch segment over ``ops``; ops of a device riding in it (Dvpp on the
        GPU's hardware decoder) bring their decoder load and their per-row CPU fallback."""
        riders = [get_device(op.device_target) for op in ops]
        falls_back = [device.row_falls_back(op, options) for device, op in zip(riders, ops, strict=True)]

        def cpu_fallback(k: int, error: BaseException) -> bool:
            # Only a row the device refused for its data (a rule, a format); faults still stop the run.
            return falls_back[k] and isinstance(error, ValueError)

        return make_segment(
            ops,
            backend=backend or "cuda",
            hw_decoder_load=[device.hw_decoder_load for device in riders],
            batch_size=batch_size,
            num_threads=num_threads,
            options=options,  # the segment's device (gpu_device_id) and, for device output, the framework
            output=output,
            cpu_fallback=cpu_fallback if any(falls_back) else None,
            cpu_kernels=cpu_kernels(ops),
        )

    def occupies_gpu(self, backend: str | None) -> bool:
        return is_real_gpu(backend)


DEVICE = GpuDevice()


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
