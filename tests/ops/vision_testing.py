"""Images and helpers shared by the vision op tests (import them as ``from vision_testing import ...``;
the ``photo`` and ``drawing`` fixtures are in conftest.py)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw

from minddata.ops import KernelContext, get_kernel


def make_photo(h: int = 48, w: int = 64, c: int = 3, seed: int = 0) -> np.ndarray:
    """A smooth, photo-like image: gradients plus blurred noise (resampling differences are real)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    base = np.stack([(x * (k + 1) + y * (c - k)) / (w + h) * 180 for k in range(c)], axis=-1)
    noise = cv2.GaussianBlur(rng.normal(0, 40, (h, w, c)), (5, 5), 1.5).reshape(h, w, c)
    return np.clip(base + noise + 30, 0, 255).astype(np.uint8)


def make_drawing(h: int = 37, w: int = 53) -> np.ndarray:
    """A Pillow drawing with hard edges and distinct colours, so any misplaced pixel shows."""
    im = Image.new("RGB", (w, h), (40, 90, 160))
    d = ImageDraw.Draw(im)
    d.rectangle((3, 4, 20, 15), fill=(250, 200, 10))
    d.ellipse((25, 10, 50, 33), fill=(10, 180, 70), outline=(255, 255, 255))
    d.line((0, h - 1, w - 1, 0), fill=(200, 30, 30), width=2)
    arr = np.array(im)
    arr[..., 2] = (arr[..., 2].astype(int) + np.arange(w)[None, :] * 2) % 256  # a gradient in blue
    return arr


def run(op: Any, *inputs: Any, seed: int = 1, pass_index: int = 0, row: int = 0, position: int = 0) -> Any:
    """Run an op's CPU kernel with an explicit row context, as the engine does."""
    ctx = KernelContext(seed=seed, pass_index=pass_index, row_index=row, op_position=position)
    return get_kernel(op.name, "CPU")(op, ctx, *inputs)


def within_one(a: np.ndarray, b: np.ndarray, frac: float = 0.99, mask: np.ndarray | None = None) -> bool:
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    if mask is not None:
        diff = diff[mask]
    return float((diff <= 1).mean()) >= frac


def fills(fill: Any, channels: int) -> list[float]:
    """Pad/Rotate's documented fill rule: an int for every channel; (R, G, B) in channel order, a
    one-channel image takes R, a fourth channel 0."""
    if isinstance(fill, int):
        return [fill] * channels
    return (list(fill) + [0] * channels)[:channels] if channels > 1 else [fill[0]]


def noise_photo(h: int, w: int, seed: int) -> np.ndarray:
    """A uint8 HxWx3 gradient with seeded noise: the GPU driver tests' input (DALI, torch, torch on CUDA)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(3 * x + y) % 256, (x + 5 * y) % 256, (2 * x + 2 * y) % 256], -1)
    return np.clip(base + rng.integers(0, 40, (h, w, 3)), 0, 255).astype(np.uint8)
