"""The pixel-adjusting ops (minddata/vision/adjust.py, minddata/ops/cpu/adjust.py).

References: Pillow's ImageEnhance/ImageOps (within 2 grey levels where MindSpore rounds and Pillow
truncates, exactly where both are integer operations; Equalize is OpenCV's, not Pillow's), NumPy re-statements of OpenCV's and MindSpore's
formulas (exactly), ``colorsys`` (to 1e-12), and outputs of MindSpore 2.10's CPU kernels on a fixed 4x5
image, checked in as literals below (``MINDSPORE_OUTPUTS``; generated once with
``mindspore.dataset.vision.<Op>(...)(IMAGE_4X5)``, MindSpore is not needed to run these tests).
"""

from __future__ import annotations

import colorsys

import cv2
import numpy as np
import pytest
from PIL import Image, ImageEnhance, ImageOps

from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, TensorSpec, get_kernel
from minddata.ops.plans import adjust as adjust_plan


def photo(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * (k + 3) + y * (c - k) * 4) % 256 for k in range(c)], axis=-1)
    return np.clip(base + rng.integers(0, 40, (h, w, c)), 0, 255).astype(np.uint8)


PHOTO = photo(32, 40)
IMAGE_4X5 = ((np.arange(4 * 5 * 3).reshape(4, 5, 3) * 37 + 11) % 256).astype(np.uint8)

