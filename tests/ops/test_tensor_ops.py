"""Mask, PadEnd, Slice, Unique and not_random: MindSpore's documented examples, and the kernels
against references computed here with NumPy (exact: no arithmetic is involved)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import minddata as md
from minddata import transforms
from minddata.errors import ArgumentError
from minddata.ops import TensorSpec
from minddata.transforms import Relational

RNG = np.random.default_rng(3)


def pipeline(op: Any, column: np.ndarray, output_columns: list[str] | None = None) -> list[tuple]:
    ds = md.NumpySlicesDataset({"col": [column]}, shuffle=False)
    ds = ds.map(operations=op, input_columns="col", output_columns=output_columns)
    return [tuple(row) for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]


# ---------------------------------------------------------------------------------------------- Mask


def test_mask_mindspore_example() -> None:
    # MindSpore's example: [1, 2, 3, 4, 5] with Mask(Relational.EQ, 3).
    (out,) = pipeline(transforms.Mask(Relational.EQ, 3), np.array([1, 2, 3, 4, 5]))[0]
    np.testing.assert_array_equal(out, [False, False, True, False, False])


@pytest.mark.parametrize(
    ("relation", "reference"),
    [
        (Relational.EQ, np.equal),
        (Relational.NE, np.not_equal),
        (Relational.GT, np.greater),
        (Relational.GE, np.greater_equal),
        (Relational.LT, np.less),
        (Relational.LE, np.less_equal),
    ],
)
def test_mask_matches_numpy_comparison(relation: Relational, reference: Any) -> None:
    data = RNG.integers(-5, 5, (4, 6)).astype(np.int16)
    np.testing.assert_array_equal(transforms.Mask(relation, 1)(data), reference(data, 1))


def test_mask_casts_constant_to_input_dtype_and_output_to_dtype() -> None:
    out = transforms.Mask(Relational.EQ, 2.7, dtype="float32")(np.array([1, 2, 3]))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [0.0, 1.0, 0.0])  # 2.7 becomes int 2, as in MindSpore


def test_mask_compares_strings() -> None:
    np.testing.assert_array_equal(
        transforms.Mask(Relational.GE, "b")(np.array(["a", "b", "c"])), [False, True, True]
    )


def test_mask_rejects_string_constant_for_numbers() -> None:
    with pytest.raises(TypeError, match="Mask: a int64 tensor takes a number as `constant`"):
        transforms.Mask(Relational.EQ, "3")(np.array([1, 2, 3]))


def test_mask_rejects_an_operator_that_is_not_relational() -> None:
    with pytest.raises(TypeError, match=r"Mask: `operator` must be a Relational"):
        transforms.Mask("==", 1)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- PadEnd


def test_pad_end_mindspore_example() -> None:
    # MindSpore's example: [1, 2, 3] with PadEnd(pad_shape=[4], pad_value=10).
    (out,) = pipeline(transforms.PadEnd(pad_shape=[4], pad_value=10), np.array([1, 2, 3]))[0]
    np.testing.assert_array_equal(out, [1, 2, 3, 10])


def test_pad_end_pads_and_truncates_like_numpy_pad_and_slicing() -> None:
    data = RNG.integers(0, 100, (3, 5)).astype(np.uint8)
    out = transforms.PadEnd([6, 2], pad_value=7)(data)
    want = np.pad(data[:, :2], ((0, 3), (0, 0)), constant_values=7)
    np.testing.assert_array_equal(out, want)
    assert out.dtype == np.uint8


def test_pad_end_none_keeps_a_dimension() -> None:
    out = transforms.PadEnd([None, 4])(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(out, np.pad(np.ones((2, 3), np.float32), ((0, 0), (0, 1))))


def test_pad_end_strings_default_to_empty() -> None:
    np.testing.assert_array_equal(transforms.PadEnd([3])(np.array(["a"])), ["a", "", ""])


def test_pad_end_rejects_rank_mismatch() -> None:
    with pytest.raises(ValueError, match=r"PadEnd: `pad_shape` \[4\] has 1 dimension\(s\); the input has 2"):
        transforms.PadEnd([4])(np.zeros((2, 2)))


def test_pad_end_rejects_negative_size() -> None:
    with pytest.raises(ArgumentError, match=r"PadEnd: `pad_shape\[0\]` must be >= 0. Found: -1"):
        transforms.PadEnd([-1])


# ---------------------------------------------------------------------------------------------- Slice


def test_slice_mindspore_example() -> None:
    # MindSpore's example: [1, 2, 3] with Slice(slice(1, 3)).
    (out,) = pipeline(transforms.Slice(slice(1, 3)), np.array([1, 2, 3]))[0]
    np.testing.assert_array_equal(out, [2, 3])


@pytest.mark.parametrize(
    ("args", "numpy_index"),
    [
        ((1,), [1]),
        ((-1,), [-1]),
        (([3, 0, 0],), [3, 0, 0]),
        ((slice(None, None, -2),), slice(None, None, -2)),
        ((slice(2, 100),), slice(2, 100)),
        ((None,), slice(None)),
        ((Ellipsis,), slice(None)),
    ],
)
def test_slice_matches_numpy_indexing_on_1d(args: tuple, numpy_index: Any) -> None:
    data = np.arange(10, 16)
    np.testing.assert_array_equal(transforms.Slice(*args)(data), data[numpy_index])


def test_slice_two_lists_take_the_outer_product() -> None:
    data = np.arange(20).reshape(4, 5)
    np.testing.assert_array_equal(transforms.Slice([0, 2], [4, 1])(data), data[np.ix_([0, 2], [4, 1])])


def test_slice_output_spec_follows_each_argument() -> None:
    op = transforms.Slice(0, [1, 1, 2], slice(1, None, 2))
    assert op.output_spec(TensorSpec((4, 5, 7, 2), np.dtype(np.int8))) == TensorSpec(
        (1, 3, 3, 2), np.dtype(np.int8)
    )


def test_slice_rejects_index_out_of_range() -> None:
    with pytest.raises(
        ValueError, match=r"Slice: index 3 of `slices\[0\]` is out of range for dimension 0 of size 3"
    ):
        transforms.Slice(3)(np.array([1, 2, 3]))


@pytest.mark.parametrize("bad", [1.5, "a", [1, "b"], True])
def test_slice_rejects_other_types(bad: Any) -> None:
    with pytest.raises(
        TypeError, match=r"Slice: `slices\[0\]` must be an int, a list of ints, a slice, None or Ellipsis"
    ):
        transforms.Slice(bad)


def test_slice_pickles() -> None:
    op = transforms.Slice(slice(0, None, 2), Ellipsis)
    assert pickle.loads(pickle.dumps(op)) == op


# ---------------------------------------------------------------------------------------------- Unique


def test_unique_mindspore_example() -> None:
    # MindSpore's example: [0, 1, 2, 0, 1, 1] gives [0, 1, 2], idx [0, 1, 2, 0, 1, 1], count [2, 3, 1].
    rows = pipeline(transforms.Unique(), np.array([0, 1, 2, 0, 1, 1]), ["x", "idx", "count"])
    out, idx, count = rows[0]
    np.testing.assert_array_equal(out, [0, 1, 2])
    np.testing.assert_array_equal(idx, [0, 1, 2, 0, 1, 1])
    np.testing.assert_array_equal(count, [2, 3, 1])


def test_unique_keeps_first_appearance_order_and_reconstructs() -> None:
    data = RNG.integers(0, 7, 50)
    out, idx, count = transforms.Unique()(data)
    first_seen = list(dict.fromkeys(data.tolist()))
    assert out.tolist() == first_seen
    np.testing.assert_array_equal(out[idx], data)
    assert count.tolist() == [int((data == v).sum()) for v in first_seen]
    assert idx.dtype == np.int32 and count.dtype == np.int32


def test_unique_strings() -> None:
    out, idx, count = transforms.Unique()(np.array(["b", "a", "b"]))
    assert out.tolist() == ["b", "a"] and idx.tolist() == [0, 1, 0] and count.tolist() == [2, 1]


def test_unique_reads_2d_input_flattened_as_mindspore_example() -> None:
    # MindSpore's docstring: [[0, -1, -2, -1, 2], [2, -0, 2, 1, -3]] gives shapes (6,), (10,), (6,).
    out, idx, count = transforms.Unique()(np.array([[0, -1, -2, -1, 2], [2, -0, 2, 1, -3]]))
    assert out.tolist() == [0, -1, -2, 2, 1, -3] and idx.tolist() == [0, 1, 2, 1, 3, 3, 0, 3, 4, 5]
    assert count.tolist() == [2, 2, 1, 3, 1, 1]


def test_unique_2d_output_spec_is_flat() -> None:
    from minddata.ops.base import TensorSpec

    specs = transforms.Unique().output_spec(TensorSpec((2, 5), np.dtype(np.int64)))
    assert [s.shape for s in specs] == [(None,), (10,), (None,)]


def test_unique_rejects_a_scalar() -> None:
    with pytest.raises(ValueError, match=r"Unique: expected an input of at least one dimension"):
        transforms.Unique()(np.int64(3))


# ---------------------------------------------------------------------------------------------- not_random


def test_not_random_marks_the_function() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        return x + 1

    assert transforms.not_random(f) is f and f.random is False  # type: ignore[attr-defined]
    (out,) = pipeline(f, np.array([1]))[0]
    np.testing.assert_array_equal(out, [2])
