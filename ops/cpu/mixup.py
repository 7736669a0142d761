"""CPU kernel of MixUp (MindSpore's Python-transform batch MixUp)."""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata.ops.base import KernelContext, KernelOp
from minddata.ops.plans.mixup import mixup_weights, shifted_partners
from minddata.ops.registry import register_kernel


def _batch(what: str, x: Any, batch_size: int) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"MixUp: expected numeric {what}. Found dtype {arr.dtype} (shape {arr.shape})")
    if arr.ndim < 2 or arr.shape[0] != batch_size:
        raise ValueError(
            f"MixUp: expected a batch of {batch_size} {what} (batch_size), shape <{batch_size}, ...>. "
            f"Found shape {arr.shape}. Batch the rows (Dataset.batch) before this op"
        )
    return arr


@register_kernel("MixUp", "CPU")
def mix_up(op: KernelOp, ctx: KernelContext, images: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    imgs = _batch("images", images, op.batch_size).astype(np.float32)
    labs = _batch("labels", labels, op.batch_size).astype(np.float32)
    lam = mixup_weights(ctx.rng, op.batch_size, op.alpha)
    if op.is_single:
        partner = shifted_partners(op.batch_size)
        partner_images, partner_labels = imgs[partner], labs[partner]
    else:
        # The previous batch lives on the op, as in MindSpore: each worker's copy of the op keeps its own.
        previous = getattr(op, "_previous_batch", None)
        if previous is None or previous[0].shape != imgs.shape or previous[1].shape != labs.shape:
            op._previous_batch = (imgs, labs)
            return imgs, labs
        partner_images, partner_labels = previous
    lam_images = lam.reshape((-1,) + (1,) * (imgs.ndim - 1))
    lam_labels = lam.reshape((-1,) + (1,) * (labs.ndim - 1))
    mixed = (lam_images * imgs + (1 - lam_images) * partner_images).astype(np.float32)
    mixed_labels = (lam_labels * labs + (1 - lam_labels) * partner_labels).astype(np.float32)
    if not op.is_single:
        op._previous_batch = (mixed, mixed_labels)
    return mixed, mixed_labels