# mindspore.dataset.vision (2.10, CPU) applied to IMAGE_4X5, flattened (the random ops with draws that
# cannot vary).
MINDSPORE_OUTPUTS = {
    "AdjustBrightness(1.3)": [14, 62, 110, 159, 207, 255, 255, 18, 66, 114, 162, 211, 255, 255, 22, 70, 118, 166, 214, 255, 255, 26, 74, 122, 170, 218, 255, 255, 30, 78, 126, 174, 222, 255, 255, 34, 82, 130, 178, 226, 255, 255, 38, 86, 134, 182, 230, 255, 255, 42, 90, 138, 186, 234, 255, 255, 46, 94, 142, 190],
    "AdjustContrast(1.7)": [0, 0, 53, 116, 179, 242, 255, 0, 0, 59, 121, 184, 247, 255, 0, 1, 64, 127, 190, 252, 255, 0, 6, 69, 132, 195, 255, 255, 0, 11, 74, 137, 200, 255, 255, 0, 16, 79, 142, 205, 255, 255, 0, 21, 84, 147, 210, 255, 255, 0, 26, 89, 152, 215, 255, 255, 0, 31, 94, 157],
    "AdjustSaturation(1.6)": [0, 52, 111, 104, 163, 222, 255, 0, 31, 70, 129, 188, 198, 255, 0, 36, 95, 154, 147, 206, 255, 2, 61, 120, 113, 172, 231, 255, 0, 40, 79, 138, 197, 207, 255, 0, 45, 104, 163, 156, 215, 255, 11, 70, 129, 122, 181, 240, 255, 0, 49, 88, 147, 206, 216, 255, 0, 54, 113, 172],
    "AdjustHue(0.2)": [63, 11, 85, 174, 122, 196, 225, 233, 14, 140, 88, 162, 17, 236, 99, 106, 54, 128, 217, 165, 239, 72, 20, 94, 183, 131, 205, 234, 242, 23, 149, 97, 171, 26, 245, 108, 115, 63, 137, 226, 174, 248, 81, 29, 103, 192, 140, 214, 243, 251, 32, 158, 106, 180, 35, 254, 117, 124, 72, 146],
    "AdjustGamma(0.5, 1.2)": [63, 133, 177, 212, 242, 255, 255, 71, 137, 180, 215, 244, 255, 255, 79, 141, 183, 217, 247, 255, 255, 86, 145, 186, 220, 249, 255, 255, 92, 149, 189, 222, 251, 255, 255, 98, 152, 192, 225, 253, 255, 255, 103, 156, 195, 227, 255, 255, 255, 108, 159, 198, 230, 255, 255, 255, 113, 163, 200, 232],
    "AdjustSharpness(2.0)": [11, 48, 85, 122, 159, 196, 233, 14, 51, 88, 125, 162, 199, 236, 17, 54, 91, 128, 204, 255, 255, 0, 0, 55, 131, 207, 255, 242, 23, 60, 97, 134, 171, 255, 255, 0, 4, 61, 137, 213, 255, 255, 29, 66, 103, 140, 177, 214, 251, 32, 69, 106, 143, 180, 217, 254, 35, 72, 109, 146],
    "AutoContrast(10.0, [11])": [0, 20, 71, 111, 158, 229, 244, 0, 22, 70, 116, 180, 203, 255, 0, 29, 73, 132, 162, 212, 255, 0, 31, 84, 122, 170, 242, 255, 0, 35, 81, 127, 193, 214, 255, 0, 40, 85, 145, 173, 223, 255, 0, 42, 96, 132, 181, 255, 255, 0, 48, 92, 138, 206, 225, 255, 0, 51, 96, 158],
    "Equalize()": [0, 40, 81, 121, 161, 201, 228, 0, 40, 81, 121, 161, 188, 228, 0, 40, 81, 121, 161, 201, 242, 13, 54, 94, 134, 174, 215, 242, 13, 54, 94, 134, 174, 201, 242, 13, 54, 94, 134, 174, 215, 255, 27, 67, 107, 148, 188, 228, 255, 27, 67, 107, 148, 188, 215, 255, 27, 67, 107, 148],
    "Posterize(3)": [0, 32, 64, 96, 128, 192, 224, 0, 32, 64, 96, 160, 192, 224, 0, 32, 64, 128, 160, 192, 224, 0, 32, 64, 128, 160, 192, 224, 0, 32, 96, 128, 160, 192, 224, 0, 32, 96, 128, 160, 192, 224, 0, 64, 96, 128, 160, 192, 224, 32, 64, 96, 128, 160, 192, 224, 32, 64, 96, 128],
    "Solarize((50, 200))": [11, 48, 170, 133, 96, 59, 233, 14, 204, 167, 130, 93, 56, 236, 17, 201, 164, 127, 90, 202, 239, 20, 198, 161, 124, 87, 205, 242, 23, 195, 158, 121, 84, 208, 245, 26, 192, 155, 118, 81, 211, 248, 29, 189, 152, 115, 78, 214, 251, 32, 186, 149, 112, 75, 217, 254, 35, 183, 146, 109],
    "Invert()": [244, 207, 170, 133, 96, 59, 22, 241, 204, 167, 130, 93, 56, 19, 238, 201, 164, 127, 90, 53, 16, 235, 198, 161, 124, 87, 50, 13, 232, 195, 158, 121, 84, 47, 10, 229, 192, 155, 118, 81, 44, 7, 226, 189, 152, 115, 78, 41, 4, 223, 186, 149, 112, 75, 38, 1, 220, 183, 146, 109],
    "RandomColor((0.3, 0.3))": [32, 43, 54, 143, 154, 165, 129, 63, 74, 109, 120, 131, 200, 211, 145, 75, 86, 97, 186, 197, 208, 41, 52, 63, 152, 163, 174, 138, 72, 83, 118, 129, 140, 209, 220, 154, 84, 95, 106, 195, 206, 217, 50, 61, 72, 161, 172, 183, 147, 81, 92, 127, 138, 149, 218, 229, 163, 93, 104, 115],
    "RandomColor((1.6, 1.6))": [0, 52, 111, 104, 163, 222, 255, 0, 31, 70, 129, 188, 198, 255, 0, 36, 95, 154, 147, 206, 255, 2, 61, 120, 113, 172, 231, 255, 0, 40, 79, 138, 197, 207, 255, 0, 45, 104, 163, 156, 215, 255, 11, 70, 129, 122, 181, 240, 255, 0, 49, 88, 147, 206, 216, 255, 0, 54, 113, 172],
    "RandomSharpness((1.6, 1.6))": [11, 48, 85, 122, 159, 196, 233, 14, 51, 88, 125, 162, 199, 236, 17, 54, 91, 128, 188, 237, 255, 0, 22, 71, 131, 191, 240, 242, 23, 60, 97, 134, 171, 243, 255, 0, 28, 77, 137, 197, 246, 255, 29, 66, 103, 140, 177, 214, 251, 32, 69, 106, 143, 180, 217, 254, 35, 72, 109, 146],
    "RandomAdjustSharpness(0.3, prob=1.0)": [11, 48, 85, 122, 159, 196, 233, 14, 51, 88, 125, 162, 199, 236, 17, 54, 91, 128, 138, 161, 184, 75, 98, 121, 131, 141, 164, 242, 23, 60, 97, 134, 171, 167, 190, 81, 104, 127, 137, 147, 170, 193, 29, 66, 103, 140, 177, 214, 251, 32, 69, 106, 143, 180, 217, 254, 35, 72, 109, 146],
    "RandomAutoContrast(3.0, [5], prob=1.0)": [0, 36, 75, 117, 154, 197, 235, 0, 37, 81, 117, 160, 199, 235, 0, 45, 81, 122, 163, 199, 245, 9, 45, 85, 127, 163, 207, 245, 9, 47, 91, 127, 170, 209, 245, 9, 55, 91, 132, 173, 209, 255, 19, 55, 94, 137, 173, 217, 255, 19, 57, 100, 137, 179, 218, 255, 19, 64, 100, 142],
    "RandomPosterize((2, 2))": [0, 0, 64, 64, 128, 192, 192, 0, 0, 64, 64, 128, 192, 192, 0, 0, 64, 128, 128, 192, 192, 0, 0, 64, 128, 128, 192, 192, 0, 0, 64, 128, 128, 192, 192, 0, 0, 64, 128, 128, 192, 192, 0, 64, 64, 128, 128, 192, 192, 0, 64, 64, 128, 128, 192, 192, 0, 64, 64, 128],
    "RandomSolarize((90, 90))": [11, 48, 85, 133, 96, 59, 22, 14, 51, 88, 130, 93, 56, 19, 17, 54, 164, 127, 90, 53, 16, 20, 57, 161, 124, 87, 50, 13, 23, 60, 158, 121, 84, 47, 10, 26, 63, 155, 118, 81, 44, 7, 29, 66, 152, 115, 78, 41, 4, 32, 69, 149, 112, 75, 38, 1, 35, 72, 146, 109],
    "RandomEqualize(1.0)": [0, 40, 81, 121, 161, 201, 228, 0, 40, 81, 121, 161, 188, 228, 0, 40, 81, 121, 161, 201, 242, 13, 54, 94, 134, 174, 215, 242, 13, 54, 94, 134, 174, 201, 242, 13, 54, 94, 134, 174, 215, 255, 27, 67, 107, 148, 188, 228, 255, 27, 67, 107, 148, 188, 215, 255, 27, 67, 107, 148],
    "RandomInvert(1.0)": [244, 207, 170, 133, 96, 59, 22, 241, 204, 167, 130, 93, 56, 19, 238, 201, 164, 127, 90, 53, 16, 235, 198, 161, 124, 87, 50, 13, 232, 195, 158, 121, 84, 47, 10, 229, 192, 155, 118, 81, 44, 7, 226, 189, 152, 115, 78, 41, 4, 223, 186, 149, 112, 75, 38, 1, 220, 183, 146, 109],
}  # fmt: skip


