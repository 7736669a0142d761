"""Device-free plans of the augmentation policies (``minddata.vision.augment_policies``): the policy
tables, the magnitude spaces and the per-row draws. A plan is a list of ``(augmentation, magnitude)``
steps (or of indices into a list of ops) that every device's kernel executes as it is.

Tables and spaces are MindSpore's (its C++ AutoAugment, RandAugment and TrivialAugmentWide, which follow
torchvision's), computed in float32 as MindSpore computes them. Draws come from the row's RNG only.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "AUTO_AUGMENT_POLICIES",
    "Step",
    "auto_augment_plan",
    "auto_augment_space",
    "linspace32",
    "rand_augment_plan",
    "rand_augment_space",
    "select_subpolicy_plan",
    "trivial_augment_plan",
    "trivial_augment_space",
    "uniform_augment_plan",
]

Step = tuple[str, float]  # (augmentation name, signed magnitude)
Space = dict[str, tuple[np.ndarray, bool]]  # name -> (magnitudes by bin, whether the sign is drawn)

_N = None  # an augmentation without a magnitude

# (name, probability, magnitude bin) pairs, 25 sub-policies per policy, as in the AutoAugment paper and
# MindSpore's AutoAugmentPolicy.
AUTO_AUGMENT_POLICIES: dict[str, tuple[tuple[tuple[str, float, int | None], ...], ...]] = {
    "imagenet": (
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, _N)),
        (("Equalize", 0.8, _N), ("Equalize", 0.6, _N)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, _N), ("Solarize", 0.2, 4)), (("Equalize", 0.4, _N), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, _N)), (("Posterize", 0.8, 5), ("Equalize", 1.0, _N)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, _N), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, _N)),
        (("Equalize", 0.0, _N), ("Equalize", 0.8, _N)), (("Invert", 0.6, _N), ("Equalize", 1.0, _N)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, _N)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, _N)), (("Color", 0.4, 0), ("Equalize", 0.6, _N)),
        (("Equalize", 0.4, _N), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, _N)),
        (("Invert", 0.6, _N), ("Equalize", 1.0, _N)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, _N), ("Equalize", 0.6, _N)),
    ),
    "cifar10": (
        (("Invert", 0.1, _N), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, _N), ("Equalize", 0.9, _N)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, _N), ("Equalize", 0.5, _N)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, _N), ("AutoContrast", 0.4, _N)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, _N)), (("Equalize", 0.2, _N), ("AutoContrast", 0.6, _N)),
        (("Equalize", 0.2, _N), ("Equalize", 0.6, _N)), (("Color", 0.9, 9), ("Equalize", 0.6, _N)),
        (("AutoContrast", 0.8, _N), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, _N)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, _N), ("Solarize", 0.8, 3)), (("Equalize", 0.8, _N), ("Invert", 0.1, _N)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, _N)),
    ),
    "svhn": (
        (("ShearX", 0.9, 4), ("Invert", 0.2, _N)), (("ShearY", 0.9, 8), ("Invert", 0.7, _N)),
        (("Equalize", 0.6, _N), ("Solarize", 0.6, 6)), (("Invert", 0.9, _N), ("Equalize", 0.6, _N)),
        (("Equalize", 0.6, _N), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, _N)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, _N)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, _N), ("AutoContrast", 0.8, _N)), (("Equalize", 0.6, _N), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, _N)),
        (("Equalize", 0.9, _N), ("TranslateY", 0.6, 6)), (("Invert", 0.9, _N), ("Equalize", 0.6, _N)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, _N), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, _N), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, _N)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, _N)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, _N)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, _N)),
    ),
}  # fmt: skip


def linspace32(
    start: float | np.floating, end: float | np.floating, n: int, scale: float = 1.0, offset: float = 0.0,
    rounded: bool = False,
) -> np.ndarray:
    """``n`` evenly spaced float32 values ``(start + i * step) * scale + offset`` (optionally rounded
    half to even), each step in float32 as MindSpore's ``Linspace`` computes it."""
    f32 = np.float32
    step = f32(0.0) if n == 1 else f32(f32(end) - f32(start)) / f32(n - 1)
    values = (f32(start) + np.arange(n, dtype=f32) * step) * f32(scale) + f32(offset)
    return np.rint(values) if rounded else values


def _posterize_bins(num_bins: int, bits_span: float) -> np.ndarray:
    # 8 bits at bin 0, down to 8 - bits_span at the last bin.
    return linspace32(0.0, num_bins - 1.0, num_bins, -bits_span / (num_bins - 1.0), 8.0, rounded=True)


def _no_magnitude() -> np.ndarray:
    return np.zeros(1, np.float32)


def auto_augment_space(num_bins: int, height: int, width: int) -> Space:
    """AutoAugment's magnitudes per bin (10 bins in the policies) for a ``height`` x ``width`` image."""
    f32 = np.float32
    return {
        "ShearX": (linspace32(0.0, 0.3, num_bins), True),
        "ShearY": (linspace32(0.0, 0.3, num_bins), True),
        "TranslateX": (linspace32(0.0, f32(150.0) / f32(331) * f32(width), num_bins), True),
        "TranslateY": (linspace32(0.0, f32(150.0) / f32(331) * f32(height), num_bins), True),
        "Rotate": (linspace32(0.0, 30.0, num_bins), True),
        "Brightness": (linspace32(0.0, 0.9, num_bins), True),
        "Color": (linspace32(0.0, 0.9, num_bins), True),
        "Contrast": (linspace32(0.0, 0.9, num_bins), True),
        "Sharpness": (linspace32(0.0, 0.9, num_bins), True),
        "Posterize": (_posterize_bins(num_bins, 4.0), False),
        # MindSpore's AutoAugment starts Solarize at 256 (inverting nothing); RandAugment at 255.
        "Solarize": (linspace32(256.0, 0.0, num_bins), False),
        "AutoContrast": (_no_magnitude(), False),
        "Equalize": (_no_magnitude(), False),
        "Invert": (_no_magnitude(), False),
    }


