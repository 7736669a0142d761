"""The compiled one-pass normalize matches NumPy's float32 arithmetic bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from minddata.ops.cpu import normalize

MEAN = np.array([123.675, 116.28, 103.53], np.float32)
STD = np.array([58.395, 57.12, 57.375], np.float32)


def numpy_reference(image, mean, std):
    out = image.astype(np.float32)
    out -= mean if len(mean) > 1 else mean[0]
    out /= std if len(std) > 1 else std[0]
    return out


@pytest.fixture(params=["compiled", "numpy"])
def path(request, monkeypatch):
    if request.param == "compiled":
        if normalize._normalize_u8 is None:
            pytest.skip("the _pixels extension was not built (no Cython/compiler at install time)")
    else:
        monkeypatch.setattr(normalize, "_normalize_u8", None)
    return request.param


@pytest.mark.parametrize("chw", [True, False])
def test_every_byte_value_matches_numpy(path, chw):
    image = np.arange(256 * 3, dtype=np.int64).reshape(16, 16, 3).astype(np.uint8)
    out = np.empty((3, 16, 16) if chw else (16, 16, 3), np.float32)
    normalize.normalize_into(image, MEAN, STD, out, chw)
    want = numpy_reference(image, MEAN, STD)
    np.testing.assert_array_equal(out, want.transpose(2, 0, 1) if chw else want)


def test_random_image_and_single_mean(path):
    image = np.random.default_rng(0).integers(0, 256, (37, 51, 3), dtype=np.uint8)
    mean, std = np.array([99.5], np.float32), np.array([3.25], np.float32)
    out = np.empty((3, 37, 51), np.float32)
    normalize.normalize_into(image, mean, std, out, True)
    np.testing.assert_array_equal(out, numpy_reference(image, mean, std).transpose(2, 0, 1))


def test_non_contiguous_input_takes_the_numpy_path():
    image = np.random.default_rng(1).integers(0, 256, (20, 40, 3), dtype=np.uint8)[:, ::2]
    out = np.empty((3, 20, 20), np.float32)
    normalize.normalize_into(image, MEAN, STD, out, True)
    np.testing.assert_array_equal(out, numpy_reference(image, MEAN, STD).transpose(2, 0, 1))
