"""The augmentation policies (minddata/vision/augment_policies.py, minddata/ops/plans/augment_policies.py,
minddata/ops/cpu/augment_policies.py).

References: OpenCV warps built from the stated geometry (NEAREST: exact), NumPy shifts, the pixel ops of
minddata.vision.adjust (tested against Pillow and MindSpore in test_adjust.py), the magnitude tables of
the AutoAugment/RandAugment/TrivialAugment papers as MindSpore 2.10 holds them, and MindSpore 2.10's
Affine output for the shears of its ApplyAugment (``vision.Affine(0.0, [0.0, 0.0], 1.0, [magnitude * 180
/ pi, 0.0], Inter.NEAREST, (9, 99, 199))`` on ``IMAGE_6X7``), checked in as literals.
"""

from __future__ import annotations

import itertools
import math

import cv2
import numpy as np
import pytest

import minddata as md
from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import KernelContext, get_kernel
from minddata.ops.cpu.augment_policies import apply_augment, augment_names
from minddata.ops.plans import augment_policies as augment_plan
from minddata.vision import AutoAugmentPolicy, Inter

IMAGE_6X7 = ((np.arange(6 * 7 * 3).reshape(6, 7, 3) * 53 + 5) % 256).astype(np.uint8)
FILL = (9, 99, 199)

# MindSpore 2.10's ShearX by 0.3 and ShearY by -0.2 (NEAREST, fill FILL) of IMAGE_6X7, flattened.
MINDSPORE_SHEAR_X_03 = [9, 99, 199, 5, 58, 111, 164, 217, 14, 67, 120, 173, 226, 23, 76, 129, 182, 235, 32, 85, 138, 94, 147, 200, 253, 50, 103, 156, 209, 6, 59, 112, 165, 218, 15, 68, 121, 174, 227, 24, 77, 130, 183, 236, 33, 86, 139, 192, 245, 42, 95, 148, 201, 254, 51, 104, 157, 210, 7, 60, 113, 166, 219, 16, 69, 122, 175, 228, 25, 78, 131, 184, 237, 34, 87, 140, 193, 246, 43, 96, 149, 202, 255, 52, 105, 158, 211, 8, 61, 114, 167, 220, 17, 70, 123, 176, 229, 26, 79, 132, 185, 238, 35, 88, 141, 97, 150, 203, 0, 53, 106, 159, 212, 9, 62, 115, 168, 221, 18, 71, 124, 177, 230, 9, 99, 199]  # fmt: skip
MINDSPORE_SHEAR_Y_M02 = [94, 147, 200, 164, 217, 14, 67, 120, 173, 226, 23, 76, 129, 182, 235, 32, 85, 138, 9, 99, 199, 183, 236, 33, 253, 50, 103, 156, 209, 6, 59, 112, 165, 218, 15, 68, 121, 174, 227, 191, 244, 41, 16, 69, 122, 86, 139, 192, 245, 42, 95, 148, 201, 254, 51, 104, 157, 210, 7, 60, 24, 77, 130, 105, 158, 211, 175, 228, 25, 78, 131, 184, 237, 34, 87, 140, 193, 246, 43, 96, 149, 113, 166, 219, 194, 247, 44, 8, 61, 114, 167, 220, 17, 70, 123, 176, 229, 26, 79, 132, 185, 238, 202, 255, 52, 9, 99, 199, 97, 150, 203, 0, 53, 106, 159, 212, 9, 62, 115, 168, 221, 18, 71, 35, 88, 141]  # fmt: skip


def photo(h: int, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 9, y * 12, (x + y) * 5], axis=-1)
    return np.clip(base + rng.integers(0, 40, (h, w, 3)), 0, 255).astype(np.uint8)


PHOTO = photo(21, 28)


def run(op: vision.Op, image: np.ndarray, row: int = 0, seed: int = 0) -> np.ndarray:
    ctx = KernelContext(seed=seed, row_index=row, op_position=2)
    return get_kernel(op.name, "CPU")(op, ctx, image)


