"""The work of a ``batch``: stack a group of rows into column arrays, with ``per_batch_map``."""

from __future__ import annotations

import ctypes
import functools
import mmap
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from minddata.engine.chunk import Chunk, FailedRow
from minddata.errors import PipelineError

if TYPE_CHECKING:
    import torch

__all__ = ["BatchInfo", "BatchSlots", "Collate", "stack_column", "pad_column"]


class BatchInfo:
    """What ``per_batch_map`` and a callable ``batch_size`` learn about the batch (MindSpore's BatchInfo)."""

    __slots__ = ("_batch_num", "_epoch_num")

    def __init__(self, batch_num: int, epoch_num: int):
        self._batch_num = batch_num
        self._epoch_num = epoch_num

    def get_batch_num(self) -> int:
        """Index of this batch within the epoch, from 0."""
        return self._batch_num

    def get_epoch_num(self) -> int:
        """Index of the epoch (pass over the batch's input), from 0."""
        return self._epoch_num


def _no_huge_pages(array: np.ndarray) -> None:
    """Advise the kernel to back ``array`` with ordinary pages (Linux; elsewhere nothing).

    numpy advises transparent huge pages for every array of 4 MB or more. Where the kernel then
    compacts memory to find each 2 MB page at the first touch (``defrag`` set to ``madvise``, as
    Ubuntu's default), a fresh process's first batch buffers stall on it: yolo416's 133 MB batches
    ran at two thirds of the speed in a new process on a machine that had been idle. Ordinary pages
    cost the same zeroing without the compaction."""
    advise = _madvise()
    if advise is None or array.nbytes < _HUGE_ADVICE_BYTES:
        return
    start = array.ctypes.data
    first = -(-start // _PAGE) * _PAGE
    end = (start + array.nbytes) // _PAGE * _PAGE
    if end > first:
        advise(ctypes.c_void_p(first), ctypes.c_size_t(end - first), _MADV_NOHUGEPAGE)


_PAGE = mmap.PAGESIZE
_HUGE_ADVICE_BYTES = 4 << 20  # numpy's threshold for its huge-page advice
_MADV_NOHUGEPAGE = getattr(mmap, "MADV_NOHUGEPAGE", 15)


@functools.cache
def _madvise() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        advise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    advise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    advise.restype = ctypes.c_int
    return advise


class BufferPool:
    """Recycles large arrays (batch buffers, the Ray executor's packing pieces) once they are let go of.

    A fresh 100 MB batch array costs its size in page faults and kernel zeroing every time (large
    allocations bypass malloc's free lists). The pool keeps the last few batch arrays and hands one
    out again only when nothing outside the pool refers to it any more: no user variable, no view,
    no tensor sharing its memory (each of those holds a reference). So reuse is never visible.
    """

    def __init__(self, size: int = 8):
        self.size = size
        self._arrays: list[np.ndarray] = []
        self._lock = threading.Lock()

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An array of ``shape``: a free pooled one, the leading rows of a free larger batch of the same
        rows (an epoch's last, partial batch: a view, which keeps the whole buffer taken while held),
        or a new one."""
        dtype = np.dtype(dtype)
        with self._lock:
            larger = None
            for i in range(len(self._arrays)):
                # References: the pool's list, and getrefcount's argument.
                if sys.getrefcount(self._arrays[i]) == 2:
                    candidate = self._arrays[i]
                    if candidate.dtype != dtype:
                        continue
                    if candidate.shape == shape:
                        return candidate
                    if (larger is None and len(shape) >= 2 and candidate.shape[1:] == shape[1:]
                            and candidate.shape[0] > shape[0]):
                        larger = candidate
            if larger is not None:
                return larger[: shape[0]]
            array = np.empty(shape, dtype)
            _no_huge_pages(array)
            if array.nbytes >= 1 << 20:
                if len(self._arrays) >= self.size:
                    self._arrays.pop(0)
                self._arrays.append(array)
            return array


def stack_column(
    values: list[Any], label: str, column: str, batch_num: int, pool: BufferPool | None = None
) -> np.ndarray | torch.Tensor:
    first = values[0]
    if type(first) is not np.ndarray:
        if type(first).__module__.startswith("torch") and hasattr(first, "is_cuda"):
            import torch  # a GPU map's rows: the batch is stacked on the GPU

            return torch.stack(values)
        if type(first).__module__.startswith("cupy"):
            import cupy  # a GPU map's rows for CuPy/JAX consumers: stacked on the GPU

            return cupy.stack(values)
        try:
            out = np.asarray(values)
        except ValueError:
            out = None
        if out is not None and out.dtype != object:
            return out
        values = [np.asarray(v) for v in values]
        first = values[0]
    try:
        if pool is not None and first.nbytes * len(values) >= 1 << 20:
            return np.stack(values, out=pool.empty((len(values), *first.shape), first.dtype))
        return np.stack(values)
    except ValueError:
        shapes: list[tuple] = []
        for v in values:
            shape = np.shape(v)
            if shape not in shapes:
                shapes.append(shape)
        raise PipelineError(
            f"{label}: rows of column {column!r} in batch {batch_num} have different shapes {shapes[:4]}"
            f"{' ...' if len(shapes) > 4 else ''}; a batch needs one shape per column. Resize or crop them "
            "to one size in a map before batch, or use padded_batch."
        ) from None


def pad_column(
    values: list[Any],
    shape: tuple[int | None, ...] | None,
    pad_value: Any,
    label: str,
    column: str,
    batch_num: int,
    pool: BufferPool | None = None,
) -> np.ndarray:
    """Stack rows of one column after padding each to one shape (MindSpore's ``pad_info`` rule).

    ``shape``: the shape to pad to; ``None`` (or a ``None`` dimension) pads to the largest row of the
    batch in that dimension. Rows must share a rank; a row larger than ``shape`` is an error.
    ``pad_value`` fills the padding (``None``: 0, or ``""`` for strings).
    """
    arrays = [v if type(v) is np.ndarray else np.asarray(v) for v in values]
    rank = arrays[0].ndim
    for i, a in enumerate(arrays):
        if a.ndim != rank:
            raise PipelineError(
                f"{label}: rows of column {column!r} in batch {batch_num} have different ranks (row 0 has shape "
                f"{arrays[0].shape}, row {i} has {a.shape}); padding needs one rank per column."
            )
    if shape is not None and len(shape) != rank:
        raise PipelineError(
            f"{label}: pad_info shape {list(shape)} for column {column!r} has rank {len(shape)}, but its rows "
            f"have rank {rank} (e.g. shape {arrays[0].shape}). Give one size (or None) per dimension."
        )
    largest = tuple(max(a.shape[d] for a in arrays) for d in range(rank)) if arrays else ()
    wanted = shape if shape is not None else (None,) * rank
    target = tuple(big if want is None else int(want) for big, want in zip(largest, wanted))
    for i, a in enumerate(arrays):
        if any(n > t for n, t in zip(a.shape, target)):
            raise PipelineError(
                f"{label}: row {i} of column {column!r} in batch {batch_num} has shape {a.shape}, larger than the "
                f"pad shape {target}; padding never truncates. Enlarge pad_info's shape (or use None)."
            )
    kinds = {a.dtype.kind for a in arrays}
    if kinds & {"U", "S", "O"}:
        dtype = np.result_type(*[a.dtype for a in arrays]) if kinds <= {"U"} or kinds <= {"S"} else np.dtype(object)
        fill = ("" if "U" in kinds else b"") if pad_value is None else pad_value
        if dtype.kind in "US":
            dtype = np.result_type(dtype, np.asarray(fill).dtype)
    else:
        dtype = np.result_type(*[a.dtype for a in arrays])
        fill = 0 if pad_value is None else pad_value
    full = (len(arrays), *target)
    if pool is not None and dtype.kind not in "USO" and dtype.itemsize * int(np.prod(full)) >= 1 << 20:
        out = pool.empty(full, dtype)
        out.fill(fill)
    else:
        out = np.full(full, fill, dtype=dtype)
    for i, a in enumerate(arrays):
        if a.shape == target:
            out[i] = a
        else:
            corner: tuple[int | slice, ...] = (i, *(slice(0, n) for n in a.shape))
            out[corner] = a
    return out


class _InBatch:
    """A map's image already normalized into its slot of its batch's buffer (:class:`BatchSlots`).
    The image itself stays with it: a batch whose rows do not fill one buffer in order (a row of
    another shape) takes the batch's own path from the images."""

    __slots__ = ("image", "buffer", "slot")

    def __init__(self, image: np.ndarray, buffer: np.ndarray, slot: int):
        self.image = image
        self.buffer = buffer
        self.slot = slot


def _batch_shape(image_shape: tuple[int, ...], rows: int, chw: bool) -> tuple[int, ...]:
    if len(image_shape) == 2:  # HWC2CHW and Normalize leave a 2-D image as it is
        return (rows, *image_shape)
    h, w, c = image_shape
    return (rows, c, h, w) if chw else (rows, h, w, c)


def _slot_view(buffer: np.ndarray, slot: int) -> np.ndarray:
    return buffer[slot][:, :, None] if buffer.ndim == 3 else buffer[slot]


class BatchSlots:
    """Normalizes a map's images in the map's own workers, each straight into its slot of its batch's
    buffer, where the batch right above would do it (a Normalize the optimizer moved into the batch).

    Row ``r`` of a pass is slot ``r % batch_size`` of batch ``r // batch_size``: this holds for a map
    of threads in this process that keeps one output row per input row, directly under a batch of a
    fixed size (the compiler checks). The batch then only hands out the buffer: the normalizing
    is shared by the map's workers, where one batch thread doing it for every image capped a
    pipeline at that thread's speed. Each image is replaced by an :class:`_InBatch`, which
    :class:`Collate` recognizes.
    """

    def __init__(self, column: int, batch_size: int, normalize: Any, chw: bool, pool: BufferPool):
        self.column = column
        self.batch_size = batch_size
        self.mean = np.asarray(normalize.mean, np.float32)
        self.std = np.asarray(normalize.std, np.float32)
        self.chw = chw
        self.pool = pool
        # (pass, batch number) -> [buffer, its images' shape, rows come]; a batch leaves once all its
        # rows have come (an epoch's last, partial batch when the next pass starts).
        self._open: dict[tuple[int, int], list[Any]] = {}
        self._pass = -1
        self._lock = threading.Lock()

    def after(self, finish: Callable[[Chunk, Any, int, int], Chunk | None], map_function: Any,
              op_index: int) -> Callable[[Chunk, Any, int, int], Chunk | None]:
        """The map's ``finish`` step followed by writing the finished rows' images into their slots.
        In a profiled run the writing is timed as the map's op ``op_index``, on the chunks the
        ``map_function``'s op timer times."""

        def finish_into_batch(chunk: Chunk, result: Any, pass_index: int, row_start: int) -> Chunk | None:
            out = finish(chunk, result, pass_index, row_start)
            if out is None:
                return None
            timer = map_function.op_timer
            timed = timer.current() if timer is not None else None
            if timed is None:
                return self.write(out, pass_index, row_start)
            start = time.perf_counter()
            out = self.write(out, pass_index, row_start)
            timed[op_index] += time.perf_counter() - start
            return out

        return finish_into_batch

    def write(self, chunk: Chunk, pass_index: int, row_start: int) -> Chunk:
        from minddata.ops.cpu.normalize import normalize_into

        column, size = self.column, self.batch_size
        rows = list(chunk.rows)
        for i, row in enumerate(rows):
            number, slot = divmod(row_start + i, size)
            image: Any = row[column] if type(row) is not FailedRow else None
            writable = type(image) is np.ndarray and image.ndim in (2, 3)
            buffer = self._slot(pass_index, number, image.shape if writable else None)
            if buffer is None:
                continue
            normalize_into(image, self.mean, self.std, _slot_view(buffer, slot), self.chw and image.ndim == 3)
            rows[i] = (*row[:column], _InBatch(image, buffer, slot), *row[column + 1 :])
        return Chunk(rows, chunk.ids, chunk.origins, chunk.keys)

    def _slot(self, pass_index: int, number: int, shape: tuple[int, ...] | None) -> np.ndarray | None:
        """The buffer of batch ``number`` for one of its rows, an image of ``shape``, counting the row
        as come (a batch leaves once all its rows have). None: the batch takes the row as it is (a
        failed row, no image, or another shape than the batch's first image; it reports those)."""
        key = (pass_index, number)
        with self._lock:
            entry = self._open.get(key)
            if entry is None:
                if pass_index != self._pass:
                    self._pass = pass_index
                    self._open = {k: v for k, v in self._open.items() if k[0] == pass_index}
                entry = self._open[key] = [None, None, 0]
            entry[2] += 1
            if entry[2] == self.batch_size:
                del self._open[key]
            if shape is None:
                return None
            if entry[0] is None:
                entry[0], entry[1] = self.pool.empty(_batch_shape(shape, self.batch_size, self.chw), np.float32), shape
            elif entry[1] != shape:
                return None
            buffer: np.ndarray = entry[0]
            return buffer


def _whole_batch(images: list[Any]) -> np.ndarray | None:
    """The buffer the map's workers normalized ``images`` into, when they fill its leading slots in order."""
    buffer = images[0].buffer
    if len(images) > len(buffer):
        return None
    for i, value in enumerate(images):
        if type(value) is not _InBatch or value.buffer is not buffer or value.slot != i:
            return None
    return buffer if len(images) == len(buffer) else buffer[: len(images)]


class Collate:
    """``(chunk holding one row: the list of rows of a batch) -> chunk holding the batched row``."""

    def __init__(
        self,
        label: str,
        columns: list[str],
        output_names: list[str],
        per_batch_map: Callable[..., Any] | None,
        input_indices: list[int],
        layout: list[tuple[int, int]],
        num_outputs: int,
        epilogues: dict[int, tuple[Any, bool, np.dtype]] | None = None,
        pad_info: dict[str, tuple[Any, Any]] | None = None,
    ):
        self.label = label
        self.columns = columns
        self.per_batch_map = per_batch_map
        self.input_indices = input_indices
        self.layout = layout
        self.num_outputs = num_outputs
        self.output_names = output_names
        # Column index -> (Normalize op, to CHW, dtype): normalization moved here by the optimizer.
        self.epilogues = epilogues or {}
        self.pool = BufferPool()
        # Column index -> (pad shape or None, pad value or None); an empty pad_info pads every column.
        self.padding: dict[int, tuple[Any, Any]] = {}
        if pad_info is not None:
            self.padding = {
                i: pad_info.get(name, (None, None))
                for i, name in enumerate(output_names)
                if not pad_info or name in pad_info
            }

    def __call__(self, chunk: Chunk, pass_index: int, row_start: int) -> Chunk:
        out = []
        for offset, rows in enumerate(chunk.rows):
            batch_num = row_start + offset
            failed = next((r for r in rows if type(r) is FailedRow), None)
            if failed is not None:
                raise failed.error
            columns = [list(col) for col in zip(*rows)] if rows else [[] for _ in self.columns]
            if self.per_batch_map is not None:
                columns = self._apply_per_batch_map(self.per_batch_map, columns, batch_num, pass_index)
            epilogues, padding = self.epilogues, self.padding
            out.append(
                tuple(
                    self._normalize_column(col, epilogues[i], name, batch_num)
                    if i in epilogues
                    else pad_column(col, padding[i][0], padding[i][1], self.label, name, batch_num, self.pool)
                    if i in padding
                    else stack_column(col, self.label, name, batch_num, self.pool)
                    for i, (col, name) in enumerate(zip(columns, self.output_names))
                )
            )
        return Chunk(out)

    def _normalize_column(self, images: list[Any], epilogue: tuple[Any, bool, np.dtype], name: str, batch_num: int) -> np.ndarray:
        from minddata.ops.cpu.normalize import normalize_into

        normalize, chw, dtype = epilogue
        if type(images[0]) is _InBatch and (whole := _whole_batch(images)) is not None:
            return whole if dtype == np.float32 else whole.astype(dtype)
        # Rows the map's workers left as they were (another shape than their batch's buffer) among them.
        images = [value.image if type(value) is _InBatch else value for value in images]
        first = np.asarray(images[0])
        shapes = {np.shape(img) for img in images}
        if len(shapes) > 1:
            stack_column(images, self.label, name, batch_num)  # raises the shape-mismatch error
        mean = np.asarray(normalize.mean, np.float32)
        std = np.asarray(normalize.std, np.float32)
        out = self.pool.empty(_batch_shape(first.shape, len(images), chw), np.float32)
        for i, img in enumerate(images):
            normalize_into(np.asarray(img), mean, std, _slot_view(out, i), chw and first.ndim == 3)
        return out if dtype == np.float32 else out.astype(dtype)

    def _apply_per_batch_map(
        self, per_batch_map: Callable[..., Any], columns: list[list[Any]], batch_num: int, pass_index: int
    ) -> list[list[Any]]:
        inputs = [columns[i] for i in self.input_indices]
        try:
            result = per_batch_map(*inputs, BatchInfo(batch_num, pass_index))
        except Exception as error:
            raise PipelineError(f"{self.label}: per_batch_map failed on batch {batch_num}: {type(error).__name__}: {error}") from error
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != self.num_outputs:
            raise PipelineError(
                f"{self.label}: per_batch_map returned {len(result)} column(s) for batch {batch_num}, but "
                f"{self.num_outputs} are expected (output_columns, or input_columns when output_columns is "
                "not given). per_batch_map must return a tuple with one list/array per output column."
            )
        return [list(result[k]) if src else columns[k] for src, k in self.layout]
