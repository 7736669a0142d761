"""Normalize, Rescale, HWC2CHW and ToType against NumPy; the compiled one-pass normalize (the batch's
Normalize) matches NumPy's float32 arithmetic bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from vision_testing import make_photo

from minddata import transforms, vision
from minddata.ops.cpu import normalize as cpu_normalize

IMG = make_photo(37, 53)


# ---------------------------------------------------------------------------------------------- pixels

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def test_normalize_hwc_and_chw() -> None:
    want = (IMG.astype(np.float64) - np.array(MEAN)) / np.array(STD)
    out = vision.Normalize(MEAN, STD)(IMG)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    chw = np.ascontiguousarray(IMG.transpose(2, 0, 1))
    out_chw = vision.Normalize(MEAN, STD, is_hwc=False)(chw)
    np.testing.assert_allclose(out_chw, want.transpose(2, 0, 1), rtol=1e-5, atol=1e-5)


def test_normalize_single_value_broadcasts_and_input_is_untouched() -> None:
    gray = IMG[..., 0].copy()
    np.testing.assert_allclose(
        vision.Normalize([100.0], [20.0])(gray), (gray.astype(np.float64) - 100) / 20, rtol=1e-5, atol=1e-5
    )
    before = IMG.copy()
    vision.Normalize([1.0], [2.0])(IMG)
    np.testing.assert_array_equal(IMG, before)


def test_normalize_channel_mismatch_raises_naming_the_shape() -> None:
    with pytest.raises(
        ValueError, match=r"Normalize: expected an HWC image with 3 channels.*Found shape \(4, 4, 2\)"
    ):
        vision.Normalize(MEAN, STD)(np.zeros((4, 4, 2), np.uint8))
    with pytest.raises(
        ValueError, match=r"Normalize: expected an image of shape <H, W> or <H, W, C>.*\(2, 4, 4, 3\)"
    ):
        vision.Normalize(MEAN, STD)(np.zeros((2, 4, 4, 3), np.uint8))


def test_hwc2chw_exact() -> None:
    out = vision.HWC2CHW()(IMG)
    np.testing.assert_array_equal(out, IMG.transpose(2, 0, 1))
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(vision.HWC2CHW()(IMG[..., 0]), IMG[..., 0])


def test_rescale() -> None:
    out = vision.Rescale(1 / 255, -0.5)(IMG)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, IMG / 255.0 - 0.5, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, "float16", np.dtype("int32"), "uint8", bool])
def test_to_type_exact(dtype: Any) -> None:
    src = np.linspace(-3.7, 300.2, 40).reshape(5, 8)
    out = vision.ToType(dtype)(src)
    np.testing.assert_array_equal(out, src.astype(dtype))
    assert out.dtype == np.dtype(dtype)
    assert vision.ToType(dtype) != transforms.TypeCast(dtype)  # different ops, same kernel


# ---------------------------------------------------------------------------------------------- one-pass normalize


MEAN_F32 = np.array([123.675, 116.28, 103.53], np.float32)
STD_F32 = np.array([58.395, 57.12, 57.375], np.float32)


def numpy_reference(image, mean, std):
    out = image.astype(np.float32)
    out -= mean if len(mean) > 1 else mean[0]
    out /= std if len(std) > 1 else std[0]
    return out


@pytest.fixture(params=["compiled", "numpy"])
def path(request, monkeypatch):
    if request.param == "compiled":
        if cpu_normalize._normalize_u8 is None:
            pytest.skip("the _pixels extension was not built (no Cython/compiler at install time)")
    else:
        monkeypatch.setattr(cpu_normalize, "_normalize_u8", None)
    return request.param


@pytest.mark.parametrize("chw", [True, False])
def test_every_byte_value_matches_numpy(path, chw):
    image = np.arange(256 * 3, dtype=np.int64).reshape(16, 16, 3).astype(np.uint8)
    out = np.empty((3, 16, 16) if chw else (16, 16, 3), np.float32)
    cpu_normalize.normalize_into(image, MEAN_F32, STD_F32, out, chw)
    want = numpy_reference(image, MEAN_F32, STD_F32)
    np.testing.assert_array_equal(out, want.transpose(2, 0, 1) if chw else want)


def test_random_image_and_single_mean(path):
    image = np.random.default_rng(0).integers(0, 256, (37, 51, 3), dtype=np.uint8)
    mean, std = np.array([99.5], np.float32), np.array([3.25], np.float32)
    out = np.empty((3, 37, 51), np.float32)
    cpu_normalize.normalize_into(image, mean, std, out, True)
    np.testing.assert_array_equal(out, numpy_reference(image, mean, std).transpose(2, 0, 1))


def test_non_contiguous_input_takes_the_numpy_path():
    image = np.random.default_rng(1).integers(0, 256, (20, 40, 3), dtype=np.uint8)[:, ::2]
    out = np.empty((3, 20, 20), np.float32)
    cpu_normalize.normalize_into(image, MEAN_F32, STD_F32, out, True)
    np.testing.assert_array_equal(out, numpy_reference(image, MEAN_F32, STD_F32).transpose(2, 0, 1))