def run(op: vision.Op, image: np.ndarray, row: int = 0, seed: int = 0) -> np.ndarray:
    ctx = KernelContext(seed=seed, row_index=row, op_position=1)
    return get_kernel(op.name, "CPU")(op, ctx, image)


def pil(img: np.ndarray) -> Image.Image:
    return Image.fromarray(img)


def max_diff(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(np.asarray(a, np.int64) - np.asarray(b, np.int64)).max())


# ---------------------------------------------------------------------------------------------- MindSpore


@pytest.mark.parametrize("call", sorted(MINDSPORE_OUTPUTS))
def test_matches_mindspore_on_a_fixed_image(call: str) -> None:
    op = eval(f"vision.{call}")  # the same call text MindSpore's outputs were made with
    want = np.array(MINDSPORE_OUTPUTS[call], np.uint8).reshape(IMAGE_4X5.shape)
    np.testing.assert_array_equal(op(IMAGE_4X5.copy()), want)


# ---------------------------------------------------------------------------------------------- Pillow


@pytest.mark.parametrize("factor", [0.0, 0.4, 1.0, 1.7, 2.5])
def test_adjust_brightness_within_one_level_of_pillow(factor: float) -> None:
    want = np.array(ImageEnhance.Brightness(pil(PHOTO)).enhance(factor))
    assert max_diff(vision.AdjustBrightness(factor)(PHOTO), want) <= 1


