"""Geometric vision op specs, named as in ``mindspore.dataset.vision`` (2.x): pads, crops, flips, warps.

Specs validate and hold parameters only; the CPU kernels live in ``minddata.ops.cpu.geometry``. Images
are HWC arrays (``<H, W>`` for one channel).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.affine import rotated_size
from minddata.ops.plans.crop import CropBox, check_crop_box, padded_size, random_crop_too_large
from minddata.ops.plans.image import square
from minddata.vision._ops import set_random_crop_params
from minddata.vision._utils import Inter
from minddata.vision._validators import (
    check_bool,
    check_int,
    check_inter,
    check_range,
    check_real,
    check_size,
    is_int,
    is_real,
)

__all__ = [
    "Affine",
    "Border",
    "Pad",
    "RandomAffine",
    "RandomCrop",
    "RandomCropDecodeResize",
    "RandomRotation",
    "RandomVerticalFlip",
    "ResizedCrop",
    "Rotate",
    "VerticalFlip",
]


class Border(str, enum.Enum):
    """How padding ops fill the new border, named and valued as in ``mindspore.dataset.vision.Border``.

    - ``CONSTANT``: the ``fill_value``.
    - ``EDGE``: the last pixel repeated.
    - ``REFLECT``: a mirror image without repeating the edge: ``[1, 2, 3, 4]`` padded by 2 gives
      ``[3, 2, 1, 2, 3, 4, 3, 2]``.
    - ``SYMMETRIC``: a mirror image repeating the edge: ``[2, 1, 1, 2, 3, 4, 4, 3]``.

    Examples:
        >>> from minddata.vision import Border
        >>> Border.REFLECT.value
        'reflect'
        >>> Border("edge") is Border.EDGE
        True
    """

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"

    def __repr__(self) -> str:
        # Plans and op reprs print `Border.EDGE`, which reads back as code.
        return f"Border.{self.name}"


# ---------------------------------------------------------------------------------------------- checks


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _is_seq(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def check_prob(op: str, value: Any) -> float:
    prob = check_real(op, "prob", value)
    if not 0.0 <= prob <= 1.0:
        raise ArgumentError(f"{op}: `prob` must be in [0, 1]. Found: {prob}")
    return prob


def check_fill_value(op: str, value: Any, arg: str = "fill_value") -> int | tuple[int, int, int]:
    """An int for every channel, or an (R, G, B) 3-tuple; each in [0, 255], as in MindSpore."""
    if is_int(value):
        if not 0 <= value <= 255:
            raise ArgumentError(f"{op}: `{arg}` must be in [0, 255]. Found: {value}")
        return int(value)
    if not _is_seq(value) or len(value) != 3:
        raise TypeError(
            f"{op}: `{arg}` must be an int or a sequence of 3 ints (R, G, B). Found: {_show(value)}"
        )
    return tuple(check_int(op, f"{arg}[{i}]", v, low=0, high=255) for i, v in enumerate(value))  # type: ignore[return-value]


def check_padding(op: str, value: Any, arg: str = "padding") -> tuple[int, int, int, int]:
    """MindSpore 2.x's rule, stored as (left, top, right, bottom): an int pads every side; (lr, tb)
    pads left and right with the first value, top and bottom with the second; 4 values are
    (left, top, right, bottom)."""
    if is_int(value):
        p = check_int(op, arg, value, low=0)
        return (p, p, p, p)
    if not _is_seq(value) or len(value) not in (2, 4):
        raise TypeError(
            f"{op}: `{arg}` must be an int, a sequence of 2 ints (left/right, top/bottom) or of 4 ints "
            f"(left, top, right, bottom). Found: {_show(value)}"
        )
    vals = tuple(check_int(op, f"{arg}[{i}]", v, low=0) for i, v in enumerate(value))
    if len(vals) == 2:
        return (vals[0], vals[1], vals[0], vals[1])
    return vals  # type: ignore[return-value]


def check_border(op: str, value: Any) -> Border:
    if not isinstance(value, Border):
        raise TypeError(
            f"{op}: `padding_mode` must be a vision.Border member, e.g. Border.CONSTANT. Found: {_show(value)}"
        )
    return value


# Pillow's resize-only filters have no meaning for a warp.
_WARP_INTERS = ("NEAREST", "BILINEAR", "BICUBIC", "AREA", "LANCZOS")


def check_resample(op: str, value: Any) -> Inter:
    if not isinstance(value, Inter):
        raise TypeError(
            f"{op}: `resample` must be a vision.Inter member, e.g. Inter.NEAREST. Found: {_show(value)}"
        )
    if value.name not in _WARP_INTERS:
        raise ArgumentError(
            f"{op}: `resample` must be Inter.NEAREST, BILINEAR, BICUBIC, AREA or LANCZOS. Found: {value!r}"
        )
    return value


def check_center(op: str, value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if not _is_seq(value) or len(value) != 2:
        raise TypeError(
            f"{op}: `center` must be None or a sequence of 2 numbers (x, y). Found: {_show(value)}"
        )
    return (check_real(op, "center[0] (x)", value[0]), check_real(op, "center[1] (y)", value[1]))


def check_degree_range(op: str, arg: str, value: Any, *, bound: float | None = None) -> tuple[float, float]:
    """A number ``d >= 0`` means (-d, d); a sequence is (min, max) with min <= max."""
    if is_real(value):
        d = check_real(op, arg, value)
        if d < 0:
            raise ArgumentError(f"{op}: `{arg}` must be at least 0 when it is a number. Found: {d}")
        lo, hi = -d, d
    elif _is_seq(value):
        if len(value) != 2:
            raise TypeError(
                f"{op}: `{arg}` must be a number or a sequence of 2 numbers. Found: {_show(value)}"
            )
        lo, hi = check_range(op, arg, value, low=-math.inf)
    else:
        raise TypeError(f"{op}: `{arg}` must be a number or a sequence of 2 numbers. Found: {_show(value)}")
    if bound is not None and not (-bound <= lo and hi <= bound):
        raise ArgumentError(f"{op}: `{arg}` must lie in [-{bound:g}, {bound:g}]. Found: ({lo}, {hi})")
    return lo, hi


# ---------------------------------------------------------------------------------------------- specs


def one_image_spec(
    op: str, inputs: tuple[TensorSpec, ...], *, numeric: bool = False
) -> tuple[int | None, int | None, tuple[int | None, ...], np.dtype | None]:
    """(height, width, channel dims, dtype) of the one ``<H, W>``/``<H, W, C>`` input of an image op."""
    if len(inputs) != 1:
        raise ValueError(f"{op}: expected 1 input. Found: {len(inputs)}")
    spec = inputs[0]
    shape = tuple(spec.shape)
    dtype = None if spec.dtype is None else np.dtype(spec.dtype)
    if len(shape) not in (2, 3):
        raise ValueError(f"{op}: expected an image of shape <H, W> or <H, W, C>. Found shape {shape}")
    if any(d == 0 for d in shape):
        raise ValueError(f"{op}: expected a non-empty image. Found shape {shape}")
    if numeric and dtype is not None and dtype.kind not in "biuf":
        raise TypeError(f"{op}: expected a numeric image. Found dtype {dtype} (shape {shape})")
    return shape[0], shape[1], shape[2:], dtype


# ---------------------------------------------------------------------------------------------- pad/crop


class Pad(Op):
    """Pad the borders of an image.

    Args:
        padding: pixels to add. An int pads every side; ``(lr, tb)`` pads left and right with the first
            value and top and bottom with the second (MindSpore 2.x's rule); ``(left, top, right,
            bottom)`` pads each side. Stored as ``(left, top, right, bottom)``. Each value >= 0.
        fill_value: for ``Border.CONSTANT``: an int for every channel or an ``(R, G, B)`` tuple, each in
            [0, 255]. A one-channel image takes the first value, a fourth channel (alpha) 0.
        padding_mode: a :class:`Border` member.

    A padding of 0 everywhere returns the input itself.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Pad((1, 0))(np.array([[1, 2]], np.uint8))
        array([[0, 1, 2, 0]], dtype=uint8)
        >>> vision.Pad(1, padding_mode=vision.Border.EDGE)(np.array([[5]], np.uint8))
        array([[5, 5, 5],
               [5, 5, 5],
               [5, 5, 5]], dtype=uint8)
    """

    def __init__(
        self,
        padding: int | Sequence[int],
        fill_value: int | Sequence[int] = 0,
        padding_mode: Border = Border.CONSTANT,
    ) -> None:
        self.padding = check_padding(self.name, padding)
        self.fill_value = check_fill_value(self.name, fill_value)
        self.padding_mode = check_border(self.name, padding_mode)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        return TensorSpec((*padded_size(h, w, self.padding), *rest), dtype)


class RandomCrop(Op):
    """Crop a region of ``size`` at a random position, padding the image first if asked to.

    As MindSpore's RandomCrop: the image is first padded by ``padding``; then, with ``pad_if_needed``, a
    side still shorter than the crop is padded by the shortfall on *both* ends (as MindSpore and
    torchvision do); then the crop's left and top are drawn uniformly (left first).

    Args:
        size: an int for a square crop, or ``(height, width)``.
        padding: as :class:`Pad`'s ``padding``; ``None`` pads nothing.
        pad_if_needed: pad an image smaller than ``size`` instead of failing.
        fill_value: as :class:`Pad`'s.
        padding_mode: a :class:`Border` member.

    An image (after ``padding``) smaller than ``size`` without ``pad_if_needed`` fails, naming its shape.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomCrop((2, 3))(np.zeros((5, 6, 3), np.uint8)).shape
        (2, 3, 3)
        >>> vision.RandomCrop(4, pad_if_needed=True)(np.ones((2, 2), np.uint8)).shape
        (4, 4)
    """

    random = True

    def __init__(
        self,
        size: int | Sequence[int],
        padding: int | Sequence[int] | None = None,
        pad_if_needed: bool = False,
        fill_value: int | Sequence[int] = 0,
        padding_mode: Border = Border.CONSTANT,
    ) -> None:
        self.size = check_size(self.name, size)
        self.padding = None if padding is None else check_padding(self.name, padding)
        self.pad_if_needed = check_bool(self.name, "pad_if_needed", pad_if_needed)
        self.fill_value = check_fill_value(self.name, fill_value)
        self.padding_mode = check_border(self.name, padding_mode)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        ch, cw = square(self.size)
        ph, pw = padded_size(h, w, self.padding or (0, 0, 0, 0))
        if not self.pad_if_needed and ((ph is not None and ph < ch) or (pw is not None and pw < cw)):
            raise random_crop_too_large((ch, cw), (ph, pw), inputs[0].shape)
        return TensorSpec((ch, cw, *rest), dtype)


class ResizedCrop(Op):
    """Crop the region ``(top, left, height, width)``, then resize it to ``size``.

    Args:
        top: the crop's top row, >= 0.
        left: the crop's left column, >= 0.
        height: the crop's height, > 0.
        width: the crop's width, > 0. The box must lie inside the image.
        size: the output size: an int for a square, or ``(height, width)``. (This is what MindSpore's
            code does; its 2.x docs describe an int as the shorter side.)
        interpolation: a :class:`Inter` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.arange(16, dtype=np.uint8).reshape(4, 4)
        >>> vision.ResizedCrop(1, 1, 2, 2, (4, 4), vision.Inter.NEAREST)(img)
        array([[ 5,  5,  6,  6],
               [ 5,  5,  6,  6],
               [ 9,  9, 10, 10],
               [ 9,  9, 10, 10]], dtype=uint8)
    """

    def __init__(
        self,
        top: int,
        left: int,
        height: int,
        width: int,
        size: int | Sequence[int],
        interpolation: Inter = Inter.BILINEAR,
    ) -> None:
        self.top = check_int(self.name, "top", top, low=0)
        self.left = check_int(self.name, "left", left, low=0)
        self.height = check_int(self.name, "height", height, low=1)
        self.width = check_int(self.name, "width", width, low=1)
        self.size = check_size(self.name, size)
        self.interpolation = check_inter(self.name, interpolation)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        _, _, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        check_crop_box(self.name, tuple(inputs[0].shape), CropBox(self.top, self.left, self.height, self.width))
        return TensorSpec((*square(self.size), *rest), dtype)


class RandomCropDecodeResize(Op):
    """Decode an encoded image, crop a random region as :class:`RandomResizedCrop` does and resize it to
    ``size``: one op, so the decoder can decode only the crop.

    The crop box is drawn exactly as RandomResizedCrop draws it (same rule, same row RNG), so
    ``RandomCropDecodeResize`` and ``Decode`` then ``RandomResizedCrop`` crop the same region.

    Args:
        size: output size, an int for a square or ``(height, width)``.
        scale: bounds of the crop's area as a fraction of the image's.
        ratio: bounds of the crop's aspect ratio, width / height.
        interpolation: a :class:`Inter` member used to resize the crop.
        max_attempts: draws before falling back to the centre crop.

    Input: encoded image bytes (a 1-D ``uint8`` array). Output: an RGB ``uint8`` ``<size, 3>`` array.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> from minddata.ops import TensorSpec
        >>> op = vision.RandomCropDecodeResize((32, 48), scale=(0.5, 1.0))
        >>> op.output_spec(TensorSpec((None,), np.dtype(np.uint8)))
        TensorSpec(shape=(32, 48, 3), dtype=dtype('uint8'))
    """

    random = True

    def __init__(
        self,
        size: int | Sequence[int],
        scale: Sequence[float] = (0.08, 1.0),
        ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: Inter = Inter.BILINEAR,
        max_attempts: int = 10,
    ) -> None:
        set_random_crop_params(self, size, scale, ratio, interpolation, max_attempts)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        if len(inputs) != 1:
            raise ValueError(f"{self.name}: expected 1 input. Found: {len(inputs)}")
        data = inputs[0]
        dtype = None if data.dtype is None else np.dtype(data.dtype)
        if len(data.shape) > 1 or (dtype is not None and dtype.kind not in "iuS"):
            raise TypeError(
                f"{self.name}: expected encoded image bytes (a 1-D uint8 array or bytes). "
                f"Found a tensor of shape {tuple(data.shape)}, dtype {dtype}"
            )
        return TensorSpec((*square(self.size), 3), np.dtype(np.uint8))


# ---------------------------------------------------------------------------------------------- flips


class VerticalFlip(Op):
    """Mirror an image top to bottom.

    The output is a view of the input (``image[::-1]``), not a copy: it costs nothing, and later ops
    read views as they read arrays.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.VerticalFlip()(np.array([[1], [2], [3]], np.uint8))
        array([[3],
               [2],
               [1]], dtype=uint8)
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype)


