"""The shape/dtype rules (``output_spec``) of the vision ops, computed from the op plans before any row runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from minddata import vision
from minddata.ops import Op, TensorSpec
from minddata.vision import Inter

U8 = np.dtype(np.uint8)
F32 = np.dtype(np.float32)
MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


@pytest.mark.parametrize(
    ("op", "given", "want"),
    [
        (vision.Decode(), TensorSpec((1234,), U8), TensorSpec((None, None, 3), U8)),
        (vision.Decode(to_pil=True), TensorSpec((None,), None), TensorSpec((None, None, 3), U8)),
        (vision.Resize(8), TensorSpec((None, None, 3), U8), TensorSpec((None, None, 3), U8)),
        (vision.Resize(8), TensorSpec((16, 40, 3), U8), TensorSpec((8, 20, 3), U8)),
        (vision.Resize(224), TensorSpec((640, 480), F32), TensorSpec((298, 224), F32)),
        (vision.Resize((5, 7), Inter.AREA), TensorSpec((None, None, 1), None), TensorSpec((5, 7, 1), None)),
        (vision.CenterCrop(4), TensorSpec((2, 9, 4), U8), TensorSpec((4, 4, 4), U8)),
        (vision.Crop((1, 2), (3, 4)), TensorSpec((None, None), U8), TensorSpec((3, 4), U8)),
        (vision.HorizontalFlip(), TensorSpec((3, None, 2), F32), TensorSpec((3, None, 2), F32)),
        (vision.RandomHorizontalFlip(), TensorSpec((3, 4), U8), TensorSpec((3, 4), U8)),
        (vision.RandomResizedCrop((6, 5)), TensorSpec((None, None, 3), None), TensorSpec((6, 5, 3), None)),
        (vision.Normalize(MEAN, STD), TensorSpec((None, None, 3), U8), TensorSpec((None, None, 3), F32)),
        (vision.Normalize(MEAN, STD, is_hwc=False), TensorSpec((3, 4, 5), U8), TensorSpec((3, 4, 5), F32)),
        (vision.Normalize([1], [2]), TensorSpec((4, 5), U8), TensorSpec((4, 5), F32)),
        (vision.HWC2CHW(), TensorSpec((4, 5, 3), U8), TensorSpec((3, 4, 5), U8)),
        (vision.HWC2CHW(), TensorSpec((4, 5), U8), TensorSpec((4, 5), U8)),
        (vision.Rescale(1 / 255, 0), TensorSpec((2, 3, 4, 5), U8), TensorSpec((2, 3, 4, 5), F32)),
        (vision.ToType("int16"), TensorSpec((None, 2), F32), TensorSpec((None, 2), np.dtype("int16"))),
    ],
    ids=lambda v: v.name if isinstance(v, Op) else "",
)
def test_rule(op: Op, given: TensorSpec, want: TensorSpec) -> None:
    assert op.output_spec(given) == want


@pytest.mark.parametrize(("h", "w"), [(480, 640), (640, 480), (3, 1000), (7, 7), (1, 2)])
def test_resize_rule_agrees_with_the_kernel(h: int, w: int) -> None:
    op = vision.Resize(5)
    assert op.output_spec(TensorSpec((h, w, 3), U8)).shape == op(np.zeros((h, w, 3), np.uint8)).shape


@pytest.mark.parametrize(
    ("op", "given", "error", "message"),
    [
        (
            vision.Resize(4),
            TensorSpec((2, 4, 4, 3), U8),
            ValueError,
            r"Resize: expected an image of shape <H, W>",
        ),
        (vision.Resize(4), TensorSpec((0, 4, 3), U8), ValueError, r"Resize: expected a non-empty image"),
        (
            vision.Resize(4),
            TensorSpec((4, 4), np.dtype("<U3")),
            TypeError,
            r"Resize: expected a numeric image",
        ),
        (
            vision.Crop((3, 0), 2),
            TensorSpec((4, 9), U8),
            ValueError,
            r"Crop: the crop box .* must lie inside",
        ),
        (
            vision.Normalize(MEAN, STD),
            TensorSpec((4, 4, 4), U8),
            ValueError,
            r"Normalize: expected an HWC image",
        ),
        (vision.Decode(), TensorSpec((4, 4, 3), U8), TypeError, r"Decode: expected encoded image bytes"),
        (
            vision.Rescale(1, 0),
            TensorSpec((2,), np.dtype(object)),
            TypeError,
            r"Rescale: expected a numeric array",
        ),
        (vision.HWC2CHW(), TensorSpec((2,), U8), ValueError, r"HWC2CHW: expected an image of shape"),
    ],
    ids=lambda v: v.name if isinstance(v, Op) else "",
)
def test_rule_rejects_what_the_kernel_rejects(
    op: Op, given: TensorSpec, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        op.output_spec(given)


def test_rule_wants_one_input() -> None:
    spec: Any = TensorSpec((4, 4), U8)
    with pytest.raises(ValueError, match=r"HorizontalFlip: expected 1 input. Found: 2"):
        vision.HorizontalFlip().output_spec(spec, spec)
