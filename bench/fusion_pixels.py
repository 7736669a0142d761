"""How far the reduced-scale JPEG decode rewrites move pixels, and (``--time``) what they save.

    python -m minddata.bench.fusion_pixels --images 200            # pixel differences only
    python -m minddata.bench.fusion_pixels --images 2000 --time    # plus Decode→Resize throughput

Over generated ImageNet-like JPEGs (``minddata.bench.images``) each pipeline runs fused and
unfused (same seed, so random crops agree) and every image's mean and maximum absolute difference
(grey levels) are summarised: the mean, the worst and the 95th percentile of the per-image means,
and the largest single-pixel difference. The figures are the bounds ``explain()`` states and
docs/mindspore_differences.md quotes. Pixels do not depend on the machine; ``--time`` does: run it
on a quiet machine only.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["PIPELINES", "measure", "main", "pixel_differences"]

# name -> (op list builder, the config switch that enables the rewrite)
PIPELINES = {
    "Decode→Resize(64) (set_fast_decode_resize)": (lambda v: [v.Decode(), v.Resize(64)], True),
    "Decode→Resize(112)→CenterCrop(100) (set_fast_decode_resize)": (
        lambda v: [v.Decode(), v.Resize(112), v.CenterCrop(100)], True),
    "Decode→RandomResizedCrop(64) (default)": (lambda v: [v.Decode(), v.RandomResizedCrop(64)], False),
    "Decode→RandomResizedCrop(128) (default)": (lambda v: [v.Decode(), v.RandomResizedCrop(128)], False),
}


def _rows(folder: str, ops: list, *, fusion: bool, fast: bool) -> list[np.ndarray]:
    import minddata as md

    md.config.set_seed(1)
    md.config.set_enable_fusion(fusion)
    md.config.set_fast_decode_resize(fast)
    ds = md.ImageFolderDataset(folder, shuffle=False).map(ops, input_columns="image", num_parallel_workers=2)
    rows = [row["image"] for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    md.config.load_defaults()
    return rows


def pixel_differences(ours: list[np.ndarray], theirs: list[np.ndarray]) -> tuple[list[float], list[float]]:
    """Per image pair: the mean and the largest absolute difference (grey levels for 8-bit images, the
    arrays' own units otherwise). ``minddata parity`` summarises its peers with these too."""
    from minddata._parity import difference

    pairs = [difference(a, b) for a, b in zip(ours, theirs)]
    return [mean for _, mean in pairs], [largest for largest, _ in pairs]


def measure(folder: str) -> dict[str, dict[str, float]]:
    """Per pipeline: the distribution of per-image mean absolute differences, fused vs unfused."""
    from minddata import vision

    out = {}
    for name, (build, fast) in PIPELINES.items():
        fused = _rows(folder, build(vision), fusion=True, fast=fast)
        plain = _rows(folder, build(vision), fusion=False, fast=False)
        means, maxima = pixel_differences(fused, plain)
        out[name] = {
            "images": len(means),
            "mean": round(float(np.mean(means)), 2),
            "p95_of_means": round(float(np.percentile(means, 95)), 2),
            "worst_mean": round(max(means), 2),
            "max_pixel": int(max(maxima)),
        }
    return out


def time_decode_resize(folder: str, repeats: int) -> dict[str, float]:
    """Images/s of Decode→Resize(64) with the fast decode off and on (best of ``repeats``)."""
    from minddata import vision

    result = {}
    for fast in (False, True):
        best = 0.0
        for _ in range(repeats):
            start = time.perf_counter()
            n = len(_rows(folder, [vision.Decode(), vision.Resize(64)], fusion=True, fast=fast))
            best = max(best, n / (time.perf_counter() - start))
        result["fast" if fast else "default"] = round(best, 1)
    result["speed_up"] = round(result["fast"] / result["default"], 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.fusion_pixels", description=__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=positive_int, default=200, help="generated JPEGs (default 200)")
    parser.add_argument("--time", action="store_true", help="also time Decode→Resize, default vs fast")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timing rounds (best kept)")
    args = parser.parse_args(argv)
    from minddata.bench.images import generate

    with tempfile.TemporaryDirectory() as folder:
        generate(folder, num_images=args.images, num_classes=4, seed=0)
        report: dict = {"pixels": measure(folder)}
        if args.time:
            report["decode_resize_images_per_s"] = time_decode_resize(folder, args.repeats)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
