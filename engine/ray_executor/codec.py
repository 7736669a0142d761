"""The Ray executor's blocks: Arrow tables whose rows travel packed, bit for bit.

A block has four columns: ``__pos__`` (the row's position in the pass), ``__id__`` (its source row id),
``__row__`` (the row, packed: :func:`pack_rows`) and ``__origin__`` (the file it came from). Rows at
position :data:`NOTE_POS` are bookkeeping: the error counts of a worker's error policy.

Examples:
    >>> import numpy as np
    >>> from minddata.engine.ray_executor.codec import frame, frame_rows
    >>> block = frame([0, 1], [7, 8], [(np.arange(3),), (np.ones(2),)], ["a.jpg", "b.jpg"])
    >>> [row[0].tolist() for row in frame_rows(block)]
    [[0, 1, 2], [1.0, 1.0]]
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Iterable
from typing import Any

import numpy as np

from minddata.engine.batchfn import BufferPool
from minddata.engine.runtime import ErrorStats

__all__ = [
    "POS", "ID", "ROW", "ORIGIN", "NOTE_POS", "PACKED_CHUNK_BYTES", "Packer", "pack_rows", "unpack_rows",
    "frame", "frame_rows", "origins_of", "block_positions", "take_notes", "objects",
]

# Columns of the internal Ray blocks: a row travels whole (bit for bit), with its provenance.
POS, ID, ROW, ORIGIN = "__pos__", "__id__", "__row__", "__origin__"
# A block's bookkeeping rows have this position: their row is (skipped, replaced, first messages), the
# rows a worker's error policy dropped, for the consumer's error counts and end-of-epoch log.
NOTE_POS = -1


def objects(values: list[Any]) -> np.ndarray:
    """``values`` as a 1-D object array, one element each."""
    # np.array would turn a list of tuples of arrays into one big array: fill an object array instead.
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


# A packed row: buffer count and pickle length, the buffers' lengths, the pickle, then the buffers.
_ROW_HEAD = struct.Struct("<IQ")


# A packed column is cut into buffers of at most this size. The cost of packing is first touches of
# fresh memory: 250 images of 224x224x3 took 106-128 us per image joined into one 37 MB bytes object,
# 65-77 in 16 MB pieces, 42-58 in 16 MB NumPy buffers (backed by huge pages where the kernel has them).
PACKED_CHUNK_BYTES = 16 << 20
# The pieces a process keeps for its next blocks (4: a 250-image block of 224x224x3 takes 3). They are
# handed out again once Ray has copied the block holding them into its object store and let it go:
# fresh pieces cost a page fault and a zeroed page every 4 KB (packing 250 images: 60-70 us per image
# in fresh pieces, 35-38 in recycled ones).
_PIECES = BufferPool(size=4)


class Packer:
    """Rows packed into an Arrow ``large_binary`` column as they come: one array, or a chunked array of
    pieces of at most :data:`PACKED_CHUNK_BYTES` (a row larger than that is a piece alone).

    Each row is pickled (protocol 5) with its arrays' data out of band and copied once into its
    piece: an image is copied once into the block, where ``pa.array`` over per-row pickles copied it
    twice and spent most of its time allocating. Rows are copied when added once the column holds
    ``PACKED_CHUNK_BYTES // 16`` (into a recycled piece), so a task's output rows are freed chunk by
    chunk instead of sitting in memory next to their packed copy until the block ends (37 MB for a
    block of 250 images of 224x224x3).
    """

    def __init__(self) -> None:
        self._chunks: list[Any] = []
        self._pending: list[Any] = []  # the current piece's parts, not copied yet
        self._piece: np.ndarray | None = None  # the current piece's buffer, once rows are copied
        self._offsets = [0]

    def add(self, row: Any) -> None:
        buffers: list[pickle.PickleBuffer] = []
        body = pickle.dumps(row, protocol=5, buffer_callback=buffers.append)
        raws = [buffer.raw() for buffer in buffers]
        sizes = [raw.nbytes for raw in raws]
        parts = [_ROW_HEAD.pack(len(sizes), len(body)) + struct.pack(f"<{len(sizes)}Q", *sizes) + body, *raws]
        size = _ROW_HEAD.size + 8 * len(sizes) + len(body) + sum(sizes)
        limit = PACKED_CHUNK_BYTES
        if len(self._offsets) > 1 and self._offsets[-1] + size > limit:
            self._finish()
        if self._piece is None and self._offsets[-1] + size > limit // 16:
            need = self._offsets[-1] + size
            # A row larger than a piece is a piece of its own size, not recycled.
            self._piece = _PIECES.empty((limit,), np.uint8) if need <= limit else np.empty(need, np.uint8)
            self._copy(self._pending, 0)
            self._pending.clear()
        if self._piece is not None:
            self._copy(parts, self._offsets[-1])
        else:
            self._pending.extend(parts)
        self._offsets.append(self._offsets[-1] + size)

    def extend(self, rows: Iterable[Any]) -> None:
        for row in rows:
            self.add(row)

    def column(self) -> Any:
        """The packed column (the packer is empty again afterwards)."""
        import pyarrow as pa

        if len(self._offsets) > 1 or not self._chunks:
            self._finish()
        chunks, self._chunks = self._chunks, []
        return chunks[0] if len(chunks) == 1 else pa.chunked_array(chunks, type=pa.large_binary())

    def _copy(self, parts: list[Any], at: int) -> None:
        assert self._piece is not None
        for part in parts:
            size = len(part) if isinstance(part, bytes) else part.nbytes
            self._piece[at : at + size] = np.frombuffer(part, dtype=np.uint8)
            at += size

    def _finish(self) -> None:
        import pyarrow as pa

        if self._piece is None:
            self._piece = np.empty(self._offsets[-1], dtype=np.uint8)
            self._copy(self._pending, 0)
            self._pending.clear()
        data = self._piece[: self._offsets[-1]]
        self._piece = None
        bounds = np.asarray(self._offsets, dtype=np.int64)
        self._chunks.append(pa.Array.from_buffers(pa.large_binary(), len(self._offsets) - 1,
                                                  [None, pa.py_buffer(bounds), pa.py_buffer(data)]))
        del self._offsets[1:]


def pack_rows(rows: Iterable[Any]) -> Any:
    """Rows as a packed Arrow column (see :class:`Packer`)."""
    packer = Packer()
    packer.extend(rows)
    return packer.column()


def unpack_rows(column: Any, copy: bool = True) -> list[Any]:
    """The rows of a packed column (an Arrow array or chunked array), each array in its own writable
    memory: a row never points into Ray's object store. With ``copy=False`` the arrays are read-only
    views of the column's buffers (for a consumer that copies every row at once, as a batch does)."""
    import pyarrow as pa

    loads, unpack_head = pickle.loads, _ROW_HEAD.unpack_from
    rows: list[Any] = []
    for array in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        if not len(array):
            continue
        if array.null_count == len(array):  # a block of row ids whose rows are not read yet
            rows.extend([None] * len(array))
            continue
        _, offset_buffer, data_buffer = array.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
        data = memoryview(data_buffer)
        for start in offsets[:-1].tolist():
            count, body_size = unpack_head(data, start)
            at = start + _ROW_HEAD.size
            sizes = struct.unpack_from(f"<{count}Q", data, at) if count else ()
            at += 8 * count
            body = data[at : at + body_size]
            at += body_size
            buffers = []
            for size in sizes:
                buffers.append(bytearray(data[at : at + size]) if copy else data[at : at + size])
                at += size
            rows.append(loads(body, buffers=buffers))
    return rows


