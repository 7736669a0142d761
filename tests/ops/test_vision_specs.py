"""Geometric and colour vision ops across families: random ops against their row context; every spec's
shape rule against its kernel, reprs, pickling and argument checks (each family's kernels are tested
against references in tests/ops/test_<family>.py)."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from vision_testing import run

from minddata import vision
from minddata.errors import ArgumentError
from minddata.ops import TensorSpec
from minddata.vision import Border, ConvertMode, Inter

# ---------------------------------------------------------------------------------------------- random ops


RANDOM_OPS = [
    vision.RandomCrop((20, 25), padding=2),
    vision.RandomVerticalFlip(),
    vision.RandomRotation(45, Inter.BILINEAR),
    vision.RandomAffine(20, (-0.1, 0.1, -0.1, 0.1), (0.8, 1.2), 10),
    vision.RandomColorAdjust(0.4, 0.4, 0.4, 0.1),
]


@pytest.mark.parametrize("op", RANDOM_OPS, ids=lambda op: op.name)
def test_random_ops_are_a_function_of_the_row_context(photo, op) -> None:
    assert type(op).random
    outs = [run(op, photo, row=r) for r in range(16)]
    for r in (0, 7):
        np.testing.assert_array_equal(run(op, photo, row=r), outs[r])
    distinct = len({o.tobytes() for o in outs})
    assert distinct >= (2 if op.name == "RandomVerticalFlip" else 15)
    if op.name != "RandomVerticalFlip":
        assert not np.array_equal(run(op, photo, row=0, pass_index=1), outs[0])
        assert not np.array_equal(run(op, photo, row=0, seed=2), outs[0])


# ---------------------------------------------------------------------------------------------- output_spec

HWC = np.zeros((37, 53, 3), np.uint8)
HW = np.zeros((37, 53), np.float32)
RGBA = np.zeros((10, 12, 4), np.uint16)

SPEC_CASES: list[tuple[Any, np.ndarray]] = [
    (vision.Pad((1, 2, 3, 4)), HWC),
    (vision.Pad(3, padding_mode=Border.REFLECT), HW),
    (vision.RandomCrop(20), HWC),
    (vision.RandomCrop((50, 60), padding=1, pad_if_needed=True), HW),
    (vision.VerticalFlip(), HWC),
    (vision.VerticalFlip(), HW),
    (vision.RandomVerticalFlip(), HWC),
    (vision.ResizedCrop(1, 2, 20, 30, (7, 9)), HWC),
    (vision.ResizedCrop(1, 2, 20, 30, 5), HW),
    (vision.Rotate(30), HWC),
    (vision.Rotate(30, expand=True), HWC),
    (vision.Rotate(-77, expand=True), HW),
    (vision.RandomRotation(30), HW),
    (vision.RandomRotation((33, 33), expand=True), HWC),
    (vision.Affine(10, (0.1, 0.1), 1.2, (3, 4)), HWC),
    (vision.Affine(10, (0.1, 0.1), 1.2, 3), HW),
    (vision.RandomAffine(10), HWC),
    (vision.ConvertColor(ConvertMode.COLOR_RGB2GRAY), HWC),
    (vision.ConvertColor(ConvertMode.COLOR_RGB2BGRA), HWC),
    (vision.ConvertColor(ConvertMode.COLOR_GRAY2RGB), HW),
    (vision.ConvertColor(ConvertMode.COLOR_RGBA2BGR), RGBA),
    (vision.Grayscale(), HWC),
    (vision.Grayscale(3), HWC),
    (vision.Grayscale(3), HW),
    (vision.RandomColorAdjust(0.5), HWC),
    (vision.GaussianBlur(5), HWC),
    (vision.GaussianBlur((3, 7), (1, 2)), HW),
]


@pytest.mark.parametrize(("op", "img"), SPEC_CASES, ids=[f"{op.name}-{img.shape}" for op, img in SPEC_CASES])
def test_output_spec_matches_the_kernel(op, img) -> None:
    out = run(op, img, row=3)
    spec = op.output_spec(TensorSpec(img.shape, img.dtype))
    assert spec == TensorSpec(out.shape, out.dtype)
    # With the size unknown, every size the rule still states must match; the dtype passes through.
    unknown = op.output_spec(TensorSpec((None, None, *img.shape[2:]), img.dtype))
    assert len(unknown.shape) == out.ndim and unknown.dtype == out.dtype
    assert all(d is None or d == o for d, o in zip(unknown.shape, out.shape, strict=True))
    assert op.output_spec(TensorSpec(img.shape, None)).dtype is None


def test_output_spec_unknown_sizes_stay_unknown_only_where_they_must() -> None:
    u8 = np.dtype(np.uint8)
    assert vision.Pad(2).output_spec(TensorSpec((None, 5, 3), u8)).shape == (None, 9, 3)
    assert vision.RandomRotation(10, expand=True).output_spec(TensorSpec((4, 5, 3), u8)).shape == (
        None,
        None,
        3,
    )
    assert vision.RandomCrop(3).output_spec(TensorSpec((None, None), u8)).shape == (3, 3)


def test_output_spec_rejects_bad_inputs() -> None:
    u8 = np.dtype(np.uint8)
    with pytest.raises(
        ValueError, match=r"Pad: expected an image of shape <H, W> or <H, W, C>. Found shape \(5,\)"
    ):
        vision.Pad(1).output_spec(TensorSpec((5,), u8))
    with pytest.raises(
        ValueError, match=r"ConvertColor: COLOR_BGR2RGB/COLOR_RGB2BGR expects an image with 3 channel"
    ):
        vision.ConvertColor(ConvertMode.COLOR_BGR2RGB).output_spec(TensorSpec((4, 4), u8))
    with pytest.raises(ValueError, match=r"RandomCrop: the crop size \(9, 9\) is larger"):
        vision.RandomCrop(9).output_spec(TensorSpec((4, 40, 3), u8))
    with pytest.raises(ValueError, match=r"RandomColorAdjust: expected an RGB uint8 image"):
        vision.RandomColorAdjust().output_spec(TensorSpec((4, 4), u8))
    with pytest.raises(ValueError, match=r"ResizedCrop: the crop box"):
        vision.ResizedCrop(0, 0, 9, 9, 3).output_spec(TensorSpec((4, 4), u8))
    with pytest.raises(ValueError, match=r"Rotate: expected 1 input. Found: 2"):
        vision.Rotate(3).output_spec(TensorSpec((4, 4), u8), TensorSpec((4, 4), u8))


# ---------------------------------------------------------------------------------------------- the contract

SPECS = [
    vision.Pad((1, 2), fill_value=(1, 2, 3), padding_mode=Border.SYMMETRIC),
    vision.RandomCrop(
        (3, 4), padding=[1, 2, 3, 4], pad_if_needed=True, fill_value=5, padding_mode=Border.EDGE
    ),
    vision.VerticalFlip(),
    vision.RandomVerticalFlip(0.25),
    vision.ResizedCrop(1, 2, 3, 4, (5, 6), Inter.BICUBIC),
    vision.RandomCropDecodeResize(7, scale=(0.5, 1.0), interpolation=Inter.AREA, max_attempts=3),
    vision.Rotate(12.5, Inter.BILINEAR, True, (3, 4), (9, 8, 7)),
    vision.RandomRotation((-5, 10), Inter.BICUBIC, center=(1.5, 2)),
    vision.Affine(10, (0.1, -0.2), 1.5, (3, 4), Inter.BILINEAR, 3),
    vision.RandomAffine(5, (-0.1, 0.1), (0.9, 1.1), (1, 2, 3, 4)),
    vision.ConvertColor(ConvertMode.COLOR_RGB2GRAY),
    vision.Grayscale(3),
    vision.RandomColorAdjust(0.1, (0.5, 1.5), 0.2, (-0.1, 0.2)),
    vision.GaussianBlur((3, 5), (1.0, 2.0)),
    vision.GaussianBlur(7),
    vision.Rotate(5).device("GPU"),
]


@pytest.mark.parametrize("op", SPECS, ids=lambda op: op.name)
def test_spec_pickles_and_compares_equal(op: Any) -> None:
    back = pickle.loads(pickle.dumps(op))
    assert back == op and type(back) is type(op) and repr(back) == repr(op)
    assert back.device_target == op.device_target


def test_reprs_read_back_as_code() -> None:
    assert repr(vision.Pad(1)) == "Pad(padding=(1, 1, 1, 1), fill_value=0, padding_mode=Border.CONSTANT)"
    assert (
        repr(vision.ConvertColor(ConvertMode.COLOR_RGB2BGR))
        == "ConvertColor(convert_mode=ConvertMode.COLOR_BGR2RGB)"
    )
    assert vision.Rotate(3) != vision.Rotate(4) and vision.Rotate(3) == vision.Rotate(3.0)


BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: vision.Pad(-1), ArgumentError, r"Pad: `padding` must be at least 0. Found: -1"),
    (lambda: vision.Pad((1, 2, 3)), TypeError, r"Pad: `padding` must be an int, a sequence of 2 ints"),
    (lambda: vision.Pad((1, 2.5)), TypeError, r"Pad: `padding\[1\]` must be an int. Found: 2.5 \(float\)"),
    (lambda: vision.Pad("3"), TypeError, r"Pad: `padding` must be an int.*'3' \(str\)"),
    (
        lambda: vision.Pad(1, fill_value=256),
        ArgumentError,
        r"Pad: `fill_value` must be in \[0, 255\]. Found: 256",
    ),
    (
        lambda: vision.Pad(1, fill_value=(1, 2)),
        TypeError,
        r"Pad: `fill_value` must be an int or a sequence of 3 ints",
    ),
    (
        lambda: vision.Pad(1, fill_value=(1, 2, -3)),
        ArgumentError,
        r"Pad: `fill_value\[2\]` must be at least 0",
    ),
    (
        lambda: vision.Pad(1, padding_mode="edge"),
        TypeError,
        r"Pad: `padding_mode` must be a vision.Border member",
    ),
    (lambda: vision.RandomCrop(0), ArgumentError, r"RandomCrop: `size` must be greater than 0. Found: 0"),
    (lambda: vision.RandomCrop(4, padding=-2), ArgumentError, r"RandomCrop: `padding` must be at least 0"),
    (lambda: vision.RandomCrop(4, pad_if_needed=1), TypeError, r"RandomCrop: `pad_if_needed` must be a bool"),
    (
        lambda: vision.RandomVerticalFlip(1.5),
        ArgumentError,
        r"RandomVerticalFlip: `prob` must be in \[0, 1\]. Found: 1.5",
    ),
    (
        lambda: vision.RandomVerticalFlip("x"),
        TypeError,
        r"RandomVerticalFlip: `prob` must be a number. Found: 'x'",
    ),
    (
        lambda: vision.ResizedCrop(-1, 0, 2, 2, 4),
        ArgumentError,
        r"ResizedCrop: `top` must be at least 0. Found: -1",
    ),
    (
        lambda: vision.ResizedCrop(0, 0, 0, 2, 4),
        ArgumentError,
        r"ResizedCrop: `height` must be greater than 0",
    ),
    (
        lambda: vision.ResizedCrop(0, 0, 2, 2, (4, 0)),
        ArgumentError,
        r"ResizedCrop: `size\[1\] \(width\)` must be greater",
    ),
    (
        lambda: vision.ResizedCrop(0, 0, 2, 2, 4, "linear"),
        TypeError,
        r"ResizedCrop: `interpolation` must be a vision.Inter",
    ),
    (
        lambda: vision.RandomCropDecodeResize(8, scale=(0.9, 0.1)),
        ArgumentError,
        r"RandomCropDecodeResize: `scale` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomCropDecodeResize(8, ratio=(0, 1)),
        ArgumentError,
        r"RandomCropDecodeResize: `ratio\[0\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomCropDecodeResize(8, max_attempts=0),
        ArgumentError,
        r"RandomCropDecodeResize: `max_attempts` must be greater",
    ),
    (lambda: vision.Rotate("x"), TypeError, r"Rotate: `degrees` must be a number. Found: 'x' \(str\)"),
    (lambda: vision.Rotate(float("nan")), ArgumentError, r"Rotate: `degrees` must be finite"),
    (
        lambda: vision.Rotate(10, Inter.PILCUBIC),
        ArgumentError,
        r"Rotate: `resample` must be Inter.NEAREST, BILINEAR",
    ),
    (lambda: vision.Rotate(10, 2), TypeError, r"Rotate: `resample` must be a vision.Inter member"),
    (lambda: vision.Rotate(10, expand=1), TypeError, r"Rotate: `expand` must be a bool"),
    (
        lambda: vision.Rotate(10, center=(1,)),
        TypeError,
        r"Rotate: `center` must be None or a sequence of 2 numbers",
    ),
    (lambda: vision.Rotate(10, center=(1, "a")), TypeError, r"Rotate: `center\[1\] \(y\)` must be a number"),
    (lambda: vision.Rotate(10, fill_value=300), ArgumentError, r"Rotate: `fill_value` must be in \[0, 255\]"),
    (
        lambda: vision.RandomRotation(-5),
        ArgumentError,
        r"RandomRotation: `degrees` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomRotation((10, 5)),
        ArgumentError,
        r"RandomRotation: `degrees` must be \(min, max\) with min <= max",
    ),
    (
        lambda: vision.RandomRotation((1, 2, 3)),
        TypeError,
        r"RandomRotation: `degrees` must be a number or a sequence of 2",
    ),
    (
        lambda: vision.Affine(200, (0, 0), 1, 0),
        ArgumentError,
        r"Affine: `degrees` must be in \[-180, 180\]. Found: 200",
    ),
    (
        lambda: vision.Affine(0, (0, 2), 1, 0),
        ArgumentError,
        r"Affine: `translate\[1\]` must be in \[-1, 1\]. Found: 2",
    ),
    (lambda: vision.Affine(0, 0.5, 1, 0), TypeError, r"Affine: `translate` must be a sequence of 2 numbers"),
    (
        lambda: vision.Affine(0, (0, 0), 0, 0),
        ArgumentError,
        r"Affine: `scale` must be greater than 0. Found: 0",
    ),
    (
        lambda: vision.Affine(0, (0, 0), 1, (0, 190)),
        ArgumentError,
        r"Affine: `shear\[1\]` must be in \[-180, 180\]",
    ),
    (
        lambda: vision.Affine(0, (0, 0), 1, (90, 0)),
        ArgumentError,
        r"Affine: `shear\[0\]` must not be \+-90 degrees",
    ),
    (
        lambda: vision.Affine(0, (0, 0), 1, "a"),
        TypeError,
        r"Affine: `shear` must be a number or a sequence of 2",
    ),
    (
        lambda: vision.RandomAffine(-1),
        ArgumentError,
        r"RandomAffine: `degrees` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomAffine(0, translate=(0.1, 0.2, 0.3)),
        TypeError,
        r"RandomAffine: `translate` must be a sequence of 2 or 4",
    ),
    (
        lambda: vision.RandomAffine(0, translate=(0.2, 0.1)),
        ArgumentError,
        r"RandomAffine: `translate` must be \(min, max\) pairs",
    ),
    (
        lambda: vision.RandomAffine(0, translate=(-2, 0.1)),
        ArgumentError,
        r"RandomAffine: `translate\[0\]` must be in \[-1, 1\]",
    ),
    (
        lambda: vision.RandomAffine(0, scale=(-1, 2)),
        ArgumentError,
        r"RandomAffine: `scale\[0\]` must be at least 0",
    ),
    (
        lambda: vision.RandomAffine(0, scale=(0, 0)),
        ArgumentError,
        r"RandomAffine: `scale\[1\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomAffine(0, shear=-3),
        ArgumentError,
        r"RandomAffine: `shear` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomAffine(0, shear=(0, 200)),
        ArgumentError,
        r"RandomAffine: `shear\[1\]` must be in \[-180, 180\]",
    ),
    (
        lambda: vision.ConvertColor(7),
        TypeError,
        r"ConvertColor: `convert_mode` must be a vision.ConvertMode member, e.g. ConvertMode.COLOR_BGR2RGB. Found: 7 \(int\)",
    ),
    (
        lambda: vision.Grayscale(2),
        ArgumentError,
        r"Grayscale: `num_output_channels` must be 1 or 3. Found: 2",
    ),
    (lambda: vision.Grayscale(1.0), TypeError, r"Grayscale: `num_output_channels` must be an int"),
    (
        lambda: vision.RandomColorAdjust(brightness=-0.1),
        ArgumentError,
        r"RandomColorAdjust: `brightness` must be at least 0 when it is a number",
    ),
    (
        lambda: vision.RandomColorAdjust(contrast=(1.5, 0.5)),
        ArgumentError,
        r"RandomColorAdjust: `contrast` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomColorAdjust(saturation=(-1, 1)),
        ArgumentError,
        r"RandomColorAdjust: `saturation` must lie in at least 0",
    ),
    (
        lambda: vision.RandomColorAdjust(hue=0.6),
        ArgumentError,
        r"RandomColorAdjust: `hue` must lie in \[-0.5, 0.5\]",
    ),
    (
        lambda: vision.RandomColorAdjust(hue="0.1"),
        TypeError,
        r"RandomColorAdjust: `hue` must be a number or a sequence of 2",
    ),
    (lambda: vision.GaussianBlur(4), ArgumentError, r"GaussianBlur: `kernel_size` must be odd. Found: 4"),
    (
        lambda: vision.GaussianBlur((3, 0)),
        ArgumentError,
        r"GaussianBlur: `kernel_size\[1\]` must be greater than 0",
    ),
    (
        lambda: vision.GaussianBlur(3.0),
        TypeError,
        r"GaussianBlur: `kernel_size` must be an int or a sequence of 2 ints",
    ),
    (
        lambda: vision.GaussianBlur(3, 0),
        ArgumentError,
        r"GaussianBlur: `sigma` must be greater than 0. Found: 0",
    ),
    (lambda: vision.GaussianBlur(3, (1, "a")), TypeError, r"GaussianBlur: `sigma\[1\]` must be a number"),
]


@pytest.mark.parametrize(("make", "exc", "message"), BAD, ids=[m for _, _, m in BAD])
def test_argument_errors(make: Callable[[], Any], exc: type[Exception], message: str) -> None:
    with pytest.raises(exc, match=message):
        make()


KERNEL_OPS = [
    vision.Pad(1),
    vision.RandomCrop(1),
    vision.VerticalFlip(),
    vision.RandomVerticalFlip(),
    vision.ResizedCrop(0, 0, 1, 1, 2),
    vision.Rotate(10),
    vision.RandomRotation(10),
    vision.Affine(0, (0, 0), 1, 0),
    vision.RandomAffine(10),
    vision.ConvertColor(ConvertMode.COLOR_BGR2RGB),
    vision.Grayscale(),
    vision.RandomColorAdjust(0.5),
    vision.GaussianBlur(3),
]


@pytest.mark.parametrize("op", KERNEL_OPS, ids=lambda op: op.name)
def test_kernels_reject_bad_images_naming_op_shape_and_dtype(op: Any) -> None:
    with pytest.raises(
        ValueError,
        match=rf"{op.name}: expected an image of shape <H, W> or <H, W, C>. Found shape \(5,\) \(1-D, uint8\)",
    ):
        run(op, np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match=rf"{op.name}: expected a non-empty image. Found shape \(0, 4, 3\)"):
        run(op, np.zeros((0, 4, 3), np.uint8))
    with pytest.raises(TypeError, match=rf"{op.name}: expected an image as a numpy array. Found: list"):
        run(op, [[1, 2], [3, 4]])
