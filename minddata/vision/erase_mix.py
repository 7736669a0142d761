"""Erasing and mixing op specs, named as in ``mindspore.dataset.vision`` (2.x): :class:`NormalizePad`,
:class:`RandomErasing`, :class:`CutOut`, :class:`MixUpBatch`, :class:`CutMixBatch`.

Specs validate and hold parameters only; the CPU kernels live in ``minddata.ops.cpu.erase_mix``.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._validators import (
    check_bool,
    check_channel_values,
    check_int,
    check_prob,
    check_range,
    check_real,
    is_real,
)

__all__ = ["CutMixBatch", "CutOut", "ImageBatchFormat", "MixUpBatch", "NormalizePad", "RandomErasing"]


class ImageBatchFormat(enum.IntEnum):
    """Layout of a batch of images, as in MindSpore: ``NHWC`` (channels last) or ``NCHW``.

    Examples:
        >>> from minddata.vision import ImageBatchFormat
        >>> ImageBatchFormat.NCHW
        ImageBatchFormat.NCHW
    """

    NHWC = 0
    NCHW = 1

    def __repr__(self) -> str:
        return f"ImageBatchFormat.{self.name}"


def _check_alpha(op: str, alpha: Any) -> float:
    alpha = check_real(op, "alpha", alpha)
    if alpha <= 0.0:
        raise ArgumentError(f"{op}: `alpha` must be greater than 0. Found: {alpha}")
    return alpha


def _image_spec(op: str, spec: TensorSpec, *, ranks: tuple[int, ...] = (2, 3)) -> tuple[int | None, ...]:
    shape = tuple(spec.shape)
    if len(shape) not in ranks:
        want = " or ".join({2: "<H, W>", 3: "<H, W, C> / <C, H, W>"}[r] for r in ranks)
        raise ValueError(f"{op}: expected an image of shape {want}. Found shape {shape}")
    if any(d == 0 for d in shape):
        raise ValueError(f"{op}: expected a non-empty image. Found shape {shape}")
    dtype = spec_dtype(spec)
    if dtype is not None and dtype.kind not in "biuf":
        raise TypeError(f"{op}: expected a numeric image. Found dtype {dtype} (shape {shape})")
    return shape


# ---------------------------------------------------------------------------------------------- NormalizePad


class NormalizePad(Op):
    """Normalize an image as :class:`Normalize` does, then append one channel of zeros.

    The output has ``C + 1`` channels: ``<H, W, C + 1>`` for HWC input, ``<C + 1, H, W>`` for CHW
    (a 4-channel layout some accelerators read faster than 3). As in MindSpore, the input must be
    3-D; ``mean``/``std`` are on the 0-255 scale and one value applies to every channel.

    Args:
        mean: per-channel means, each in [0, 255].
        std: per-channel standard deviations, each in (0, 255].
        dtype: the output dtype, ``"float32"`` or ``"float16"``.
        is_hwc: ``True`` for HWC input, ``False`` for CHW.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> op = vision.NormalizePad(mean=[100, 50, 0], std=[2, 5, 10])
        >>> op(np.full((1, 1, 3), 200, np.uint8))
        array([[[50., 30., 20.,  0.]]], dtype=float32)
    """

    def __init__(
        self, mean: Sequence[float], std: Sequence[float], dtype: str = "float32", is_hwc: bool = True
    ) -> None:
        self.mean = check_channel_values(self.name, "mean", mean, positive=False)
        self.std = check_channel_values(self.name, "std", std, positive=True)
        if len(self.mean) != len(self.std):
            raise ArgumentError(
                f"{self.name}: `mean` and `std` must have the same length. "
                f"Found: {len(self.mean)} and {len(self.std)}"
            )
        if not isinstance(dtype, str):
            raise TypeError(f"{self.name}: `dtype` must be a str. Found: {dtype!r} ({type(dtype).__name__})")
        if dtype not in ("float32", "float16"):
            raise ArgumentError(f"{self.name}: `dtype` must be 'float32' or 'float16'. Found: {dtype!r}")
        self.dtype = dtype
        self.is_hwc = check_bool(self.name, "is_hwc", is_hwc)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        shape = _image_spec(self.name, one_spec(self.name, inputs), ranks=(3,))
        axis = 2 if self.is_hwc else 0
        n, channels = len(self.mean), shape[axis]
        if n != 1 and channels is not None and channels != n:
            raise ValueError(
                f"{self.name}: expected an {'HWC' if self.is_hwc else 'CHW'} image with {n} channels matching "
                f"mean/std of length {n}. Found shape {shape}"
            )
        out = list(shape)
        out[axis] = None if channels is None else channels + 1
        return TensorSpec(tuple(out), np.dtype(self.dtype))


# ---------------------------------------------------------------------------------------------- erasing


def _check_erase_value(op: str, value: Any) -> float | str | tuple[float, float, float]:
    if isinstance(value, str):
        if value != "random":
            raise ArgumentError(f"{op}: `value` as a str must be 'random'. Found: {value!r}")
        return value
    if is_real(value):
        return check_real(op, "value", value)
    if isinstance(value, Sequence) and not isinstance(value, bytes) and len(value) == 3:
        return tuple(check_real(op, f"value[{i}]", v) for i, v in enumerate(value))  # type: ignore[return-value]  # three values: the length was checked
    raise TypeError(
        f"{op}: `value` must be a number, a sequence of 3 numbers (R, G, B) or 'random'. "
        f"Found: {value!r} ({type(value).__name__})"
    )


class RandomErasing(Op):
    """With probability ``prob``, erase a random rectangle of the image (Random Erasing, Zhong et al.).

    Drawn as MindSpore draws it: up to ``max_attempts`` times, an area fraction uniformly from
    ``scale`` and an aspect ratio (width / height) uniformly from ``ratio``; the first box strictly
    smaller than the image is placed uniformly and filled. If none fits, the image is returned
    unchanged.

    Layout: MindSpore's RandomErasing takes CHW float images (after ``ToTensor``), and so does this
    op by default. ``is_hwc=True`` (an addition to MindSpore's signature) takes HWC images; a 2-D image
    is one channel either way. With the same draws the two layouts erase the same pixels with the
    same values. Integer images work too: fill values are clipped to the dtype's range and truncated.

    Args:
        prob: the probability of erasing, in [0, 1].
        scale: (min, max) of the erased area as a fraction of the image's, both >= 0.
        ratio: (min, max) of the erased box's aspect ratio, both > 0.
        value: the fill: a number for every channel, 3 numbers for R, G, B, or ``"random"`` for values
            drawn from the standard normal distribution.
        inplace: erase in the input array itself (when it is writable) instead of a copy.
        max_attempts: draws of a box before giving up.
        is_hwc: ``False`` (default, as MindSpore) for CHW input, ``True`` for HWC.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> img = np.ones((3, 20, 20), np.float32)
        >>> out = vision.RandomErasing(prob=1.0, scale=(0.1, 0.1), ratio=(1.0, 1.0))(img)
        >>> out.shape, int((out == 0).sum()) // 3
        ((3, 20, 20), 36)
    """

    random = True

    def __init__(
        self,
        prob: float = 0.5,
        scale: Sequence[float] = (0.02, 0.33),
        ratio: Sequence[float] = (0.3, 3.3),
        value: float | str | Sequence[float] = 0,
        inplace: bool = False,
        max_attempts: int = 10,
        *,
        is_hwc: bool = False,
    ) -> None:
        self.prob = check_prob(self.name, prob)
        self.scale = check_range(self.name, "scale", scale, low=0.0)
        # ratio 0 would divide by zero when the box's height is derived from its width.
        self.ratio = check_range(self.name, "ratio", ratio, low=0.0, low_open=True)
        self.value = _check_erase_value(self.name, value)
        self.inplace = check_bool(self.name, "inplace", inplace)
        self.max_attempts = check_int(self.name, "max_attempts", max_attempts, low=1, high=2**31 - 1)
        self.is_hwc = check_bool(self.name, "is_hwc", is_hwc)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        shape = _image_spec(self.name, image)
        if isinstance(self.value, tuple) and len(shape) == 3:
            channels = shape[2] if self.is_hwc else shape[0]
            if channels is not None and channels != 3:
                raise ValueError(
                    f"{self.name}: `value` has 3 entries (R, G, B) but the image has {channels} channels. "
                    f"Found shape {shape}"
                )
        return TensorSpec(shape, spec_dtype(image))


class CutOut(Op):
    """Set ``num_patches`` random ``length`` x ``length`` squares of the image to zero (DeVries & Taylor).

    Each square's top-left corner is drawn uniformly from ``[-length, H] x [-length, W]`` and the
    square is clipped to the image, as MindSpore draws it, so squares may hang over the edges.
    MindSpore rejects a ``length`` larger than the image; here such squares are simply clipped, and
    a 2-D ``<H, W>`` image is accepted as one channel.

    Args:
        length: the side of each square, at least 1.
        num_patches: how many squares, at least 1.
        is_hwc: ``True`` for HWC input, ``False`` for CHW.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> out = vision.CutOut(length=4, num_patches=2)(np.ones((16, 16, 3), np.uint8))
        >>> out.shape, out.dtype, set(np.unique(out).tolist()) <= {0, 1}  # ones, and zeros where cut
        ((16, 16, 3), dtype('uint8'), True)
    """

    random = True

    def __init__(self, length: int, num_patches: int = 1, is_hwc: bool = True) -> None:
        self.length = check_int(self.name, "length", length, low=1)
        self.num_patches = check_int(self.name, "num_patches", num_patches, low=1)
        self.is_hwc = check_bool(self.name, "is_hwc", is_hwc)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        image = one_spec(self.name, inputs)
        return TensorSpec(_image_spec(self.name, image), spec_dtype(image))


# ---------------------------------------------------------------------------------------------- batch mixing


def _batch_specs(
    op: str, inputs: tuple[TensorSpec, ...]
) -> tuple[tuple[int | None, ...], np.dtype | None, tuple[int | None, ...]]:
    if len(inputs) != 2:
        raise ValueError(f"{op}: expected 2 inputs (images, labels). Found: {len(inputs)}")
    images, labels = inputs
    ishape, lshape = tuple(images.shape), tuple(labels.shape)
    if len(ishape) != 4:
        raise ValueError(
            f"{op}: expected a batch of images of shape <N, H, W, C> or <N, C, H, W>. Found shape {ishape}. "
            "Batch the rows (Dataset.batch) before this op"
        )
    if len(lshape) not in (2, 3):
        raise ValueError(
            f"{op}: expected one-hot labels of shape <N, num_classes> or <N, L, num_classes>. "
            f"Found shape {lshape}. Use transforms.OneHot before batching"
        )
    if ishape[0] is not None and lshape[0] is not None and ishape[0] != lshape[0]:
        raise ValueError(
            f"{op}: images and labels must have the same batch size. Found {ishape} and {lshape}"
        )
    for what, spec in (("images", images), ("labels", labels)):
        dtype = spec_dtype(spec)
        if dtype is not None and dtype.kind not in "biuf":
            raise TypeError(f"{op}: expected numeric {what}. Found dtype {dtype} (shape {tuple(spec.shape)})")
    return ishape, spec_dtype(images), lshape


class MixUpBatch(Op):
    """MixUp (Zhang et al.) over a batch: each image and label becomes a mix with those of another
    image of the batch.

    One weight ``lam`` is drawn from Beta(alpha, alpha) for the batch and the batch is paired with a
    random permutation of itself: ``image[i] = lam * image[i] + (1 - lam) * image[perm[i]]``, and the
    same for labels. Images keep their dtype (integers rounded and clipped); labels come out
    ``float32``. The op is elementwise, so NHWC and NCHW batches both work.

    Inputs: images ``<N, H, W, C>`` or ``<N, C, H, W>``; one-hot labels ``<N, num_classes>`` or
    ``<N, L, num_classes>`` (MindSpore wants integer labels; any numeric dtype works here, e.g.
    labels already smoothed by :class:`~minddata.transforms.OneHot`).

    Args:
        alpha: the Beta distribution's parameter, greater than 0.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> images = np.stack([np.zeros((2, 2, 3), np.float32), np.ones((2, 2, 3), np.float32)])
        >>> labels = np.array([[1, 0], [0, 1]])
        >>> out_images, out_labels = vision.MixUpBatch(alpha=1.0)(images, labels)
        >>> out_images.shape, out_labels.dtype, bool(np.allclose(out_labels.sum(axis=1), 1.0))
        ((2, 2, 2, 3), dtype('float32'), True)
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = _check_alpha(self.name, alpha)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        ishape, idtype, lshape = _batch_specs(self.name, inputs)
        return TensorSpec(ishape, idtype), TensorSpec(lshape, np.dtype(np.float32))


class CutMixBatch(Op):
    """CutMix (Yun et al.) over a batch: paste a random box from another image of the batch, and mix
    the labels by the pasted area.

    Drawn as MindSpore draws it: the batch is paired with a random permutation of itself; for each
    image, ``lam`` is drawn from Beta(alpha, alpha) and, with probability ``prob``, a box of
    ``int(W * (1 - lam))`` x ``int(H * (1 - lam))`` centred on a uniform point (clipped to the image)
    is copied from the partner image. The label becomes ``a * label[i] + (1 - a) * label[perm[i]]``
    with ``a = 1 - box area / image area``. (MindSpore scales the box sides by ``1 - lam`` where the
    paper uses ``sqrt(1 - lam)``; this op follows MindSpore, and the labels match the real area.)

    Inputs: images in ``image_batch_format``; one-hot labels ``<N, num_classes>`` or
    ``<N, L, num_classes>`` of any numeric dtype (MindSpore: integers only). Images keep their dtype;
    labels come out ``float32``. Any channel count works (MindSpore: 1 or 3).

    Args:
        image_batch_format: :class:`ImageBatchFormat` ``NHWC`` or ``NCHW``.
        alpha: the Beta distribution's parameter, greater than 0.
        prob: the probability of mixing each image, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> images = np.stack([np.zeros((8, 8, 3), np.uint8), np.full((8, 8, 3), 255, np.uint8)])
        >>> labels = np.array([[1, 0], [0, 1]])
        >>> op = vision.CutMixBatch(vision.ImageBatchFormat.NHWC, alpha=1.0, prob=1.0)
        >>> out_images, out_labels = op(images, labels)
        >>> out_images.shape, out_labels.shape, out_labels.dtype
        ((2, 8, 8, 3), (2, 2), dtype('float32'))
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(
        self,
        image_batch_format: ImageBatchFormat = ImageBatchFormat.NHWC,
        alpha: float = 1.0,
        prob: float = 1.0,
    ) -> None:
        if not isinstance(image_batch_format, ImageBatchFormat):
            raise TypeError(
                f"{self.name}: `image_batch_format` must be a vision.ImageBatchFormat member, e.g. "
                f"ImageBatchFormat.NHWC. Found: {image_batch_format!r} ({type(image_batch_format).__name__})"
            )
        self.image_batch_format = image_batch_format
        self.alpha = _check_alpha(self.name, alpha)
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        ishape, idtype, lshape = _batch_specs(self.name, inputs)
        hw = ishape[1:3] if self.image_batch_format is ImageBatchFormat.NHWC else ishape[2:4]
        if any(d == 0 for d in hw):
            raise ValueError(
                f"{self.name}: expected images of non-zero height and width. Found shape {ishape}"
            )
        return TensorSpec(ishape, idtype), TensorSpec(lshape, np.dtype(np.float32))
