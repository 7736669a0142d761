"""FiveCrop, TenCrop and SlicePatches against Pillow crops and NumPy pads (exact: these ops only move
pixels)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageOps

import minddata as md
from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import TensorSpec
from minddata.vision import SliceMode

IMG = np.random.default_rng(0).integers(0, 256, (21, 30, 3), dtype=np.uint8)


def pil_five(img: Image.Image, ch: int, cw: int) -> list[np.ndarray]:
    """torchvision's five_crop, written with Pillow: corners, then the centre at round((side - crop) / 2)."""
    w, h = img.size
    top, left = int(round((h - ch) / 2)), int(round((w - cw) / 2))
    boxes = [
        (0, 0, cw, ch),
        (w - cw, 0, w, ch),
        (0, h - ch, cw, h),
        (w - cw, h - ch, w, h),
        (left, top, left + cw, top + ch),
    ]
    return [np.asarray(img.crop(b)) for b in boxes]


@pytest.mark.parametrize("size", [(8, 11), (21, 30), (5, 4)])
def test_five_crop_matches_pillow(size: tuple[int, int]) -> None:
    crops = vision.FiveCrop(size)(IMG)
    want = pil_five(Image.fromarray(IMG), *size)
    assert len(crops) == 5
    for got, ref in zip(crops, want, strict=True):
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("vertical", [False, True])
def test_ten_crop_adds_the_crops_of_the_flipped_image(vertical: bool) -> None:
    crops = vision.TenCrop((9, 12), use_vertical_flip=vertical)(IMG)
    pil = Image.fromarray(IMG)
    flipped = ImageOps.flip(pil) if vertical else ImageOps.mirror(pil)
    want = pil_five(pil, 9, 12) + pil_five(flipped, 9, 12)
    assert len(crops) == 10
    for got, ref in zip(crops, want, strict=True):
        np.testing.assert_array_equal(got, ref)


def test_five_crop_takes_a_pil_image_and_returns_arrays() -> None:
    crops = vision.FiveCrop(6)(Image.fromarray(IMG))
    assert all(isinstance(c, np.ndarray) and c.shape == (6, 6, 3) for c in crops)


def test_crops_larger_than_the_image_fail_naming_the_op() -> None:
    with pytest.raises(ValueError, match=r"TenCrop: the crop size \(22, 10\) is larger than the image"):
        vision.TenCrop((22, 10))(IMG)


def slice_reference(img: np.ndarray, nh: int, nw: int, pad: bool, fill: int) -> list[np.ndarray]:
    h, w = img.shape[:2]
    if pad:
        ph, pw = -(-h // nh), -(-w // nw)
        widths = ((0, ph * nh - h), (0, pw * nw - w)) + ((0, 0),) * (img.ndim - 2)
        img = np.pad(img, widths, constant_values=fill)
    else:
        ph, pw = h // nh, w // nw
    return [img[i * ph : (i + 1) * ph, j * pw : (j + 1) * pw] for i in range(nh) for j in range(nw)]


@pytest.mark.parametrize("mode", [SliceMode.PAD, SliceMode.DROP])
@pytest.mark.parametrize(("nh", "nw"), [(2, 3), (4, 4), (1, 7), (3, 1)])
def test_slice_patches_match_numpy(mode: SliceMode, nh: int, nw: int) -> None:
    patches = vision.SlicePatches(nh, nw, mode, fill_value=200)(IMG)
    want = slice_reference(IMG, nh, nw, mode is SliceMode.PAD, 200)
    assert len(patches) == nh * nw
    for got, ref in zip(patches, want, strict=True):
        np.testing.assert_array_equal(got, ref)


def test_slice_patches_1x1_returns_the_image() -> None:
    np.testing.assert_array_equal(vision.SlicePatches()(IMG), IMG)


def test_slice_patches_drop_needs_a_pixel_per_patch() -> None:
    with pytest.raises(ValueError, match="SlicePatches: an image of height 2 .* SliceMode.DROP"):
        vision.SlicePatches(3, 1, SliceMode.DROP)(IMG[:2])


def test_output_specs_count_the_pieces() -> None:
    spec = TensorSpec((21, 30, 3), np.dtype(np.uint8))
    assert vision.FiveCrop((8, 9)).output_spec(spec) == (TensorSpec((8, 9, 3), np.dtype(np.uint8)),) * 5
    assert len(vision.TenCrop(4).output_spec(spec)) == 10
    assert vision.SlicePatches(2, 4).output_spec(spec) == (TensorSpec((11, 8, 3), np.dtype(np.uint8)),) * 8
    assert vision.SlicePatches(2, 4, SliceMode.DROP).output_spec(spec)[0].shape == (10, 7, 3)
    assert vision.SlicePatches(2, 4).num_outputs == 8


def test_pieces_become_columns_in_a_pipeline() -> None:
    ds = md.NumpySlicesDataset({"image": np.stack([IMG, IMG[::-1]])}, shuffle=False)
    names = [f"crop{k}" for k in range(5)]
    ds = ds.map(vision.FiveCrop(6), input_columns="image", output_columns=names)
    rows = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert len(rows) == 2 and sorted(rows[0]) == names
    np.testing.assert_array_equal(rows[1]["crop0"], IMG[::-1][:6, :6])


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: vision.FiveCrop(0), ArgumentError, r"FiveCrop: `size` must be greater than 0"),
        (
            lambda: vision.TenCrop(3, use_vertical_flip=1),
            TypeError,
            r"TenCrop: `use_vertical_flip` must be a bool",
        ),
        (lambda: vision.SlicePatches(0), ArgumentError, r"SlicePatches: `num_height` must be greater than 0"),
        (lambda: vision.SlicePatches(1, 2, "pad"), TypeError, r"`slice_mode` must be a vision.SliceMode"),
        (lambda: vision.SlicePatches(fill_value=256), ArgumentError, r"`fill_value` must be at most 255"),
    ],
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()
