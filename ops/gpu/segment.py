"""A run of ops as one NVIDIA DALI pipeline, fed batch by batch through ``external_source``.

:class:`DaliSegment` is what the engine runs for consecutive GPU-placed ops (and for Dvpp ops on the
``nvjpg`` driver), and what the per-row GPU kernels run for one op. For each batch it:

1. plans every row on the host (:mod:`minddata.ops.gpu.translation`): checks it as the CPU kernels
   would, draws its random parameters from the row's RNG, works out every shape;
2. feeds the rows and their parameters to the pipeline built for their kind (layout, dtype, channels:
   rows of another kind get a pipeline of their own) and runs it once;
3. hands back one result per row: the output array, or a :class:`RowFailure` naming the op.

Backends: ``"cuda"`` runs on the GPU (Decode on DALI's ``mixed`` decoder); ``"dali-cpu"`` builds the
same graph with DALI's CPU operators (``device_id=None``), which is how CI checks the translation
without a GPU. Pipelines are built on first use and released by :meth:`DaliSegment.close`.

DALI pipelines are not thread-safe: a segment serves one thread at a time (``lock``).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from minddata.errors import DeviceError, PipelineError
from minddata.ops.base import KernelContext, Op
from minddata.ops.devices import RowFailure, run_options  # RowFailure: what every device's segment hands back
from minddata.ops.gpu.translation import TRANSLATIONS, Kind, Sample, dali_type
from minddata.ops.probe import DALI_INSTALL_HINT

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = ["DaliSegment", "GPU_HW_DECODER_LOAD", "PlannedSegment", "RowFailure", "SegmentStats", "device_fault",
           "device_fault_error", "import_dali", "to_host", "cuda_device_id", "torch_dtype"]

# DALI's share of JPEG decoding sent to the hardware decoder (NVJPG) for GPU-placed decoders: DALI's own
# default. GPUs without the engines (and DALI's CPU backend) ignore it and decode on CUDA cores.
GPU_HW_DECODER_LOAD = 0.65

# What a device or driver fault says (CUDA, the driver, nvJPEG's set-up), as opposed to a row's bad data.
_DEVICE_FAULTS = (
    "cuda error", "cudaerror", "cuda_error", "cuda failure", "cuda driver", "cuda runtime", "out of memory",
    "illegal memory access", "illegal address", "illegal instruction", "misaligned address",
    "unspecified launch failure", "device-side assert", "no cuda-capable device", "cuda-capable device(s) is/are busy",
    "ecc error", "uncorrectable", "nvml", "cublas_status", "nvjpeg_status_not_initialized",
    "nvjpeg_status_allocator_failure", "nvjpeg_status_arch_mismatch", "nvjpeg_status_internal_error",
    "nvjpeg_status_execution_failed", "nvjpeg_status_implementation_not_supported", "failed to initialize nvjpeg",
    "nvjpegcreate", "driver shutting down", "initialization error", "launch timed out",
)


def device_fault(error: BaseException) -> bool:
    """Whether ``error`` is the device's or the driver's (CUDA out of memory, an illegal address, an
    nvJPEG that cannot start), not bad data in a row: such an error stops the pipeline as a
    :class:`DeviceError` whatever the error policy, instead of failing every row it meets.

    Examples:
        >>> device_fault(RuntimeError("Critical error in pipeline: CUDA error: out of memory"))
        True
        >>> device_fault(RuntimeError("[/opt/dali/...] nvJPEG error (NVJPEG_STATUS_BAD_JPEG): bitstream"))
        False
    """
    if isinstance(error, MemoryError):
        return True
    name = type(error).__name__
    if name in ("OutOfMemoryError", "AcceleratorError", "CUDARuntimeError", "CUDADriverError"):  # torch, CuPy
        return True
    text = str(error).lower()
    return any(pattern in text for pattern in _DEVICE_FAULTS)


def device_fault_error(ops: list[Op], where: str, error: BaseException) -> DeviceError:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    detail = next((line for line in lines if device_fault(RuntimeError(line))), lines[0] if lines else "")
    return DeviceError(
        f"{', '.join(op.name for op in ops)} on {where}: the device failed ({type(error).__name__}: {detail[:300]}). "
        "This is not a problem with the data, so the error policy does not skip or replace rows for it: check "
        "`nvidia-smi` and the CUDA driver (`minddata devices`), free GPU memory (smaller batches), or place these "
        "ops on the CPU"
    )


def import_dali() -> Any:
    """``nvidia.dali``, or a :class:`DeviceError` naming the extra to install."""
    try:
        import nvidia.dali as dali
        import nvidia.dali.fn  # noqa: F401
        import nvidia.dali.math  # noqa: F401
        import nvidia.dali.types  # noqa: F401
    except ImportError as exc:
        raise DeviceError(
            f"the GPU device runs ops through NVIDIA DALI, which is not installed ({exc}): {DALI_INSTALL_HINT}"
        ) from None
    return dali


def cuda_device_id(options: RunOptions | None = None) -> int:
    """The CUDA device for DALI pipelines: the run's ``options.gpu_device_id``
    (``config.set_gpu_device_id``; default: the settings now), else the training framework's current
    device (torch, when it has initialized CUDA here), else ``$LOCAL_RANK`` (torchrun's per-rank
    variable), else 0. Under DDP each rank then decodes on its own GPU.

    Examples:
        >>> import os
        >>> from minddata import config
        >>> config.set_gpu_device_id(3)
        >>> cuda_device_id()
        3
        >>> config.load_defaults()
    """
    import os
    import sys

    chosen = run_options(options).gpu_device_id
    if chosen is not None:
        return chosen
    torch = sys.modules.get("torch")  # only a framework the script already uses; never imported here
    if torch is not None:
        try:
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_device())
        except Exception:  # noqa: BLE001 - a broken CUDA set-up: fall through to the launcher's rank
            pass
    local_rank = os.environ.get("LOCAL_RANK", "")
    return int(local_rank) if local_rank.isdigit() else 0


@dataclass
class SegmentStats:
    """What one :meth:`DaliSegment.run` moved: rows fed host → device and handed back device → host
    (notional on DALI's CPU backend), and rows that ran on the CPU kernels instead (per op name)."""

    to_device: int = 0
    to_host: int = 0
    cpu_rows: dict[str, int] | None = None

    def count_cpu(self, name: str, rows: int = 1) -> None:
        """``rows`` more rows of op ``name`` ran on the CPU instead of the device."""
        counts = self.cpu_rows if self.cpu_rows is not None else {}
        counts[name] = counts.get(name, 0) + rows
        self.cpu_rows = counts


@dataclass
class _Env:
    """What a translation's ``build`` sees."""

    fn: Any
    types: Any
    math: Any
    device: str  # "gpu" or "cpu": where pixel operators run
    decoder: str  # "mixed" or "cpu"
    hw_decoder_load: float
    const_device: str
    kind_in: Kind


class _UsedArgs(dict):
    """A translation's argument inputs, noting which ones its ``build`` reads."""

    def __init__(self, k: int, used: list[tuple[int, str]], nodes: dict[str, Any]):
        super().__init__(nodes)
        self.k = k
        self.used = used

    def __getitem__(self, name: str) -> Any:
        self.used.append((self.k, name))
        return super().__getitem__(name)


def _entry_sample(op: Op, value: Any) -> Sample:
    """The first op's view of a row: encoded bytes, or an image carried as ``<H, W, C>``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        buf = np.frombuffer(value, np.uint8)
        return Sample((buf.size,), Kind("encoded", np.dtype(np.uint8), None), buf)
    if hasattr(value, "getbands") and hasattr(value, "mode"):  # a PIL image
        value = np.array(value)
    value = to_host(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{op.name}: expected a numpy array or encoded bytes. Found: {type(value).__name__}")
    if value.ndim <= 1 and value.size == 1 and value.dtype.kind == "S":  # bytes scalar or shape-(1,) bytes
        buf = np.frombuffer(value.tobytes(), np.uint8)
        return Sample((buf.size,), Kind("encoded", np.dtype(np.uint8), None), buf)
    if value.ndim == 1 and value.dtype in (np.uint8, np.int8):
        buf = np.ascontiguousarray(value).view(np.uint8)
        return Sample((buf.size,), Kind("encoded", np.dtype(np.uint8), None), buf)
    # DALI takes dense arrays only: views (crops, flips) are copied here.
    if value.ndim == 2:
        image = np.ascontiguousarray(value)[:, :, None]
        return Sample(image.shape, Kind("HWC", value.dtype, 1, gray2d=True), image)
    if value.ndim == 3:
        return Sample(value.shape, Kind("HWC", value.dtype, value.shape[2]), np.ascontiguousarray(value))
    raise ValueError(
        f"{op.name}: expected an image of shape <H, W> or <H, W, C>. Found shape {value.shape} "
        f"({value.ndim}-D, {value.dtype})"
    )


def to_host(value: Any) -> Any:
    """A NumPy copy of a device array (torch CUDA tensor, CuPy array, DALI tensor); anything else as is."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "as_cpu"):  # DALI TensorGPU / TensorListGPU
        return np.array(value.as_cpu())
    if type(value).__module__.startswith("cupy") and hasattr(value, "get"):
        return value.get()
    if type(value).__module__.startswith("torch") and hasattr(value, "cpu"):
        return value.detach().cpu().numpy()
    return value


class PlannedSegment:
    """What every device driver's segment shares: planning a row on the host with the translations'
    plans (the same checks and random draws as the CPU kernels), and the per-row CPU fallback.
    Subclasses set ``ops``, ``translations`` and ``cpu_kernels``."""

    ops: list[Op]
    translations: list[Any]
    cpu_kernels: list[Callable[..., Any]] | None

    def _plan_row(self, value: Any, ctxs: list[KernelContext]) -> Any:
        try:
            sample = _entry_sample(self.ops[0], value)
        except Exception as error:  # noqa: BLE001 - a bad row, reported per row
            return RowFailure(0, error)
        kind = sample.kind
        argsets = []
        feed = None
        for k, (op, tr) in enumerate(zip(self.ops, self.translations, strict=True)):
            try:
                args, out = tr.plan(op, ctxs[k], sample)
            except Exception as error:  # noqa: BLE001
                return RowFailure(k, error)
            if k == 0:
                feed = sample.value  # the first plan may have normalized it (bytes -> uint8 array)
            argsets.append(args)
            sample = out
        return kind, feed, argsets, sample

    def _on_cpu(self, value: Any, ctxs: list[KernelContext], stats: SegmentStats, failure: RowFailure) -> Any:
        """The row on the ops' CPU kernels (Dvpp's per-row fallback), with the same random draws."""
        if self.cpu_kernels is None:
            return failure
        out = value
        try:
            for kernel, op, ctx in zip(self.cpu_kernels, self.ops, ctxs, strict=True):
                out = kernel(op, ctx, out)
        except Exception as error:  # noqa: BLE001
            return RowFailure(failure.op_index, error)
        op = self.ops[failure.op_index]
        stats.count_cpu(getattr(op, "label", op.name))
        return out


class DaliSegment(PlannedSegment):
    """Ops ``ops`` (each with a translation) as DALI pipelines; see the module docstring.

    ``contexts`` passed to :meth:`run` are per row, one :class:`KernelContext` per op; random ops draw
    from them exactly as their CPU kernels would. ``output="device"`` keeps results on the GPU as
    torch CUDA tensors (the engine asks for that only when the consumer takes torch tensors).
    ``cpu_fallback(op_index, error)`` says whether a row whose planning raised ``error`` at op
    ``op_index`` runs on the CPU kernels instead (Dvpp's ``set_dvpp_policy("cpu")``); ``cpu_kernels``
    are the ops' CPU kernels for that. ``hw_decoder_load`` (one value, or one per op) is DALI's share
    of decoding given to the hardware JPEG decoder: 1.0 for Dvpp's ``nvjpg``, ``GPU_HW_DECODER_LOAD``
    (DALI's default) for the GPU, so GPUs with NVJPG engines (A100, H100, H200) use them too.
    ``options``: the run's settings (its ``gpu_device_id`` when ``device_id`` is None, its
    ``framework`` for device output; default: the settings now); each row's plan reads the rest (the
    pixel limit) from the row's context.

    Errors: a row's bad data is that row's :class:`RowFailure`; a device or driver fault
    (:func:`device_fault`: CUDA out of memory, an illegal address, nvJPEG failing to start) raises
    :class:`DeviceError`, which stops the pipeline under every error policy.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> from minddata.ops import KernelContext
        >>> from minddata.ops.gpu.segment import DaliSegment
        >>> seg = DaliSegment([vision.HorizontalFlip()], backend="dali-cpu")  # doctest: +SKIP
        >>> results, _ = seg.run([np.arange(6, dtype=np.uint8).reshape(1, 2, 3)], [[KernelContext()]])  # doctest: +SKIP
        >>> results[0].tolist()  # doctest: +SKIP
        [[[3, 4, 5], [0, 1, 2]]]
        >>> seg.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        ops: list[Op],
        *,
        backend: str,
        hw_decoder_load: float | list[float] = GPU_HW_DECODER_LOAD,
        batch_size: int = 32,
        num_threads: int = 2,
        device_id: int | None = None,
        output: str = "host",
        cpu_fallback: Callable[[int, BaseException], bool] | None = None,
        cpu_kernels: list[Callable[..., Any]] | None = None,
        options: RunOptions | None = None,
    ):
        if backend not in ("cuda", "dali-cpu"):
            raise ValueError(f"DaliSegment: backend must be 'cuda' or 'dali-cpu'. Found: {backend!r}")
        missing = [op.name for op in ops if op.name not in TRANSLATIONS]
        if missing:
            raise DeviceError(f"{', '.join(missing)}: no GPU kernel (DALI translation)")
        self.ops = list(ops)
        self.translations = [TRANSLATIONS[op.name] for op in ops]
        self.backend = backend
        # Per op: 1.0 sends a decoder's work to NVJPG (Dvpp); the GPU shares it between NVJPG and CUDA cores.
        loads = hw_decoder_load if isinstance(hw_decoder_load, list) else [hw_decoder_load] * len(ops)
        self.hw_decoder_loads = [float(x) for x in loads]
        self.batch_size = max(1, int(batch_size))
        self.num_threads = max(1, int(num_threads))
        self.options = options = run_options(options)
        self.device_id = cuda_device_id(options) if device_id is None else int(device_id)
        self.output = output
        self.cpu_fallback = cpu_fallback
        self.cpu_kernels = cpu_kernels
        self.lock = threading.Lock()
        self._pipelines: dict[Kind, Any] = {}
        self._fed: dict[Kind, list[tuple[int, str]]] = {}
        self._closed = False

    # -- pipelines -------------------------------------------------------------------------------

    def _pipeline(self, kind: Kind) -> Any:
        pipe = self._pipelines.get(kind)
        if pipe is None:
            pipe = self._pipelines[kind] = self._build(kind)
        return pipe

    def _build(self, kind: Kind) -> Any:
        """The built pipeline for rows of ``kind``. A failure here is the device's (no CUDA, a graph
        DALI rejects), never a row's: it raises :class:`DeviceError` at once, naming the ops."""
        try:
            pipe = self.define(kind)
            pipe.build()
        except DeviceError:
            raise
        except Exception as error:  # noqa: BLE001 - DALI raises RuntimeError for every build problem
            detail = str(error).strip().splitlines()
            raise DeviceError(
                f"{', '.join(op.name for op in self.ops)}: the DALI pipeline for the "
                f"{'GPU' if self.backend == 'cuda' else 'CPU backend'} could not be built "
                f"({detail[0][:300] if detail else type(error).__name__}). This is not a problem with the data: "
                "check the CUDA driver and DALI installation (`minddata devices`), or place these ops on the CPU"
            ) from error
        return pipe

    def define(self, kind: Kind) -> Any:
        """The DALI pipeline graph for rows of ``kind``, defined but not built.

        Defining checks every operator's device against its inputs' devices (DALI asserts on a CPU
        operator fed GPU data), so the CUDA graph can be checked on a machine without a GPU.
        """
        dali = import_dali()
        fn, types = dali.fn, dali.types
        cuda = self.backend == "cuda"
        pipe = dali.Pipeline(
            batch_size=self.batch_size,
            num_threads=self.num_threads,
            device_id=self.device_id if cuda else None,
            exec_dynamic=True,
            # One batch in flight: the engine feeds a batch and takes its result in the same call.
            prefetch_queue_depth=1,
        )
        with pipe:
            layout = None if kind.layout == "encoded" else "HWC"
            node = fn.external_source(name="in", dtype=dali_type(kind.dtype, types), layout=layout, device="cpu")
            on_gpu = False
            current = kind
            used: list[tuple[int, str]] = []
            for k, (op, tr) in enumerate(zip(self.ops, self.translations, strict=True)):
                args = _UsedArgs(k, used, {
                    name: fn.external_source(name=f"arg{k}_{name}", dtype=dali_type(np.dtype(dt), types), device="cpu")
                    for name, dt in tr.args.items()
                })
                if cuda and not on_gpu and not tr.first_only:
                    node = node.gpu()  # the one host -> device copy of this segment
                    on_gpu = True
                # A decoder reads host bytes and (on the mixed backend) writes GPU memory: the operators a
                # fused decode adds after it (resize, crop) must then run on the GPU too.
                pixels_on_gpu = on_gpu or (cuda and tr.first_only)
                env = _Env(
                    fn=fn,
                    types=types,
                    math=dali.math,
                    device="gpu" if pixels_on_gpu else "cpu",
                    decoder="mixed" if cuda else "cpu",
                    hw_decoder_load=self.hw_decoder_loads[k],
                    const_device="gpu" if pixels_on_gpu else "cpu",
                    kind_in=current,
                )
                node = tr.build(op, node, args, env)
                if cuda and tr.first_only:
                    on_gpu = True  # the mixed decoder's output is on the GPU
                current = tr.static(op, current)
            pipe.set_outputs(node)
        # DALI drops inputs the graph does not read (e.g. RandomColorAdjust's unused adjustments); only
        # the ones read may be fed.
        self._fed[kind] = sorted(set(used))
        return pipe

    def _discard(self, kind: Kind) -> None:
        # After an error DALI's pipeline object is no longer valid; the next batch builds a new one.
        pipe = self._pipelines.pop(kind, None)
        del pipe

    def close(self) -> None:
        """Release every pipeline (and the device memory it holds). Idempotent."""
        self._closed = True
        self._pipelines.clear()

    # -- running ---------------------------------------------------------------------------------

    def run(self, values: list[Any], contexts: list[list[KernelContext]]) -> tuple[list[Any], SegmentStats]:
        """Process one batch: a result per row (array or :class:`RowFailure`), and what moved."""
        if self._closed:
            raise PipelineError("DaliSegment: run() after close()")
        stats = SegmentStats()
        results: list[Any] = [None] * len(values)
        groups: dict[Kind, list[tuple[int, Any, list[dict], Sample]]] = {}
        for i, value in enumerate(values):
            planned = self._plan_row(value, contexts[i])
            if isinstance(planned, RowFailure):
                if self.cpu_fallback is not None and self.cpu_fallback(planned.op_index, planned.error):
                    results[i] = self._on_cpu(value, contexts[i], stats, planned)
                else:
                    results[i] = planned
                continue
            kind, feed, argsets, final = planned
            groups.setdefault(kind, []).append((i, feed, argsets, final))
        for kind, rows in groups.items():
            for start in range(0, len(rows), self.batch_size):
                self._run_rows(kind, rows[start : start + self.batch_size], results, stats)
        return results, stats

    def _run_rows(self, kind: Kind, rows: list[tuple], results: list[Any], stats: SegmentStats) -> None:
        # Outside the per-row retry: a pipeline that cannot be built fails the same for every row.
        pipe = self._pipeline(kind)
        try:
            pipe.feed_input("in", [feed for _, feed, _, _ in rows])
            for k, name in self._fed[kind]:
                pipe.feed_input(f"arg{k}_{name}", [argsets[k][name] for _, _, argsets, _ in rows])
            (out,) = pipe.run()
        except Exception as error:  # noqa: BLE001 - DALI reports bad data for the whole batch
            self._discard(kind)
            if isinstance(error, DeviceError):
                raise
            if device_fault(error):  # not the data's: no row is to blame, and retrying row by row won't help
                raise device_fault_error(self.ops, "the GPU" if self.backend == "cuda" else "DALI's CPU backend", error) from error
            if len(rows) == 1:
                results[rows[0][0]] = RowFailure(self._blame(error), _dali_error(self.ops, error))
                return
            for row in rows:  # find the bad row(s): each row alone
                self._run_rows(kind, [row], results, stats)
            return
        # Counted per row and boundary on either backend (on DALI's CPU backend the copies are
        # notional), so a pipeline's transfer counts are the same with or without a GPU.
        cuda = self.backend == "cuda"
        stats.to_device += len(rows)
        keep_on_device = cuda and self.output == "device"
        if not keep_on_device:
            stats.to_host += len(rows)
            if cuda:
                out = out.as_cpu()
        copies = _DeviceCopies(self.device_id, self.options.framework) if keep_on_device else None
        for j, (i, _, _, final) in enumerate(rows):
            array = copies.copy(out[j]) if copies is not None else np.array(out[j])
            shape = tuple(array.shape)
            if shape != final.shape or (not keep_on_device and array.dtype != final.kind.dtype):
                results[i] = RowFailure(
                    len(self.ops) - 1,
                    PipelineError(
                        f"{self.ops[-1].name} on the GPU: DALI produced {shape} {getattr(array, 'dtype', '')}, "
                        f"the plan said {final.shape} {final.kind.dtype} (a bug in minddata's DALI translation)"
                    ),
                )
                continue
            if final.kind.gray2d:
                array = array.reshape(shape[:2])
            results[i] = array
        if copies is not None:
            copies.finish()  # before ``out`` is released: DALI may reuse its memory once it is

    def _blame(self, error: BaseException) -> int:
        # DALI's message names the operator that failed; decoders are the usual culprit (bad data).
        text = str(error).lower()
        if "decod" in text:
            for k, tr in enumerate(self.translations):
                if tr.first_only:
                    return k
        return 0


