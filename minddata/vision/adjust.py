"""Pixel-adjusting vision op specs, named as in ``mindspore.dataset.vision`` (2.x): the Adjust* family,
AutoContrast, Equalize, Invert, Posterize, Solarize, their Random* forms, RandomColor, RandomLighting,
RandomGrayscale, RgbToHsv and HsvToRgb.

Specs validate and hold parameters only; the random draws are in ``minddata.ops.plans.adjust`` and the CPU
kernels in ``minddata.ops.cpu.adjust``. The arithmetic is MindSpore's (OpenCV's rounding, float32 factors),
so ``uint8`` outputs equal MindSpore 2.x's; Pillow's ImageEnhance/ImageOps truncate where these round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.vision._validators import (
    check_bool,
    check_int,
    check_prob,
    check_real,
    is_int,
    is_real,
    one_image_spec,
)

__all__ = [
    "AdjustBrightness",
    "AdjustContrast",
    "AdjustGamma",
    "AdjustHue",
    "AdjustSaturation",
    "AdjustSharpness",
    "AutoContrast",
    "Equalize",
    "HsvToRgb",
    "Invert",
    "Posterize",
    "RandomAdjustSharpness",
    "RandomAutoContrast",
    "RandomColor",
    "RandomEqualize",
    "RandomGrayscale",
    "RandomInvert",
    "RandomLighting",
    "RandomPosterize",
    "RandomSharpness",
    "RandomSolarize",
    "RgbToHsv",
    "Solarize",
]

_UINT8 = np.dtype(np.uint8)


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _is_seq(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


# ---------------------------------------------------------------------------------------------- checks


def check_non_negative(op: str, arg: str, value: Any) -> float:
    v = check_real(op, arg, value)
    if v < 0:
        raise ArgumentError(f"{op}: `{arg}` must be at least 0. Found: {value}")
    return v


def check_cutoff(op: str, value: Any) -> float:
    v = check_real(op, "cutoff", value)
    if not 0.0 <= v < 50.0:
        raise ArgumentError(f"{op}: `cutoff` must be in [0, 50). Found: {value}")
    return v


def check_ignore(op: str, value: Any) -> list[int]:
    """None (nothing ignored), a level, or a sequence of levels, each in [0, 255]; stored as a list."""
    if value is None:
        return []
    if is_int(value):
        return [check_int(op, "ignore", value, low=0, high=255)]
    if not _is_seq(value):
        raise TypeError(f"{op}: `ignore` must be None, an int or a sequence of ints. Found: {_show(value)}")
    return [check_int(op, f"ignore[{i}]", v, low=0, high=255) for i, v in enumerate(value)]


def check_min_max(
    op: str, arg: str, value: Any, *, low: float, high: float, ints: bool = False
) -> tuple[Any, Any]:
    """A (min, max) sequence of 2 numbers (ints if ``ints``) within [low, high], min <= max."""
    what = "ints" if ints else "numbers"
    if not _is_seq(value) or len(value) != 2:
        raise TypeError(f"{op}: `{arg}` must be a sequence of 2 {what} (min, max). Found: {_show(value)}")
    out = []
    for i, v in enumerate(value):
        name = f"{arg}[{i}]"
        if ints:
            out.append(check_int(op, name, v, low=int(low), high=int(high)))
            continue
        x = check_real(op, name, v)
        if not low <= x <= high:
            rule = f"in [{low:g}, {high:g}]" if high != float("inf") else f"at least {low:g}"
            raise ArgumentError(f"{op}: `{name}` must be {rule}. Found: {v}")
        out.append(x)
    if out[0] > out[1]:
        raise ArgumentError(f"{op}: `{arg}` must be (min, max) with min <= max. Found: {tuple(value)!r}")
    return out[0], out[1]


# ---------------------------------------------------------------------------------------------- output rules


def same_image(
    op: str, inputs: tuple[TensorSpec, ...], *, uint8: bool = False, rgb: bool = False
) -> TensorSpec:
    """The rule of an op that keeps the image's shape and dtype: any numeric image, or only ``uint8``
    ones, or only RGB ``uint8`` ``<H, W, 3>`` ones."""
    h, w, rest, dtype = one_image_spec(op, inputs, numeric=True)
    shape = tuple(inputs[0].shape)
    if rgb and (rest not in ((3,), (None,)) or (dtype is not None and dtype != _UINT8)):
        raise ValueError(
            f"{op}: expected an RGB uint8 image of shape <H, W, 3>. Found shape {shape}, dtype {dtype}"
        )
    if uint8 and dtype is not None and dtype != _UINT8:
        raise TypeError(f"{op}: expected a uint8 image. Found dtype {dtype} (shape {shape})")
    return TensorSpec((h, w, *rest), dtype)


def _float_or_uint8(op: str, inputs: tuple[TensorSpec, ...]) -> TensorSpec:
    spec = same_image(op, inputs)
    if spec.dtype is not None and spec.dtype != _UINT8 and spec.dtype.kind != "f":
        raise TypeError(f"{op}: expected a uint8 or float image. Found dtype {spec.dtype}")
    return spec


# ---------------------------------------------------------------------------------------------- Adjust*


class AdjustBrightness(Op):
    """Multiply every pixel by ``brightness_factor`` (``uint8`` and other integer images round and
    saturate; floats do not clip).

    MindSpore takes RGB images only; here any numeric ``<H, W>``/``<H, W, C>`` image works.

    Args:
        brightness_factor: at least 0. 0 gives black, 1 the original image, 2 twice as bright.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.AdjustBrightness(1.5)(np.array([[[10, 100, 200]]], np.uint8))
        array([[[ 15, 150, 255]]], dtype=uint8)
    """

    def __init__(self, brightness_factor: float) -> None:
        self.brightness_factor = check_non_negative(self.name, "brightness_factor", brightness_factor)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


class AdjustContrast(Op):
    """Blend an RGB image with its mean grey level: ``image * f + mean * (1 - f)``, the mean of the
    grayscale image rounded to an integer (MindSpore's rule).

    Args:
        contrast_factor: at least 0. 0 gives a flat grey image, 1 the original image.

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.AdjustContrast(0.0)(np.array([[[0, 0, 0], [255, 255, 255]]], np.uint8))
        array([[[128, 128, 128],
                [128, 128, 128]]], dtype=uint8)
    """

    def __init__(self, contrast_factor: float) -> None:
        self.contrast_factor = check_non_negative(self.name, "contrast_factor", contrast_factor)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, rgb=True)


class AdjustSaturation(Op):
    """Blend an RGB image with its grayscale version: ``image * f + gray * (1 - f)``.

    Args:
        saturation_factor: at least 0. 0 gives the grayscale image, 1 the original image.

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.AdjustSaturation(0.0)(np.array([[[255, 0, 0]]], np.uint8))
        array([[[76, 76, 76]]], dtype=uint8)
    """

    def __init__(self, saturation_factor: float) -> None:
        self.saturation_factor = check_non_negative(self.name, "saturation_factor", saturation_factor)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, rgb=True)


class AdjustHue(Op):
    """Rotate the hue of an RGB image: add ``int(hue_factor * 255)`` to the hue of OpenCV's full-range
    HSV (``COLOR_RGB2HSV_FULL``, 256 steps for the circle) and convert back, as MindSpore does.

    Args:
        hue_factor: in [-0.5, 0.5]; 0.5 (or -0.5) turns the hue half way round.

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.AdjustHue(0.5)(np.array([[[255, 0, 0]]], np.uint8))
        array([[[  0, 255, 252]]], dtype=uint8)
    """

    def __init__(self, hue_factor: float) -> None:
        v = check_real(self.name, "hue_factor", hue_factor)
        if not -0.5 <= v <= 0.5:
            raise ArgumentError(f"{self.name}: `hue_factor` must be in [-0.5, 0.5]. Found: {hue_factor}")
        self.hue_factor = v

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, rgb=True)


class AdjustGamma(Op):
    """Gamma correction, ``255 * gain * (I / 255) ** gamma``, computed as MindSpore computes it.

    ``uint8`` images go through MindSpore's table ``floor(min((i / 255) ** gamma * 255.999 * gain,
    255))`` (float32); float images (expected in [0, 1]) become ``clip((x * gain) ** gamma, 0, 1)``.

    Args:
        gamma: at least 0. Above 1 darkens the shadows, below 1 lightens them.
        gain: the constant multiplier.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.AdjustGamma(0.5)(np.array([[10, 100, 250]], np.uint8))
        array([[ 50, 160, 253]], dtype=uint8)
        >>> vision.AdjustGamma(2.0, gain=1.5)(np.array([[0.2, 0.5, 0.9]], np.float32))
        array([[0.09  , 0.5625, 1.    ]], dtype=float32)
    """

    def __init__(self, gamma: float, gain: float = 1) -> None:
        self.gamma = check_non_negative(self.name, "gamma", gamma)
        self.gain = check_real(self.name, "gain", gain)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return _float_or_uint8(self.name, inputs)


class AdjustSharpness(Op):
    """Blend an image with its smoothed version (Pillow's ``SMOOTH`` filter, 1-1-1/1-5-1/1-1-1 over 13,
    the border left as it is): ``image * f + smooth * (1 - f)``, as MindSpore and
    ``PIL.ImageEnhance.Sharpness`` do (MindSpore rounds where Pillow truncates).

    Args:
        sharpness_factor: at least 0. 0 blurs, 1 gives the original image, 2 sharpens.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.zeros((3, 3), np.uint8)
        >>> img[1, 1] = 130
        >>> vision.AdjustSharpness(0.0)(img)[1, 1]
        np.uint8(50)
    """

    def __init__(self, sharpness_factor: float) -> None:
        self.sharpness_factor = check_non_negative(self.name, "sharpness_factor", sharpness_factor)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


# ---------------------------------------------------------------------------------------------- ImageOps


class AutoContrast(Op):
    """Stretch each channel's levels onto 0-255: drop ``cutoff`` percent of the pixels at each end of
    the channel's histogram (levels in ``ignore`` not counted), then map the lowest level left to 0 and
    the highest to 255, truncating (``PIL.ImageOps.autocontrast``'s rule, which MindSpore follows).

    MindSpore reads ``cutoff`` as a whole percentage (20.5 cuts 20 percent); so does this op, so that
    results agree.

    Args:
        cutoff: the percentage to drop from each end, in [0, 50).
        ignore: a level or a sequence of levels (each in [0, 255]) left out of the histogram, or None.

    Input: a ``uint8`` ``<H, W>`` or ``<H, W, C>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.AutoContrast()(np.array([[50, 100, 150]], np.uint8))
        array([[  0, 127, 255]], dtype=uint8)
    """

    def __init__(self, cutoff: float = 0.0, ignore: int | Sequence[int] | None = None) -> None:
        self.cutoff = check_cutoff(self.name, cutoff)
        self.ignore = check_ignore(self.name, ignore)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, uint8=True)


class Equalize(Op):
    """Equalise each channel's histogram, with OpenCV's ``equalizeHist`` as MindSpore's CPU kernel
    (``PIL.ImageOps.equalize`` spreads the levels by another formula and can differ by tens of levels).

    Input: a ``uint8`` ``<H, W>`` or ``<H, W, C>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Equalize()(np.array([[10, 10, 20, 30]], np.uint8))
        array([[  0,   0, 128, 255]], dtype=uint8)
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, uint8=True)


