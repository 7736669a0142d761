"""The Ray executor's internal blocks: rows packed into one Arrow column come back bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pa = pytest.importorskip("pyarrow", reason="pyarrow comes with the ray extra: pip install 'minddata[ray]'")

from minddata.engine.ray_executor.codec import (  # noqa: E402 - after the skip
    ID,
    NOTE_POS,
    ORIGIN,
    POS,
    frame,
    frame_rows,
    origins_of,
    pack_rows,
    take_notes,
    unpack_rows,
)
from minddata.engine.runtime import ErrorStats  # noqa: E402


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and a.tobytes() == b.tobytes())
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))  # NaN equals itself here


arrays = hnp.arrays(
    dtype=st.sampled_from([np.uint8, np.int16, np.int64, np.float32, np.float64, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
)


@st.composite
def laid_out_arrays(draw):
    """Arrays as pipelines make them: C order, Fortran order, strided views, read-only buffers."""
    array = draw(arrays)
    layout = draw(st.sampled_from(["c", "fortran", "strided", "readonly"]))
    if layout == "fortran":
        return np.asfortranarray(array)
    if layout == "strided" and array.ndim:
        return array[::2]
    if layout == "readonly":
        array = array.copy()
        array.setflags(write=False)
    return array


scalars = st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats(), st.text(max_size=5), st.binary(max_size=9),
                    st.none(), st.just(np.int32(7)), st.just(np.float16(0.5)))
rows = st.lists(st.tuples(laid_out_arrays(), scalars), max_size=6)


@settings(max_examples=60, deadline=None)
@given(rows)
def test_packed_rows_come_back_bit_for_bit(values):
    assert all(_same(a, b) for a, b in zip(values, unpack_rows(pack_rows(values)), strict=True))


@settings(max_examples=30, deadline=None)
@given(rows)
def test_unpacked_arrays_are_copies_as_writable_as_the_originals(values):
    column = pack_rows(values)
    for original, row in zip(values, unpack_rows(column), strict=True):
        assert row[0].flags.writeable == original[0].flags.writeable
        if row[0].flags.writeable:
            row[0][...] = 0  # a copy, never a view into the block (Ray's object store is read-only)
    assert all(_same(a, b) for a, b in zip(values, unpack_rows(column), strict=True))


def test_sliced_and_chunked_columns_unpack_their_own_rows():
    values = [(np.full((2, 3), i, dtype=np.int16), i) for i in range(7)]
    column = pack_rows(values)
    assert [row[1] for row in unpack_rows(column.slice(2, 3))] == [2, 3, 4]
    chunked = pa.chunked_array([column.slice(0, 4), column.slice(4)])
    assert all(_same(a, b) for a, b in zip(values, unpack_rows(chunked), strict=True))


def test_rows_larger_than_a_piece_pack_into_a_chunked_column(monkeypatch):
    monkeypatch.setattr("minddata.engine.ray_executor.codec.PACKED_CHUNK_BYTES", 1000)
    values = [(np.full(n, n % 256, dtype=np.uint8), n) for n in (10, 400, 700, 2500, 5, 990)]
    column = pack_rows(values)
    assert isinstance(column, pa.ChunkedArray) and column.num_chunks > 1 and len(column) == len(values)
    assert all(_same(a, b) for a, b in zip(values, unpack_rows(column), strict=True))


def test_a_block_of_row_ids_has_no_rows_yet():
    table = frame([0, 1, 2], [7, 8, 9], None, None)
    assert frame_rows(table) == [None, None, None] and table.column(ID).to_pylist() == [7, 8, 9]


def test_origins_that_are_not_text_travel_packed():
    table = frame([0, 1], [5, 6], [1, 2], [("shard-0", 3), None])
    assert origins_of(table) == [("shard-0", 3), None]
    assert origins_of(frame([0], [5], [1], ["a.jpg"])) == ["a.jpg"]


def test_bookkeeping_rows_leave_the_block_and_count_their_errors():
    rows = frame([0, 1], [10, 11], [("a",), ("b",)], ["x.jpg", "y.jpg"])
    note = frame([NOTE_POS], [0], [(2, 1, ["row 3: bad"])], None)
    errors = ErrorStats()
    kept = take_notes(pa.concat_tables([rows, note]), errors)
    assert kept.column(POS).to_pylist() == [0, 1] and kept.column(ID).to_pylist() == [10, 11]
    assert frame_rows(kept) == [("a",), ("b",)] and kept.column(ORIGIN).to_pylist() == ["x.jpg", "y.jpg"]
    assert (errors.skipped, errors.replaced) == (2, 1)


def test_a_packed_block_keeps_its_rows_while_the_next_block_is_packed():
    first = [(np.full((512, 1024), i, dtype=np.uint8), i) for i in range(4)]  # 2 MB: a recycled piece
    column = pack_rows(first)
    pack_rows([(np.full((512, 1024), 99, dtype=np.uint8), 99) for _ in range(4)])
    assert all(_same(a, b) for a, b in zip(first, unpack_rows(column), strict=True))