def warp(img: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    return cv2.warpAffine(
        img, matrix, (w, h), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=FILL
    )


# ---------------------------------------------------------------------------------------------- one step


def test_shear_x_matches_mindspore() -> None:
    out = apply_augment(IMAGE_6X7, "ShearX", 0.3, Inter.NEAREST, FILL)
    np.testing.assert_array_equal(out, np.array(MINDSPORE_SHEAR_X_03, np.uint8).reshape(6, 7, 3))


def test_shear_y_matches_mindspore() -> None:
    out = apply_augment(IMAGE_6X7, "ShearY", -0.2, Inter.NEAREST, FILL)
    np.testing.assert_array_equal(out, np.array(MINDSPORE_SHEAR_Y_M02, np.uint8).reshape(6, 7, 3))


@pytest.mark.parametrize("magnitude", [0.25, -0.3])
def test_shear_x_slants_rows_by_the_tangent_of_the_magnitude_about_the_centre(magnitude: float) -> None:
    cy = (PHOTO.shape[0] - 1) / 2
    t = math.tan(magnitude)  # MindSpore reads the magnitude as radians of shear: tan(m), not m
    want = warp(PHOTO, np.array([[1.0, -t, t * cy], [0.0, 1.0, 0.0]]))
    got = apply_augment(PHOTO, "ShearX", magnitude, Inter.NEAREST, FILL)
    assert np.mean(got != want) < 0.01  # float32 angles: a pixel on a half-pixel boundary may flip


@pytest.mark.parametrize("magnitude", [0.25, -0.3])
def test_shear_y_slants_columns_by_the_tangent_of_the_magnitude_about_the_centre(magnitude: float) -> None:
    cx = (PHOTO.shape[1] - 1) / 2
    t = math.tan(magnitude)
    want = warp(PHOTO, np.array([[1.0, 0.0, 0.0], [-t, 1.0, t * cx]]))
    got = apply_augment(PHOTO, "ShearY", magnitude, Inter.NEAREST, FILL)
    assert np.mean(got != want) < 0.01


@pytest.mark.parametrize(
    ("name", "magnitude", "dx", "dy"),
    [("TranslateX", 5.7, 5, 0), ("TranslateX", -3.2, -3, 0), ("TranslateY", 4.9, 0, 4)],
)
def test_translate_shifts_by_whole_pixels_and_fills_the_rest(
    name: str, magnitude: float, dx: int, dy: int
) -> None:
    h, w = PHOTO.shape[:2]
    want = np.empty_like(PHOTO)
    want[...] = FILL
    src = PHOTO[max(0, -dy) : h - max(0, dy), max(0, -dx) : w - max(0, dx)]
    want[max(0, dy) : max(0, dy) + src.shape[0], max(0, dx) : max(0, dx) + src.shape[1]] = src
    np.testing.assert_array_equal(apply_augment(PHOTO, name, magnitude, Inter.NEAREST, FILL), want)


@pytest.mark.parametrize("magnitude", [12.0, -25.5])
def test_rotate_matches_opencvs_rotation_about_the_centre_keeping_the_size(magnitude: float) -> None:
    h, w = PHOTO.shape[:2]
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), magnitude, 1.0)
    got = apply_augment(PHOTO, "Rotate", magnitude, Inter.NEAREST, FILL)
    assert np.mean(got != warp(PHOTO, matrix)) < 0.01


@pytest.mark.parametrize(
    ("name", "magnitude", "op"),
    [
        ("Brightness", 0.4, vision.AdjustBrightness(1.4)),
        ("Color", -0.5, vision.AdjustSaturation(0.5)),
        ("Contrast", 0.9, vision.AdjustContrast(1.9)),
        ("Sharpness", -0.9, vision.AdjustSharpness(0.1)),
        ("Posterize", 5.0, vision.Posterize(5)),
        ("Solarize", 140.0, vision.Solarize(140)),
        ("AutoContrast", 0.0, vision.AutoContrast()),
        ("Equalize", 0.0, vision.Equalize()),
        ("Invert", 0.0, vision.Invert()),
    ],
)
def test_pixel_steps_are_the_adjust_ops_at_one_plus_magnitude(
    name: str, magnitude: float, op: vision.Op
) -> None:
    np.testing.assert_array_equal(apply_augment(PHOTO, name, magnitude, Inter.NEAREST, FILL), op(PHOTO))


def test_identity_step_changes_nothing() -> None:
    np.testing.assert_array_equal(apply_augment(PHOTO, "Identity", 0.0, Inter.NEAREST, FILL), PHOTO)


# ---------------------------------------------------------------------------------------------- tables


