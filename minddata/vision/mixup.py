"""MixUp, named as in ``mindspore.dataset.vision`` (2.x): MindSpore's Python-transform MixUp over a
batch of images and one-hot labels. (:class:`MixUpBatch` is the C++ op's form.) The weights are
planned in ``minddata.ops.plans.mixup``; the CPU kernel lives in ``minddata.ops.cpu.mixup``.
"""

from __future__ import annotations

import numpy as np

from minddata.errors import ArgumentError
from minddata.ops.base import Op, TensorSpec
from minddata.vision._validators import check_bool, check_int, check_real

__all__ = ["MixUp"]


class MixUp(Op):
    """Mix each image and its one-hot label with another's: ``lam * x + (1 - lam) * partner``, one
    ``lam`` per image drawn from Beta(alpha, alpha).

    With ``is_single`` (the default) the partner of image ``i`` is image ``i + 1`` of the same batch (the
    last image's is the first). Without it, the partner is the previous batch's mixed result, the
    first batch passing through unchanged; "previous" is the previous batch that the same worker ran
    (with ``num_parallel_workers=1`` the pipeline's order, as in MindSpore), so that mode depends on
    how batches fall to workers.

    Inputs: images ``<N, H, W, C>`` (or any ``<N, ...>``) and one-hot labels ``<N, num_classes>``, with
    ``N == batch_size``. Both come out ``float32`` (MindSpore gives NumPy's float64).

    Args:
        batch_size: the number of images in a batch, at least 1.
        alpha: the Beta distribution's parameter, greater than 0.
        is_single: mix within each batch (``True``) or with the previous batch (``False``).

    Examples:
        >>> import numpy as np
        >>> from minddata import vision
        >>> images = np.stack([np.zeros((2, 2, 3), np.uint8), np.full((2, 2, 3), 100, np.uint8)])
        >>> labels = np.eye(2, dtype=np.int64)
        >>> out_images, out_labels = vision.MixUp(batch_size=2, alpha=0.2)(images, labels)
        >>> out_images.dtype, bool(np.allclose(out_labels.sum(axis=1), 1.0))
        (dtype('float32'), True)
    """

    random = True
    num_inputs = 2
    num_outputs = 2

    def __init__(self, batch_size: int, alpha: float, is_single: bool = True) -> None:
        self.batch_size = check_int(self.name, "batch_size", batch_size, low=1)
        value = check_real(self.name, "alpha", alpha)
        if value <= 0:
            raise ArgumentError(f"{self.name}: `alpha` must be greater than 0. Found: {value}")
        self.alpha = value
        self.is_single = check_bool(self.name, "is_single", is_single)

    def output_spec(self, *inputs: TensorSpec) -> tuple[TensorSpec, TensorSpec]:
        if len(inputs) != 2:
            raise ValueError(f"{self.name}: expected 2 inputs (images, labels). Found: {len(inputs)}")
        images, labels = inputs
        for what, spec in (("images", images), ("labels", labels)):
            shape = tuple(spec.shape)
            if len(shape) < 2:
                raise ValueError(f"{self.name}: expected a batch of {what} <N, ...>. Found shape {shape}")
            if shape[0] is not None and shape[0] != self.batch_size:
                raise ValueError(
                    f"{self.name}: the batch holds {shape[0]} {what} but batch_size is {self.batch_size}. "
                    f"Found shape {shape}"
                )
        f32 = np.dtype(np.float32)
        return TensorSpec(tuple(images.shape), f32), TensorSpec(tuple(labels.shape), f32)
