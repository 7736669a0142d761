"""Read tasks: a pass's rows cut into runs of consecutive positions, each read inside its Ray task.

The driver only plans: it draws the pass's row ids (:meth:`Segment.pass_ids`) and cuts them into
tasks. Each task calls the source's ``fetch(ids)`` itself, in the Ray worker, so a source's files or
objects are opened where the task runs and no row passes through the driver. With ``reads_in_step``
the tasks carry row ids only and the first map step reads the rows (Ray fuses the two).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from minddata import config
from minddata.config import RunOptions
from minddata.engine.ray_executor.codec import frame

__all__ = ["Reads", "datasource_class", "read_task", "uniform_sizes", "rows_per_task", "TASKS_PER_CPU",
           "MAX_ROWS_PER_TASK"]

# Rows per read task: enough tasks to keep every CPU busy with a few in flight, few enough that the
# fixed cost of a task (scheduling, a block in the object store) stays small next to its rows.
TASKS_PER_CPU = 4
MAX_ROWS_PER_TASK = 512  # 512 decoded 224x224 images: 77 MB, under Ray's 128 MB block target


def uniform_sizes(rows: int, per_task: int) -> list[int]:
    """``rows`` cut into tasks of ``per_task`` rows (the last one shorter)."""
    return [min(per_task, rows - start) for start in range(0, rows, per_task)]


def rows_per_task(rows: int, multiple: int, chunk_rows: int, ray: Any) -> int:
    """Rows per read task for a pass of ``rows`` on the cluster ``ray`` is connected to: at least a
    chunk (``chunk_rows``), a multiple of ``multiple`` (whole batches)."""
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    per_task = min(MAX_ROWS_PER_TASK, max(chunk_rows, math.ceil(rows / (cpus * TASKS_PER_CPU))))
    multiple = max(1, multiple)
    return max(multiple, -(-per_task // multiple) * multiple)


_DATASOURCE: Any = None


def datasource_class() -> Any:
    """The ``ray.data.Datasource`` of a segment's read tasks (defined once Ray is imported)."""
    global _DATASOURCE
    if _DATASOURCE is not None:
        return _DATASOURCE
    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata

    class MinddataSource(Datasource):
        """Read tasks over contiguous runs of a pass's rows (a record/Parquet source's rows in file and
        row-range order when unshuffled): ``fetch(ids)`` in the task, rows tagged with their position.
        ``node`` is a random-access source or a streamed source's ``record_reads``."""

        def __init__(self, node: Any, ids: np.ndarray, first_pos: int, sizes: list[int],
                     options: RunOptions, reads_in_step: bool = False):
            self.node = node
            self.options = options
            self.ids = ids
            self.first_pos = first_pos
            self.sizes = sizes
            self.reads_in_step = reads_in_step

        def get_name(self) -> str:
            return self.node.name

        def estimate_inmemory_data_size(self) -> int | None:
            return None

        def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                           data_context: Any = None) -> list[Any]:
            reads = None if self.reads_in_step else Reads(self.node.fetch, self.options.rows_per_chunk)
            origins = self.node.origins
            tasks = []
            start = 0
            for size in self.sizes:
                ids = self.ids[start : start + size].tolist()
                meta = BlockMetadata(num_rows=len(ids), size_bytes=None, exec_stats=None, input_files=None)
                tasks.append(ReadTask(read_task(reads, origins, ids, self.first_pos + start, self.options), meta))
                start += size
            return tasks

    _DATASOURCE = MinddataSource
    return MinddataSource


class Reads:
    """A source's rows for a list of ids, fetched ``chunk_rows`` at a time (as the local engine does)."""

    def __init__(self, fetch: Any, chunk_rows: int):
        self.fetch = fetch
        self.chunk_rows = chunk_rows

    def __call__(self, ids: list[int]) -> list[Any]:
        rows: list[Any] = []
        for start in range(0, len(ids), self.chunk_rows):
            rows.extend(self.fetch(ids[start : start + self.chunk_rows]))
        return rows


def read_task(reads: Reads | None, origins: Any, ids: list[int], pos: int, options: RunOptions) -> Any:
    """One block per task: map steps then see whole runs of consecutive positions. Without ``reads``
    the block carries no rows (null ``__row__``): the first step reads them. The source reads under
    the run's settings (``options``), as in a local pipeline's threads."""

    def read() -> Iterator[Any]:
        with config.running(options):
            where = origins(ids) if origins is not None else None
            positions = np.arange(pos, pos + len(ids), dtype=np.int64)
            block = frame(positions, ids, reads(ids) if reads is not None else None, where)
        yield block

    return read

