"""Chunks: the unit that moves between stages.

Rows travel in chunks (tens of rows) rather than one by one, so the fixed cost of a queue hop, a lock
or a thread wake-up is paid per chunk. A row is a tuple of column values.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

__all__ = ["Chunk", "Chunks", "FailedRow"]


class Chunk:
    """Rows plus, for each row, where it came from.

    ``ids``: the source index of each row (sampler index, generator position), or ``None`` once rows
    no longer map to one source row (after batch or zip). ``origins``: the source file of each row,
    or ``None`` when the source has no files. ``keys``: each row's global identity in its epoch (its
    position in the epoch's global order, :mod:`minddata.engine.elastic`), which keys the random ops
    above when the rows are a shard's; ``None`` where the row's position in the stream is its key.
    """

    __slots__ = ("rows", "ids", "origins", "keys")

    def __init__(
        self, rows: list[Any], ids: list[int] | None = None, origins: list[str | None] | None = None,
        keys: list[int] | None = None,
    ):
        self.rows = rows
        self.ids = ids
        self.origins = origins
        self.keys = keys

    def __len__(self) -> int:
        return len(self.rows)

    def slice(self, start: int, stop: int) -> Chunk:
        return Chunk(
            self.rows[start:stop],
            None if self.ids is None else self.ids[start:stop],
            None if self.origins is None else self.origins[start:stop],
            None if self.keys is None else self.keys[start:stop],
        )

    def take(self, indices: list[int]) -> Chunk:
        """The rows at ``indices`` (in that order), with their provenance."""
        return Chunk(
            [self.rows[i] for i in indices],
            None if self.ids is None else [self.ids[i] for i in indices],
            None if self.origins is None else [self.origins[i] for i in indices],
            None if self.keys is None else [self.keys[i] for i in indices],
        )

    def where(self, index: int) -> str:
        """``"source row 12, file a.jpg"`` for error messages; empty when nothing is known."""
        parts = []
        if self.ids is not None:
            parts.append(f"source row {self.ids[index]}")
        if self.origins is not None and self.origins[index] is not None:
            parts.append(f"file {self.origins[index]}")
        return ", ".join(parts)


# One pass over a stage's output: a generator of chunks, which its consumer closes (contextlib.closing)
# so that the stages below it stop and let go of their threads, workers and buffers.
Chunks = Generator[Chunk, None, None]


class FailedRow:
    """Stands in for a row whose op failed when errors are delivered per row (online pipelines)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error