@pytest.mark.parametrize("factor", [0.0, 0.4, 1.0, 1.7])
def test_adjust_contrast_within_two_levels_of_pillow(factor: float) -> None:
    want = np.array(ImageEnhance.Contrast(pil(PHOTO)).enhance(factor))
    assert max_diff(vision.AdjustContrast(factor)(PHOTO), want) <= 2


@pytest.mark.parametrize("factor", [0.0, 0.4, 1.0, 1.7])
def test_adjust_saturation_within_two_levels_of_pillow_color(factor: float) -> None:
    want = np.array(ImageEnhance.Color(pil(PHOTO)).enhance(factor))
    assert max_diff(vision.AdjustSaturation(factor)(PHOTO), want) <= 2


@pytest.mark.parametrize("factor", [0.0, 0.5, 1.0, 2.0])
def test_adjust_sharpness_within_two_levels_of_pillow(factor: float) -> None:
    want = np.array(ImageEnhance.Sharpness(pil(PHOTO)).enhance(factor))
    assert max_diff(vision.AdjustSharpness(factor)(PHOTO), want) <= 2


def test_adjust_sharpness_keeps_the_border() -> None:
    out = vision.AdjustSharpness(0.0)(PHOTO)
    for edge in (np.s_[0], np.s_[-1], np.s_[:, 0], np.s_[:, -1]):
        np.testing.assert_array_equal(out[edge], PHOTO[edge])


@pytest.mark.parametrize(("cutoff", "ignore"), [(0.0, None), (2.0, None), (10.0, [0, 255]), (0.0, 17)])
def test_auto_contrast_within_one_level_of_pillow(cutoff: float, ignore: object) -> None:
    img = photo(30, 20, seed=3) // 2 + 40  # a low-contrast image
    want = np.array(ImageOps.autocontrast(pil(img), cutoff=cutoff, ignore=ignore))
    out = vision.AutoContrast(cutoff, ignore)(img)
    # MindSpore's table is float32, Pillow's float64: a level whose stretched value is a whole number
    # may truncate one lower.
    assert max_diff(out, want) <= 1 and np.mean(out != want) < 0.05


def test_auto_contrast_reads_cutoff_as_a_whole_percentage() -> None:
    img = photo(30, 20, seed=4)
    np.testing.assert_array_equal(vision.AutoContrast(7.9)(img), vision.AutoContrast(7.0)(img))


def test_auto_contrast_of_a_flat_channel_changes_nothing() -> None:
    img = np.full((4, 4), 77, np.uint8)
    np.testing.assert_array_equal(vision.AutoContrast()(img), img)


