"""The GPU device without DALI: a run of ops on PyTorch CUDA tensors, batch by batch.

:class:`TorchSegment` has :class:`~minddata.ops.gpu.segment.DaliSegment`'s interface and runs the same
host-side plans (:mod:`minddata.ops.gpu.translation`): every row is checked as the CPU kernel checks it,
its random parameters are drawn from the row's RNG with the CPU kernels' own functions, and its shapes
are known before anything runs. Only the execution differs: PyTorch tensor operations instead of DALI
operators. So a seeded pipeline crops and flips the same rows the same way on the CPU, on DALI and here.

Backends: ``"torch-cuda"`` runs on the GPU (JPEG decoding on nvJPEG through ``torchvision.io`` when
torchvision is installed, else on the CPU and uploaded); ``"torch-cpu"`` runs the same code on CPU
tensors, which is how CI checks this driver without a GPU.

Numerics against the CPU kernels: exact for crops, pads, flips, ``HWC2CHW``, ``Normalize``,
``Rescale`` and in-range ``TypeCast``; within 1 level for BILINEAR resizes (OpenCV rounds fixed-point
weights, torch computes in float); within 2 levels for rotations; integer images of every width are
rounded half to even and saturated after resizes and warps, as OpenCV does. Filters that differ by
design, not within a level: BICUBIC (torch's cubic uses a = -0.75 like OpenCV, without its fixed-point
rounding: a few levels at edges), AREA (torch's antialiased bilinear, where OpenCV averages exact
pixel areas: a few levels when shrinking, more on fine texture; upscaling differs like BILINEAR vs
OpenCV's area weights), ANTIALIAS and PILCUBIC (torch's antialiased bilinear and bicubic, where the
CPU kernel uses Pillow's Lanczos-3 and bicubic: several levels at edges). Place those resizes on the
CPU where pixels must match. Decoding on nvJPEG differs from libjpeg-turbo by a few levels. The pixel ops it runs (``Invert``, ``Posterize``,
``Solarize``, ``AdjustBrightness``, ``RandomLighting``, ``ToTensor``, ``PadToSize``, ``Erase`` and the
``Random*`` forms) are exact; ``AdjustGamma`` is exact on uint8 (the CPU's table) and within one unit in
the last place on floats; ``RandomResize`` resizes as ``Resize`` does here with the row's drawn filter.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from minddata.errors import DeviceError, PipelineError
from minddata.ops.base import KernelContext, Op
from minddata.ops.gpu.segment import (
    PlannedSegment,
    RowFailure,
    SegmentStats,
    cuda_device_id,
    device_fault,
    device_fault_error,
)
from minddata.ops.gpu.translation import TRANSLATIONS, Sample
from minddata.ops.plans.image import fill_values, interpolation_name
from minddata.ops.registry import decoder_ops

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = ["TorchSegment", "TORCH_OPS", "torch_unsupported_reason", "import_torch"]

_log = logging.getLogger("minddata")

TORCH_INSTALL_HINT = "pip install 'minddata[torch]' (PyTorch; a CUDA build for the GPU)"

# interpolation -> (torch mode, antialias). OpenCV's filters are not antialiased; AREA and Pillow's are.
_TORCH_INTERP = {
    "NEAREST": ("nearest", False),
    "BILINEAR": ("bilinear", False),
    "LINEAR": ("bilinear", False),
    "BICUBIC": ("bicubic", False),
    "CUBIC": ("bicubic", False),
    "AREA": ("bilinear", True),
    "PILCUBIC": ("bicubic", True),
    "ANTIALIAS": ("bilinear", True),
}
_WARP_MODES = {"NEAREST": "nearest", "BILINEAR": "bilinear", "LINEAR": "bilinear", "AREA": "bilinear"}


def import_torch() -> Any:
    """``torch``, or a :class:`DeviceError` naming the extra to install."""
    try:
        import torch
    except ImportError as exc:
        raise DeviceError(f"the GPU device's torch driver needs PyTorch, which is not installed ({exc}): "
                          f"{TORCH_INSTALL_HINT}") from None
    return torch


# ---------------------------------------------------------------------------------------------- kernels
# Each takes (op, HWC tensor, the row's planned args, torch) and returns an HWC tensor, except the
# decoders (they take the row's encoded bytes) and HWC2CHW (the last layout change).


def _slice(x: Any, args: dict, torch: Any, fill: Any = 0) -> Any:
    """The region ``anchor``/``shape`` of ``x``; parts outside the image are ``fill`` (DALI's
    ``out_of_bounds_policy="pad"``, and the CPU kernels' pad-then-crop)."""
    top, left = (int(v) for v in args["anchor"])
    h, w = (int(v) for v in args["shape"])
    height, width, channels = x.shape
    y0, y1, x0, x1 = max(top, 0), min(top + h, height), max(left, 0), min(left + w, width)
    if (top, left, h, w) == (0, 0, height, width):
        return x
    if y0 == top and x0 == left and y1 == top + h and x1 == left + w:
        return x[y0:y1, x0:x1]
    values = fill_values(fill, channels)
    out = torch.tensor(values, dtype=torch.float64).to(x.dtype).to(x.device).expand(h, w, channels).clone()
    if y1 > y0 and x1 > x0:
        out[y0 - top : y1 - top, x0 - left : x1 - left] = x[y0:y1, x0:x1]
    return out


def _resize(x: Any, size: Any, interpolation: Any, torch: Any) -> Any:
    out_h, out_w = (int(v) for v in size)
    if (out_h, out_w) == tuple(x.shape[:2]):
        return x
    mode, antialias = _TORCH_INTERP[interpolation_name(interpolation)]
    dtype = x.dtype
    batch = x.permute(2, 0, 1).unsqueeze(0).to(torch.float32)
    kwargs = {} if mode == "nearest" else {"align_corners": False, "antialias": antialias}
    out = torch.nn.functional.interpolate(batch, size=(out_h, out_w), mode=mode, **kwargs)
    return _cast_back(out.squeeze(0).permute(1, 2, 0), dtype, torch)


def _crop_resize(op: Op, x: Any, args: dict, torch: Any) -> Any:
    return _resize(_slice(x, args, torch), args["size"], op.interpolation, torch)


def _warp(op: Op, x: Any, args: dict, torch: Any) -> Any:
    """An affine warp given DALI's forward matrix (pixel centres at +0.5) and output size."""
    out_h, out_w = (int(v) for v in args["size"])
    forward = np.vstack([np.asarray(args["matrix"], np.float64), [0.0, 0.0, 1.0]])
    inverse = np.linalg.inv(forward)
    height, width, channels = x.shape
    ys, xs = torch.meshgrid(torch.arange(out_h, dtype=torch.float64) + 0.5,
                            torch.arange(out_w, dtype=torch.float64) + 0.5, indexing="ij")
    inv = torch.from_numpy(inverse)
    src_x = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    src_y = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    # grid_sample's normalized coordinates (align_corners=False): -1 and 1 are the outer pixel edges.
    grid = torch.stack([src_x / width * 2 - 1, src_y / height * 2 - 1], dim=-1).to(torch.float32)
    grid = grid.unsqueeze(0).to(x.device)
    image = x.permute(2, 0, 1).unsqueeze(0).to(torch.float32)
    mode = _WARP_MODES[interpolation_name(op.resample)]
    sampled = torch.nn.functional.grid_sample(image, grid, mode=mode, padding_mode="zeros", align_corners=False)
    fill = op.fill_value if isinstance(op.fill_value, (int, np.integer)) else op.fill_value[0]
    if fill:
        coverage = torch.nn.functional.grid_sample(torch.ones_like(image[:, :1]), grid, mode=mode,
                                                   padding_mode="zeros", align_corners=False)
        sampled = sampled + float(fill) * (1.0 - coverage)
    # Integers of every width are rounded and saturated, as OpenCV's warps and resizes do (a bare
    # ``.to(int16)`` truncates: about half the pixels one level low).
    return _cast_back(sampled.squeeze(0).permute(1, 2, 0), x.dtype, torch)


def _flip(axis: int) -> Callable:
    def run(op: Op, x: Any, args: dict, torch: Any) -> Any:
        return x.flip(axis) if int(args["flip"]) else x

    return run


def _normalize(op: Op, x: Any, args: dict, torch: Any) -> Any:
    n = len(op.mean)
    shape = (-1,) if op.is_hwc else (-1, 1, 1)
    mean = torch.tensor(np.asarray(op.mean, np.float32).reshape(shape if n > 1 else ()), device=x.device)
    std = torch.tensor(np.asarray(op.std, np.float32).reshape(shape if n > 1 else ()), device=x.device)
    return (x.to(torch.float32) - mean) / std


def _rescale(op: Op, x: Any, args: dict, torch: Any) -> Any:
    return x.to(torch.float32) * np.float32(op.rescale) + np.float32(op.shift)


def _cast(op: Op, x: Any, args: dict, torch: Any) -> Any:
    from minddata.ops.gpu.segment import torch_dtype

    # torch's float -> int conversion truncates toward zero, as NumPy's astype does.
    return x.to(torch_dtype(np.dtype(op.data_type)))


def _hwc2chw(op: Op, x: Any, args: dict, torch: Any) -> Any:
    return x.permute(2, 0, 1).contiguous()


def _pad(op: Op, x: Any, args: dict, torch: Any) -> Any:
    return _slice(x, args, torch, fill=op.fill_value)


def _cast_back(y: Any, dtype: Any, torch: Any) -> Any:
    """A float64 tensor back to ``dtype`` as the CPU kernels' ``_cast_back`` does (``torch.round``
    rounds half to even, as NumPy's ``rint``)."""
    if dtype == torch.bool:
        return y > 0.5
    if dtype.is_floating_point:
        return y.to(dtype)
    info = torch.iinfo(dtype)
    y = y.round()
    if y.dtype == torch.float32 and info.bits >= 32:  # float32 cannot hold int32's bounds exactly
        y = y.to(torch.float64)
    return y.clamp_(info.min, info.max).to(dtype)


def _invert(op: Op, x: Any, args: dict, torch: Any) -> Any:
    if not float(args["on"]):
        return x
    return _cast_back(255.0 - x.to(torch.float64), x.dtype, torch)


def _posterize(op: Op, x: Any, args: dict, torch: Any) -> Any:
    return x & int(args["mask"])


def _solarize(op: Op, x: Any, args: dict, torch: Any) -> Any:
    low, high = float(args["low"]), float(args["high"])
    x64 = x.to(torch.float64)
    inside = x64 >= low if float(args["single"]) else (x64 >= low) & (x64 <= high)
    return _cast_back(torch.where(inside, 255.0 - x64, x64), x.dtype, torch)


def _brightness(op: Op, x: Any, args: dict, torch: Any) -> Any:
    factor = float(args["factor"])  # float32 already
    if x.dtype == torch.uint8:
        # The float32 product, as OpenCV's convertTo computes it.
        return _cast_back((x.to(torch.float32) * factor).to(torch.float64), x.dtype, torch)
    return _cast_back(x.to(torch.float64) * factor, x.dtype, torch)


def _erase(op: Op, x: Any, args: dict, torch: Any) -> Any:
    from minddata.ops.gpu.pad_erase import erase_fill

    top, left = (int(v) for v in args["anchor"])
    height, width = (int(v) for v in args["shape"])
    out = x.clone()
    fill = np.asarray(erase_fill(op.value, np.dtype(str(x.dtype).removeprefix("torch."))))
    out[top : top + height, left : left + width] = torch.from_numpy(fill).to(x.dtype).to(x.device)
    return out


def _random_resize(op: Op, x: Any, args: dict, torch: Any) -> Any:
    from minddata.ops.plans.bbox import RANDOM_RESIZE_INTERPOLATIONS

    return _resize(x, args["size"], RANDOM_RESIZE_INTERPOLATIONS[int(args["drawn"])], torch)


def _lighting(op: Op, x: Any, args: dict, torch: Any) -> Any:
    shift = torch.from_numpy(np.asarray(args["shift"], np.float32)).to(x.device)
    if x.dtype == torch.float32 or not x.dtype.is_floating_point:
        return _cast_back((x.to(torch.float32) + shift).to(torch.float64), x.dtype, torch)
    return (x.to(torch.float64) + shift.to(x.dtype).to(torch.float64)).to(x.dtype)


def _gamma(op: Op, x: Any, args: dict, torch: Any) -> Any:
    from minddata.ops.gpu.adjust import gamma_table

    if x.dtype == torch.uint8:
        return torch.tensor(gamma_table(op), dtype=torch.uint8, device=x.device)[x.long()]
    if x.dtype == torch.float64:
        scaled = x * float(args["gain"])
    else:  # the product in the image's precision (float16 through float32), as NumPy's
        gain = np.dtype(str(x.dtype).removeprefix("torch.")).type(op.gain)
        scaled = (x.to(torch.float32) * float(np.float32(gain))).to(x.dtype)
    return torch.pow(scaled.to(torch.float64), float(args["gamma"])).clamp_(0.0, 1.0).to(x.dtype)


def _to_tensor(op: Op, x: Any, args: dict, torch: Any) -> Any:
    from minddata.ops.gpu.segment import torch_dtype

    out = np.dtype(op.output_type)
    chw = x.permute(2, 0, 1)
    if out == np.float64 or out.kind != "f":
        scaled = chw.to(torch.float64) / 255.0
    else:
        scaled = chw.to(torch_dtype(out)).to(torch.float32) / np.float32(255.0)
    if out.kind in "iu":
        scaled = scaled.trunc()
    return scaled.to(torch_dtype(out)).contiguous()


TORCH_OPS: dict[str, Callable] = {
    "Resize": lambda op, x, args, torch: _resize(x, args["size"], op.interpolation, torch),
    "CenterCrop": lambda op, x, args, torch: _slice(x, args, torch),
    "Crop": lambda op, x, args, torch: _slice(x, args, torch),
    "RandomResizedCrop": _crop_resize,
    "ResizedCrop": _crop_resize,
    "HorizontalFlip": _flip(1),
    "RandomHorizontalFlip": _flip(1),
    "VerticalFlip": _flip(0),
    "RandomVerticalFlip": _flip(0),
    "Normalize": _normalize,
    "Rescale": _rescale,
    "TypeCast": _cast,
    "ToType": _cast,
    "HWC2CHW": _hwc2chw,
    "Pad": _pad,
    "Rotate": _warp,
    "RandomRotation": _warp,
    "Invert": _invert,
    "RandomInvert": _invert,
    "Posterize": _posterize,
    "RandomPosterize": _posterize,
    "Solarize": _solarize,
    "RandomSolarize": _solarize,
    "AdjustBrightness": _brightness,
    "PadToSize": _pad,
    "Erase": _erase,
    "RandomResize": _random_resize,
    "RandomLighting": _lighting,
    "AdjustGamma": _gamma,
    "ToTensor": _to_tensor,
}
# Decoders read encoded bytes; what follows the decode inside them (resize, crop) runs as above.
DECODERS = tuple(sorted(decoder_ops() & set(TRANSLATIONS)))


def torch_unsupported_reason(op: Op) -> str | None:
    """``None`` when ``op`` (with these parameters) runs on the torch driver, else why not."""
    if op.name not in TORCH_OPS and op.name not in DECODERS:
        return f"{op.name} has no kernel on the GPU's torch driver (the DALI driver may have one)"
    if op.name == "Decode" and getattr(op, "to_pil", False):
        return "Decode(to_pil=True) has no GPU kernel: PIL images live on the host"
    reason = TRANSLATIONS[op.name].supports(op)
    if reason is not None:
        return reason
    resize_of = {"Resize": op, "RandomResizedCrop": op, "ResizedCrop": op, "RandomCropDecodeResize": op,
                 "FusedDecodeResize": getattr(op, "resize", None), "FusedDecodeRandomResizedCrop": getattr(op, "crop", None)}
    spec = resize_of.get(op.name)
    if spec is not None and interpolation_name(spec.interpolation) not in _TORCH_INTERP:
        return f"{op.name}: interpolation {interpolation_name(spec.interpolation)} has no torch equivalent"
    return None


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
        if options is None:
            from minddata import config

            options = config.snapshot()
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
        if decoder.name not in DECODERS:
            return out
        jpegs = [j for j, (_, feed, _, _) in enumerate(rows) if self._gpu_decode is not None and _is_jpeg(feed)]
        if jpegs:
            datas = [torch.from_numpy(np.array(rows[j][1], np.uint8)) for j in jpegs]  # a writable copy
            try:
                for j, image in zip(jpegs, self._gpu_decode(datas, self.device), strict=True):
                    out[j] = image.permute(1, 2, 0)
            except Exception as error:  # noqa: BLE001 - one file nvJPEG refuses fails the batched call
                if device_fault(error):
                    raise device_fault_error(self.ops, "the GPU (torch)", error) from error
                for j, data in zip(jpegs, datas, strict=True):  # each alone: the others stay on nvJPEG
                    try:
                        out[j] = self._gpu_decode([data], self.device)[0].permute(1, 2, 0)
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
            if first is not None:
                x = first
                start = 1
                decoder = self.ops[0]
                if decoder.name != "Decode":  # what a fused decoder does after decoding
                    x = (_crop_resize(_fused_resize_spec(decoder), x, argsets[0], torch)
                         if "anchor" in argsets[0] else _resize(x, argsets[0]["size"],
                                                                 _fused_resize_spec(decoder).interpolation, torch))
            else:
                x = torch.from_numpy(np.ascontiguousarray(feed)).to(self.device)
                start = 0
            for k in range(start, len(self.ops)):
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


def _fused_resize_spec(op: Op) -> Op:
    return {"FusedDecodeResize": getattr(op, "resize", None),
            "FusedDecodeRandomResizedCrop": getattr(op, "crop", None)}.get(op.name) or op


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
