"""HorizontalFlip, RandomHorizontalFlip, VerticalFlip and RandomVerticalFlip against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from vision_testing import make_drawing, make_photo, run

from minddata import vision

IMG = make_photo(37, 53)


# ---------------------------------------------------------------------------------------------- flips


@pytest.mark.parametrize(
    "img",
    [
        IMG,
        IMG[..., 0],
        IMG.astype(np.float64),
        np.repeat(IMG, 2, axis=2).astype(np.int64),
        IMG[:, :1],
        IMG > 128,
    ],
    ids=["rgb", "gray", "float64", "int64x6", "one_column", "bool"],
)
def test_horizontal_flip_exact(img: np.ndarray) -> None:
    out = vision.HorizontalFlip()(img)
    np.testing.assert_array_equal(out, img[:, ::-1])
    assert out.shape == img.shape and out.dtype == img.dtype


def test_random_horizontal_flip_prob_bounds() -> None:
    for row in range(20):
        np.testing.assert_array_equal(run(vision.RandomHorizontalFlip(1.0), IMG, row=row), IMG[:, ::-1])
        np.testing.assert_array_equal(run(vision.RandomHorizontalFlip(0.0), IMG, row=row), IMG)


def test_random_horizontal_flip_is_a_function_of_the_row_context() -> None:
    op = vision.RandomHorizontalFlip()
    flips = []
    for row in range(64):
        a, b = run(op, IMG, row=row), run(op, IMG, row=row)
        np.testing.assert_array_equal(a, b)
        flips.append(bool(np.array_equal(a, IMG[:, ::-1])))
    # Different rows draw differently: both outcomes occur, in roughly equal numbers.
    assert 16 <= sum(flips) <= 48
    other_seed = [bool(np.array_equal(run(op, IMG, row=r, seed=2), IMG[:, ::-1])) for r in range(64)]
    assert other_seed != flips


# ---------------------------------------------------------------------------------------------- flips


@pytest.mark.parametrize(
    "img",
    [make_drawing(), make_drawing()[..., 0], make_drawing().astype(np.float64), make_drawing()[:1], make_drawing() > 100],
    ids=["rgb", "gray", "float64", "one_row", "bool"],
)
def test_vertical_flip_exact_and_a_view(img: np.ndarray) -> None:
    out = vision.VerticalFlip()(img)
    np.testing.assert_array_equal(out, img[::-1])
    assert out.dtype == img.dtype and np.shares_memory(out, img)


def test_random_vertical_flip_prob_bounds(drawing) -> None:
    for row in range(20):
        np.testing.assert_array_equal(run(vision.RandomVerticalFlip(1.0), drawing, row=row), drawing[::-1])
        assert run(vision.RandomVerticalFlip(0.0), drawing, row=row) is drawing
    flips = [
        np.array_equal(run(vision.RandomVerticalFlip(), drawing, row=r), drawing[::-1]) for r in range(64)
    ]
    assert 16 <= sum(flips) <= 48
