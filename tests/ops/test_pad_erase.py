"""Erase and PadToSize against NumPy references (exact: integer fills and copies)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest

from minddata import vision
from minddata.errors import ArgumentError
from minddata.vision import Border

IMG = np.random.default_rng(1).integers(0, 256, (12, 16, 3), dtype=np.uint8)


def test_erase_fills_the_rectangle_per_channel() -> None:
    out = vision.Erase(2, 3, 4, 5, value=(10, 20, 30))(IMG)
    want = IMG.copy()
    want[2:6, 3:8] = [10, 20, 30]
    np.testing.assert_array_equal(out, want)


def test_erase_clips_the_rectangle_to_the_image() -> None:
    out = vision.Erase(10, 14, 50, 50, value=7)(IMG)
    want = IMG.copy()
    want[10:, 14:] = 7
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(vision.Erase(40, 0, 2, 2)(IMG), IMG)


def test_erase_float_image_and_inplace() -> None:
    img = IMG.astype(np.float32)
    out = vision.Erase(0, 0, 1, 1, value=2.5, inplace=True)(img)
    assert out is img and img[0, 0].tolist() == [2.5] * 3
    kept = IMG.copy()
    vision.Erase(0, 0, 1, 1)(kept)
    np.testing.assert_array_equal(kept, IMG)


def test_erase_needs_three_channels() -> None:
    with pytest.raises(ValueError, match=r"Erase: expected an image of shape <H, W, 3>"):
        vision.Erase(0, 0, 1, 1)(IMG[..., 0])


@pytest.mark.parametrize(
    ("size", "offset", "pads"),
    [
        ((20, 20), None, (4, 4, 2, 2)),
        ((13, 17), None, (0, 1, 0, 1)),
        ((15, 19), (3, 0), (3, 0, 0, 3)),
        (18, 2, (2, 4, 2, 0)),
    ],
)
def test_pad_to_size_matches_opencv_border(size: Any, offset: Any, pads: tuple[int, int, int, int]) -> None:
    top, bottom, left, right = pads
    for mode, flag in (
        (Border.CONSTANT, cv2.BORDER_CONSTANT),
        (Border.REFLECT, cv2.BORDER_REFLECT_101),
        (Border.EDGE, cv2.BORDER_REPLICATE),
    ):
        out = vision.PadToSize(size, offset, fill_value=(1, 2, 3), padding_mode=mode)(IMG)
        want = cv2.copyMakeBorder(IMG, top, bottom, left, right, flag, value=(1, 2, 3))
        np.testing.assert_array_equal(out, want)


def test_pad_to_size_rejects_an_image_that_does_not_fit() -> None:
    with pytest.raises(
        ValueError,
        match=r"PadToSize: the target size \(10, 20\) must be at least the image's size \(12, 16\)",
    ):
        vision.PadToSize((10, 20))(IMG)
    with pytest.raises(
        ValueError, match=r"PadToSize: an image of size \(12, 16\) at offset \(top=0, left=5\) does not fit"
    ):
        vision.PadToSize((12, 20), offset=(0, 5))(IMG)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: vision.Erase(-1, 0, 1, 1), ArgumentError, r"Erase: `top` must be at least 0. Found: -1"),
        (lambda: vision.Erase(0, 0, 0, 1), ArgumentError, r"Erase: `height` must be greater than 0"),
        (lambda: vision.Erase(0, 0, 1, 1, value=256), ArgumentError, r"`value` must be in \[0, 255\]"),
        (
            lambda: vision.Erase(0, 0, 1, 1, value=(1, 2)),
            TypeError,
            r"`value` must be a number or a sequence of 3",
        ),
        (lambda: vision.Erase(0, 0, 1, 1, inplace=1), TypeError, r"`inplace` must be a bool"),
        (lambda: vision.PadToSize(0), ArgumentError, r"PadToSize: `size` must be greater than 0"),
        (lambda: vision.PadToSize(4, offset=-1), ArgumentError, r"PadToSize: `offset` must be at least 0"),
        (
            lambda: vision.PadToSize(4, offset="a"),
            TypeError,
            r"`offset` must be None, an int or a sequence of 2",
        ),
        (lambda: vision.PadToSize(4, fill_value=300), ArgumentError, r"`fill_value` must be in \[0, 255\]"),
        (
            lambda: vision.PadToSize(4, padding_mode="edge"),
            TypeError,
            r"`padding_mode` must be a vision.Border",
        ),
    ],
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()
