"""Augmentation policies, named as in ``mindspore.dataset.vision`` (2.x): AutoAugment (with
AutoAugmentPolicy), RandAugment, TrivialAugmentWide, UniformAugment and RandomSelectSubpolicy.

Specs validate and hold parameters only; the policy tables, magnitude spaces and per-row draws are in
``minddata.ops.plans.augment_policies`` and the CPU kernels in ``minddata.ops.cpu.augment_policies``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.transforms import _chain_spec, _merge_outputs
from minddata.vision._utils import Inter
from minddata.vision._validators import check_fill_value, check_int, check_real, is_real
from minddata.vision.adjust import same_image

__all__ = [
    "AutoAugment",
    "AutoAugmentPolicy",
    "RandAugment",
    "RandomSelectSubpolicy",
    "TrivialAugmentWide",
    "UniformAugment",
]

# A warp has no use for Pillow's resize-only filters.
_WARP_INTERS = ("NEAREST", "BILINEAR", "BICUBIC", "AREA", "LANCZOS")


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


class AutoAugmentPolicy(str, enum.Enum):
    """The AutoAugment policies learned on ImageNet, CIFAR-10 and SVHN (25 sub-policies of two
    augmentations each, from the AutoAugment paper), named and valued as in MindSpore.

    Examples:
        >>> from minddata.vision import AutoAugmentPolicy
        >>> AutoAugmentPolicy.CIFAR10.value
        'cifar10'
        >>> AutoAugmentPolicy("svhn") is AutoAugmentPolicy.SVHN
        True
    """

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"

    def __repr__(self) -> str:
        return f"AutoAugmentPolicy.{self.name}"


def check_interpolation(op: str, value: Any) -> Inter:
    if not isinstance(value, Inter):
        raise TypeError(
            f"{op}: `interpolation` must be a vision.Inter member, e.g. Inter.NEAREST. Found: {_show(value)}"
        )
    if value.name not in _WARP_INTERS:
        raise ArgumentError(
            f"{op}: `interpolation` must be Inter.NEAREST, BILINEAR, BICUBIC, AREA or LANCZOS. Found: {value!r}"
        )
    return value


def _fill(op: str, value: Any) -> tuple[int, int, int]:
    """MindSpore's rule: an int in [0, 255] fills every channel; a 3-tuple fills R, G, B. Stored as a
    3-tuple, as MindSpore stores it."""
    fill = check_fill_value(op, value)
    return (fill, fill, fill) if isinstance(fill, int) else fill


class _Policy(Op):
    """Base of the policies over RGB ``uint8`` images with a warp interpolation and a fill value."""

    random = True

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return same_image(self.name, inputs, rgb=True)


class AutoAugment(_Policy):
    """AutoAugment (Cubuk et al., 2019): per row, draw one of the policy's 25 sub-policies and apply each
    of its two augmentations with its probability, at its magnitude with a random sign.

    The augmentations and magnitudes are MindSpore's (10 magnitude bins): shears up to 0.3 (MindSpore
    turns the slope into degrees as ``slope * 180 / pi``), translations up to ``150 / 331`` of the image,
    rotations up to 30 degrees, enhancement factors ``1 +- 0.9``, Posterize to 4-8 bits, Solarize,
    AutoContrast, Equalize, Invert.

    Translations move the image by ``int(magnitude)`` pixels, as the policy means. MindSpore 2.10 hands
    that pixel count to its Affine op, which reads translations as fractions of the image size and so
    multiplies it by the width (or height) again, moving the whole image out of view; this op does not
    copy that defect.

    Args:
        policy: an :class:`AutoAugmentPolicy` member.
        interpolation: the warps' interpolation (NEAREST, BILINEAR, BICUBIC, AREA or LANCZOS).
        fill_value: the fill of pixels that warps uncover: an int in [0, 255] or an (R, G, B) tuple.
            Stored as (R, G, B).

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.AutoAugment(vision.AutoAugmentPolicy.CIFAR10, fill_value=128)
        >>> op.fill_value
        (128, 128, 128)
        >>> op(np.zeros((8, 8, 3), np.uint8)).shape
        (8, 8, 3)
    """

    def __init__(
        self,
        policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
        interpolation: Inter = Inter.NEAREST,
        fill_value: int | tuple[int, int, int] = 0,
    ) -> None:
        if not isinstance(policy, AutoAugmentPolicy):
            raise TypeError(
                f"{self.name}: `policy` must be a vision.AutoAugmentPolicy member, e.g. "
                f"AutoAugmentPolicy.IMAGENET. Found: {_show(policy)}"
            )
        self.policy = policy
        self.interpolation = check_interpolation(self.name, interpolation)
        self.fill_value = _fill(self.name, fill_value)


class RandAugment(_Policy):
    """RandAugment (Cubuk et al., 2020): per row, ``num_ops`` augmentations drawn uniformly from 14
    (Identity, shears, translations, Rotate, Brightness, Color, Contrast, Sharpness, Posterize, Solarize,
    AutoContrast, Equalize), each at bin ``magnitude`` of ``num_magnitude_bins`` with a random sign.

    MindSpore's draws give the first augmentation (AutoContrast) twice the weight of the others and a
    negative sign one time in three; here both draws are uniform. Translations move by whole pixels
    (see :class:`AutoAugment` for MindSpore's defect there).

    Args:
        num_ops: the number of augmentations per row, at least 0.
        magnitude: the magnitude bin, in ``[0, num_magnitude_bins)``.
        num_magnitude_bins: the number of bins, at least 2.
        interpolation: the warps' interpolation (NEAREST, BILINEAR, BICUBIC, AREA or LANCZOS).
        fill_value: the fill of uncovered pixels: an int in [0, 255] or an (R, G, B) tuple.

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.full((8, 8, 3), 90, np.uint8)
        >>> (vision.RandAugment(num_ops=0)(img) == img).all()
        np.True_
    """

    def __init__(
        self,
        num_ops: int = 2,
        magnitude: int = 9,
        num_magnitude_bins: int = 31,
        interpolation: Inter = Inter.NEAREST,
        fill_value: int | tuple[int, int, int] = 0,
    ) -> None:
        self.num_ops = check_int(self.name, "num_ops", num_ops, low=0)
        self.num_magnitude_bins = check_int(self.name, "num_magnitude_bins", num_magnitude_bins, low=2)
        self.magnitude = check_int(self.name, "magnitude", magnitude, low=0)
        if self.magnitude >= self.num_magnitude_bins:
            raise ArgumentError(
                f"{self.name}: `magnitude` must be less than `num_magnitude_bins` ({self.num_magnitude_bins}). "
                f"Found: {magnitude}"
            )
        self.interpolation = check_interpolation(self.name, interpolation)
        self.fill_value = _fill(self.name, fill_value)


class TrivialAugmentWide(_Policy):
    """TrivialAugment Wide (Müller and Hutter, 2021): per row, one augmentation drawn uniformly from 14
    (as :class:`RandAugment`'s, with wider ranges: shears up to 0.99, translations up to 32 pixels,
    rotations up to 135 degrees, factors ``1 +- 0.99``, Posterize to 2-8 bits) at a magnitude bin drawn
    uniformly, with a random sign. As in :class:`RandAugment`, the draws are uniform where MindSpore's
    modulo favours the first choice, and translations move by whole pixels.

    Args:
        num_magnitude_bins: the number of bins, at least 2.
        interpolation: the warps' interpolation (NEAREST, BILINEAR, BICUBIC, AREA or LANCZOS).
        fill_value: the fill of uncovered pixels: an int in [0, 255] or an (R, G, B) tuple.

    Input: an RGB ``uint8`` ``<H, W, 3>`` image.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> vision.TrivialAugmentWide(num_magnitude_bins=11)(np.zeros((6, 9, 3), np.uint8)).shape
        (6, 9, 3)
    """

    def __init__(
        self,
        num_magnitude_bins: int = 31,
        interpolation: Inter = Inter.NEAREST,
        fill_value: int | tuple[int, int, int] = 0,
    ) -> None:
        self.num_magnitude_bins = check_int(self.name, "num_magnitude_bins", num_magnitude_bins, low=2)
        self.interpolation = check_interpolation(self.name, interpolation)
        self.fill_value = _fill(self.name, fill_value)


def _check_image_op(op: str, where: str, value: Any) -> Op | Callable[..., Any]:
    if isinstance(value, Op):
        if value.num_inputs not in (1, -1) or value.num_outputs != 1:
            raise ArgumentError(
                f"{op}: `{where}` must take one image and give one. Found {value.name} with "
                f"{value.num_inputs} input(s), {value.num_outputs} output(s)"
            )
        return value
    if callable(value):
        return value
    raise TypeError(f"{op}: `{where}` must be an op or a callable. Found: {_show(value)}")


def _either_spec(op: str, ops: Sequence[Any], inputs: tuple[TensorSpec, ...]) -> TensorSpec:
    """The rule of an op that applies any subset of ``ops`` in order: every op must keep its input's
    spec (up to unknown sizes), so the output is the input's spec merged with each op's."""
    spec = tuple(inputs)
    for i in range(len(ops)):
        spec = _merge_outputs(op, [spec, _chain_spec(op, ops, [i], spec)])
    return spec[0]


class UniformAugment(Op):
    """Per row, choose ``num_ops`` of ``transforms`` uniformly (without repeats, kept in list order) and
    apply each chosen one on a fair coin, as MindSpore does.

    Each op keeps its own random stream, so an op's draws do not depend on which others ran.

    Args:
        transforms: a non-empty list of image ops (or callables) that each keep the image's type.
        num_ops: how many to choose, in ``[1, len(transforms)]``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.UniformAugment([vision.Invert(), vision.Equalize()], num_ops=2)
        >>> op(np.zeros((4, 4, 3), np.uint8)).shape
        (4, 4, 3)
    """

    random = True

    def __init__(self, transforms: Sequence[Op | Callable[..., Any]], num_ops: int = 2) -> None:
        if isinstance(transforms, (Op, str, bytes)) or not isinstance(transforms, Sequence):
            raise TypeError(f"{self.name}: `transforms` must be a list of ops. Found: {_show(transforms)}")
        if not transforms:
            raise ArgumentError(f"{self.name}: `transforms` must not be empty. Found: []")
        self.transforms = [
            _check_image_op(self.name, f"transforms[{i}]", t) for i, t in enumerate(transforms)
        ]
        self.num_ops = check_int(self.name, "num_ops", num_ops, low=1)
        if self.num_ops > len(self.transforms):
            raise ArgumentError(
                f"{self.name}: `num_ops` must be at most the number of transforms ({len(self.transforms)}). "
                f"Found: {num_ops}"
            )

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return _either_spec(self.name, self.transforms, inputs)


class RandomSelectSubpolicy(Op):
    """Per row, draw one sub-policy uniformly from ``policy`` and apply its ops in order, each with its
    probability.

    Args:
        policy: a non-empty list of sub-policies; a sub-policy is a non-empty list of ``(op, prob)``
            pairs, ``op`` an image op (or callable) and ``prob`` in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.RandomSelectSubpolicy([[(vision.Invert(), 1.0)], [(vision.Invert(), 1.0)]])
        >>> op(np.zeros((1, 2, 3), np.uint8))
        array([[[255, 255, 255],
                [255, 255, 255]]], dtype=uint8)
    """

    random = True

    def __init__(self, policy: list[list[tuple[Op | Callable[..., Any], float]]]) -> None:
        if not isinstance(policy, Sequence) or isinstance(policy, (str, bytes)):
            raise TypeError(f"{self.name}: `policy` must be a list of sub-policies. Found: {_show(policy)}")
        if not policy:
            raise ArgumentError(f"{self.name}: `policy` must not be empty. Found: []")
        checked = []
        for s, sub in enumerate(policy):
            if not isinstance(sub, Sequence) or isinstance(sub, (str, bytes)):
                raise TypeError(
                    f"{self.name}: `policy[{s}]` must be a list of (op, prob). Found: {_show(sub)}"
                )
            if not sub:
                raise ArgumentError(f"{self.name}: `policy[{s}]` must not be empty. Found: []")
            pairs = []
            for k, pair in enumerate(sub):
                if not isinstance(pair, Sequence) or isinstance(pair, (str, bytes)) or len(pair) != 2:
                    raise TypeError(
                        f"{self.name}: `policy[{s}][{k}]` must be an (op, prob) pair. Found: {_show(pair)}"
                    )
                held = _check_image_op(self.name, f"policy[{s}][{k}][0]", pair[0])
                if not is_real(pair[1]):
                    raise TypeError(
                        f"{self.name}: `policy[{s}][{k}][1]` (prob) must be a number. Found: {_show(pair[1])}"
                    )
                prob = check_real(self.name, f"policy[{s}][{k}][1]", pair[1])
                if not 0.0 <= prob <= 1.0:
                    raise ArgumentError(
                        f"{self.name}: `policy[{s}][{k}][1]` (prob) must be in [0, 1]. Found: {prob}"
                    )
                pairs.append((held, prob))
            checked.append(pairs)
        self.policy = checked

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        return _either_spec(self.name, [held for sub in self.policy for held, _ in sub], inputs)
