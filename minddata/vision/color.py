"""Colour vision op specs, named as in ``mindspore.dataset.vision`` (2.x): colour conversion, grayscale,
random colour jitter and Gaussian blur.

Specs validate and hold parameters only; the CPU kernels live in ``minddata.ops.cpu.color``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.vision._validators import (
    check_int,
    check_real,
    is_int,
    is_real,
    is_sequence,
    one_image_spec,
    show_value,
)

__all__ = ["ConvertColor", "ConvertMode", "GaussianBlur", "Grayscale", "RandomColorAdjust"]


class ConvertMode(enum.IntEnum):
    """Colour conversions for :class:`ConvertColor`, named and valued as in MindSpore (the values are
    OpenCV's ``cv2.COLOR_*`` codes).

    Names that describe the same channel operation share a member, as in MindSpore: e.g.
    ``COLOR_RGB2BGR`` is ``COLOR_BGR2RGB`` (swap channels 0 and 2) and ``COLOR_RGBA2RGB`` is
    ``COLOR_BGRA2BGR`` (drop channel 3).

    Examples:
        >>> from minddata.vision import ConvertMode
        >>> ConvertMode.COLOR_RGB2BGR is ConvertMode.COLOR_BGR2RGB
        True
        >>> int(ConvertMode.COLOR_RGB2GRAY)
        7
    """

    COLOR_BGR2BGRA = 0
    COLOR_RGB2RGBA = 0
    COLOR_BGRA2BGR = 1
    COLOR_RGBA2RGB = 1
    COLOR_BGR2RGBA = 2
    COLOR_RGB2BGRA = 2
    COLOR_RGBA2BGR = 3
    COLOR_BGRA2RGB = 3
    COLOR_BGR2RGB = 4
    COLOR_RGB2BGR = 4
    COLOR_BGRA2RGBA = 5
    COLOR_RGBA2BGRA = 5
    COLOR_BGR2GRAY = 6
    COLOR_RGB2GRAY = 7
    COLOR_GRAY2BGR = 8
    COLOR_GRAY2RGB = 8
    COLOR_GRAY2BGRA = 9
    COLOR_GRAY2RGBA = 9
    COLOR_BGRA2GRAY = 10
    COLOR_RGBA2GRAY = 11

    def __repr__(self) -> str:
        return f"ConvertMode.{self.name}"


# code → (input channels, output channels); 1 output channel means an <H, W> image.
CONVERT_CHANNELS = {0: (3, 4), 1: (4, 3), 2: (3, 4), 3: (4, 3), 4: (3, 3), 5: (4, 4),
                    6: (3, 1), 7: (3, 1), 8: (1, 3), 9: (1, 4), 10: (4, 1), 11: (4, 1)}  # fmt: skip
_CONVERT_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.float16, np.float32, np.float64))


class ConvertColor(Op):
    """Convert an image between RGB, BGR, RGBA, BGRA and grayscale (``cv2.cvtColor``, as MindSpore).

    Grayscale is ``0.299 R + 0.587 G + 0.114 B`` (OpenCV's rounding for integer images); a grayscale
    output is ``<H, W>``, and a grayscale input is ``<H, W>`` or ``<H, W, 1>``. An added alpha channel is
    opaque (255 for ``uint8``, 65535 for ``uint16``, 1.0 for floats). Works on ``uint8``, ``uint16`` and
    float images.

    Args:
        convert_mode: a :class:`ConvertMode` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> rgb = np.array([[[10, 20, 30]]], np.uint8)
        >>> vision.ConvertColor(vision.ConvertMode.COLOR_RGB2BGR)(rgb)
        array([[[30, 20, 10]]], dtype=uint8)
        >>> vision.ConvertColor(vision.ConvertMode.COLOR_RGB2RGBA)(rgb)[0, 0]
        array([ 10,  20,  30, 255], dtype=uint8)
        >>> vision.ConvertColor(vision.ConvertMode.COLOR_RGB2GRAY)(rgb).shape
        (1, 1)
    """

    def __init__(self, convert_mode: ConvertMode) -> None:
        if not isinstance(convert_mode, ConvertMode):
            raise TypeError(
                f"{self.name}: `convert_mode` must be a vision.ConvertMode member, e.g. "
                f"ConvertMode.COLOR_BGR2RGB. Found: {show_value(convert_mode)}"
            )
        self.convert_mode = convert_mode

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        c_in, c_out = CONVERT_CHANNELS[int(self.convert_mode)]
        c = 1 if not rest else rest[0]
        if c is not None and c != c_in:
            names = "/".join(n for n, m in ConvertMode.__members__.items() if m is self.convert_mode)
            raise ValueError(
                f"ConvertColor: {names} expects an image with {c_in} channel(s). "
                f"Found shape {tuple(inputs[0].shape)}"
            )
        if dtype is not None and dtype not in _CONVERT_DTYPES:
            raise TypeError(
                f"ConvertColor: expected a uint8, uint16 or float image. Found dtype {dtype} "
                f"(shape {tuple(inputs[0].shape)})"
            )
        return TensorSpec((h, w) if c_out == 1 else (h, w, c_out), dtype)


class Grayscale(Op):
    """Convert an RGB (or RGBA) image to grayscale, ``0.299 R + 0.587 G + 0.114 B``.

    MindSpore's Grayscale takes PIL images only; here it takes arrays (``uint8``, ``uint16``, float), as
    any other op. ``uint8`` is rounded as OpenCV rounds, within 1 grey level of Pillow's
    ``convert("L")``. A one-channel input passes through.

    Args:
        num_output_channels: 1 gives an ``<H, W>`` image; 3 gives ``<H, W, 3>`` with three equal channels.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> rgb = np.array([[[255, 0, 0], [0, 0, 255]]], np.uint8)
        >>> vision.Grayscale()(rgb)
        array([[76, 29]], dtype=uint8)
        >>> vision.Grayscale(3)(rgb).shape
        (1, 2, 3)
    """

    def __init__(self, num_output_channels: int = 1) -> None:
        n = check_int(self.name, "num_output_channels", num_output_channels, low=1)
        if n not in (1, 3):
            raise ArgumentError(f"{self.name}: `num_output_channels` must be 1 or 3. Found: {n}")
        self.num_output_channels = n

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        c = 1 if not rest else rest[0]
        if c is not None and c not in (1, 3, 4):
            raise ValueError(
                f"Grayscale: expected an image with 1, 3 (RGB) or 4 (RGBA) channels. "
                f"Found shape {tuple(inputs[0].shape)}"
            )
        return TensorSpec((h, w) if self.num_output_channels == 1 else (h, w, 3), dtype)


def _factor_range(
    op: str, arg: str, value: Any, *, center: float, bound: tuple[float, float]
) -> tuple[float, float]:
    """MindSpore's rule: a number v gives (center - v, center + v), clipped at 0 for the
    brightness/contrast/saturation factors; a sequence is (min, max). Both must lie within ``bound``."""
    lo_b, hi_b = bound
    if is_real(value):
        v = check_real(op, arg, value)
        if v < 0:
            raise ArgumentError(f"{op}: `{arg}` must be at least 0 when it is a number. Found: {v}")
        lo, hi = center - v, center + v
        if center == 1.0:
            lo = max(0.0, lo)
    elif is_sequence(value) and len(value) == 2:
        lo = check_real(op, f"{arg}[0]", value[0])
        hi = check_real(op, f"{arg}[1]", value[1])
        if lo > hi:
            raise ArgumentError(f"{op}: `{arg}` must be (min, max) with min <= max. Found: {tuple(value)!r}")
    else:
        raise TypeError(
            f"{op}: `{arg}` must be a number or a sequence of 2 numbers (min, max). Found: {show_value(value)}"
        )
    if lo < lo_b or hi > hi_b:
        where = f"[{lo_b:g}, {hi_b:g}]" if hi_b != float("inf") else f"at least {lo_b:g}"
        raise ArgumentError(f"{op}: `{arg}` must lie in {where}. Found: ({lo}, {hi})")
    return lo, hi


class RandomColorAdjust(Op):
    """Jitter brightness, contrast, saturation and hue by factors drawn per row.

    As MindSpore's CPU RandomColorAdjust (and torchvision's ColorJitter): each row shuffles the four
    adjustments into a **random order**, then applies each in that order with a factor drawn uniformly
    from its range; an adjustment whose range is the identity (``(1, 1)``, or ``(0, 0)`` for hue) is
    skipped and draws nothing. The formulas are MindSpore's (OpenCV's rounding):

    - brightness ``f``: ``image * f``;
    - contrast ``f``: ``image * f + m * (1 - f)``, ``m`` the rounded mean of the grayscale image;
    - saturation ``f``: ``image * f + gray * (1 - f)``, ``gray`` the grayscale image;
    - hue ``h``: add ``int(h * 255)`` (mod 256) to the hue of ``cv2.COLOR_RGB2HSV_FULL``, convert back.

    Pillow's ImageEnhance truncates where these round, so results differ from it by about 1 grey
    level per step.

    Args:
        brightness: a number ``b >= 0`` draws from ``[max(0, 1 - b), 1 + b]``; a sequence is ``(min,
            max)``, min >= 0.
        contrast: as ``brightness``.
        saturation: as ``brightness``.
        hue: a number ``h`` in [0, 0.5] draws from ``[-h, h]``; a sequence is ``(min, max)`` within
            [-0.5, 0.5].

    Input: an RGB ``uint8`` ``<H, W, 3>`` image (the adjustments clip to 0-255).

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.RandomColorAdjust(brightness=(2, 2))
        >>> op(np.full((1, 2, 3), 100, np.uint8))
        array([[[200, 200, 200],
                [200, 200, 200]]], dtype=uint8)
        >>> vision.RandomColorAdjust(contrast=0.4, hue=0.1).contrast
        (0.6, 1.4)
    """

    random = True

    def __init__(
        self,
        brightness: float | Sequence[float] = (1, 1),
        contrast: float | Sequence[float] = (1, 1),
        saturation: float | Sequence[float] = (1, 1),
        hue: float | Sequence[float] = (0, 0),
    ) -> None:
        inf = float("inf")
        self.brightness = _factor_range(self.name, "brightness", brightness, center=1.0, bound=(0.0, inf))
        self.contrast = _factor_range(self.name, "contrast", contrast, center=1.0, bound=(0.0, inf))
        self.saturation = _factor_range(self.name, "saturation", saturation, center=1.0, bound=(0.0, inf))
        self.hue = _factor_range(self.name, "hue", hue, center=0.0, bound=(-0.5, 0.5))

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs)
        if rest not in ((3,), (None,)) or (dtype is not None and dtype != np.uint8):
            raise ValueError(
                f"RandomColorAdjust: expected an RGB uint8 image of shape <H, W, 3>. Found shape "
                f"{tuple(inputs[0].shape)}, dtype {dtype}"
            )
        return TensorSpec((h, w, 3), dtype)


def _kernel_size(op: str, value: Any) -> tuple[int, int]:
    if is_int(value):
        vals = (value, value)
    elif is_sequence(value) and len(value) == 2:
        vals = tuple(value)
    else:
        raise TypeError(
            f"{op}: `kernel_size` must be an int or a sequence of 2 ints (width, height). Found: {show_value(value)}"
        )
    out = []
    for i, v in enumerate(vals):
        name = "kernel_size" if is_int(value) else f"kernel_size[{i}]"
        k = check_int(op, name, v, low=1)
        if k % 2 == 0:
            raise ArgumentError(f"{op}: `{name}` must be odd. Found: {k}")
        out.append(k)
    return out[0], out[1]


class GaussianBlur(Op):
    """Blur an image with a separable Gaussian kernel over mirrored borders that do not repeat the
    edge: MindSpore's ``cv2.GaussianBlur`` call, with the kernels OpenCV 4 builds (OpenCV 5 would
    quantise the derived ones to 1/256; minddata builds them itself, so results do not depend on the
    OpenCV version).

    Args:
        kernel_size: positive odd size(s): an int, or ``(width, height)`` (MindSpore's order). Stored as
            ``(width, height)``.
        sigma: the standard deviation(s), > 0: a number, or ``(sigma_x, sigma_y)``. ``None`` derives each
            from its kernel size as OpenCV (and so MindSpore) does: ``0.3 * ((k - 1) / 2 - 1) + 0.8``,
            except that sizes up to 7 use OpenCV's fixed binomial-like kernels (size 3 is
            ``[1/4, 1/2, 1/4]``).

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.GaussianBlur(3)(np.array([[0, 0, 255, 0, 0]], np.float32))
        array([[  0.  ,  63.75, 127.5 ,  63.75,   0.  ]], dtype=float32)
        >>> vision.GaussianBlur((5, 3), sigma=1.5).kernel_size
        (5, 3)
    """

    def __init__(
        self, kernel_size: int | Sequence[int], sigma: float | Sequence[float] | None = None
    ) -> None:
        self.kernel_size = _kernel_size(self.name, kernel_size)
        if sigma is None:
            self.sigma: tuple[float, float] | None = None
        else:
            if is_real(sigma):
                vals: tuple[Any, ...] = (sigma, sigma)
            elif is_sequence(sigma) and len(sigma) == 2:
                vals = tuple(sigma)
            else:
                raise TypeError(
                    f"{self.name}: `sigma` must be None, a number or a sequence of 2 numbers. Found: {show_value(sigma)}"
                )
            out = []
            for i, v in enumerate(vals):
                name = "sigma" if is_real(sigma) else f"sigma[{i}]"
                s = check_real(self.name, name, v)
                if s <= 0:
                    raise ArgumentError(f"{self.name}: `{name}` must be greater than 0. Found: {s}")
                out.append(s)
            self.sigma = (out[0], out[1])

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        return TensorSpec((h, w, *rest), dtype)
