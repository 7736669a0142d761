"""Affine-warp op specs, named as in ``mindspore.dataset.vision`` (2.x): :class:`Rotate`,
:class:`RandomRotation`, :class:`Affine` and :class:`RandomAffine`.

Specs validate and hold parameters only. Their plan (matrices, output sizes, random parameters) is
``minddata.ops.plans.affine``; the CPU kernels are ``minddata.ops.cpu.affine``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.affine import rotated_size
from minddata.vision._utils import Inter
from minddata.vision._validators import (
    check_bool,
    check_center,
    check_degree_range,
    check_fill_value,
    check_range,
    check_real,
    check_resample,
    is_real,
    is_sequence,
    one_image_spec,
    show_value,
)

__all__ = ["Affine", "RandomAffine", "RandomRotation", "Rotate"]


class Rotate(Op):
    """Rotate an image by ``degrees`` counter-clockwise about ``center``.

    Args:
        degrees: the angle, counter-clockwise (as MindSpore's Rotate; note that :class:`Affine` turns
            clockwise, as MindSpore's does).
        resample: a :class:`Inter` member: NEAREST, BILINEAR, BICUBIC, AREA (a warp has no area
            filter: OpenCV uses bilinear, as in MindSpore) or LANCZOS.
        expand: grow the output to hold the whole rotated image, of size ``round(|w cos| + |h sin|)``
            by ``round(|w sin| + |h cos|)`` as MindSpore computes it (Pillow's is up to 2 pixels larger).
        center: ``(x, y)`` in pixel coordinates (the centre of the top-left pixel is ``(0, 0)``, as in
            MindSpore and OpenCV; Pillow's ``(0, 0)`` is that pixel's corner, half a pixel away).
            ``None`` is the image centre, ``((w - 1) / 2, (h - 1) / 2)``, not rounded.
        fill_value: the colour outside the rotated image: an int for every channel or ``(R, G, B)``, each
            in [0, 255], applied in channel order. (MindSpore's CPU Rotate hands the tuple to OpenCV as
            ``(B, G, R)``, so it fills an RGB image's R with B; minddata does not.)

    With ``expand``, the rotated image is centred exactly in the larger output: MindSpore shifts it by
    the unrounded box size, so its output can sit up to half a pixel off centre.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.array([[1, 2, 3], [4, 5, 6]], np.uint8)
        >>> vision.Rotate(90, expand=True)(img)
        array([[3, 6],
               [2, 5],
               [1, 4]], dtype=uint8)
    """

    def __init__(
        self,
        degrees: float,
        resample: Inter = Inter.NEAREST,
        expand: bool = False,
        center: Sequence[float] | None = None,
        fill_value: int | Sequence[int] = 0,
    ) -> None:
        self.degrees = check_real(self.name, "degrees", degrees)
        self.resample = check_resample(self.name, resample)
        self.expand = check_bool(self.name, "expand", expand)
        self.center = check_center(self.name, center)
        self.fill_value = check_fill_value(self.name, fill_value)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        if self.expand:
            h, w = rotated_size(h, w, self.degrees) if h is not None and w is not None else (None, None)
        return TensorSpec((h, w, *rest), dtype)


class RandomRotation(Op):
    """Rotate an image by an angle drawn uniformly from ``degrees`` (counter-clockwise), as :class:`Rotate`.

    Args:
        degrees: a number ``d >= 0`` draws from ``(-d, d)``; a sequence is ``(min, max)``. (MindSpore
            first reduces a number modulo 360, so its ``RandomRotation(400)`` draws from (-40, 40);
            minddata draws from (-400, 400), which is the full circle as asked.)
        resample: as :class:`Rotate`'s.
        expand: as :class:`Rotate`'s; the output size then depends on the angle drawn.
        center: as :class:`Rotate`'s.
        fill_value: as :class:`Rotate`'s.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomRotation((90, 90), expand=True)(np.zeros((2, 5), np.uint8)).shape
        (5, 2)
    """

    random = True

    def __init__(
        self,
        degrees: float | Sequence[float],
        resample: Inter = Inter.NEAREST,
        expand: bool = False,
        center: Sequence[float] | None = None,
        fill_value: int | Sequence[int] = 0,
    ) -> None:
        self.degrees = check_degree_range(self.name, "degrees", degrees)
        self.resample = check_resample(self.name, resample)
        self.expand = check_bool(self.name, "expand", expand)
        self.center = check_center(self.name, center)
        self.fill_value = check_fill_value(self.name, fill_value)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        if self.expand:
            lo, hi = self.degrees
            known = lo == hi and h is not None and w is not None
            h, w = rotated_size(h, w, lo) if known else (None, None)  # type: ignore[arg-type]  # known: h and w are not None
        return TensorSpec((h, w, *rest), dtype)


def _check_shear_pair(op: str, arg: str, values: Sequence[float]) -> None:
    for i, v in enumerate(values):
        if abs(v) == 90.0:  # tan(90 deg): the image collapses to a line
            raise ArgumentError(
                f"{op}: `{arg}[{i}]` must not be +-90 degrees (a degenerate shear). Found: {v}"
            )


class Affine(Op):
    """Rotate, scale, shear and translate an image about its centre, as MindSpore's Affine.

    The forward map is ``T * C * R(degrees) * S(scale) * SHy * SHx * C^-1`` (MindSpore's matrix, C the
    image centre ``((w - 1) / 2, (h - 1) / 2)``); the output keeps the input's size.

    Args:
        degrees: rotation in [-180, 180], **clockwise** (as MindSpore's Affine; :class:`Rotate` turns
            counter-clockwise).
        translate: ``(tx, ty)``, each in [-1, 1]: the shift as a fraction of the width and height
            (MindSpore's CPU kernel multiplies by the image size).
        scale: the scale factor, > 0.
        shear: degrees in [-180, 180] (not +-90): a number shears along x; ``(sx, sy)`` along x then y.
        resample: as :class:`Rotate`'s.
        fill_value: as :class:`Rotate`'s, applied in channel order.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.array([[1, 2, 3]], np.uint8)
        >>> vision.Affine(degrees=0, translate=(1 / 3, 0), scale=1.0, shear=0)(img)
        array([[0, 1, 2]], dtype=uint8)
    """

    def __init__(
        self,
        degrees: float,
        translate: Sequence[float],
        scale: float,
        shear: float | Sequence[float],
        resample: Inter = Inter.NEAREST,
        fill_value: int | Sequence[int] = 0,
    ) -> None:
        degrees = check_real(self.name, "degrees", degrees)
        if not -180.0 <= degrees <= 180.0:
            raise ArgumentError(f"{self.name}: `degrees` must be in [-180, 180]. Found: {degrees}")
        self.degrees = degrees
        if not is_sequence(translate) or len(translate) != 2:
            raise TypeError(
                f"{self.name}: `translate` must be a sequence of 2 numbers (tx, ty). Found: {show_value(translate)}"
            )
        tr = tuple(check_real(self.name, f"translate[{i}]", v) for i, v in enumerate(translate))
        for i, v in enumerate(tr):
            if not -1.0 <= v <= 1.0:
                raise ArgumentError(f"{self.name}: `translate[{i}]` must be in [-1, 1]. Found: {v}")
        self.translate = tr
        scale = check_real(self.name, "scale", scale)
        if scale <= 0:
            raise ArgumentError(f"{self.name}: `scale` must be greater than 0. Found: {scale}")
        self.scale = scale
        if is_real(shear):
            sh = (check_real(self.name, "shear", shear), 0.0)
        elif is_sequence(shear) and len(shear) == 2:
            sh = tuple(check_real(self.name, f"shear[{i}]", v) for i, v in enumerate(shear))
        else:
            raise TypeError(
                f"{self.name}: `shear` must be a number or a sequence of 2 numbers (sx, sy). Found: {show_value(shear)}"
            )
        for i, v in enumerate(sh):
            if not -180.0 <= v <= 180.0:
                raise ArgumentError(f"{self.name}: `shear[{i}]` must be in [-180, 180]. Found: {v}")
        _check_shear_pair(self.name, "shear", sh)
        self.shear = sh
        self.resample = check_resample(self.name, resample)
        self.fill_value = check_fill_value(self.name, fill_value)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        return TensorSpec((h, w, *rest), dtype)


def _check_bounded_ranges(
    op: str, arg: str, value: Any, sizes: tuple[int, ...], bound: float
) -> tuple[float, ...]:
    if not is_sequence(value) or len(value) not in sizes:
        n = " or ".join(str(s) for s in sizes)
        raise TypeError(f"{op}: `{arg}` must be a sequence of {n} numbers. Found: {show_value(value)}")
    vals = tuple(check_real(op, f"{arg}[{i}]", v) for i, v in enumerate(value))
    for i, v in enumerate(vals):
        if not -bound <= v <= bound:
            raise ArgumentError(f"{op}: `{arg}[{i}]` must be in [-{bound:g}, {bound:g}]. Found: {v}")
    for i in range(0, len(vals), 2):
        if vals[i] > vals[i + 1]:
            raise ArgumentError(
                f"{op}: `{arg}` must be (min, max) pairs with min <= max. Found: {tuple(value)!r}"
            )
    return vals + (0.0, 0.0) if len(vals) == 2 else vals


class RandomAffine(Op):
    """:class:`Affine` with parameters drawn per row, as MindSpore's RandomAffine draws them.

    Each row draws, in this order and uniformly: the angle from ``degrees``, the x shift from
    ``translate[0:2]`` times the width, the y shift from ``translate[2:4]`` times the height, the scale,
    then the x and y shear.

    Args:
        degrees: a number ``d >= 0`` draws from ``(-d, d)``; a sequence is ``(min, max)``. Clockwise, as
            :class:`Affine`.
        translate: ``None`` (no shift), ``(tx_min, tx_max)`` (x only) or ``(tx_min, tx_max, ty_min,
            ty_max)``, fractions of the image size in [-1, 1]. Stored as 4 values.
        scale: ``None`` (1) or ``(min, max)`` with min >= 0 and max > 0.
        shear: ``None`` (none), a number ``s >= 0`` (x shear from (-s, s)), ``(min, max)`` (x shear), or
            ``(x_min, x_max, y_min, y_max)``; degrees in [-180, 180]. Stored as 4 values.
        resample: as :class:`Rotate`'s.
        fill_value: as :class:`Rotate`'s, applied in channel order.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.RandomAffine(degrees=15, translate=(-0.1, 0.1), scale=(0.9, 1.1))
        >>> op.translate, op.shear
        ((-0.1, 0.1, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0))
        >>> op(np.zeros((8, 9, 3), np.uint8)).shape
        (8, 9, 3)
    """

    random = True

    def __init__(
        self,
        degrees: float | Sequence[float],
        translate: Sequence[float] | None = None,
        scale: Sequence[float] | None = None,
        shear: float | Sequence[float] | None = None,
        resample: Inter = Inter.NEAREST,
        fill_value: int | Sequence[int] = 0,
    ) -> None:
        self.degrees = check_degree_range(self.name, "degrees", degrees)
        self.translate = (
            (0.0, 0.0, 0.0, 0.0)
            if translate is None
            else _check_bounded_ranges(self.name, "translate", translate, (2, 4), 1.0)
        )
        self.scale = (
            (1.0, 1.0)
            if scale is None
            else check_range(self.name, "scale", scale, low=0.0, need_positive_high=True)
        )
        if shear is None:
            sh: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
        elif is_real(shear):
            lo, hi = check_degree_range(self.name, "shear", shear, bound=180.0)
            sh = (lo, hi, 0.0, 0.0)
        else:
            sh = _check_bounded_ranges(self.name, "shear", shear, (2, 4), 180.0)
        self.shear = sh
        self.resample = check_resample(self.name, resample)
        self.fill_value = check_fill_value(self.name, fill_value)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        return TensorSpec((h, w, *rest), dtype)
