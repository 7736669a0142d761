"""Box-aware op specs for detection, named as in ``mindspore.dataset.vision`` (2.x): each takes two
columns, an image and its bounding boxes, and returns both, the boxes moved with the pixels.

The bounding-box column follows MindSpore's convention: a ``<N, 4 + k>`` array of
``[x, y, width, height, ...]`` rows in pixels (``x`` to the right, ``y`` down), any extra columns
(class, difficulty, ...) carried along untouched; it comes out ``float32``. Every box must lie inside
the image with no negative corner, or the op fails naming the box (MindSpore's check). A crop clips
boxes to the crop and drops those left with no area. The rules live in ``minddata.ops.plans.bbox``;
the CPU kernels in ``minddata.ops.cpu.bbox``.

Map them over both columns::

    ds.map(operations=[vision.RandomCropWithBBox(300)], input_columns=["image", "bbox"])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.ops.plans.image import square
from minddata.transforms import spec_dtype
from minddata.vision._utils import Border, Inter
from minddata.vision._validators import (
    check_bool,
    check_border,
    check_fill_value,
    check_inter,
    check_padding,
    check_prob,
    check_real,
    check_size,
    image_spec_dims,
)
from minddata.vision.resize import set_random_crop_params

__all__ = [
    "BoundingBoxAugment",
    "RandomCropWithBBox",
    "RandomHorizontalFlipWithBBox",
    "RandomResizeWithBBox",
    "RandomResizedCropWithBBox",
    "RandomVerticalFlipWithBBox",
    "ResizeWithBBox",
]


def image_and_boxes_specs(
    op: str, inputs: tuple[TensorSpec, ...]
) -> tuple[tuple[int | None, int | None, tuple[int | None, ...]], np.dtype | None, tuple[int | None, ...]]:
    """((height, width, channel dims), image dtype, box shape) of an (image, bbox) input pair."""
    if len(inputs) != 2:
        raise ValueError(
            f"{op}: expected 2 inputs, an image and its bounding boxes (input_columns=['image', 'bbox']). "
            f"Found: {len(inputs)}"
        )
    image, boxes = inputs
    dims = image_spec_dims(op, image)
    box_shape = tuple(boxes.shape)
    if len(box_shape) != 2:
        raise ValueError(
            f"{op}: bounding boxes must be a 2-D <N, 4+> array of [x, y, width, height, ...] rows. "
            f"Found shape {box_shape}"
        )
    if box_shape[1] is not None and box_shape[1] < 4:
        raise ValueError(
            f"{op}: bounding boxes must have at least 4 columns (x, y, width, height). Found shape {box_shape}"
        )
    box_dtype = spec_dtype(boxes)
    if box_dtype is not None and box_dtype.kind not in "iuf":
        raise TypeError(f"{op}: expected numeric bounding boxes. Found dtype {box_dtype} (shape {box_shape})")
    return dims, spec_dtype(image), box_shape


def _boxes_out(box_shape: tuple[int | None, ...], *, count_kept: bool) -> TensorSpec:
    # A crop may drop boxes: their number is known only at run time.
    return TensorSpec((box_shape[0] if count_kept else None, box_shape[1]), np.dtype(np.float32))


def _resize_specs(
    op: str, size: int | tuple[int, int], inputs: tuple[TensorSpec, ...]
) -> tuple[TensorSpec, TensorSpec]:
    (h, w, rest), dtype, box_shape = image_and_boxes_specs(op, inputs)
    if isinstance(size, tuple):
        out_h, out_w = size
    elif h is None or w is None:
        out_h = out_w = None
    elif h <= w:  # MindSpore's rule: the shorter side becomes size
        out_h, out_w = size, int(w * size / h)
    else:
        out_h, out_w = int(h * size / w), size
    return TensorSpec((out_h, out_w, *rest), dtype), _boxes_out(box_shape, count_kept=True)


class ResizeWithBBox(Op):
    """Resize the image as :class:`Resize` does and scale its bounding boxes with it.

    Args:
        size: an int resizes the shorter side to ``size`` keeping the aspect ratio; ``(height, width)``
            resizes to exactly that.
        interpolation: a :class:`Inter` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image, boxes = np.zeros((10, 20, 3), np.uint8), np.array([[2, 4, 6, 4]], np.float32)
        >>> out_image, out_boxes = vision.ResizeWithBBox((5, 5))(image, boxes)
        >>> out_image.shape, out_boxes.tolist()
        ((5, 5, 3), [[0.5, 2.0, 1.5, 2.0]])
    """

    num_inputs = 2
    num_outputs = 2

    def __init__(self, size: int | Sequence[int], interpolation: Inter = Inter.LINEAR) -> None:
        self.size = check_size(self.name, size)
        self.interpolation = check_inter(self.name, interpolation)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        return _resize_specs(self.name, self.size, inputs)


class RandomResizeWithBBox(Op):
    """:class:`ResizeWithBBox` with an interpolation drawn per row, as MindSpore draws it: uniformly
    among ``Inter.BILINEAR``, ``NEAREST``, ``BICUBIC`` and ``AREA``.

    Args:
        size: as :class:`ResizeWithBBox`'s.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image, boxes = np.zeros((10, 20, 3), np.uint8), np.array([[0, 0, 20, 10]], np.float32)
        >>> out_image, out_boxes = vision.RandomResizeWithBBox(5)(image, boxes)
        >>> out_image.shape, out_boxes.tolist()
        ((5, 10, 3), [[0.0, 0.0, 10.0, 5.0]])
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = check_size(self.name, size)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        return _resize_specs(self.name, self.size, inputs)


