"""Rotate, RandomRotation, Affine and RandomAffine: each CPU kernel against Pillow or a reference
warp written here (MindSpore's matrices, sampled point by point)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from PIL import Image
from vision_testing import fills, run, within_one

from minddata import vision
from minddata.ops import row_rng
from minddata.vision import Inter

# ---------------------------------------------------------------------------------------------- references


def _sample(img: np.ndarray, fwd: np.ndarray, out_h: int, out_w: int, fill: Any, nearest: bool) -> np.ndarray:
    """An independent warp: invert the forward matrix, sample every output pixel (bilinear or nearest,
    pixels outside the image taking the fill), round."""
    inv = np.linalg.inv(np.vstack([fwd, [0.0, 0.0, 1.0]]))
    ys, xs = np.mgrid[0:out_h, 0:out_w].astype(np.float64)
    u = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    v = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    h, w = img.shape[:2]
    src = img.reshape(h, w, -1).astype(np.float64)
    fillv = np.asarray(fills(fill, src.shape[2]), np.float64)

    def at(yi: np.ndarray, xi: np.ndarray) -> np.ndarray:
        inside = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
        return np.where(inside[..., None], src[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)], fillv)

    if nearest:
        out = at(np.floor(v + 0.5).astype(int), np.floor(u + 0.5).astype(int))
    else:
        x0, y0 = np.floor(u).astype(int), np.floor(v).astype(int)
        fx, fy = (u - x0)[..., None], (v - y0)[..., None]
        out = (
            at(y0, x0) * (1 - fx) * (1 - fy)
            + at(y0, x0 + 1) * fx * (1 - fy)
            + at(y0 + 1, x0) * (1 - fx) * fy
            + at(y0 + 1, x0 + 1) * fx * fy
        )
    if img.dtype.kind in "iu":
        out = np.clip(np.rint(out), 0, 255)
    return out.astype(img.dtype).reshape(out_h, out_w, *img.shape[2:])


def _T(tx: float, ty: float) -> np.ndarray:
    return np.array([[1.0, 0, tx], [0, 1, ty], [0, 0, 1]])


def _R(deg: float) -> np.ndarray:
    """Rotation by ``deg`` in image coordinates (y down): positive turns clockwise on screen."""
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def _ref_affine(img, degrees, translate_px, scale, shear, fill, nearest):
    """MindSpore's documented composition T * C * R * S * SHy * SHx * C^-1, built from its factors."""
    h, w = img.shape[:2]
    cx, cy = (w - 1) / 2, (h - 1) / 2
    shx = np.array([[1, -math.tan(math.radians(shear[0])), 0], [0, 1, 0], [0, 0, 1]])
    shy = np.array([[1, 0, 0], [-math.tan(math.radians(shear[1])), 1, 0], [0, 0, 1]])
    m = _T(*translate_px) @ _T(cx, cy) @ _R(degrees) @ np.diag([scale, scale, 1.0]) @ shy @ shx @ _T(-cx, -cy)
    return _sample(img, m[:2], h, w, fill, nearest)


def _ref_rotate(img, degrees, out_h, out_w, center, fill, nearest):
    """Counter-clockwise about ``center`` (pixel coordinates), centred in an (out_h, out_w) canvas."""
    h, w = img.shape[:2]
    cx, cy = ((w - 1) / 2, (h - 1) / 2) if center is None else center
    ox, oy = cx + (out_w - w) / 2, cy + (out_h - h) / 2
    return _sample(img, (_T(ox, oy) @ _R(-degrees) @ _T(-cx, -cy))[:2], out_h, out_w, fill, nearest)


# ---------------------------------------------------------------------------------------------- Rotate


@pytest.mark.parametrize("degrees", [30, -17.5, 90, 123, 180, 400])
def test_rotate_nearest_matches_pillow(photo, degrees) -> None:
    out = vision.Rotate(degrees, fill_value=(10, 200, 30))(photo)
    want = np.array(Image.fromarray(photo).rotate(degrees, resample=Image.NEAREST, fillcolor=(10, 200, 30)))
    assert float((out == want).mean()) >= 0.999


@pytest.mark.parametrize("degrees", [30, -17.5, 123])
def test_rotate_bilinear_matches_pillow_inside_and_reference_everywhere(photo, degrees) -> None:
    out = vision.Rotate(degrees, Inter.BILINEAR)(photo)
    h, w = photo.shape[:2]
    # Pillow does not blend the border pixels with the fill: compare where all 4 neighbours are inside.
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    a = math.radians(degrees)
    u = math.cos(a) * (xs - (w - 1) / 2) - math.sin(a) * (ys - (h - 1) / 2) + (w - 1) / 2
    v = math.sin(a) * (xs - (w - 1) / 2) + math.cos(a) * (ys - (h - 1) / 2) + (h - 1) / 2
    inside = (u >= 0) & (u <= w - 2) & (v >= 0) & (v <= h - 2)
    pil = np.array(Image.fromarray(photo).rotate(degrees, resample=Image.BILINEAR))
    assert inside.mean() > 0.5 and within_one(out, pil, mask=np.broadcast_to(inside[..., None], out.shape))
    assert within_one(out, _ref_rotate(photo, degrees, h, w, None, 0, nearest=False))


def test_rotate_center_is_in_pixel_coordinates(photo) -> None:
    out = vision.Rotate(25, center=(10, 20))(photo)
    # Pillow's centre is in corner coordinates: pixel (10, 20)'s centre is its (10.5, 20.5).
    want = np.array(Image.fromarray(photo).rotate(25, resample=Image.NEAREST, center=(10.5, 20.5)))
    assert float((out == want).mean()) >= 0.999


