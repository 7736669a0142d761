"""Plans of the perspective warps: the 3x3 homography from four point pairs and RandomPerspective's
corner draws (MindSpore's, which are torchvision's)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["perspective_matrix", "random_perspective_points"]

Points = Sequence[Sequence[float]]


def perspective_matrix(start_points: Points, end_points: Points) -> np.ndarray:
    """The 3x3 homography ``M`` (``M[2, 2] = 1``) taking each start point ``(x, y)`` to its end point:
    ``[u, v, 1] ~ M @ [x, y, 1]``; four pairs, no three points of either set on a line."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(start_points, end_points, strict=True):
        rows.append([x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y])
        rows.append([0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y])
        rhs.extend([u, v])
    a = np.asarray(rows, np.float64)
    if abs(np.linalg.det(a)) < 1e-9:
        raise ValueError(
            f"the points do not define a perspective transform (three of them lie on a line): "
            f"start {list(map(list, start_points))}, end {list(map(list, end_points))}"
        )
    coeffs = np.linalg.solve(a, np.asarray(rhs, np.float64))
    return np.append(coeffs, 1.0).reshape(3, 3)


def random_perspective_points(
    rng: np.random.Generator, height: int, width: int, distortion_scale: float
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(start points, end points): the image's corners, and each corner moved inwards by up to
    ``distortion_scale`` of half the image's side, drawn in MindSpore's order (top-left, top-right,
    bottom-right, bottom-left; x then y)."""
    half_h, half_w = height // 2, width // 2
    dx, dy = int(distortion_scale * half_w), int(distortion_scale * half_h)

    def draw(lo: int, hi: int) -> int:
        return int(rng.integers(lo, hi, endpoint=True))

    top_left = (draw(0, dx), draw(0, dy))
    top_right = (draw(width - dx - 1, width - 1), draw(0, dy))
    bottom_right = (draw(width - dx - 1, width - 1), draw(height - dy - 1, height - 1))
    bottom_left = (draw(0, dx), draw(height - dy - 1, height - 1))
    start = [(0, 0), (width - 1, 0), (width - 1, height - 1), (0, height - 1)]
    return start, [top_left, top_right, bottom_right, bottom_left]