class RandomCropWithBBox(Op):
    """Crop the image at a random position as :class:`RandomCrop` does (same parameters, same draws),
    moving its boxes into the crop: boxes are clipped to the crop and those left with no area dropped.

    Padding moves every box by the left and top padding first.

    Args:
        size: an int for a square crop, or ``(height, width)``.
        padding: as :class:`Pad`'s ``padding``; ``None`` pads nothing.
        pad_if_needed: pad an image smaller than ``size`` instead of failing.
        fill_value: as :class:`Pad`'s.
        padding_mode: a :class:`Border` member.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image, boxes = np.zeros((8, 8, 3), np.uint8), np.array([[0, 0, 8, 8, 7]], np.float32)
        >>> out_image, out_boxes = vision.RandomCropWithBBox(4)(image, boxes)
        >>> out_image.shape, out_boxes.tolist()
        ((4, 4, 3), [[0.0, 0.0, 4.0, 4.0, 7.0]])
    """

    random = True
    num_inputs = 2
    num_outputs = 2

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

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        (h, w, rest), dtype, box_shape = image_and_boxes_specs(self.name, inputs)
        ch, cw = square(self.size)
        left, top, right, bottom = self.padding or (0, 0, 0, 0)
        ph = None if h is None else h + top + bottom
        pw = None if w is None else w + left + right
        if not self.pad_if_needed and ((ph is not None and ph < ch) or (pw is not None and pw < cw)):
            raise ValueError(
                f"{self.name}: the crop size ({ch}, {cw}) is larger than the padded image ({ph}, {pw}) of an "
                f"input of shape {tuple(inputs[0].shape)}; set pad_if_needed=True or a smaller size"
            )
        return TensorSpec((ch, cw, *rest), dtype), _boxes_out(box_shape, count_kept=False)


