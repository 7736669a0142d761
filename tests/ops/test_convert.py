"""ToTensor, ToPIL, ToNumpy and LinearTransformation against NumPy and Pillow (exact, or within float32
rounding where stated)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from PIL import Image

from minddata import vision
from minddata.errors import ArgumentError

IMG = np.random.default_rng(2).integers(0, 256, (5, 7, 3), dtype=np.uint8)


def test_to_tensor_is_chw_divided_by_255() -> None:
    out = vision.ToTensor()(IMG)
    assert out.dtype == np.float32 and out.shape == (3, 5, 7)
    np.testing.assert_allclose(out, IMG.transpose(2, 0, 1) / 255.0, rtol=1e-6)


def test_to_tensor_gray_gets_one_channel_and_pil_input_works() -> None:
    out = vision.ToTensor(np.float64)(Image.fromarray(IMG[..., 0]))
    assert out.shape == (1, 5, 7) and out.dtype == np.float64
    np.testing.assert_array_equal(out[0], IMG[..., 0] / 255.0)


def test_to_pil_and_back_round_trips() -> None:
    for img, mode in (
        (IMG, "RGB"),
        (IMG[..., 0], "L"),
        (IMG[..., :1], "L"),
        (np.dstack([IMG, IMG[..., :1]]), "RGBA"),
    ):
        pil = vision.ToPIL()(img)
        assert isinstance(pil, Image.Image) and pil.mode == mode
        np.testing.assert_array_equal(
            vision.ToNumpy()(pil),
            img.reshape(pil.size[1], pil.size[0], -1).squeeze(-1) if mode == "L" else img,
        )


def test_to_pil_passes_a_pil_image_through_and_to_numpy_an_array() -> None:
    pil = Image.fromarray(IMG)
    assert vision.ToPIL()(pil) is pil
    assert vision.ToNumpy()(IMG) is IMG


def test_to_pil_rejects_what_pillow_cannot_hold() -> None:
    with pytest.raises(TypeError, match=r"ToPIL: expected a non-empty uint8 image of 1, 3 or 4 channels"):
        vision.ToPIL()(IMG.astype(np.float32))


def test_linear_transformation_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(105, 105))
    mean = rng.normal(size=105)
    out = vision.LinearTransformation(matrix, mean)(IMG)
    np.testing.assert_allclose(out, ((IMG.reshape(-1) - mean) @ matrix).reshape(IMG.shape), rtol=1e-12)
    assert out.dtype == np.float64


def test_linear_transformation_rejects_an_input_of_another_size() -> None:
    op = vision.LinearTransformation(np.eye(4), np.zeros(4))
    with pytest.raises(
        ValueError, match=r"LinearTransformation: an input of shape \(5, 7, 3\) has 105 values"
    ):
        op(IMG)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: vision.ToTensor(None), TypeError, r"ToTensor: `data_type` must be a numpy dtype"),
        (
            lambda: vision.LinearTransformation([[1]], np.zeros(1)),
            TypeError,
            r"`transformation_matrix` must be a numpy.ndarray",
        ),
        (
            lambda: vision.LinearTransformation(np.eye(2), [0, 0]),
            TypeError,
            r"`mean_vector` must be a numpy.ndarray",
        ),
        (
            lambda: vision.LinearTransformation(np.ones((2, 3)), np.zeros(2)),
            ArgumentError,
            r"must be a square <D, D> matrix",
        ),
        (
            lambda: vision.LinearTransformation(np.eye(2), np.zeros(3)),
            ArgumentError,
            r"`mean_vector` must have shape <D,> = \(2,\)",
        ),
    ],
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()
