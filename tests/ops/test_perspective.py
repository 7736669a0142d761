"""Perspective and RandomPerspective against Pillow's perspective transform, with the homography from
OpenCV's solver (``getPerspectiveTransform``): the plan's own solver and OpenCV's warp are both checked
against independent code.

Tolerance: on a smooth gradient image (at most 4 levels between neighbours) and away from the image's
border (where Pillow and OpenCV treat partly covered pixels differently), bilinear and bicubic agree
within 1 level; NEAREST picks a neighbour on under 10% of pixels, so within 4 levels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
import pytest
from PIL import Image

from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel
from minddata.ops.plans.perspective import perspective_matrix, random_perspective_points
from minddata.vision import Inter

H, W = 48, 64
_y, _x = np.mgrid[0:H, 0:W]
SMOOTH = np.stack([_x * 3, _y * 4, (_x + _y) * 2], -1).astype(np.uint8)
START = [[0, 0], [63, 0], [63, 47], [0, 47]]
END = [[5, 3], [60, 1], [62, 44], [2, 46]]


def run(op: Any, image: np.ndarray, row: int = 0) -> np.ndarray:
    return get_kernel(op.name, "CPU")(op, KernelContext(seed=2, row_index=row), image)


def pil_perspective(img: np.ndarray, start: Any, end: Any, resample: int) -> tuple[np.ndarray, np.ndarray]:
    """Pillow's warp and the mask of output pixels whose source lies 2+ pixels inside the image."""
    inverse = cv2.getPerspectiveTransform(np.float32(end), np.float32(start))
    coeffs = (inverse / inverse[2, 2]).flatten()[:8].tolist()
    ref = np.asarray(Image.fromarray(img).transform((W, H), Image.PERSPECTIVE, coeffs, resample))
    pts = np.stack([_x, _y, np.ones_like(_x)], -1).reshape(-1, 3) @ inverse.T
    sx, sy = (pts[:, 0] / pts[:, 2]).reshape(H, W), (pts[:, 1] / pts[:, 2]).reshape(H, W)
    inner = (sx >= 2) & (sx <= W - 3) & (sy >= 2) & (sy <= H - 3)
    return ref, inner


def test_plan_matrix_matches_opencv_solver() -> None:
    want = cv2.getPerspectiveTransform(np.float32(START), np.float32(END))
    np.testing.assert_allclose(perspective_matrix(START, END), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    ("inter", "resample", "largest", "share_differing"),
    [
        (Inter.BILINEAR, Image.BILINEAR, 1, 1.0),
        (Inter.BICUBIC, Image.BICUBIC, 1, 1.0),
        (Inter.NEAREST, Image.NEAREST, 4, 0.1),
    ],
)
def test_perspective_matches_pillow_inside_the_image(
    inter: Inter, resample: int, largest: int, share_differing: float
) -> None:
    out = run(vision.Perspective(START, END, inter), SMOOTH)
    ref, inner = pil_perspective(SMOOTH, START, END, resample)
    diff = np.abs(out.astype(int) - ref.astype(int))[inner]
    assert out.shape == SMOOTH.shape and out.dtype == np.uint8
    assert diff.max() <= largest and (diff > 0).mean() <= share_differing


def test_perspective_fills_uncovered_pixels_with_zero() -> None:
    out = run(vision.Perspective(START, END, Inter.NEAREST), np.full((H, W), 9, np.uint8))
    assert out[0, 0] == 0 and out[24, 32] == 9


def test_identity_points_return_the_image() -> None:
    np.testing.assert_array_equal(run(vision.Perspective(START, START), SMOOTH), SMOOTH)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint16])
def test_perspective_keeps_other_dtypes_and_channel_counts(dtype: Any) -> None:
    img = np.dstack([SMOOTH, SMOOTH[..., :2]]).astype(dtype)  # 5 channels
    out = run(vision.Perspective(START, END, Inter.NEAREST), img)
    assert out.dtype == dtype and out.shape == img.shape
    np.testing.assert_array_equal(
        out[..., 3:], run(vision.Perspective(START, END, Inter.NEAREST), img[..., :2])
    )


def test_random_perspective_is_perspective_with_the_drawn_points() -> None:
    op = vision.RandomPerspective(0.6, prob=1.0, interpolation=Inter.BILINEAR)
    for row in range(4):
        rng = KernelContext(seed=2, row_index=row).rng
        assert rng.random() < 1.0  # the prob draw comes first
        start, end = random_perspective_points(rng, H, W, 0.6)
        np.testing.assert_array_equal(run(op, SMOOTH, row=row), run(vision.Perspective(start, end), SMOOTH))


def test_random_perspective_corners_stay_in_their_bounds() -> None:
    rng = np.random.default_rng(0)
    dx, dy = int(0.4 * (W // 2)), int(0.4 * (H // 2))
    for _ in range(200):
        start, end = random_perspective_points(rng, H, W, 0.4)
        assert start == [(0, 0), (W - 1, 0), (W - 1, H - 1), (0, H - 1)]
        (tlx, tly), (trx, try_), (brx, bry), (blx, bly) = end
        assert 0 <= tlx <= dx and 0 <= tly <= dy and W - dx - 1 <= trx <= W - 1 and 0 <= try_ <= dy
        assert (
            W - dx - 1 <= brx <= W - 1
            and H - dy - 1 <= bry <= H - 1
            and 0 <= blx <= dx
            and H - dy - 1 <= bly <= H - 1
        )


def test_random_perspective_with_scale_0_or_prob_0_changes_nothing() -> None:
    for row in range(3):
        np.testing.assert_array_equal(
            run(vision.RandomPerspective(0.0, prob=1.0, interpolation=Inter.BILINEAR), SMOOTH, row), SMOOTH
        )
        np.testing.assert_array_equal(run(vision.RandomPerspective(0.9, prob=0.0), SMOOTH, row), SMOOTH)


def test_random_perspective_takes_pil_images() -> None:
    out = run(vision.RandomPerspective(prob=1.0), Image.fromarray(SMOOTH))
    assert out.shape == SMOOTH.shape


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: vision.Perspective(START[:3], END),
            TypeError,
            r"Perspective: `start_points` must be a sequence of 4 \(x, y\)",
        ),
        (
            lambda: vision.Perspective(START, [[0, 0]] * 4),
            ArgumentError,
            r"Perspective: .*three of them lie on a line",
        ),
        (
            lambda: vision.Perspective(START, END, Inter.ANTIALIAS),
            ArgumentError,
            r"`interpolation` must be one of",
        ),
        (
            lambda: vision.Perspective(START, END, "bilinear"),
            TypeError,
            r"`interpolation` must be a vision.Inter",
        ),
        (
            lambda: vision.RandomPerspective(1.5),
            ArgumentError,
            r"RandomPerspective: `distortion_scale` must be in \[0, 1\]",
        ),
        (lambda: vision.RandomPerspective(prob=-0.1), ArgumentError, r"`prob` must be in \[0, 1\]"),
        (
            lambda: vision.RandomPerspective(interpolation=Inter.AREA),
            ArgumentError,
            r"`interpolation` must be one of",
        ),
    ],
)
def test_bad_arguments_fail_at_construction(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()
