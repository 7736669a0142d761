"""``bucket_batch_by_length``: group rows into buckets by length, batch each bucket, pad within a batch.

A row's length is ``element_length_function(*columns)`` or, without one, the size of the first
dimension of its single column. Bucket ``i`` holds lengths in ``[boundaries[i-1], boundaries[i])``
(``0`` and infinity at the ends), so ``len(boundaries) + 1`` buckets. A bucket that reaches its batch
size emits a batch at once; at the end of a pass the partly filled buckets are emitted in bucket
order (unless ``drop_remainder``). This is MindSpore's BucketBatchByLengthOp, row for row.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from contextlib import closing
from typing import Any

import numpy as np

from minddata.engine.batchfn import BufferPool, pad_column, stack_column
from minddata.engine.chunk import Chunk, Chunks, FailedRow
from minddata.engine.runtime import Runtime
from minddata.engine.stages import Stage
from minddata.errors import PipelineError, RowError

__all__ = ["BucketGroupStage", "BucketCollate"]


class BucketGroupStage(Stage):
    """Emits chunks holding ONE row each: ``(bucket index, rows of that batch)``."""

    def __init__(
        self,
        rt: Runtime,
        child: Stage,
        length_of: Callable[[tuple], Any],
        boundaries: list[int],
        batch_sizes: list[int],
        drop_remainder: bool,
        label: str,
    ):
        super().__init__(rt, [child], label)
        self.length_of = length_of
        self.boundaries = boundaries
        self.batch_sizes = batch_sizes
        self.drop_remainder = drop_remainder

    def _length(self, row: tuple, position: int, chunk: Chunk, index: int) -> int:
        try:
            length = self.length_of(row)
        except Exception as error:
            where = chunk.where(index)
            raise RowError(
                f"{self.label}: element_length_function failed on row {position}{f' ({where})' if where else ''}: "
                f"{type(error).__name__}: {error}",
                op=self.label,
                row=position,
            ) from error
        if isinstance(length, np.ndarray) and length.size == 1:
            length = length.reshape(()).item()
        if isinstance(length, (bool, np.bool_)) or not isinstance(length, (int, np.integer)) or length < 0:
            raise RowError(
                f"{self.label}: element_length_function must return an int >= 0; for row {position} it returned "
                f"{length!r}.",
                op=self.label,
                row=position,
            )
        return int(length)

    def _run(self, pass_index: int) -> Chunks:
        buckets: list[list[Any]] = [[] for _ in self.batch_sizes]
        position = 0
        with closing(self.children[0].run()) as source:
            for chunk in source:
                out = []
                for i, row in enumerate(chunk.rows):
                    if type(row) is FailedRow:
                        raise row.error
                    b = bisect_right(self.boundaries, self._length(row, position, chunk, i))
                    position += 1
                    bucket = buckets[b]
                    bucket.append(row)
                    if len(bucket) == self.batch_sizes[b]:
                        out.append((b, bucket))
                        buckets[b] = []
                if out:
                    yield Chunk(out)
        if not self.drop_remainder:
            rest = [(b, rows) for b, rows in enumerate(buckets) if rows]
            if rest:
                yield Chunk(rest)


class BucketCollate:
    """``(chunk of (bucket, rows)) -> chunk of batched rows``, padding per ``pad_info``.

    ``pad_info``: column name -> (shape or None, value or None); ``None`` pads nothing (rows of a
    column must then share a shape), ``{}`` pads every column to the batch's largest row. With
    ``pad_to_bucket_boundary`` the ``None`` dimensions of a given shape pad to the bucket's upper
    boundary minus one.
    """

    def __init__(
        self,
        label: str,
        columns: list[str],
        pad_info: dict[str, tuple[Any, Any]] | None,
        boundaries: list[int],
        pad_to_bucket_boundary: bool,
    ):
        self.label = label
        self.columns = columns
        self.boundaries = boundaries
        self.pad_to_bucket_boundary = pad_to_bucket_boundary
        self.padding: dict[int, tuple[Any, Any]] = {}
        if pad_info is not None:
            self.padding = {
                i: pad_info.get(name, (None, None))
                for i, name in enumerate(columns)
                if not pad_info or name in pad_info
            }
        self.pool = BufferPool()

    def _shape(self, shape: Any, bucket: int, column: str) -> Any:
        if not self.pad_to_bucket_boundary or shape is None or all(d is not None for d in shape):
            return shape
        if bucket >= len(self.boundaries):
            raise PipelineError(
                f"{self.label}: pad_to_bucket_boundary pads column {column!r} to its bucket's upper boundary, but "
                f"a row fell in the last bucket (length >= {self.boundaries[-1]}), which has none. Add a larger "
                "bucket boundary, or drop pad_to_bucket_boundary."
            )
        return tuple(self.boundaries[bucket] - 1 if d is None else d for d in shape)

    def __call__(self, chunk: Chunk, pass_index: int, row_start: int) -> Chunk:
        out = []
        for offset, (bucket, rows) in enumerate(chunk.rows):
            batch_num = row_start + offset
            columns = [list(col) for col in zip(*rows)]
            batched: list[Any] = []
            for i, (col, name) in enumerate(zip(columns, self.columns)):
                if i in self.padding:
                    shape, value = self.padding[i]
                    batched.append(
                        pad_column(col, self._shape(shape, bucket, name), value, self.label, name, batch_num, self.pool)
                    )
                else:
                    batched.append(stack_column(col, self.label, name, batch_num, self.pool))
            out.append(tuple(batched))
        return Chunk(out)