def _opencv_equalize(plane: np.ndarray) -> np.ndarray:
    """OpenCV's equalizeHist restated: levels below the first occupied one map to 0, the rest to the
    cumulative count past it, scaled to 255 (float32) and rounded."""
    hist = np.bincount(plane.ravel(), minlength=256)
    first = int(np.flatnonzero(hist)[0])
    if hist[first] == plane.size:
        return np.full_like(plane, first)
    scale = np.float32(255.0) / np.float32(plane.size - hist[first])
    cum = np.cumsum(hist) - hist[first]
    lut = np.clip(np.rint(cum.astype(np.float32) * scale), 0, 255).astype(np.uint8)
    lut[: first + 1] = 0
    return lut[plane]


def test_equalize_is_opencvs_histogram_equalisation_per_channel() -> None:
    img = photo(25, 31, seed=5) // 3
    want = np.stack([_opencv_equalize(img[..., c]) for c in range(3)], axis=2)
    np.testing.assert_array_equal(vision.Equalize()(img), want)


@pytest.mark.parametrize("bits", [1, 3, 8])
def test_posterize_matches_pillow(bits: int) -> None:
    np.testing.assert_array_equal(
        vision.Posterize(bits)(PHOTO), np.array(ImageOps.posterize(pil(PHOTO), bits))
    )


def test_posterize_to_zero_bits_is_black() -> None:
    assert not vision.Posterize(0)(PHOTO).any()


@pytest.mark.parametrize("threshold", [0, 100, 255])
def test_solarize_with_one_threshold_matches_pillow(threshold: int) -> None:
    want = np.array(ImageOps.solarize(pil(PHOTO), threshold))
    np.testing.assert_array_equal(vision.Solarize(threshold)(PHOTO), want)


def test_solarize_with_a_range_inverts_only_inside_it() -> None:
    img = np.arange(256, dtype=np.uint8).reshape(16, 16)
    levels = np.arange(256)
    want = np.where((levels >= 60) & (levels <= 90), 255 - levels, levels).reshape(16, 16)
    np.testing.assert_array_equal(vision.Solarize((60, 90))(img), want)


def test_invert_matches_pillow() -> None:
    np.testing.assert_array_equal(vision.Invert()(PHOTO), np.array(ImageOps.invert(pil(PHOTO))))


def test_invert_of_a_float_image_is_255_minus_it() -> None:
    img = np.array([[0.25, 300.0]], np.float32)
    np.testing.assert_array_equal(vision.Invert()(img), np.array([[254.75, -45.0]], np.float32))


# ---------------------------------------------------------------------------------------------- formulas


@pytest.mark.parametrize(("gamma", "gain"), [(0.5, 1.0), (2.2, 1.0), (1.0, 0.6), (0.8, 1.4)])
def test_adjust_gamma_of_uint8_is_mindsporess_table(gamma: float, gain: float) -> None:
    levels = np.arange(256, dtype=np.float64)
    table = np.clip(np.floor(np.minimum((levels / 255) ** gamma * 255.999 * gain, 255)), 0, 255)
    out = vision.AdjustGamma(gamma, gain)(PHOTO)
    # float32 against float64: a level sitting on an integer may fall either side
    assert max_diff(out, table[PHOTO]) <= 1 and np.mean(out != table[PHOTO]) < 0.01


def test_adjust_gamma_of_floats_clips_to_one() -> None:
    img = np.array([[0.2, 0.5, 0.9]], np.float32)
    np.testing.assert_allclose(vision.AdjustGamma(2.0, 1.5)(img), np.clip((img * 1.5) ** 2, 0, 1), rtol=1e-6)


def test_adjust_hue_by_zero_keeps_the_image_within_opencvs_hsv_round_trip() -> None:
    round_trip = cv2.cvtColor(cv2.cvtColor(PHOTO, cv2.COLOR_RGB2HSV_FULL), cv2.COLOR_HSV2RGB_FULL)
    np.testing.assert_array_equal(vision.AdjustHue(0.0)(PHOTO), round_trip)


