"""CenterCrop, Crop, RandomCrop and Pad: each CPU kernel against a reference written here with NumPy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from vision_testing import fills, make_drawing, make_photo, run

from minddata import vision
from minddata.ops import row_rng
from minddata.vision import Border

IMG = make_photo(37, 53)


# ---------------------------------------------------------------------------------------------- crops


def _reference_center_crop(img: np.ndarray, ch: int, cw: int) -> np.ndarray:
    """MindSpore's rule written independently: pad (extra pixel first) with zeros, then floor-centre."""
    ph, pw = max(ch - img.shape[0], 0), max(cw - img.shape[1], 0)
    pad = [(math.ceil(ph / 2), ph // 2), (math.ceil(pw / 2), pw // 2)] + [(0, 0)] * (img.ndim - 2)
    padded = np.pad(img, pad)
    top, left = (padded.shape[0] - ch) // 2, (padded.shape[1] - cw) // 2
    return padded[top : top + ch, left : left + cw]


@pytest.mark.parametrize("size", [1, 10, (20, 7), (36, 52), (37, 53), (40, 53), (37, 60), (44, 61), 64])
def test_center_crop_exact(size: Any) -> None:
    ch, cw = (size, size) if isinstance(size, int) else size
    for img in (IMG, IMG[..., 0], IMG.astype(np.float32)):
        out = vision.CenterCrop(size)(img)
        np.testing.assert_array_equal(out, _reference_center_crop(img, ch, cw))
        assert out.dtype == img.dtype and out.flags.c_contiguous


@pytest.mark.parametrize(
    ("coords", "size"), [((0, 0), 5), ((3, 4), (10, 20)), ((0, 0), (37, 53)), ((36, 52), 1)]
)
def test_crop_exact(coords: tuple[int, int], size: Any) -> None:
    ch, cw = (size, size) if isinstance(size, int) else size
    top, left = coords
    out = vision.Crop(coords, size)(IMG)
    np.testing.assert_array_equal(out, IMG[top : top + ch, left : left + cw])
    out[...] = 0  # a copy, never a view of the input
    assert IMG.any()


def test_crop_outside_the_image_raises_naming_the_shape() -> None:
    with pytest.raises(
        ValueError, match=r"Crop: the crop box \(top=30, left=0, height=10, width=10\).*\(37, 53, 3\)"
    ):
        vision.Crop((30, 0), 10)(IMG)


def _ref_pad(
    img: np.ndarray, left: int, top: int, right: int, bottom: int, mode: Border, fill: Any
) -> np.ndarray:
    widths = ((top, bottom), (left, right))
    if mode is not Border.CONSTANT:
        return np.pad(img, widths + ((0, 0),) * (img.ndim - 2), mode=mode.value)
    if img.ndim == 2:
        return np.pad(img, widths, constant_values=fills(fill, 1)[0])
    values = fills(fill, img.shape[2])
    return np.stack(
        [np.pad(img[..., k], widths, constant_values=values[k]) for k in range(img.shape[2])], axis=-1
    )


# ---------------------------------------------------------------------------------------------- Pad


def _pad_images() -> list[np.ndarray]:
    rgb = make_drawing(9, 11)
    five = np.concatenate([rgb, rgb[..., :2]], axis=2).astype(np.int64)  # NumPy path: >4 channels, int64
    return [rgb, rgb[..., 0], rgb.astype(np.float32), five, rgb[..., 1] > 100, rgb[..., :1].copy(), rgb[:1]]


@pytest.mark.parametrize("mode", list(Border), ids=lambda m: m.name)
@pytest.mark.parametrize("padding", [3, (2, 5), (1, 2, 3, 4), (0, 0, 7, 0), (12, 0)])
@pytest.mark.parametrize(
    "img", _pad_images(), ids=["rgb", "gray", "float32", "int64x5", "bool", "hw1", "one_row"]
)
def test_pad_exact(img: np.ndarray, padding: Any, mode: Border) -> None:
    op = vision.Pad(padding, fill_value=(200, 17, 99), padding_mode=mode)
    left, top, right, bottom = op.padding
    out = run(op, img)
    np.testing.assert_array_equal(out, _ref_pad(img, left, top, right, bottom, mode, (200, 17, 99)))
    assert out.dtype == img.dtype


def test_pad_padding_forms_and_fill() -> None:
    assert vision.Pad(2).padding == (2, 2, 2, 2)
    assert vision.Pad([1, 3]).padding == (1, 3, 1, 3)  # (left/right, top/bottom), MindSpore 2.x
    assert vision.Pad((1, 2, 3, 4)).padding == (1, 2, 3, 4)
    img = np.zeros((2, 3, 4), np.uint8)  # RGBA: a 3-tuple fill leaves alpha 0
    assert run(vision.Pad(1, fill_value=(1, 2, 3)), img)[0, 0].tolist() == [1, 2, 3, 0]
    assert run(vision.Pad(1, fill_value=9), img)[0, 0].tolist() == [9, 9, 9, 9]
    gray = np.zeros((2, 2), np.uint8)
    assert run(vision.Pad(1, fill_value=(7, 8, 9)), gray)[0, 0] == 7
    assert run(vision.Pad(0), gray) is gray


# ---------------------------------------------------------------------------------------------- RandomCrop


def _ref_random_crop(img, size, padding, pad_if_needed, fill, mode, rng):
    ch, cw = (size, size) if isinstance(size, int) else size
    left, top, right, bottom = padding
    padded = _ref_pad(img, left, top, right, bottom, mode, fill)
    if pad_if_needed:
        dh, dw = max(ch - padded.shape[0], 0), max(cw - padded.shape[1], 0)
        padded = _ref_pad(padded, dw, dh, dw, dh, mode, fill)
    x = int(rng.integers(0, padded.shape[1] - cw + 1))  # left first, as MindSpore draws
    y = int(rng.integers(0, padded.shape[0] - ch + 1))
    return padded[y : y + ch, x : x + cw]


@pytest.mark.parametrize(
    ("size", "padding", "pad_if_needed", "mode"),
    [
        ((20, 30), None, False, Border.CONSTANT),
        (37, (3, 5), False, Border.REFLECT),
        ((45, 70), (1, 2, 3, 4), True, Border.EDGE),
        ((60, 20), None, True, Border.SYMMETRIC),
        ((37, 53), None, False, Border.CONSTANT),
    ],
)
@pytest.mark.parametrize("row", range(3))
def test_random_crop_matches_reference(drawing, size, padding, pad_if_needed, mode, row) -> None:
    op = vision.RandomCrop(size, padding, pad_if_needed, fill_value=(5, 6, 7), padding_mode=mode)
    want = _ref_random_crop(
        drawing, size, op.padding or (0, 0, 0, 0), pad_if_needed, (5, 6, 7), mode, row_rng(3, 1, row, 4)
    )
    out = run(op, drawing, seed=3, pass_index=1, row=row, position=4)
    np.testing.assert_array_equal(out, want)
    out[...] = 0  # a copy, never a view of the input
    assert drawing.any()


def test_random_crop_too_small_without_pad_if_needed_names_the_shape(drawing) -> None:
    with pytest.raises(ValueError, match=r"RandomCrop: the crop size \(40, 10\) is larger.*\(37, 53, 3\)"):
        run(vision.RandomCrop((40, 10)), drawing)