def _origins_column(origins: list[Any]) -> Any:
    import pyarrow as pa

    try:
        return pa.array(origins, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: they travel packed, like rows
        return pack_rows(origins)


def origins_of(table: Any) -> list[Any]:
    """The files block ``table``'s rows came from (None where unknown)."""
    import pyarrow as pa

    column = table.column(ORIGIN)
    if pa.types.is_large_binary(column.type):
        return unpack_rows(column)
    return column.to_pylist()


def frame(pos: Any, ids: Any, rows: list[Any] | None, origins: list[Any] | None) -> Any:
    """An internal block: an Arrow table whose rows travel packed (:func:`pack_rows`), bit for bit.
    Ray would otherwise infer Arrow types for them (a tuple of an int and a float becomes a list of
    floats); an Arrow block is also what Ray keeps without converting it. ``rows=None``: a block of
    row ids whose rows the first step reads (a null ``__row__`` column)."""
    import pyarrow as pa

    count = len(ids)
    if rows is None:
        column = pa.nulls(count, pa.large_binary())
    else:
        column = rows if isinstance(rows, (pa.Array, pa.ChunkedArray)) else pack_rows(rows)
    return pa.table({
        POS: pa.array(np.asarray(pos, dtype=np.int64)),
        ID: pa.array(np.asarray(ids, dtype=np.int64)),
        ROW: column,
        ORIGIN: _origins_column(list(origins) if origins is not None else [None] * count),
    })


def frame_rows(table: Any, copy: bool = True) -> list[Any]:
    """The rows of block ``table`` (see :func:`unpack_rows` for ``copy``)."""
    return unpack_rows(table.column(ROW), copy)


def block_positions(table: Any) -> np.ndarray:
    """The pass positions of block ``table``'s rows."""
    return table.column(POS).to_numpy()


def take_notes(table: Any, errors: ErrorStats) -> Any:
    """``table`` without its bookkeeping rows, whose error counts go to ``errors``."""
    import pyarrow as pa

    notes = block_positions(table) == NOTE_POS
    if not notes.any():
        return table
    for skipped, replaced, samples in frame_rows(table.filter(pa.array(notes))):
        errors.merge(skipped, replaced, samples)
    return table.filter(pa.array(~notes))