class RandomVerticalFlip(Op):
    """Mirror an image top to bottom with probability ``prob`` (a view of the input, as
    :class:`VerticalFlip`).

    Args:
        prob: the probability of flipping, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomVerticalFlip(prob=1.0)(np.array([[1], [2]], np.uint8))
        array([[2],
               [1]], dtype=uint8)
    """

    random = True

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype)


# ---------------------------------------------------------------------------------------------- warps


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
            h, w = rotated_size(h, w, lo) if known else (None, None)  # type: ignore[arg-type]
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
        if not _is_seq(translate) or len(translate) != 2:
            raise TypeError(
                f"{self.name}: `translate` must be a sequence of 2 numbers (tx, ty). Found: {_show(translate)}"
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
        elif _is_seq(shear) and len(shear) == 2:
            sh = tuple(check_real(self.name, f"shear[{i}]", v) for i, v in enumerate(shear))
        else:
            raise TypeError(
                f"{self.name}: `shear` must be a number or a sequence of 2 numbers (sx, sy). Found: {_show(shear)}"
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
    if not _is_seq(value) or len(value) not in sizes:
        n = " or ".join(str(s) for s in sizes)
        raise TypeError(f"{op}: `{arg}` must be a sequence of {n} numbers. Found: {_show(value)}")
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