class Invert(Op):
    """``255 - pixel`` for every pixel. Integer images saturate; float images keep the sign (as
    MindSpore). MindSpore takes 3-channel images only; here any numeric image works.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Invert()(np.array([[[0, 100, 255]]], np.uint8))
        array([[[255, 155,   0]]], dtype=uint8)
    """

    def __init__(self) -> None:
        pass

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


class Posterize(Op):
    """Keep the ``bits`` highest bits of each channel value (``PIL.ImageOps.posterize``).

    Args:
        bits: the bits to keep, in [0, 8] (0 gives black).

    Input: a ``uint8`` ``<H, W>`` or ``<H, W, C>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Posterize(2)(np.array([[37, 200, 255]], np.uint8))
        array([[  0, 192, 192]], dtype=uint8)
    """

    def __init__(self, bits: int) -> None:
        self.bits = check_int(self.name, "bits", bits, low=0, high=8)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, uint8=True)


def _check_solarize_threshold(op: str, threshold: Any) -> tuple[float, float]:
    if is_real(threshold):
        t = check_real(op, "threshold", threshold)
        if not 0 <= t <= 255:
            raise ArgumentError(f"{op}: `threshold` must be in [0, 255]. Found: {threshold}")
        return t, t
    if not _is_seq(threshold):
        raise TypeError(
            f"{op}: `threshold` must be a number or a sequence of 2 numbers (min, max). Found: {_show(threshold)}"
        )
    return check_min_max(op, "threshold", threshold, low=0, high=255)


