"""Affine-warp plans: rotation sizes and matrices, MindSpore's affine matrix, and the random draws of
``RandomRotation`` and ``RandomAffine``.

Matrices are forward (source pixel → output pixel), 2x3, float64, in pixel-index coordinates (the
centre of the top-left pixel is (0, 0)), as OpenCV's ``warpAffine`` takes them; a device with other
coordinates converts them (``minddata.ops.gpu.affine.warp_matrix``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "Affine",
    "Warp",
    "affine_matrix",
    "affine_params",
    "random_affine_params",
    "rotated_size",
    "rotation",
    "rotation_degrees",
]


class Warp(NamedTuple):
    """Warp the input with ``matrix`` into an output of ``out_height`` x ``out_width``."""

    matrix: np.ndarray
    out_height: int
    out_width: int


def rotated_size(height: int, width: int, degrees: float) -> tuple[int, int]:
    """(height, width) of the box holding an image rotated by ``degrees``: MindSpore's rounding (to
    nearest, ties to even) of ``|w cos| + |h sin|`` by ``|w sin| + |h cos|``.

    Examples:
        >>> from minddata.ops.plans.affine import rotated_size
        >>> rotated_size(2, 5, 90), rotated_size(10, 10, 45)
        ((5, 2), (14, 14))
    """
    rad = math.radians(degrees)
    c, s = abs(math.cos(rad)), abs(math.sin(rad))
    # round(.., 6) first: cos(90 deg) is 6e-17, not 0, and must not push a size across a .5 boundary.
    out_w = round(round(width * c + height * s, 6))
    out_h = round(round(width * s + height * c, 6))
    return max(out_h, 1), max(out_w, 1)


def rotation_degrees(rng: np.random.Generator, degrees: tuple[float, float]) -> float:
    """``RandomRotation``'s angle for one row: uniform in ``degrees`` (min, max)."""
    return float(rng.uniform(degrees[0], degrees[1]))


def rotation(
    height: int, width: int, degrees: float, center: tuple[float, float] | None, expand: bool
) -> Warp:
    """A counter-clockwise rotation about ``center`` (``None``: the exact image centre
    ``((w - 1) / 2, (h - 1) / 2)``); with ``expand``, an output holding the whole rotated image.

    Examples:
        >>> from minddata.ops.plans.affine import rotation
        >>> warp = rotation(2, 3, 90, None, True)
        >>> warp.out_height, warp.out_width, (warp.matrix.round(6) + 0.0).tolist()
        (3, 2, [[0.0, 1.0, 0.0], [-1.0, 0.0, 2.0]])
    """
    cx, cy = ((width - 1) / 2.0, (height - 1) / 2.0) if center is None else center
    rad = math.radians(degrees)
    a, b = math.cos(rad), math.sin(rad)
    # cv2.getRotationMatrix2D's matrix, in float64 (it takes the centre as float32).
    matrix = np.array([[a, b, (1 - a) * cx - b * cy], [-b, a, b * cx + (1 - a) * cy]])
    out_h, out_w = height, width
    if expand:
        out_h, out_w = rotated_size(height, width, degrees)
        # Centre the rotated image in the larger output by the *rounded* size (MindSpore uses the
        # unrounded one, which leaves its output up to half a pixel off centre).
        matrix[0, 2] += (out_w - width) / 2.0
        matrix[1, 2] += (out_h - height) / 2.0
    return Warp(matrix, out_h, out_w)


def affine_matrix(
    height: int,
    width: int,
    degrees: float,
    tx: float,
    ty: float,
    scale: float,
    shear_x: float,
    shear_y: float,
) -> np.ndarray:
    """MindSpore's forward affine matrix ``T * C * R * S * SHy * SHx * C^-1`` (degrees clockwise,
    shifts in pixels, shears in degrees), about the centre ``((w - 1) / 2, (h - 1) / 2)``.

    Examples:
        >>> from minddata.ops.plans.affine import affine_matrix
        >>> (affine_matrix(3, 3, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0) + 0.0).tolist()  # a shift of one pixel
        [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    a = math.radians(degrees)
    sx = math.radians(shear_x)
    sy = math.radians(-shear_y)
    cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
    m00 = scale * math.cos(a + sy) / math.cos(sy)
    m01 = scale * (-math.cos(a + sy) * math.tan(sx) / math.cos(sy) - math.sin(a))
    m10 = scale * math.sin(a + sy) / math.cos(sy)
    m11 = scale * (-math.sin(a + sy) * math.tan(sx) / math.cos(sy) + math.cos(a))
    m02 = (1 - m00) * cx - m01 * cy + tx
    m12 = (1 - m11) * cy - m10 * cx + ty
    return np.array([[m00, m01, m02], [m10, m11, m12]])


class Affine(NamedTuple):
    """One row's affine parameters: clockwise degrees, shifts in pixels, scale, shears in degrees."""

    degrees: float
    tx: float
    ty: float
    scale: float
    shear_x: float
    shear_y: float

    def matrix(self, height: int, width: int) -> np.ndarray:
        return affine_matrix(height, width, *self)


def affine_params(op: Any, height: int, width: int) -> Affine:
    """``Affine``'s parameters: its translate fractions become pixels of this image."""
    return Affine(
        op.degrees, op.translate[0] * width, op.translate[1] * height, op.scale, op.shear[0], op.shear[1]
    )


def random_affine_params(rng: np.random.Generator, op: Any, height: int, width: int) -> Affine:
    """``RandomAffine``'s parameters for one row, drawn in MindSpore's order: angle, x shift, y shift,
    scale, x shear, y shear."""
    degrees = math.fmod(float(rng.uniform(op.degrees[0], op.degrees[1])), 360.0)
    tx = float(rng.uniform(op.translate[0], op.translate[1])) * width
    ty = float(rng.uniform(op.translate[2], op.translate[3])) * height
    scale = float(rng.uniform(op.scale[0], op.scale[1]))
    shear_x = float(rng.uniform(op.shear[0], op.shear[1]))
    shear_y = float(rng.uniform(op.shear[2], op.shear[3]))
    return Affine(degrees, tx, ty, scale, shear_x, shear_y)