def test_adjust_hue_half_turn_swaps_red_for_cyan() -> None:
    out = vision.AdjustHue(0.5)(np.array([[[255, 0, 0]]], np.uint8))
    assert out[0, 0, 0] == 0 and out[0, 0, 1] == 255 and out[0, 0, 2] >= 250


def test_rgb_to_hsv_matches_colorsys() -> None:
    rgb = np.random.default_rng(1).random((4, 5, 3))
    rgb[0, 0] = (0.3, 0.3, 0.3)  # grey: hue and saturation 0
    want = np.array([[colorsys.rgb_to_hsv(*px) for px in row] for row in rgb])
    np.testing.assert_allclose(vision.RgbToHsv(is_hwc=True)(rgb), want, rtol=0, atol=1e-12)


def test_hsv_to_rgb_matches_colorsys_in_chw_batches() -> None:
    hsv = np.random.default_rng(2).random((2, 3, 4, 5))
    hsv[0, 1, 0, 0] = 0.0  # no saturation: grey
    want = np.empty_like(hsv)
    for n in range(2):
        for i in range(4):
            for j in range(5):
                want[n, :, i, j] = colorsys.hsv_to_rgb(*hsv[n, :, i, j])
    np.testing.assert_allclose(vision.HsvToRgb()(hsv), want, rtol=0, atol=1e-12)


def test_hsv_round_trip_of_uint8_rgb() -> None:
    hsv = vision.RgbToHsv(is_hwc=True)(PHOTO)
    assert hsv.dtype == np.float64
    np.testing.assert_allclose(vision.HsvToRgb(is_hwc=True)(hsv), PHOTO, atol=1e-9)


# ---------------------------------------------------------------------------------------------- random forms


@pytest.mark.parametrize(
    ("random_op", "fixed_op"),
    [
        (vision.RandomAdjustSharpness(0.3, prob=1.0), vision.AdjustSharpness(0.3)),
        (vision.RandomAutoContrast(5.0, [1], prob=1.0), vision.AutoContrast(5.0, [1])),
        (vision.RandomEqualize(1.0), vision.Equalize()),
        (vision.RandomInvert(1.0), vision.Invert()),
        (vision.RandomPosterize((3, 3)), vision.Posterize(3)),
        (vision.RandomSolarize((90, 90)), vision.Solarize(90)),
        (vision.RandomSharpness((1.6, 1.6)), vision.AdjustSharpness(1.6)),
    ],
    ids=lambda op: op.name,
)
def test_random_form_with_a_certain_draw_is_the_fixed_op(random_op: vision.Op, fixed_op: vision.Op) -> None:
    np.testing.assert_array_equal(run(random_op, PHOTO, row=3), fixed_op(PHOTO))


@pytest.mark.parametrize(
    "op",
    [
        vision.RandomAdjustSharpness(0.3, prob=0.0),
        vision.RandomAutoContrast(prob=0.0),
        vision.RandomEqualize(0.0),
        vision.RandomInvert(0.0),
        vision.RandomGrayscale(0.0),
        vision.RandomLighting(0.0),
    ],
    ids=lambda op: op.name,
)
def test_random_form_that_never_applies_passes_the_image_through(op: vision.Op) -> None:
    for row in range(5):
        np.testing.assert_array_equal(run(op, PHOTO, row=row), PHOTO)


@pytest.mark.parametrize("factor", [0.3, 1.6])
def test_random_color_within_two_levels_of_pillow_color(factor: float) -> None:
    want = np.array(ImageEnhance.Color(pil(PHOTO)).enhance(factor))
    assert max_diff(run(vision.RandomColor((factor, factor)), PHOTO), want) <= 2