class Solarize(Op):
    """Invert (``255 - pixel``) the pixels whose value lies in ``[min, max]``; a single threshold (or
    ``min == max``) inverts every pixel at or above it, as ``PIL.ImageOps.solarize``.

    Args:
        threshold: a number in [0, 255], or ``(min, max)`` with ``0 <= min <= max <= 255``. Stored as
            ``(min, max)``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.Solarize(128)(np.array([[0, 127, 128, 255]], np.uint8))
        array([[  0, 127, 127,   0]], dtype=uint8)
        >>> vision.Solarize((100, 200))(np.array([[99, 100, 200, 201]], np.uint8))
        array([[ 99, 155,  55, 201]], dtype=uint8)
    """

    def __init__(self, threshold: float | Sequence[float]) -> None:
        self.threshold = _check_solarize_threshold(self.name, threshold)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


# ---------------------------------------------------------------------------------------------- Random*


class RandomAdjustSharpness(Op):
    """With probability ``prob``, :class:`AdjustSharpness` by ``degree``.

    Args:
        degree: the sharpness factor, at least 0.
        prob: the probability of adjusting, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.zeros((3, 3), np.uint8)
        >>> img[1, 1] = 130
        >>> vision.RandomAdjustSharpness(0.0, prob=1.0)(img)[1, 1]
        np.uint8(50)
    """

    random = True

    def __init__(self, degree: float, prob: float = 0.5) -> None:
        self.degree = check_non_negative(self.name, "degree", degree)
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


