"""Perspective warp op specs, named as in ``mindspore.dataset.vision`` (2.x): :class:`Perspective` and
:class:`RandomPerspective`. The homography and the random corners are planned in
``minddata.ops.plans.perspective``; the CPU kernels live in ``minddata.ops.cpu.perspective``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.perspective import perspective_matrix
from minddata.vision._utils import Inter
from minddata.vision._validators import check_prob, check_real, is_real, one_image_spec

__all__ = ["Perspective", "RandomPerspective"]

_PERSPECTIVE_INTERS = ("NEAREST", "BILINEAR", "BICUBIC", "AREA", "PILCUBIC")
_RANDOM_PERSPECTIVE_INTERS = ("NEAREST", "BILINEAR", "BICUBIC")


def _check_interpolation(op: str, value: Any, allowed: tuple[str, ...]) -> Inter:
    if not isinstance(value, Inter):
        raise TypeError(
            f"{op}: `interpolation` must be a vision.Inter member, e.g. Inter.BILINEAR. "
            f"Found: {value!r} ({type(value).__name__})"
        )
    if value.name not in allowed:
        names = ", ".join(f"Inter.{n}" for n in allowed)
        raise ArgumentError(f"{op}: `interpolation` must be one of {names}. Found: {value!r}")
    return value


def _check_points(op: str, arg: str, value: Any) -> tuple[tuple[float, float], ...]:
    ok = isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and len(value) == 4
    if ok:
        ok = all(
            isinstance(p, Sequence)
            and not isinstance(p, (str, bytes))
            and len(p) == 2
            and all(is_real(c) for c in p)
            for p in value
        )
    if not ok:
        raise TypeError(
            f"{op}: `{arg}` must be a sequence of 4 (x, y) points [top-left, top-right, bottom-right, "
            f"bottom-left]. Found: {value!r}"
        )
    return tuple(
        (check_real(op, f"{arg}[{i}][0]", p[0]), check_real(op, f"{arg}[{i}][1]", p[1]))
        for i, p in enumerate(value)
    )


class Perspective(Op):
    """Warp the image by the perspective transform taking ``start_points`` to ``end_points``.

    The output has the input's size; pixels mapped from outside the image are 0. As in MindSpore the
    warp is OpenCV's ``warpPerspective``; ``Inter.AREA`` samples bilinearly (a warp has no area
    filter) and ``Inter.PILCUBIC`` bicubically.

    Args:
        start_points: 4 (x, y) points [top-left, top-right, bottom-right, bottom-left] in the input.
        end_points: the 4 points they move to in the output.
        interpolation: ``Inter.BILINEAR`` (alias ``LINEAR``), ``NEAREST``, ``BICUBIC`` (alias
            ``CUBIC``), ``AREA`` or ``PILCUBIC``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.arange(16, dtype=np.uint8).reshape(4, 4)
        >>> corners = [[0, 0], [3, 0], [3, 3], [0, 3]]
        >>> moved = [[1, 0], [4, 0], [4, 3], [1, 3]]
        >>> vision.Perspective(corners, moved, vision.Inter.NEAREST)(img)[0].tolist()
        [0, 0, 1, 2]
    """

    def __init__(
        self,
        start_points: Sequence[Sequence[int]],
        end_points: Sequence[Sequence[int]],
        interpolation: Inter = Inter.BILINEAR,
    ) -> None:
        self.start_points = _check_points(self.name, "start_points", start_points)
        self.end_points = _check_points(self.name, "end_points", end_points)
        self.interpolation = _check_interpolation(self.name, interpolation, _PERSPECTIVE_INTERS)
        try:
            perspective_matrix(self.start_points, self.end_points)
        except ValueError as e:
            raise ArgumentError(f"{self.name}: {e}") from None

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        return TensorSpec((h, w, *rest), dtype)


class RandomPerspective(Op):
    """With probability ``prob``, warp the image by a random perspective transform: each corner moves
    inwards by up to ``distortion_scale`` of half the image's width and height (drawn as MindSpore and
    torchvision draw them). The output has the input's size; uncovered pixels are 0.

    MindSpore takes PIL images only; this op takes arrays (``<H, W>``/``<H, W, C>``, any numeric dtype)
    and PIL images.

    Args:
        distortion_scale: how far corners may move, in [0, 1].
        prob: the probability of warping, in [0, 1].
        interpolation: ``Inter.BILINEAR``, ``NEAREST`` or ``BICUBIC``.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> out = vision.RandomPerspective(0.5, prob=1.0)(np.full((16, 16, 3), 200, np.uint8))
        >>> out.shape, bool((out == 0).any())
        ((16, 16, 3), True)
    """

    random = True

    def __init__(
        self, distortion_scale: float = 0.5, prob: float = 0.5, interpolation: Inter = Inter.BICUBIC
    ) -> None:
        scale = check_real(self.name, "distortion_scale", distortion_scale)
        if not 0.0 <= scale <= 1.0:
            raise ArgumentError(f"{self.name}: `distortion_scale` must be in [0, 1]. Found: {scale}")
        self.distortion_scale = scale
        self.prob = check_prob(self.name, prob)
        self.interpolation = _check_interpolation(self.name, interpolation, _RANDOM_PERSPECTIVE_INTERS)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        h, w, rest, dtype = one_image_spec(self.name, inputs, numeric=True)
        return TensorSpec((h, w, *rest), dtype)