@pytest.mark.parametrize("degrees", [30, 45, 123, -70, 0])
def test_rotate_expand_size_and_pixels(photo, degrees) -> None:
    h, w = photo.shape[:2]
    out = vision.Rotate(degrees, Inter.BILINEAR, expand=True, fill_value=50)(photo)
    a = math.radians(degrees)
    want_shape = (
        round(abs(w * math.sin(a)) + abs(h * math.cos(a))),
        round(abs(w * math.cos(a)) + abs(h * math.sin(a))),
    )
    assert out.shape == (*want_shape, 3)
    assert within_one(out, _ref_rotate(photo, degrees, *want_shape, None, 50, nearest=False))


@pytest.mark.parametrize(("degrees", "k"), [(90, 1), (180, 2), (270, 3), (-90, 3)])
def test_rotate_quarter_turns_with_expand_are_exact(drawing, degrees, k) -> None:
    for img in (drawing, drawing[..., 0], drawing.astype(np.float32)):
        np.testing.assert_array_equal(vision.Rotate(degrees, expand=True)(img), np.rot90(img, k))


def test_rotate_fills_in_channel_order_and_handles_other_layouts(photo) -> None:
    out = vision.Rotate(45, fill_value=(1, 2, 3))(photo)
    assert out[0, 0].tolist() == [1, 2, 3]
    # 6 channels (warped in groups of 4) and int32 (warped in float64) match the per-channel result.
    six = np.concatenate([photo, photo[..., ::-1]], axis=2)
    out6 = vision.Rotate(33, Inter.BICUBIC, fill_value=9)(six)
    np.testing.assert_array_equal(out6[..., :3], vision.Rotate(33, Inter.BICUBIC, fill_value=9)(photo))
    np.testing.assert_array_equal(
        out6[..., 3:], vision.Rotate(33, Inter.BICUBIC, fill_value=9)(photo[..., ::-1])
    )
    gray = photo[..., 0]
    as_f64 = vision.Rotate(33, Inter.BILINEAR)(gray.astype(np.float64))
    out32 = vision.Rotate(33, Inter.BILINEAR)(gray.astype(np.int32))
    assert out32.dtype == np.int32
    np.testing.assert_array_equal(out32, np.rint(as_f64).astype(np.int32))


def test_random_rotation_draws_its_angle_from_the_row(photo) -> None:
    op = vision.RandomRotation((-40, 25), Inter.BILINEAR, fill_value=(3, 4, 5))
    for row in range(4):
        angle = row_rng(5, 2, row, 1).uniform(-40, 25)
        want = vision.Rotate(angle, Inter.BILINEAR, fill_value=(3, 4, 5))(photo)
        np.testing.assert_array_equal(run(op, photo, seed=5, pass_index=2, row=row, position=1), want)
    assert vision.RandomRotation(30).degrees == (-30.0, 30.0)


# ---------------------------------------------------------------------------------------------- Affine


AFFINE_CASES = [
    (15, (0.1, -0.05), 1.1, (5, 0)),
    (-40, (0, 0), 0.8, (10, -7)),
    (0, (0.2, 0.2), 1.0, (0, 20)),
    (170, (-0.3, 0.1), 1.3, (-12, 3)),
]


@pytest.mark.parametrize("case", AFFINE_CASES)
@pytest.mark.parametrize("interp", [Inter.NEAREST, Inter.BILINEAR])
def test_affine_matches_reference(photo, case, interp) -> None:
    degrees, translate, scale, shear = case
    h, w = photo.shape[:2]
    out = vision.Affine(degrees, translate, scale, shear, interp, fill_value=(20, 120, 220))(photo)
    want = _ref_affine(
        photo,
        degrees,
        (translate[0] * w, translate[1] * h),
        scale,
        shear,
        (20, 120, 220),
        interp is Inter.NEAREST,
    )
    assert within_one(out, want)


def test_affine_turns_clockwise_where_rotate_turns_counter_clockwise(photo) -> None:
    for d in (30, -75):
        np.testing.assert_array_equal(
            vision.Affine(d, (0, 0), 1.0, 0, Inter.BILINEAR)(photo), vision.Rotate(-d, Inter.BILINEAR)(photo)
        )
    assert vision.Affine(0, (0, 0), 1.0, 7.5).shear == (7.5, 0.0)


def test_random_affine_draws_in_mindspore_order(photo) -> None:
    op = vision.RandomAffine(
        (-20, 30), (-0.1, 0.2, -0.15, 0.05), (0.8, 1.2), (-10, 10, -5, 5), Inter.BILINEAR, 77
    )
    h, w = photo.shape[:2]
    for row in range(4):
        rng = row_rng(9, 0, row, 3)
        deg, tx, ty = rng.uniform(-20, 30), rng.uniform(-0.1, 0.2) * w, rng.uniform(-0.15, 0.05) * h
        scale, shx, shy = rng.uniform(0.8, 1.2), rng.uniform(-10, 10), rng.uniform(-5, 5)
        want = _ref_affine(photo, deg, (tx, ty), scale, (shx, shy), 77, nearest=False)
        assert within_one(run(op, photo, seed=9, row=row, position=3), want)


def test_random_affine_parameter_forms() -> None:
    op = vision.RandomAffine(10, translate=(-0.2, 0.2), scale=(0.5, 2), shear=5)
    assert (op.degrees, op.translate, op.scale, op.shear) == (
        (-10.0, 10.0),
        (-0.2, 0.2, 0.0, 0.0),
        (0.5, 2.0),
        (-5.0, 5.0, 0.0, 0.0),
    )
    assert vision.RandomAffine(0).shear == (0.0, 0.0, 0.0, 0.0) and vision.RandomAffine(0).scale == (1.0, 1.0)
    assert vision.RandomAffine(0, shear=(1, 2)).shear == (1.0, 2.0, 0.0, 0.0)