class RandomAutoContrast(Op):
    """With probability ``prob``, :class:`AutoContrast` with ``cutoff`` and ``ignore``.

    Args:
        cutoff: the percentage to drop from each end of the histogram, in [0, 50).
        ignore: a level or levels left out of the histogram, or None.
        prob: the probability of adjusting, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomAutoContrast(prob=1.0)(np.array([[50, 100, 150]], np.uint8))
        array([[  0, 127, 255]], dtype=uint8)
    """

    random = True

    def __init__(
        self, cutoff: float = 0.0, ignore: int | Sequence[int] | None = None, prob: float = 0.5
    ) -> None:
        self.cutoff = check_cutoff(self.name, cutoff)
        self.ignore = check_ignore(self.name, ignore)
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, uint8=True)


class RandomEqualize(Op):
    """With probability ``prob``, :class:`Equalize`.

    Args:
        prob: the probability of equalising, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomEqualize(prob=1.0)(np.array([[10, 10, 20, 30]], np.uint8))
        array([[  0,   0, 128, 255]], dtype=uint8)
    """

    random = True

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, uint8=True)


class RandomInvert(Op):
    """With probability ``prob``, :class:`Invert`.

    Args:
        prob: the probability of inverting, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomInvert(prob=1.0)(np.array([[[0, 100, 255]]], np.uint8))
        array([[[255, 155,   0]]], dtype=uint8)
    """

    random = True

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


