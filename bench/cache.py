"""A standard pipeline with a DatasetCache after its deterministic decoding, against the same
pipeline uncached.

    python -m minddata.bench.cache [--pipeline train|yolo416] [--data DIR] [--epochs 4] [--workers 2]
                                   [--size MB] [--spilling]

train: ImageFolderDataset (shuffled) → map(Decode, cache=...) → map(RandomResizedCrop(224),
RandomHorizontalFlip, Normalize, HWC2CHW) → batch(64). yolo416: ImageFolderDataset (shuffled) →
map(Decode, Resize((416, 416)), cache=...) → map(Normalize, HWC2CHW) → batch(64), whose cached epochs
do little but normalize. Epoch 1 of the cached run reads, decodes and stores every image; epochs 2
onwards read decoded images from shared memory. Reported: images/s of epochs 2 to ``--epochs`` for
both runs in this process, run one after the other (uncached first), and their ratio. Decoded images
take their pixels' bytes each in ``/dev/shm`` (the generated 2,000-image set at 500x375: about 1.1
GB; at 416x416, 1.0 GB); ``--size`` bounds it, with ``--spilling`` writing the rest to disk. The
session is destroyed at the end.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import minddata as md
from minddata import vision
from minddata.bench.pipelines import MEAN, STD
from minddata.engine import cache_store


def build(data: str, workers: int, batch_size: int, cache: Any, pipeline: str = "train") -> Any:
    """``pipeline`` (train or yolo416) with ``cache`` on its decoding map (``None``: uncached)."""
    ds = md.ImageFolderDataset(data, shuffle=True, num_parallel_workers=workers)
    if pipeline == "yolo416":
        ds = ds.map([vision.Decode(), vision.Resize((416, 416))], input_columns="image",
                    num_parallel_workers=workers, cache=cache)
        rest = [vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    else:
        ds = ds.map(vision.Decode(), input_columns="image", num_parallel_workers=workers, cache=cache)
        rest = [
            vision.RandomResizedCrop(224),
            vision.RandomHorizontalFlip(),
            vision.Normalize(MEAN, STD),
            vision.HWC2CHW(),
        ]
    ds = ds.map(rest, input_columns="image", num_parallel_workers=workers)
    return ds.batch(batch_size)


def epoch_rates(ds: Any, epochs: int) -> list[float]:
    """Images/s of each epoch."""
    it = ds.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    rates = []
    for _ in range(epochs):
        start, images = time.perf_counter(), 0
        for image, _label in it:
            images += len(image)
        rates.append(images / (time.perf_counter() - start))
    it.close()
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minddata.bench.cache", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--pipeline", choices=("train", "yolo416"), default="train")
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument(
        "--epochs", type=int, default=4, help="epochs per run; epochs 2.. are compared (default 4)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--size", type=int, default=0, help="cache size in MB (default 0: no bound)")
    parser.add_argument("--spilling", action="store_true", help="spill rows past --size to disk")
    args = parser.parse_args(argv)
    if args.epochs < 2:
        parser.error("--epochs must be 2 or more: epoch 1 fills the cache")
    if args.data is None:
        from minddata.bench.images import ensure_images

        args.data, _ = ensure_images()
    md.config.set_seed(1)
    session = cache_store.create_session()
    try:
        uncached = epoch_rates(build(str(args.data), args.workers, args.batch_size, None, args.pipeline), args.epochs)
        cache = md.DatasetCache(session, size=args.size, spilling=args.spilling)
        cached = epoch_rates(build(str(args.data), args.workers, args.batch_size, cache, args.pipeline), args.epochs)
        stat = cache.get_stat()
    finally:
        cache_store.destroy_session(session)
    later_uncached = sum(uncached[1:]) / len(uncached[1:])
    later_cached = sum(cached[1:]) / len(cached[1:])
    print(f"{args.pipeline} pipeline, {args.workers} workers, batch {args.batch_size}, data {args.data}")
    print(f"{'epoch':>5}  {'uncached img/s':>14}  {'cached img/s':>12}")
    for k, (u, c) in enumerate(zip(uncached, cached), start=1):
        print(f"{k:>5}  {u:>14,.0f}  {c:>12,.0f}")
    print(
        f"epochs 2-{args.epochs}: cached/uncached = {later_cached / later_uncached:.2f}x "
        f"({stat.num_mem_cached} rows in memory, {stat.num_disk_cached} on disk, {stat.avg_cache_sz:,} bytes each)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
