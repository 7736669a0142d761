"""Per-image CPU cost of each kernel of the standard pipelines, run one after another on one thread.

    python -m minddata.bench.kernel_cost [--data DIR] [--images N]

Each image goes through every pipeline's kernels in turn, so a kernel runs with caches cold from the
others: these are costs as a mixed workload sees them, above the warm costs. The floor ``minddata
bench`` prints (its "floor" column) is :mod:`minddata.bench.floor`: the fastest kernel for each step,
timed warm, with OpenCV at one thread as pipelines run it.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from minddata import vision
from minddata.ops.base import KernelContext
from minddata.ops.cpu import jpeg
from minddata.ops.cpu.crop import center_crop
from minddata.ops.cpu.flip import random_horizontal_flip
from minddata.ops.cpu.fused import decode_random_resized_crop, fused_decode_resize
from minddata.ops.cpu.normalize import check_normalize_input, normalize_into
from minddata.ops.cpu.resize import resize
from minddata.ops.fused import FusedDecodeResize

MEAN = np.asarray([123.675, 116.28, 103.53], np.float32)
STD = np.asarray([58.395, 57.12, 57.375], np.float32)


def measure(files: list[Path]) -> dict[str, dict[str, float]]:
    normalize = vision.Normalize(MEAN.tolist(), STD.tolist())
    crop = vision.RandomResizedCrop(224)
    flip = vision.RandomHorizontalFlip()
    resize256 = FusedDecodeResize(vision.Decode(), vision.Resize(256))
    center = vision.CenterCrop(224)
    resize416 = FusedDecodeResize(vision.Decode(), vision.Resize((416, 416)))
    plain256, plain416 = vision.Resize(256), vision.Resize((416, 416))
    out224 = np.empty((3, 224, 224), np.float32)
    out416 = np.empty((3, 416, 416), np.float32)
    # infer224 and yolo416 as they run by default (full decode, then resize: MindSpore's pixels), and
    # with config.set_fast_decode_resize(True) (a reduced-scale decode, then resize).
    pipelines = ("train", "infer224", "yolo416", "infer224 fast", "yolo416 fast")
    costs: dict[str, dict[str, float]] = {p: defaultdict(float) for p in ("decode only", *pipelines)}

    def timed(pipeline: str, step: str, fn, *args):
        start = time.process_time()
        result = fn(*args)
        costs[pipeline][step] += time.process_time() - start
        return result

    for i, path in enumerate(files):
        ctx = KernelContext(1, 0, i, 1)
        flip_ctx = KernelContext(1, 0, i, 2)
        data = timed("decode only", "read file", np.fromfile, path, np.uint8)
        timed("decode only", "full decode", jpeg.decode, data)
        for pipeline in pipelines:
            data = timed(pipeline, "read file", np.fromfile, path, np.uint8)
            if pipeline == "train":
                image = timed(pipeline, "crop-decode + resize", decode_random_resized_crop, crop, ctx, data, "RandomResizedCrop")
                image = timed(pipeline, "flip", random_horizontal_flip, flip, flip_ctx, image)
                out = out224
            elif pipeline.endswith("fast"):
                fused = resize256 if pipeline.startswith("infer224") else resize416
                image = timed(pipeline, "reduced decode + resize", fused_decode_resize, fused, ctx, data)
                if pipeline.startswith("infer224"):
                    image = timed(pipeline, "center crop", center_crop, center, ctx, image)
                out = out224 if pipeline.startswith("infer224") else out416
            else:
                image = timed(pipeline, "full decode", jpeg.decode, data)
                plain = plain256 if pipeline == "infer224" else plain416
                image = timed(pipeline, "resize", resize, plain, ctx, image)
                if pipeline == "infer224":
                    image = timed(pipeline, "center crop", center_crop, center, ctx, image)
                out = out224 if pipeline == "infer224" else out416
            timed(pipeline, "normalize into batch", lambda im, o: (check_normalize_input(normalize, im), normalize_into(im, MEAN, STD, o, True)), image, out)
    return {p: {k: v / len(files) * 1e6 for k, v in c.items()} for p, c in costs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.kernel_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument("--images", type=int, default=500)
    args = parser.parse_args(argv)
    if args.data is None:
        from minddata.bench.images import ensure_images

        args.data, _ = ensure_images()
    files = sorted(p for p in Path(args.data).glob("*/*") if p.suffix.lower() in (".jpg", ".jpeg"))[: args.images]
    print(f"{len(files)} images from {args.data}; CPU microseconds per image, one thread ({jpeg.LIBJPEG_VERSION})")
    for pipeline, steps in measure(files).items():
        total = sum(steps.values())
        detail = ", ".join(f"{k} {v:.0f}" for k, v in steps.items())
        print(f"{pipeline:12s} total {total:6.0f} us  ({detail});  2-core ceiling {2e6 / total:,.0f} img/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