class RandomPosterize(Op):
    """:class:`Posterize` with a number of bits drawn per row, uniformly from ``bits`` (min, max).

    Args:
        bits: an int in [1, 8] (always that many bits), or ``(min, max)`` with ``1 <= min <= max <= 8``.
            Stored as ``(min, max)``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomPosterize(2)(np.array([[37, 200, 255]], np.uint8))
        array([[  0, 192, 192]], dtype=uint8)
    """

    random = True

    def __init__(self, bits: int | Sequence[int] = (8, 8)) -> None:
        if is_int(bits):
            b = check_int(self.name, "bits", bits, low=1, high=8)
            self.bits: tuple[int, int] = (b, b)
        else:
            self.bits = check_min_max(self.name, "bits", bits, low=1, high=8, ints=True)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, uint8=True)


class RandomSolarize(Op):
    """:class:`Solarize` with a sub-range of ``threshold`` drawn per row: two levels drawn uniformly from
    ``threshold`` (min, max), sorted, bound the inverted range (as MindSpore draws them).

    Args:
        threshold: ``(min, max)``, ints with ``0 <= min <= max <= 255``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomSolarize((100, 100))(np.array([[99, 100, 250]], np.uint8))
        array([[ 99, 155,   5]], dtype=uint8)
    """

    random = True

    def __init__(self, threshold: Sequence[int] = (0, 255)) -> None:
        self.threshold = check_min_max(self.name, "threshold", threshold, low=0, high=255, ints=True)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


class RandomSharpness(Op):
    """:class:`AdjustSharpness` by a factor drawn per row, uniformly from ``degrees`` (min, max).

    Args:
        degrees: ``(min, max)``, both at least 0, min <= max.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.zeros((3, 3), np.uint8)
        >>> img[1, 1] = 130
        >>> vision.RandomSharpness((0.0, 0.0))(img)[1, 1]
        np.uint8(50)
    """

    random = True

    def __init__(self, degrees: Sequence[float] = (0.1, 1.9)) -> None:
        self.degrees = check_min_max(self.name, "degrees", degrees, low=0.0, high=float("inf"))

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs)


class RandomColor(Op):
    """Blend with the grayscale image by a factor drawn per row, uniformly from ``degrees`` (min, max):
    ``PIL.ImageEnhance.Color``'s blend, computed as MindSpore's RandomColor computes it (a factor within
    half a grey level of 1 returns the image, of 0 the grey image; otherwise OpenCV's ``addWeighted``
    with the image first, which can round a tie differently from :class:`AdjustSaturation`).

    Args:
        degrees: ``(min, max)``, both at least 0, min <= max.

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomColor((0.0, 0.0))(np.array([[[255, 0, 0]]], np.uint8))
        array([[[76, 76, 76]]], dtype=uint8)
    """

    random = True

    def __init__(self, degrees: Sequence[float] = (0.1, 1.9)) -> None:
        self.degrees = check_min_max(self.name, "degrees", degrees, low=0.0, high=float("inf"))

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, rgb=True)


class RandomLighting(Op):
    """AlexNet's PCA lighting noise: add ``eigvec @ (eigval * a)`` to every RGB pixel, with ``a`` drawn per
    row from ``N(0, alpha)`` for each of the 3 components of ImageNet's pixel covariance (MindSpore's
    constants). Integer images round and saturate.

    Args:
        alpha: the standard deviation of the weights, at least 0 (0 changes nothing).

    Input: an RGB ``<H, W, 3>`` numeric image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.full((2, 2, 3), 128, np.uint8)
        >>> vision.RandomLighting(0.0)(img)[0, 0]
        array([128, 128, 128], dtype=uint8)
    """

    random = True

    def __init__(self, alpha: float = 0.05) -> None:
        self.alpha = check_non_negative(self.name, "alpha", alpha)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        if rest not in ((3,), (None,)):
            raise ValueError(
                f"{self.name}: expected an RGB image of shape <H, W, 3>. Found shape {tuple(inputs[0].shape)}"
            )
        return TensorSpec((h, w, 3), dtype)