def _dali_error(ops: list[Op], error: BaseException) -> ValueError:
    first = str(error).strip().splitlines()
    detail = next((line for line in first if "rror" in line and "Critical" not in line), first[0] if first else "")
    names = ", ".join(op.name for op in ops)
    return ValueError(f"{names} on the GPU: DALI failed on this row: {detail.strip()[:300]}")


class _DeviceCopies:
    """Copies of one batch's DALI GPU samples for the consumer (they must outlive the pipeline's next
    run, which reuses DALI's buffers): torch CUDA tensors for torch consumers, CuPy arrays for CuPy
    and JAX ones (JAX takes them through DLPack), host arrays when that library is missing.

    The memory is allocated on the segment's own device (``device_id``), not on the calling thread's
    current device (always 0 in a worker thread: under DDP every rank's rows would land on GPU 0), and
    each copy is queued, non-blocking, on that device's current stream in the consumer's library: the
    stream its allocator handed the memory out on, so the consumer's work is ordered after the copy.
    :meth:`finish` waits for the batch's copies once, before DALI's output is released. A DALI CPU
    sample (DALI's CPU backend) is copied into a host tensor of the same library, which is how the
    copy and its dtypes are checked without a GPU.
    """

    def __init__(self, device_id: int | None, framework: str = "torch"):
        self.device_id = device_id
        # The run's ``framework`` setting: CuPy arrays for CuPy and JAX consumers, else torch tensors.
        self.framework = "cupy" if framework in ("cupy", "jax") else "torch"
        self._streams: list[Any] = []

    def copy(self, tensor: Any) -> Any:
        from nvidia.dali.tensors import TensorGPU

        gpu = isinstance(tensor, TensorGPU)
        device_id = tensor.device_id() if gpu and self.device_id is None else self.device_id
        shape = tuple(tensor.shape())
        dtype = _numpy_dtype(tensor)
        if self.framework == "cupy":
            try:
                import cupy
            except ImportError:
                return np.array(tensor.as_cpu() if gpu else tensor)
            if not gpu:
                return np.array(tensor)
            with cupy.cuda.Device(device_id):
                out = cupy.empty(shape, dtype=dtype)
                stream = cupy.cuda.get_current_stream()
                if out.size:
                    # DALI reads a stream as a ``c_void_p``: a bare int would be taken as a null pointer.
                    tensor.copy_to_external(ctypes.c_void_p(out.data.ptr), ctypes.c_void_p(stream.ptr),
                                            non_blocking=True)
            self._note(stream)
            return out
        try:
            import torch
        except ImportError:
            return np.array(tensor.as_cpu() if gpu else tensor)
        device = torch.device("cuda", device_id) if gpu else torch.device("cpu")  # type: ignore[arg-type]  # gpu: the tensor's or the set id
        out = torch.empty(shape, dtype=torch_dtype(dtype), device=device)
        if out.numel():
            if gpu:
                stream = torch.cuda.current_stream(device)
                tensor.copy_to_external(ctypes.c_void_p(out.data_ptr()), ctypes.c_void_p(stream.cuda_stream),
                                        non_blocking=True)
                self._note(stream)
            else:
                tensor.copy_to_external(ctypes.c_void_p(out.data_ptr()))
        return out

    def _note(self, stream: Any) -> None:
        key = getattr(stream, "cuda_stream", None) or getattr(stream, "ptr", None)
        if all((getattr(s, "cuda_stream", None) or getattr(s, "ptr", None)) != key for s in self._streams):
            self._streams.append(stream)

    def finish(self) -> None:
        """Wait for the batch's copies (one synchronization per batch, not per row)."""
        for stream in self._streams:
            stream.synchronize()
        self._streams.clear()


def torch_dtype(dtype: Any) -> Any:
    """The torch dtype of a NumPy dtype, including the unsigned 16/32/64-bit types that DALI's own
    ``to_torch_type`` table lacks (torch has them since 2.3).

    Examples:
        >>> import numpy as np
        >>> str(torch_dtype(np.uint16))  # doctest: +SKIP
        'torch.uint16'
    """
    import torch

    dtype = np.dtype(dtype)
    found = getattr(torch, dtype.name if dtype.name != "bool" else "bool", None)
    if not isinstance(found, torch.dtype):
        raise TypeError(f"GPU output: torch has no dtype for {dtype}; cast the column first (TypeCast)")
    return found


def _numpy_dtype(tensor: Any) -> np.dtype:
    from nvidia.dali import types

    return np.dtype(types.to_numpy_type(tensor.dtype))