def rand_augment_space(num_bins: int, height: int, width: int) -> Space:
    """RandAugment's 14 augmentations and their magnitudes per bin, in MindSpore's (alphabetical) order."""
    space = auto_augment_space(num_bins, height, width)
    del space["Invert"]
    space["Identity"] = (_no_magnitude(), False)
    space["Solarize"] = (linspace32(255.0, 0.0, num_bins), False)
    return dict(sorted(space.items()))


def trivial_augment_space(num_bins: int) -> Space:
    """TrivialAugmentWide's 14 augmentations and their (wider) magnitudes, in alphabetical order."""
    space: Space = {
        "Identity": (_no_magnitude(), False),
        "ShearX": (linspace32(0.0, 0.99, num_bins), True),
        "ShearY": (linspace32(0.0, 0.99, num_bins), True),
        "TranslateX": (linspace32(0.0, 32.0, num_bins), True),
        "TranslateY": (linspace32(0.0, 32.0, num_bins), True),
        "Rotate": (linspace32(0.0, 135.0, num_bins), True),
        "Brightness": (linspace32(0.0, 0.99, num_bins), True),
        "Color": (linspace32(0.0, 0.99, num_bins), True),
        "Contrast": (linspace32(0.0, 0.99, num_bins), True),
        "Sharpness": (linspace32(0.0, 0.99, num_bins), True),
        "Posterize": (_posterize_bins(num_bins, 6.0), False),
        "Solarize": (linspace32(255.0, 0.0, num_bins), False),
        "AutoContrast": (_no_magnitude(), False),
        "Equalize": (_no_magnitude(), False),
    }
    return dict(sorted(space.items()))


def _signed(magnitude: float, signed: bool, negative: bool) -> float:
    return -magnitude if signed and negative else magnitude


def auto_augment_plan(policy: str, height: int, width: int, rng: np.random.Generator) -> list[Step]:
    """One sub-policy drawn uniformly, then for each of its two augmentations a probability draw and a
    sign draw (MindSpore's order: sub-policy, both probabilities, both signs)."""
    table = AUTO_AUGMENT_POLICIES[policy]
    index = int(rng.integers(len(table)))
    probs = rng.random(2)
    negative = rng.integers(2, size=2) == 0
    space = auto_augment_space(10, height, width)
    steps: list[Step] = []
    for k, (name, prob, bin_) in enumerate(table[index]):
        if probs[k] > prob:
            continue
        magnitudes, signed = space[name]
        magnitude = float(magnitudes[bin_]) if bin_ is not None and magnitudes.size > 1 else 0.0
        steps.append((name, _signed(magnitude, signed, bool(negative[k]))))
    return steps


def rand_augment_plan(
    num_ops: int, magnitude: int, num_bins: int, height: int, width: int, rng: np.random.Generator
) -> list[Step]:
    """``num_ops`` augmentations drawn uniformly (with replacement), each at bin ``magnitude`` with a fair
    coin for the sign. MindSpore draws with a modulo that gives the first augmentation twice the weight and
    a negative sign one time in three; these draws are uniform."""
    space = rand_augment_space(num_bins, height, width)
    names = list(space)
    steps: list[Step] = []
    for _ in range(num_ops):
        name = names[int(rng.integers(len(names)))]
        negative = bool(rng.integers(2))
        magnitudes, signed = space[name]
        value = float(magnitudes[magnitude]) if magnitudes.size > 1 else 0.0
        steps.append((name, _signed(value, signed, negative)))
    return steps


def trivial_augment_plan(num_bins: int, rng: np.random.Generator) -> list[Step]:
    """One augmentation drawn uniformly, a magnitude bin drawn uniformly, a fair coin for the sign."""
    space = trivial_augment_space(num_bins)
    names = list(space)
    name = names[int(rng.integers(len(names)))]
    magnitudes, signed = space[name]
    value = float(magnitudes[int(rng.integers(magnitudes.size))]) if magnitudes.size > 1 else 0.0
    negative = bool(rng.integers(2))
    return [(name, _signed(value, signed, negative))]


def uniform_augment_plan(num_transforms: int, num_ops: int, rng: np.random.Generator) -> list[int]:
    """UniformAugment: ``num_ops`` distinct transforms chosen uniformly, kept in list order (as
    ``std::sample``), each then applied on a fair coin. Returns the indices to apply, in order."""
    chosen = np.sort(rng.choice(num_transforms, size=num_ops, replace=False))
    coins = rng.integers(2, size=num_ops)
    return [int(i) for i, coin in zip(chosen, coins, strict=True) if coin == 0]


def select_subpolicy_plan(probs: list[list[float]], rng: np.random.Generator) -> tuple[int, list[int]]:
    """RandomSelectSubpolicy: a sub-policy drawn uniformly, then each of its ops applied with its own
    probability. Returns (sub-policy index, indices of the ops to apply, in order)."""
    index = int(rng.integers(len(probs)))
    draws = rng.random(len(probs[index]))
    return index, [k for k, p in enumerate(probs[index]) if draws[k] < p]