class RandomGrayscale(Op):
    """With probability ``prob``, turn an RGB image grey (``0.299 R + 0.587 G + 0.114 B``, OpenCV's
    rounding), keeping 3 equal channels; a one-channel image passes through.

    MindSpore's RandomGrayscale takes PIL images only; this one takes arrays, as every other op. A
    PIL image is converted with Pillow's ``convert("L")``, as MindSpore does, so its grey levels are
    MindSpore's; on arrays OpenCV's rounding may differ from them by one grey level.

    Args:
        prob: the probability of the conversion, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RandomGrayscale(prob=1.0)(np.array([[[255, 0, 0]]], np.uint8))
        array([[[76, 76, 76]]], dtype=uint8)
    """

    random = True

    def __init__(self, prob: float = 0.1) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        if rest and rest[0] not in (1, 3, None):
            raise ValueError(
                f"{self.name}: expected a grayscale or RGB image (1 or 3 channels). "
                f"Found shape {tuple(inputs[0].shape)}"
            )
        return TensorSpec((h, w, *rest), dtype)


# ---------------------------------------------------------------------------------------------- HSV


def _hsv_spec(op: str, is_hwc: bool, inputs: tuple[TensorSpec, ...]) -> TensorSpec:
    if len(inputs) != 1:
        raise ValueError(f"{op}: expected 1 input. Found: {len(inputs)}")
    shape = tuple(inputs[0].shape)
    if len(shape) not in (3, 4):
        raise ValueError(
            f"{op}: expected an image or a batch of images (3 or 4 dimensions). Found shape {shape}"
        )
    axis = len(shape) - 1 if is_hwc else len(shape) - 3
    if shape[axis] not in (3, None):
        raise ValueError(f"{op}: expected 3 channels on axis {axis} (is_hwc={is_hwc}). Found shape {shape}")
    return TensorSpec(shape, np.dtype(np.float64))


class RgbToHsv(Op):
    """Convert RGB images to HSV, pixel by pixel as ``colorsys.rgb_to_hsv`` (which MindSpore calls): hue
    and saturation in [0, 1], value on the input's scale; float64 output.

    Args:
        is_hwc: True for ``<H, W, 3>`` or ``<N, H, W, 3>`` input, False for ``<3, H, W>`` or
            ``<N, 3, H, W>``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.RgbToHsv(is_hwc=True)(np.array([[[0.0, 0.5, 1.0]]]))
        array([[[0.58333333, 1.        , 1.        ]]])
    """

    def __init__(self, is_hwc: bool = False) -> None:
        self.is_hwc = check_bool(self.name, "is_hwc", is_hwc)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return _hsv_spec(self.name, self.is_hwc, inputs)


class HsvToRgb(Op):
    """Convert HSV images back to RGB, pixel by pixel as ``colorsys.hsv_to_rgb``; float64 output.

    Args:
        is_hwc: True for ``<H, W, 3>`` or ``<N, H, W, 3>`` input, False for ``<3, H, W>`` or
            ``<N, 3, H, W>``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.HsvToRgb(is_hwc=True)(np.array([[[0.58333333, 1.0, 1.0]]])).round(3)
        array([[[0. , 0.5, 1. ]]])
    """

    def __init__(self, is_hwc: bool = False) -> None:
        self.is_hwc = check_bool(self.name, "is_hwc", is_hwc)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return _hsv_spec(self.name, self.is_hwc, inputs)