def test_auto_augment_magnitudes_are_mindspores() -> None:
    space = augment_plan.auto_augment_space(10, 331, 662)
    np.testing.assert_array_equal(space["Posterize"][0], [8, 8, 7, 7, 6, 6, 5, 5, 4, 4])
    np.testing.assert_allclose(space["Solarize"][0], np.linspace(256, 0, 10), rtol=1e-6)
    np.testing.assert_allclose(space["Rotate"][0], np.linspace(0, 30, 10), rtol=1e-6)
    np.testing.assert_allclose(space["TranslateX"][0][-1], 300.0, rtol=1e-6)  # 150/331 of the width
    np.testing.assert_allclose(space["TranslateY"][0][-1], 150.0, rtol=1e-6)
    assert {name for name, (_, signed) in space.items() if signed} == {
        "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast", "Sharpness"
    }  # fmt: skip


def test_rand_augment_and_trivial_augment_spaces_are_mindspores() -> None:
    rand = augment_plan.rand_augment_space(31, 32, 32)
    trivial = augment_plan.trivial_augment_space(31)
    names = ["AutoContrast", "Brightness", "Color", "Contrast", "Equalize", "Identity", "Posterize", "Rotate",
             "Sharpness", "ShearX", "ShearY", "Solarize", "TranslateX", "TranslateY"]  # fmt: skip
    assert list(rand) == list(trivial) == names
    np.testing.assert_allclose(rand["Solarize"][0][[0, -1]], [255, 0])
    np.testing.assert_allclose(trivial["Rotate"][0][-1], 135.0)
    np.testing.assert_allclose(trivial["TranslateX"][0][-1], 32.0)
    assert trivial["Posterize"][0][-1] == 2 and rand["Posterize"][0][-1] == 4


def test_every_policy_table_has_25_pairs_of_known_steps() -> None:
    known = set(augment_names())
    for policy in AutoAugmentPolicy:
        table = augment_plan.AUTO_AUGMENT_POLICIES[policy.value]
        assert len(table) == 25 and all(len(pair) == 2 for pair in table)
        assert {name for pair in table for name, _, _ in pair} <= known


# ---------------------------------------------------------------------------------------------- policies


def _candidates(img: np.ndarray, table: tuple, space: dict, interp: Inter, fill: tuple) -> list[np.ndarray]:
    """Every output a sub-policy table can give: each pair, each subset of its steps, each sign."""
    out = []
    for pair in table:
        for mask in itertools.product((False, True), repeat=2):
            for signs in itertools.product((1.0, -1.0), repeat=2):
                x = img
                for (name, _, bin_), on, sign in zip(pair, mask, signs, strict=True):
                    if on:
                        magnitudes, signed = space[name]
                        m = float(magnitudes[bin_]) if bin_ is not None and magnitudes.size > 1 else 0.0
                        x = apply_augment(x, name, m * sign if signed else m, interp, fill)
                out.append(x)
    return out


@pytest.mark.parametrize("policy", list(AutoAugmentPolicy))
def test_auto_augment_gives_one_of_its_policys_outputs(policy: AutoAugmentPolicy) -> None:
    img = photo(9, 12, seed=3)
    op = vision.AutoAugment(policy, Inter.BILINEAR, fill_value=FILL)
    table = augment_plan.AUTO_AUGMENT_POLICIES[policy.value]
    candidates = _candidates(img, table, augment_plan.auto_augment_space(10, 9, 12), Inter.BILINEAR, FILL)
    for row in range(6):
        out = run(op, img, row=row)
        assert any(np.array_equal(out, c) for c in candidates), f"row {row}"


def test_auto_augment_draws_sub_policies_uniformly_and_steps_at_their_probability() -> None:
    table = augment_plan.AUTO_AUGMENT_POLICIES["cifar10"]
    counts: dict[str, int] = {}
    rng = np.random.default_rng(0)
    rows = 4000
    for _ in range(rows):
        for name, _ in augment_plan.auto_augment_plan("cifar10", 32, 32, rng):
            counts[name] = counts.get(name, 0) + 1
    expected = {name: 0.0 for pair in table for name, _, _ in pair}
    for pair in table:
        for name, prob, _ in pair:
            expected[name] += rows * prob / len(table)
    for name, want in expected.items():
        assert abs(counts.get(name, 0) - want) <= 5 * math.sqrt(want) + 1, name


def test_rand_augment_with_no_ops_changes_nothing() -> None:
    np.testing.assert_array_equal(run(vision.RandAugment(num_ops=0), PHOTO), PHOTO)