def test_random_color_near_zero_is_exactly_the_grey_image_and_near_one_the_image() -> None:
    gray = cv2.cvtColor(cv2.cvtColor(PHOTO, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)
    np.testing.assert_array_equal(run(vision.RandomColor((0.0, 0.0019)), PHOTO), gray)
    np.testing.assert_array_equal(run(vision.RandomColor((0.999, 1.001)), PHOTO), PHOTO)


def test_random_invert_applies_at_its_probability() -> None:
    op = vision.RandomInvert(0.3)
    inverted = sum(bool((run(op, PHOTO[:2, :2], row=r) != PHOTO[:2, :2]).any()) for r in range(400))
    assert 80 <= inverted <= 160  # 120 expected; the bounds are 4.5 standard deviations


def test_random_posterize_draws_every_bit_count_of_its_range_and_no_other() -> None:
    levels = np.arange(256, dtype=np.uint8).reshape(16, 16)
    op = vision.RandomPosterize((2, 4))
    seen = {len(np.unique(run(op, levels, row=r))) for r in range(60)}
    assert seen == {4, 8, 16}  # 2, 3 and 4 bits


def test_random_solarize_inverts_one_contiguous_range_within_the_threshold() -> None:
    levels = np.arange(256, dtype=np.uint8).reshape(16, 16)
    for row in range(20):
        changed = np.flatnonzero(
            run(vision.RandomSolarize((40, 120)), levels, row=row).ravel() != levels.ravel()
        )
        if changed.size:
            assert changed.min() >= 40 and changed.max() <= 120
            assert changed.size == changed.max() - changed.min() + 1


def test_random_lighting_adds_one_shift_per_channel() -> None:
    img = np.full((5, 6, 3), 128, np.uint8)
    out = run(vision.RandomLighting(0.5), img, row=2).astype(np.int64) - 128
    assert (out == out[0, 0]).all() and out[0, 0].any()


def test_random_lighting_shift_has_the_pca_spread() -> None:
    shifts = np.array([adjust_plan.lighting_shift(np.random.default_rng(s), 1.0) for s in range(2000)])
    want = np.sqrt((adjust_plan.LIGHTING_EIGEN.astype(np.float64) ** 2).sum(axis=1))
    np.testing.assert_allclose(shifts.std(axis=0), want, rtol=0.1)


def test_random_grayscale_gives_three_equal_opencv_grey_channels() -> None:
    out = run(vision.RandomGrayscale(1.0), PHOTO)
    gray = cv2.cvtColor(PHOTO, cv2.COLOR_RGB2GRAY)
    for c in range(3):
        np.testing.assert_array_equal(out[..., c], gray)


def test_random_grayscale_passes_a_grey_image_through() -> None:
    gray = PHOTO[..., 0]
    np.testing.assert_array_equal(run(vision.RandomGrayscale(1.0), gray), gray)


# ---------------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (
            lambda: vision.AdjustBrightness(-0.1),
            ArgumentError,
            ("AdjustBrightness", "`brightness_factor`", "at least 0", "-0.1"),
        ),
        (lambda: vision.AdjustContrast("1"), TypeError, ("AdjustContrast", "`contrast_factor`", "number")),
        (lambda: vision.AdjustGamma(-1), ArgumentError, ("AdjustGamma", "`gamma`", "at least 0", "-1")),
        (lambda: vision.AdjustGamma(1.0, gain=None), TypeError, ("AdjustGamma", "`gain`")),
        (lambda: vision.AdjustHue(0.6), ArgumentError, ("AdjustHue", "`hue_factor`", "[-0.5, 0.5]", "0.6")),
        (lambda: vision.AdjustSaturation(float("nan")), ArgumentError, ("AdjustSaturation", "finite")),
        (lambda: vision.AdjustSharpness(-2), ArgumentError, ("AdjustSharpness", "`sharpness_factor`")),
        (lambda: vision.AutoContrast(50), ArgumentError, ("AutoContrast", "`cutoff`", "[0, 50)", "50")),
        (lambda: vision.AutoContrast(ignore=[1, 256]), ArgumentError, ("AutoContrast", "`ignore[1]`", "256")),
        (lambda: vision.AutoContrast(ignore="1"), TypeError, ("AutoContrast", "`ignore`")),
        (lambda: vision.Posterize(9), ArgumentError, ("Posterize", "`bits`", "at most 8", "9")),
        (lambda: vision.Posterize(2.0), TypeError, ("Posterize", "`bits`", "int")),
        (lambda: vision.Solarize((200, 50)), ArgumentError, ("Solarize", "`threshold`", "min <= max")),
        (lambda: vision.Solarize(256), ArgumentError, ("Solarize", "`threshold`", "[0, 255]", "256")),
        (
            lambda: vision.RandomAdjustSharpness(1.0, prob=1.5),
            ArgumentError,
            ("RandomAdjustSharpness", "`prob`", "[0, 1]"),
        ),
        (lambda: vision.RandomPosterize(0), ArgumentError, ("RandomPosterize", "`bits`", "greater than 0")),
        (lambda: vision.RandomPosterize((5, 2)), ArgumentError, ("RandomPosterize", "`bits`", "min <= max")),
        (lambda: vision.RandomSolarize((0, 256)), ArgumentError, ("RandomSolarize", "`threshold[1]`", "256")),
        (
            lambda: vision.RandomSharpness((1.5, 0.2)),
            ArgumentError,
            ("RandomSharpness", "`degrees`", "min <= max"),
        ),
        (lambda: vision.RandomColor(1.0), TypeError, ("RandomColor", "`degrees`", "sequence of 2")),
        (lambda: vision.RandomColor((-1, 1)), ArgumentError, ("RandomColor", "`degrees[0]`", "at least 0")),
        (lambda: vision.RandomLighting(-0.05), ArgumentError, ("RandomLighting", "`alpha`", "at least 0")),
        (lambda: vision.RandomGrayscale(2), ArgumentError, ("RandomGrayscale", "`prob`")),
        (lambda: vision.RgbToHsv(1), TypeError, ("RgbToHsv", "`is_hwc`", "bool")),
    ],
)
def test_bad_arguments_fail_at_construction_naming_op_argument_and_value(
    make: object, error: type[Exception], words: tuple[str, ...]
) -> None:
    with pytest.raises(error) as caught:
        make()  # type: ignore[operator]
    for word in words:
        assert word in str(caught.value), f"{word!r} not in {caught.value}"


