"""MixUp (MindSpore's Python-transform batch MixUp) against a NumPy reference of MindSpore's algorithm,
drawing from the same row RNG (within float32 rounding)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minddata as md
from minddata import transforms, vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel

IMAGES = np.random.default_rng(5).integers(0, 256, (4, 6, 5, 3), dtype=np.uint8)
LABELS = np.eye(4, dtype=np.int64)[[0, 2, 1, 3]]


def run(op: Any, images: np.ndarray, labels: np.ndarray, row: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return get_kernel("MixUp", "CPU")(op, KernelContext(seed=4, row_index=row), images, labels)


@pytest.mark.parametrize("row", range(3))
def test_mix_up_single_matches_the_reference(row: int) -> None:
    images, labels = run(vision.MixUp(4, 0.4), IMAGES, LABELS, row)
    lam = KernelContext(seed=4, row_index=row).rng.beta(0.4, 0.4, 4)
    shift = [1, 2, 3, 0]
    want = lam[:, None, None, None] * IMAGES + (1 - lam[:, None, None, None]) * IMAGES[shift]
    want_labels = lam[:, None] * LABELS + (1 - lam[:, None]) * LABELS[shift]
    assert images.dtype == labels.dtype == np.float32
    np.testing.assert_allclose(images, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(labels, want_labels, rtol=1e-5, atol=1e-6)


def test_mix_up_multi_mixes_with_the_previous_batch() -> None:
    op = vision.MixUp(4, 0.4, is_single=False)
    first, first_labels = run(op, IMAGES, LABELS, row=0)
    np.testing.assert_array_equal(first, IMAGES.astype(np.float32))  # the first batch passes through
    second_in = IMAGES[::-1].copy()
    second, _ = run(op, second_in, LABELS, row=1)
    lam = KernelContext(seed=4, row_index=1).rng.beta(0.4, 0.4, 4)[:, None, None, None]
    np.testing.assert_allclose(second, lam * second_in + (1 - lam) * first, rtol=1e-5, atol=1e-4)


def test_mix_up_rejects_a_batch_of_another_size() -> None:
    with pytest.raises(ValueError, match=r"MixUp: expected a batch of 3 images \(batch_size\)"):
        run(vision.MixUp(3, 1.0), IMAGES, LABELS)


def test_mix_up_in_a_pipeline_after_batch() -> None:
    ds = md.NumpySlicesDataset(
        {"image": np.concatenate([IMAGES, IMAGES]), "label": np.arange(8) % 4}, shuffle=False
    )
    ds = ds.map(transforms.OneHot(4), input_columns="label").batch(4)
    ds = ds.map(vision.MixUp(batch_size=4, alpha=0.2), input_columns=["image", "label"])
    for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True):
        assert b["image"].shape == (4, 6, 5, 3) and b["image"].dtype == np.float32
        np.testing.assert_allclose(b["label"].sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: vision.MixUp(0, 1.0),
            ArgumentError,
            r"MixUp: `batch_size` must be greater than 0. Found: 0",
        ),
        (lambda: vision.MixUp(2, 0), ArgumentError, r"MixUp: `alpha` must be greater than 0. Found: 0.0"),
        (lambda: vision.MixUp(2, "a"), TypeError, r"MixUp: `alpha` must be a number"),
        (lambda: vision.MixUp(2, 1.0, is_single=0), TypeError, r"MixUp: `is_single` must be a bool"),
    ],
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()