def test_rand_augment_applies_one_space_step_at_its_magnitude() -> None:
    img = photo(9, 12, seed=4)
    space = augment_plan.rand_augment_space(10, 9, 12)
    candidates = []
    for name, (magnitudes, signed) in space.items():
        m = float(magnitudes[6]) if magnitudes.size > 1 else 0.0
        for sign in (1.0, -1.0) if signed else (1.0,):
            candidates.append(apply_augment(img, name, m * sign, Inter.NEAREST, FILL))
    op = vision.RandAugment(num_ops=1, magnitude=6, num_magnitude_bins=10, fill_value=FILL)
    for row in range(8):
        assert any(np.array_equal(run(op, img, row=row), c) for c in candidates), f"row {row}"


def test_trivial_augment_applies_one_space_step() -> None:
    img = photo(9, 12, seed=5)
    space = augment_plan.trivial_augment_space(5)
    candidates = [
        apply_augment(img, name, float(m) * sign, Inter.NEAREST, FILL)
        for name, (magnitudes, signed) in space.items()
        for m in magnitudes
        for sign in ((1.0, -1.0) if signed else (1.0,))
    ]
    op = vision.TrivialAugmentWide(num_magnitude_bins=5, fill_value=FILL)
    for row in range(8):
        assert any(np.array_equal(run(op, img, row=row), c) for c in candidates), f"row {row}"


def test_uniform_augment_applies_chosen_ops_in_list_order() -> None:
    brighten, solarize = vision.AdjustBrightness(2.0), vision.Solarize(128)
    op = vision.UniformAugment([brighten, solarize], num_ops=2)
    img = PHOTO
    allowed = {x.tobytes() for x in (img, brighten(img), solarize(img), solarize(brighten(img)))}
    assert brighten(solarize(img)).tobytes() not in allowed  # the other order would show
    seen = {run(op, img, row=r).tobytes() for r in range(60)}
    assert seen == allowed


def test_uniform_augment_applies_at_most_num_ops() -> None:
    ops = [vision.Invert(), vision.Posterize(1), vision.Solarize(200)]
    op = vision.UniformAugment(ops, num_ops=1)
    singles = {PHOTO.tobytes()} | {t(PHOTO).tobytes() for t in ops}
    assert {run(op, PHOTO, row=r).tobytes() for r in range(40)} == singles


def test_random_select_subpolicy_applies_each_op_at_its_probability() -> None:
    op = vision.RandomSelectSubpolicy([[(vision.Invert(), 1.0), (vision.Posterize(1), 0.0)]])
    for row in range(5):
        np.testing.assert_array_equal(run(op, PHOTO, row=row), vision.Invert()(PHOTO))


def test_random_select_subpolicy_draws_sub_policies_uniformly() -> None:
    op = vision.RandomSelectSubpolicy([[(vision.Invert(), 1.0)], [(vision.Equalize(), 1.0)]])
    inverted = sum(np.array_equal(run(op, PHOTO, row=r), vision.Invert()(PHOTO)) for r in range(400))
    assert 155 <= inverted <= 245  # 200 expected; 4.5 standard deviations


def test_held_random_ops_draw_from_their_own_streams() -> None:
    held = vision.RandomInvert(0.5)
    op = vision.RandomSelectSubpolicy([[(held, 1.0)]])
    outs = {run(op, PHOTO, row=r).tobytes() for r in range(20)}
    assert outs == {PHOTO.tobytes(), vision.Invert()(PHOTO).tobytes()}


def test_errors_inside_name_the_holder_and_the_op() -> None:
    op = vision.RandomSelectSubpolicy([[(vision.AdjustHue(0.1), 1.0)]])
    with pytest.raises(
        ValueError, match=r"RandomSelectSubpolicy: policy\[0\]\[0\] \(AdjustHue\) failed: .*RGB"
    ):
        run(op, PHOTO[..., 0])


def test_policies_give_the_same_rows_for_any_worker_count() -> None:
    images = np.stack([photo(10, 12, seed=s) for s in range(12)])
    ops = [
        vision.AutoAugment(AutoAugmentPolicy.SVHN),
        vision.RandAugment(num_ops=2, magnitude=5, num_magnitude_bins=10),
        vision.UniformAugment([vision.Invert(), vision.RandomPosterize((2, 6))], num_ops=1),
    ]

    def rows(workers: int) -> list[bytes]:
        md.config.set_seed(5)
        md.config.set_rows_per_chunk(3)
        ds = md.NumpySlicesDataset({"img": images}, shuffle=False)
        ds = ds.map(ops, input_columns="img", num_parallel_workers=workers)
        return [r["img"].tobytes() for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]

    assert rows(1) == rows(2)