class RandomHorizontalFlipWithBBox(Op):
    """With probability ``prob``, mirror the image left to right and its boxes with it
    (``x`` becomes ``width - x - w``).

    Args:
        prob: the probability of flipping, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image, boxes = np.zeros((4, 10, 3), np.uint8), np.array([[1, 0, 3, 2]], np.float32)
        >>> vision.RandomHorizontalFlipWithBBox(1.0)(image, boxes)[1].tolist()
        [[6.0, 0.0, 3.0, 2.0]]
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        (h, w, rest), dtype, box_shape = image_and_boxes_specs(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype), _boxes_out(box_shape, count_kept=True)


class RandomVerticalFlipWithBBox(Op):
    """With probability ``prob``, mirror the image top to bottom and its boxes with it
    (``y`` becomes ``height - y - h``).

    Args:
        prob: the probability of flipping, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image, boxes = np.zeros((10, 4, 3), np.uint8), np.array([[0, 1, 2, 3]], np.float32)
        >>> vision.RandomVerticalFlipWithBBox(1.0)(image, boxes)[1].tolist()
        [[0.0, 6.0, 2.0, 3.0]]
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = check_prob(self.name, prob)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        (h, w, rest), dtype, box_shape = image_and_boxes_specs(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype), _boxes_out(box_shape, count_kept=True)


class RandomResizedCropWithBBox(Op):
    """Crop a random region as :class:`RandomResizedCrop` does (same parameters, same draws) and resize
    it to ``size``; boxes are clipped to the region (those left with no area dropped), then scaled.

    Args:
        size: output size, an int for a square or ``(height, width)``.
        scale: bounds of the crop's area as a fraction of the image's.
        ratio: bounds of the crop's aspect ratio, width / height.
        interpolation: a :class:`Inter` member used to resize the crop.
        max_attempts: draws before falling back to the centre crop.

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image, boxes = np.zeros((20, 20, 3), np.uint8), np.array([[0, 0, 20, 20]], np.float32)
        >>> out_image, out_boxes = vision.RandomResizedCropWithBBox(10, scale=(1.0, 1.0), ratio=(1, 1))(image, boxes)
        >>> out_image.shape, out_boxes.tolist()
        ((10, 10, 3), [[0.0, 0.0, 10.0, 10.0]])
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(
        self,
        size: int | Sequence[int],
        scale: Sequence[float] = (0.08, 1.0),
        ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: Inter = Inter.BILINEAR,
        max_attempts: int = 10,
    ) -> None:
        set_random_crop_params(self, size, scale, ratio, interpolation, max_attempts)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        (_, _, rest), dtype, box_shape = image_and_boxes_specs(self.name, inputs)
        return TensorSpec((*square(self.size), *rest), dtype), _boxes_out(box_shape, count_kept=False)


class BoundingBoxAugment(Op):
    """Apply an image op inside some of the boxes: each box is chosen with probability ``ratio``, its
    region (the box truncated to whole pixels) is cut out, transformed, resized back to the region's
    size if the op changed it (bilinear, as MindSpore does), and pasted back. Boxes are unchanged.

    Boxes are processed in order, each on the image as the previous ones left it. A box less than one
    pixel wide or high is skipped (MindSpore fails on it).

    Args:
        transform: an op taking and returning one image, e.g. ``vision.RandomRotation(90)``.
        ratio: the probability of transforming each box, in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> image = np.zeros((6, 6), np.uint8)
        >>> image[0:2, 0:3] = [[1, 2, 3], [4, 5, 6]]
        >>> op = vision.BoundingBoxAugment(vision.HorizontalFlip(), ratio=1.0)
        >>> out_image, out_boxes = op(image, np.array([[0, 0, 3, 2]], np.float32))
        >>> out_image[0:2, 0:3].tolist()
        [[3, 2, 1], [6, 5, 4]]
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(self, transform: Op, ratio: float = 0.3) -> None:
        if not isinstance(transform, Op) or transform.num_inputs != 1 or transform.num_outputs != 1:
            raise TypeError(
                f"{self.name}: `transform` must be an image op taking and returning one image, e.g. "
                f"vision.RandomRotation(90). Found: {transform!r} ({type(transform).__name__})"
            )
        self.transform = transform
        value = check_real(self.name, "ratio", ratio)
        if not 0.0 <= value <= 1.0:
            raise ArgumentError(f"{self.name}: `ratio` must be in [0, 1]. Found: {value}")
        self.ratio = value

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        (h, w, rest), dtype, box_shape = image_and_boxes_specs(self.name, inputs)
        return TensorSpec((h, w, *rest), dtype), _boxes_out(box_shape, count_kept=True)
