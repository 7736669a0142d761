"""The GPU device without DALI: a run of ops on PyTorch CUDA tensors, batch by batch.

:class:`TorchSegment` has :class:`~minddata.ops.gpu.segment.DaliSegment`'s interface and runs the same
host-side plans (:mod:`minddata.ops.gpu.translation`): every row is checked as the CPU kernel checks it,
its random parameters are drawn from the row's RNG with the CPU kernels' own functions, and its shapes
are known before anything runs. Only the execution differs: PyTorch tensor operations instead of DALI
operators. So a seeded pipeline crops and flips the same rows the same way on the CPU, on DALI and here.
Each op's torch kernel sits in its family's module next to its DALI translation (``resize.py``,
``adjust.py``, ..., registered with :func:`~minddata.ops.gpu.translation.torch_kernel`); this module
decodes the batch, uploads rows, runs the kernels and hands the results on.

Backends: ``"torch-cuda"`` runs on the GPU (JPEG decoding on nvJPEG through ``torchvision.io`` when
torchvision is installed, else on the CPU and uploaded); ``"torch-cpu"`` runs the same code on CPU
tensors, which is how CI checks this driver without a GPU.

Numerics against the CPU kernels: each family module states its torch kernels' beside its DALI
translation's. In short: exact for crops, pads, flips, ``HWC2CHW``, ``Normalize``, ``Rescale``, in-range
``TypeCast``, ``ToTensor`` and the pixel adjustments it runs; within a level or two for BILINEAR resizes
and rotations; some resize filters differ by design (:mod:`minddata.ops.gpu.resize`); nvJPEG decodes
within a few levels of libjpeg-turbo.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from minddata.errors import DeviceError, PipelineError
from minddata.ops.base import KernelContext, Op
from minddata.ops.devices import run_options
from minddata.ops.gpu.segment import (
    PlannedSegment,
    RowFailure,
    SegmentStats,
    cuda_device_id,
    device_fault,
    device_fault_error,
)
from minddata.ops.gpu.translation import TORCH_KERNELS, TORCH_SUPPORTS, TRANSLATIONS, Sample

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = ["TorchSegment", "TORCH_OPS", "torch_unsupported_reason", "import_torch"]

_log = logging.getLogger("minddata")

TORCH_INSTALL_HINT = "pip install 'minddata[torch]' (PyTorch; a CUDA build for the GPU)"


def import_torch() -> Any:
    """``torch``, or a :class:`DeviceError` naming the extra to install."""
    try:
        import torch
    except ImportError as exc:
        raise DeviceError(f"the GPU device's torch driver needs PyTorch, which is not installed ({exc}): "
                          f"{TORCH_INSTALL_HINT}") from None
    return torch


# The torch kernels, registered by the family modules next to their translations
# (:func:`~minddata.ops.gpu.translation.torch_kernel`): op name -> kernel.
TORCH_OPS = TORCH_KERNELS


def torch_unsupported_reason(op: Op) -> str | None:
    """``None`` when ``op`` (with these parameters) runs on the torch driver, else why not."""
    if op.name not in TORCH_OPS:
        return f"{op.name} has no kernel on the GPU's torch driver (the DALI driver may have one)"
    reason = TRANSLATIONS[op.name].supports(op)
    if reason is None and op.name in TORCH_SUPPORTS:
        reason = TORCH_SUPPORTS[op.name](op)
    return reason


# ---------------------------------------------------------------------------------------------- segment


class TorchSegment(PlannedSegment):
    """Ops ``ops`` on torch tensors; the interface of :class:`~minddata.ops.gpu.segment.DaliSegment`.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> from minddata.ops import KernelContext
        >>> seg = TorchSegment([vision.HorizontalFlip()], backend="torch-cpu")  # doctest: +SKIP
        >>> results, _ = seg.run([np.arange(6, dtype=np.uint8).reshape(1, 2, 3)], [[KernelContext()]])  # doctest: +SKIP
        >>> results[0].tolist()  # doctest: +SKIP
        [[[3, 4, 5], [0, 1, 2]]]
    """

    def __init__(
        self,
        ops: list[Op],
        *,
        backend: str,
        batch_size: int = 32,
        device_id: int | None = None,
        output: str = "host",
        cpu_fallback: Callable[[int, BaseException], bool] | None = None,
        cpu_kernels: list[Callable[..., Any]] | None = None,
        options: RunOptions | None = None,
    ):
        if backend not in ("torch-cuda", "torch-cpu"):
            raise ValueError(f"TorchSegment: backend must be 'torch-cuda' or 'torch-cpu'. Found: {backend!r}")
        reasons = [r for r in (torch_unsupported_reason(op) for op in ops) if r]
        if reasons:
            raise DeviceError("; ".join(reasons))
        self.torch = import_torch()
        self.ops = list(ops)
        self.translations = [TRANSLATIONS[op.name] for op in ops]
        self.backend = backend
        self.batch_size = max(1, int(batch_size))
        self.cuda = backend == "torch-cuda"
        if self.cuda and not self.torch.cuda.is_available():
            raise DeviceError("GPU (torch driver): torch.cuda.is_available() is False here: install a CUDA build of "
                              "PyTorch and an NVIDIA driver, or place these ops on the CPU")
        options = run_options(options)
        # The run's settings (its gpu_device_id and framework); rows bring their own in their contexts.
        self.options = options
        self.device = self.torch.device(f"cuda:{cuda_device_id(options) if device_id is None else device_id}"
                                        if self.cuda else "cpu")
        self.output = output
        self.cpu_fallback = cpu_fallback
        self.cpu_kernels = cpu_kernels
        self.lock = threading.Lock()
        self._closed = False
        self._gpu_decode = self._torchvision_decoder() if self.cuda else None
        # The segment's own CUDA stream (see :meth:`run`).
        self._stream = self.torch.cuda.Stream(self.device) if self.cuda else None
        self._fallback_noted = False

    @staticmethod
    def _torchvision_decoder() -> Any:
        """torchvision's nvJPEG decoder, or None (JPEGs then decode on the CPU and are uploaded)."""
        try:
            from torchvision.io import ImageReadMode, decode_jpeg
        except Exception:  # noqa: BLE001 - absent, or built for another torch: decode on the CPU instead
            return None
        return lambda datas, device: decode_jpeg(datas, device=device, mode=ImageReadMode.RGB)

    def close(self) -> None:
        """Nothing to release but the cached decoder; idempotent."""
        self._closed = True

    # -- running ---------------------------------------------------------------------------------

    def run(self, values: list[Any], contexts: list[list[KernelContext]]) -> tuple[list[Any], SegmentStats]:
        """Process one batch: a result per row (array/tensor or :class:`RowFailure`), and what moved.

        On the GPU the batch runs on the segment's own CUDA stream, not on the calling thread's
        default stream, which the training loop may be using: torchvision's ``decode_jpeg`` there
        can be handed memory the caching allocator still has in flight for other work (see
        pytorch/vision PR #9606). The stream is synchronized before any row is handed on. Rows
        decoded on the CPU instead of nvJPEG are counted in ``stats.cpu_rows`` under the decoder's
        name (``iterator.device_stats``, ``minddata bench``); a device or driver fault raises
        :class:`DeviceError`.
        """
        if self._closed:
            raise PipelineError("TorchSegment: run() after close()")
        stats = SegmentStats()
        results: list[Any] = [None] * len(values)
        planned_rows = []
        for i, value in enumerate(values):
            planned = self._plan_row(value, contexts[i])
            if isinstance(planned, RowFailure):
                if self.cpu_fallback is not None and self.cpu_fallback(planned.op_index, planned.error):
                    results[i] = self._on_cpu(value, contexts[i], stats, planned)
                else:
                    results[i] = planned
                continue
            planned_rows.append((i, *planned[1:]))  # (kind, feed, argsets, final): the kind is DALI's
        if self._stream is None:
            self._run_planned(planned_rows, results, stats, contexts)
            return results, stats
        torch = self.torch
        with torch.cuda.device(self.device), torch.cuda.stream(self._stream):
            self._run_planned(planned_rows, results, stats, contexts)
        self._stream.synchronize()
        return results, stats

    def _run_planned(self, rows: list[tuple], results: list[Any], stats: SegmentStats,
                     contexts: list[list[KernelContext]]) -> None:
        decoded = self._decode_batch(rows, stats, contexts)
        done: list[int] = []
        for (i, feed, argsets, final), first in zip(rows, decoded, strict=True):
            results[i] = self._execute(feed, argsets, final, first, stats)
            if not isinstance(results[i], RowFailure):
                done.append(i)
        self._hand_on(done, results, stats)

    def _hand_on(self, done: list[int], results: list[Any], stats: SegmentStats) -> None:
        """The rows as the consumer takes them: device tensors, or host arrays copied once per batch."""
        torch = self.torch
        if self.cuda and self.output == "device":
            consumer = torch.cuda.default_stream(self.device)
            for i in done:
                x = results[i].contiguous()
                x.record_stream(consumer)  # made on this segment's stream, used on the consumer's
                results[i] = _for_framework(x, self.options.framework)
            return
        stats.to_host += len(done)
        if not self.cuda:
            for i in done:
                results[i] = results[i].contiguous().numpy().copy()
            return
        # One device -> host copy per dtype for the whole batch, not one per row.
        by_dtype: dict[Any, list[int]] = {}
        for i in done:
            by_dtype.setdefault(results[i].dtype, []).append(i)
        for rows in by_dtype.values():
            flat = torch.cat([results[i].reshape(-1) for i in rows]).cpu().numpy()
            offset = 0
            for i in rows:
                shape = tuple(results[i].shape)
                n = results[i].numel()
                results[i] = flat[offset : offset + n].reshape(shape)
                offset += n

    def _decode_batch(self, rows: list[tuple], stats: SegmentStats, contexts: list[list[KernelContext]]) -> list[Any]:
        """Each row's first op's output when it is a decoder (nvJPEG decodes the batch's JPEGs in one
        call), else None; a failed decode is the row's RowFailure. On the GPU, a row nvJPEG cannot
        decode (CMYK, some progressive files, not a JPEG) decodes on the CPU, counted per row, under
        the pixel limit of the row's settings (``contexts``: each row's, by its index in the batch)."""
        torch = self.torch
        out: list[Any] = [None] * len(rows)
        decoder = self.ops[0]
        # A decoder reads encoded bytes (its translation's first_only): the segment decodes the batch,
        # its kernel does what follows the decode.
        if not self.translations[0].first_only:
            return out
        jpegs = [j for j, (_, feed, _, _) in enumerate(rows) if self._gpu_decode is not None and _is_jpeg(feed)]
        if jpegs:
            datas = [torch.from_numpy(np.array(rows[j][1], np.uint8)) for j in jpegs]  # a writable copy
            try:
                for j, image in zip(jpegs, self._gpu_decode(datas, self.device), strict=True):  # type: ignore[misc]  # jpegs: only with a decoder
                    out[j] = image.permute(1, 2, 0)
            except Exception as error:  # noqa: BLE001 - one file nvJPEG refuses fails the batched call
                if device_fault(error):
                    raise device_fault_error(self.ops, "the GPU (torch)", error) from error
                for j, data in zip(jpegs, datas, strict=True):  # each alone: the others stay on nvJPEG
                    try:
                        out[j] = self._gpu_decode([data], self.device)[0].permute(1, 2, 0)  # type: ignore[misc]  # as above
                    except Exception as one:  # noqa: BLE001
                        if device_fault(one):
                            raise device_fault_error(self.ops, "the GPU (torch)", one) from one
                        self._note_fallback(one)
        for j, (i, feed, _, _) in enumerate(rows):
            if out[j] is None:
                try:
                    out[j] = self._host_decode(feed, contexts[i][0].options.max_image_pixels)
                except Exception as error:  # noqa: BLE001
                    out[j] = RowFailure(0, error)
                    continue
                if self.cuda:  # on CPU tensors (emulation) there is no other decoder to fall back from
                    stats.count_cpu(getattr(decoder, "label", decoder.name))
        return out

    def _note_fallback(self, error: BaseException) -> None:
        if not self._fallback_noted:
            self._fallback_noted = True
            _log.warning("%s on the GPU (torch): nvJPEG could not decode a row (%s: %s); such rows decode on the "
                         "CPU and are counted in device_stats.cpu_rows", self.ops[0].name, type(error).__name__,
                         str(error).strip()[:200])

    def _host_decode(self, feed: Any, max_pixels: int | None) -> Any:
        from minddata.ops.cpu.decode import decode_image

        # The CPU decoder (libjpeg-turbo, with every CPU check and the run's pixel limit), then one upload.
        image = decode_image(np.asarray(feed), max_pixels=max_pixels)
        return self.torch.from_numpy(np.ascontiguousarray(image)).to(self.device)

    def _execute(self, feed: Any, argsets: list[dict], final: Sample, first: Any, stats: SegmentStats) -> Any:
        """The row's ops on the device: the result tensor (still on the device), or a RowFailure."""
        torch = self.torch
        stats.to_device += 1
        k = 0
        try:
            if isinstance(first, RowFailure):
                return first
            # A decoder's kernel takes the decoded image; other first ops, the row uploaded.
            x = first if first is not None else torch.from_numpy(np.ascontiguousarray(feed)).to(self.device)
            for k in range(len(self.ops)):
                x = TORCH_OPS[self.ops[k].name](self.ops[k], x, argsets[k], torch)
        except Exception as error:  # noqa: BLE001
            if device_fault(error):  # the device's, not the row's: stop the pipeline
                raise device_fault_error(self.ops, "the GPU (torch)" if self.cuda else "CPU tensors", error) from error
            return RowFailure(k, error)
        if tuple(x.shape) != tuple(final.shape):
            return RowFailure(len(self.ops) - 1, PipelineError(
                f"{self.ops[-1].name} on the GPU (torch): produced {tuple(x.shape)}, the plan said {final.shape} "
                "(a bug in minddata's torch driver)"))
        if final.kind.gray2d:
            x = x.reshape(final.shape[:2])
        return x


def _is_jpeg(feed: Any) -> bool:
    data = np.asarray(feed)
    return data.size > 3 and data[0] == 0xFF and data[1] == 0xD8 and data[2] == 0xFF


def _for_framework(tensor: Any, framework: str) -> Any:
    """A GPU row for the consumer: a torch CUDA tensor, or a CuPy array (by DLPack, no copy) for CuPy
    and JAX consumers (the run's ``framework`` setting)."""
    if framework in ("cupy", "jax"):
        try:
            import cupy
        except ImportError:
            return tensor.cpu().numpy()
        return cupy.from_dlpack(tensor)
    return tensor