# ---------------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: vision.AutoAugment("imagenet"), TypeError, ("AutoAugment", "`policy`", "AutoAugmentPolicy")),
        (lambda: vision.AutoAugment(interpolation="nearest"), TypeError, ("AutoAugment", "`interpolation`", "Inter")),
        (lambda: vision.AutoAugment(interpolation=Inter.PILCUBIC), ArgumentError, ("AutoAugment", "`interpolation`")),
        (lambda: vision.AutoAugment(fill_value=256), ArgumentError, ("AutoAugment", "`fill_value`", "256")),
        (lambda: vision.AutoAugment(fill_value=(1, 2)), TypeError, ("AutoAugment", "`fill_value`", "3")),
        (lambda: vision.RandAugment(num_ops=-1), ArgumentError, ("RandAugment", "`num_ops`", "at least 0", "-1")),
        (lambda: vision.RandAugment(magnitude=31), ArgumentError, ("RandAugment", "`magnitude`", "less than", "31")),
        (lambda: vision.RandAugment(num_magnitude_bins=1), ArgumentError, ("RandAugment", "`num_magnitude_bins`", "at least 2")),
        (lambda: vision.RandAugment(magnitude=2.0), TypeError, ("RandAugment", "`magnitude`", "int")),
        (lambda: vision.TrivialAugmentWide(num_magnitude_bins=1), ArgumentError, ("TrivialAugmentWide", "`num_magnitude_bins`")),
        (lambda: vision.UniformAugment([]), ArgumentError, ("UniformAugment", "`transforms`", "empty")),
        (lambda: vision.UniformAugment([vision.Invert()], num_ops=2), ArgumentError, ("UniformAugment", "`num_ops`", "at most", "2")),
        (lambda: vision.UniformAugment([vision.Invert()], num_ops=0), ArgumentError, ("UniformAugment", "`num_ops`")),
        (lambda: vision.UniformAugment([1]), TypeError, ("UniformAugment", "`transforms[0]`")),
        (lambda: vision.RandomSelectSubpolicy([]), ArgumentError, ("RandomSelectSubpolicy", "`policy`", "empty")),
        (lambda: vision.RandomSelectSubpolicy([[]]), ArgumentError, ("RandomSelectSubpolicy", "`policy[0]`", "empty")),
        (lambda: vision.RandomSelectSubpolicy([[vision.Invert()]]), TypeError, ("RandomSelectSubpolicy", "`policy[0][0]`", "pair")),
        (lambda: vision.RandomSelectSubpolicy([[(vision.Invert(), 1.5)]]), ArgumentError, ("RandomSelectSubpolicy", "`policy[0][0][1]`", "[0, 1]")),
    ],
)  # fmt: skip
def test_bad_arguments_fail_at_construction_naming_op_argument_and_value(
    make: object, error: type[Exception], words: tuple[str, ...]
) -> None:
    with pytest.raises(error) as caught:
        make()  # type: ignore[operator]
    for word in words:
        assert word in str(caught.value), f"{word!r} not in {caught.value}"


def test_mindspore_defaults() -> None:
    auto = vision.AutoAugment()
    assert (auto.policy, auto.interpolation, auto.fill_value) == (
        AutoAugmentPolicy.IMAGENET,
        Inter.NEAREST,
        (0, 0, 0),
    )
    rand = vision.RandAugment()
    assert (rand.num_ops, rand.magnitude, rand.num_magnitude_bins, rand.interpolation) == (
        2,
        9,
        31,
        Inter.NEAREST,
    )
    assert vision.TrivialAugmentWide().num_magnitude_bins == 31
    assert vision.UniformAugment([vision.Invert(), vision.Equalize()]).num_ops == 2


def test_auto_augment_policy_is_mindsporess_enum_under_both_paths() -> None:
    from minddata.dataset.vision import utils

    assert utils.AutoAugmentPolicy is AutoAugmentPolicy
    assert [p.value for p in AutoAugmentPolicy] == ["imagenet", "cifar10", "svhn"]
