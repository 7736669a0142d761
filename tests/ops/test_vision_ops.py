"""Vision op specs across families: pickling, plain parameters, argument errors, and kernels rejecting
bad images (each family's kernels are tested against references in tests/ops/test_<family>.py)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from vision_testing import run

from minddata import vision
from minddata.errors import ArgumentError
from minddata.vision import Inter

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


# ---------------------------------------------------------------------------------------------- the contract

SPECS = [
    vision.Decode(),
    vision.Resize(8),
    vision.Resize([4, 5], Inter.PILCUBIC),
    vision.CenterCrop((3, 4)),
    vision.Crop((1, 2), 3),
    vision.HorizontalFlip(),
    vision.RandomHorizontalFlip(0.3),
    vision.RandomResizedCrop(7, scale=(0.5, 1.0), ratio=(1, 2), interpolation=Inter.AREA, max_attempts=3),
    vision.Normalize(MEAN, STD, is_hwc=False),
    vision.HWC2CHW(),
    vision.Rescale(0.5, 1),
    vision.ToType("float16"),
    vision.Resize(8).device("GPU"),
]


@pytest.mark.parametrize("op", SPECS, ids=lambda op: op.name)
def test_spec_pickles_and_compares_equal(op: Any) -> None:
    back = pickle.loads(pickle.dumps(op))
    assert back == op and type(back) is type(op) and repr(back) == repr(op)
    assert back.device_target == op.device_target


def test_random_flags() -> None:
    assert vision.RandomHorizontalFlip.random and vision.RandomResizedCrop.random
    assert not any(type(op).random for op in SPECS if not op.name.startswith("Random"))


def test_specs_store_plain_parameters() -> None:
    assert vision.Resize([4, 5]).size == (4, 5)
    assert vision.Normalize([1, 2, 3], [4, 5, 6]).mean == (1.0, 2.0, 3.0)
    assert vision.Resize(4) != vision.Resize(5) and vision.Resize(4) == vision.Resize(4)
    assert repr(vision.Resize(4)) == "Resize(size=4, interpolation=Inter.BILINEAR)"


BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: vision.Resize(-1), ArgumentError, r"Resize: `size` must be greater than 0. Found: -1"),
    (lambda: vision.Resize(0), ArgumentError, r"Resize: `size` must be greater than 0"),
    (
        lambda: vision.Resize((4, 0)),
        ArgumentError,
        r"Resize: `size\[1\] \(width\)` must be greater than 0. Found: 0",
    ),
    (lambda: vision.Resize((1, 2, 3)), TypeError, r"Resize: `size` must be an int or a sequence of 2 ints"),
    (lambda: vision.Resize("8"), TypeError, r"Resize: `size` must be an int.*'8' \(str\)"),
    (lambda: vision.Resize(2.5), TypeError, r"Resize: `size` must be an int"),
    (lambda: vision.Resize(True), TypeError, r"Resize: `size` must be an int"),
    (lambda: vision.Resize(2**25), ArgumentError, r"Resize: `size` must be at most 16777216"),
    (
        lambda: vision.Resize(4, "bilinear"),
        TypeError,
        r"Resize: `interpolation` must be a vision.Inter member",
    ),
    (lambda: vision.Resize(4, 2), TypeError, r"Resize: `interpolation` must be a vision.Inter member"),
    (lambda: vision.CenterCrop(0), ArgumentError, r"CenterCrop: `size` must be greater than 0. Found: 0"),
    (lambda: vision.CenterCrop(None), TypeError, r"CenterCrop: `size` must be an int"),
    (
        lambda: vision.Crop((-1, 0), 3),
        ArgumentError,
        r"Crop: `coordinates\[0\] \(top\)` must be at least 0. Found: -1",
    ),
    (lambda: vision.Crop((0,), 3), TypeError, r"Crop: `coordinates` must be a sequence of 2 ints"),
    (lambda: vision.Crop((0, 1.5), 3), TypeError, r"Crop: `coordinates\[1\] \(left\)` must be an int"),
    (lambda: vision.Crop((0, 0), -3), ArgumentError, r"Crop: `size` must be greater than 0. Found: -3"),
    (
        lambda: vision.RandomHorizontalFlip(1.5),
        ArgumentError,
        r"RandomHorizontalFlip: `prob` must be in \[0, 1\]. Found: 1.5",
    ),
    (lambda: vision.RandomHorizontalFlip("x"), TypeError, r"RandomHorizontalFlip: `prob` must be a number"),
    (lambda: vision.RandomResizedCrop(0), ArgumentError, r"RandomResizedCrop: `size` must be greater than 0"),
    (
        lambda: vision.RandomResizedCrop(8, scale=(0.9, 0.1)),
        ArgumentError,
        r"RandomResizedCrop: `scale` must be \(min, max\)",
    ),
    (
        lambda: vision.RandomResizedCrop(8, scale=(-0.1, 1)),
        ArgumentError,
        r"RandomResizedCrop: `scale\[0\]` must be at least 0",
    ),
    (
        lambda: vision.RandomResizedCrop(8, scale=(0, 0)),
        ArgumentError,
        r"RandomResizedCrop: `scale\[1\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomResizedCrop(8, ratio=(0, 1)),
        ArgumentError,
        r"RandomResizedCrop: `ratio\[0\]` must be greater than 0",
    ),
    (
        lambda: vision.RandomResizedCrop(8, ratio=1.0),
        TypeError,
        r"RandomResizedCrop: `ratio` must be a sequence of 2",
    ),
    (
        lambda: vision.RandomResizedCrop(8, ratio=(1, float("inf"))),
        ArgumentError,
        r"`ratio\[1\]` must be finite",
    ),
    (
        lambda: vision.RandomResizedCrop(8, max_attempts=0),
        ArgumentError,
        r"RandomResizedCrop: `max_attempts` must be greater than 0",
    ),
    (
        lambda: vision.Normalize([1, 2], [1, 2, 3]),
        ArgumentError,
        r"Normalize: `mean` and `std` must have the same length",
    ),
    (
        lambda: vision.Normalize([1, 2, 300], [1, 2, 3]),
        ArgumentError,
        r"Normalize: `mean\[2\]` must be in \[0, 255\]. Found: 300",
    ),
    (
        lambda: vision.Normalize([1], [0]),
        ArgumentError,
        r"Normalize: `std\[0\]` must be in \(0, 255\]. Found: 0",
    ),
    (lambda: vision.Normalize([], []), ArgumentError, r"Normalize: `mean` must not be empty"),
    (lambda: vision.Normalize(0.5, 0.5), TypeError, r"Normalize: `mean` must be a sequence of numbers"),
    (lambda: vision.Normalize([1], [1], is_hwc="yes"), TypeError, r"Normalize: `is_hwc` must be a bool"),
    (lambda: vision.Rescale("a", 0), TypeError, r"Rescale: `rescale` must be a number. Found: 'a' \(str\)"),
    (lambda: vision.Rescale(1, float("nan")), ArgumentError, r"Rescale: `shift` must be finite"),
    (lambda: vision.ToType("flot32"), TypeError, r"ToType: `data_type` must be a numpy dtype.*'flot32'"),
    (
        lambda: vision.ToType(object),
        ArgumentError,
        r"ToType: `data_type` must be a numeric, bool or string dtype",
    ),
]


@pytest.mark.parametrize(("make", "exc", "message"), BAD, ids=[m for _, _, m in BAD])
def test_argument_errors(make: Callable[[], Any], exc: type[Exception], message: str) -> None:
    with pytest.raises(exc, match=message):
        make()


@pytest.mark.parametrize(
    "op",
    [
        vision.Resize(4),
        vision.CenterCrop(2),
        vision.Crop((0, 0), 1),
        vision.HorizontalFlip(),
        vision.RandomHorizontalFlip(),
        vision.RandomResizedCrop(4),
        vision.Normalize([1], [1]),
        vision.HWC2CHW(),
    ],
    ids=lambda op: op.name,
)
def test_kernels_reject_bad_images_naming_op_and_shape(op: Any) -> None:
    with pytest.raises(
        ValueError, match=rf"{op.name}: expected an image of shape <H, W> or <H, W, C>. Found shape \(5,\)"
    ):
        run(op, np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match=rf"{op.name}: expected a non-empty image. Found shape \(0, 4, 3\)"):
        run(op, np.zeros((0, 4, 3), np.uint8))
    with pytest.raises(TypeError, match=rf"{op.name}: expected an image as a numpy array. Found: list"):
        run(op, [[1, 2], [3, 4]])


def test_kernels_do_not_import_the_public_api(tmp_path) -> None:
    code = "import sys, minddata.ops.cpu; assert 'minddata.vision' not in sys.modules, sorted(sys.modules)"
    # Outside the repo root: there the bare minddata/ folder would shadow the installed package.
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