def test_mindspore_defaults() -> None:
    assert vision.AdjustGamma(1.0).gain == 1.0
    assert (vision.AutoContrast().cutoff, vision.AutoContrast().ignore) == (0.0, [])
    assert vision.AutoContrast(ignore=5).ignore == [5]
    assert vision.RandomAdjustSharpness(1.0).prob == 0.5
    assert vision.RandomPosterize().bits == (8, 8)
    assert vision.RandomSolarize().threshold == (0, 255)
    assert vision.RandomSharpness().degrees == vision.RandomColor().degrees == (0.1, 1.9)
    assert vision.RandomLighting().alpha == 0.05
    assert vision.RandomGrayscale().prob == 0.1
    assert vision.Solarize(7).threshold == (7, 7)
    assert vision.RgbToHsv().is_hwc is False


@pytest.mark.parametrize(
    ("op", "spec"),
    [
        (vision.AdjustContrast(1.2), TensorSpec((4, 5), np.dtype(np.uint8))),
        (vision.AdjustHue(0.1), TensorSpec((4, 5, 3), np.dtype(np.float32))),
        (vision.Equalize(), TensorSpec((4, 5, 3), np.dtype(np.float32))),
        (vision.AdjustGamma(2.0), TensorSpec((4, 5), np.dtype(np.int16))),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_output_rule_rejects_what_the_kernel_rejects(op: vision.Op, spec: TensorSpec) -> None:
    with pytest.raises((ValueError, TypeError), match=op.name):
        op.output_spec(spec)
    with pytest.raises((ValueError, TypeError), match=op.name):
        op(np.zeros(spec.shape, spec.dtype))
