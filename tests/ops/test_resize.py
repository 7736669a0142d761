"""RandomResize against OpenCV: every row is one of the four interpolations MindSpore draws from."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel

IMG = np.random.default_rng(4).integers(0, 256, (20, 28, 3), dtype=np.uint8)
FLAGS = (cv2.INTER_LINEAR, cv2.INTER_NEAREST, cv2.INTER_CUBIC, cv2.INTER_AREA)


def test_random_resize_gives_each_of_the_four_interpolations() -> None:
    op = vision.RandomResize((9, 13))
    refs = [cv2.resize(IMG, (13, 9), interpolation=f) for f in FLAGS]
    seen = set()
    for row in range(40):
        out = get_kernel("RandomResize", "CPU")(op, KernelContext(seed=1, row_index=row), IMG)
        matches = [k for k, ref in enumerate(refs) if np.array_equal(out, ref)]
        assert matches, f"row {row}: matches none of OpenCV's four interpolations"
        seen.add(matches[0])
    assert seen == {0, 1, 2, 3}


def test_random_resize_int_size_is_the_shorter_side() -> None:
    assert vision.RandomResize(10)(IMG).shape == (10, 14, 3)


def test_random_resize_rejects_a_bad_size() -> None:
    with pytest.raises(ArgumentError, match=r"RandomResize: `size` must be greater than 0. Found: 0"):
        vision.RandomResize(0)
