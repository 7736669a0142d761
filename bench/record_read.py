"""Record files vs image folder: reading the same images both ways, with and without decoding.

The images (by default the generated ImageNet-like set of ``minddata bench``, 2,000 JPEGs) are
converted once to an Arrow record set (``minddata convert --format arrow``), cached beside the images. Then, for W in
``--workers``, median of ``--repeats`` runs, in images/s:

- ``read``: ``ImageFolderDataset(dir, shuffle=True)`` vs ``MindDataset(file, shuffle=True)``, encoded
  bytes only, batched by 64 (a global shuffle: random access for both);
- ``decode``: the same followed by ``map(vision.Decode(), num_parallel_workers=W)``.

Folder and record runs alternate. Every run builds a fresh dataset, so the record runs include opening the files and verifying each
record batch's checksum on first use. Both read from the page cache: an untimed read of each comes
first. Every run checks its output (image count, byte or pixel total), so a fast wrong reader cannot
pass. The number to quote is the ratio ``record / folder`` (same run, same machine); the issue asks
for at least 1.0.

Usage:
    python -m minddata.bench.record_read [--data DIR] [--num-images 2000] [--workers 1 2]
                                         [--repeats 3] [--shards 1] [--json out.json]
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["ReadResult", "main", "ensure_record", "run"]

BATCH = 64


@dataclass
class ReadResult:
    mode: str  # "read" or "decode"
    source: str  # "folder" or "record"
    workers: int
    images: int
    images_per_s: float
    seconds: list[float]


def ensure_record(data_dir: Path, shards: int = 1) -> Path:
    """The record set converted from ``data_dir``, cached as ``<data_dir>.records/images.mindrecord``."""
    from minddata.record.convert import convert_image_folder

    folder = Path(str(data_dir.resolve()) + f".records-{shards}")
    target = folder / "images.mindrecord"
    first = target if shards == 1 else Path(f"{target}0")
    if first.exists() and Path(str(first) + ".meta.json").exists():
        return first
    folder.mkdir(parents=True, exist_ok=True)
    convert_image_folder(data_dir, target, shard_num=shards, overwrite=True, format="arrow")
    return first


def _pipeline(source: str, path: Path, mode: str, workers: int) -> Any:
    import minddata as md
    from minddata import vision

    if source == "folder":
        ds = md.ImageFolderDataset(str(path), shuffle=True, num_parallel_workers=workers)
    else:
        ds = md.MindDataset(str(path), columns_list=["image", "label"], shuffle=True, num_parallel_workers=workers)
    if mode == "decode":
        ds = ds.map(vision.Decode(), input_columns="image", num_parallel_workers=workers)
        return ds.project(["image", "label"])
    return ds.batch(BATCH, per_batch_map=lambda images, labels, info: (
        [sum(len(i) for i in images)], [len(images)]), input_columns=["image", "label"],
        output_columns=["nbytes", "count"])


def _once(source: str, path: Path, mode: str, workers: int) -> tuple[float, int, int]:
    import minddata as md

    md.config.set_seed(1)
    start = time.perf_counter()
    ds = _pipeline(source, path, mode, workers)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    images = total = 0
    try:
        for a, b in it:
            if mode == "decode":
                images += 1
                total += int(a.shape[0]) * int(a.shape[1])
            else:
                images += int(b.sum())
                total += int(a.sum())
    finally:
        it.close()
    return time.perf_counter() - start, images, total


def run(data_dir: Path, record: Path, modes: Sequence[str], workers_list: Sequence[int], repeats: int,
        log: Callable[[str], None] = print) -> list[ReadResult]:
    results: list[ReadResult] = []
    sources = (("folder", data_dir), ("record", record))
    for mode in modes:
        for workers in workers_list:
            for source, path in sources:
                _once(source, path, mode, workers)  # warm the page cache and the imports
            times: dict[str, list[float]] = {"folder": [], "record": []}
            expected = None
            # Alternate the two readers, so that noise on a shared machine hits both alike.
            for _ in range(repeats):
                for source, path in sources:
                    seconds, images, total = _once(source, path, mode, workers)
                    times[source].append(seconds)
                    if expected is None:
                        expected = (images, total)
                    elif (images, total) != expected:
                        raise RuntimeError(
                            f"{source} {mode} W={workers}: read {images} images totalling {total}, but the "
                            f"folder reader read {expected[0]} totalling {expected[1]}"
                        )
            for source, _ in sources:
                result = ReadResult(mode, source, workers, expected[0], expected[0] / statistics.median(times[source]),  # type: ignore[index]
                                    times[source])
                results.append(result)
                log(f"  {mode:<6} {source:<6} W={workers}: {result.images_per_s:,.0f} images/s")
    return results


def _table(results: list[ReadResult]) -> list[str]:
    header = f"{'mode':<7} {'W':>2} {'folder img/s':>13} {'record img/s':>13} {'record / folder':>16}"
    lines = [header, "-" * len(header)]
    by = {(r.mode, r.source, r.workers): r for r in results}
    for (mode, source, workers), r in by.items():
        if source != "folder":
            continue
        rec = by.get((mode, "record", workers))
        ratio = f"{rec.images_per_s / r.images_per_s:.2f}x" if rec else ""
        lines.append(f"{mode:<7} {workers:>2} {r.images_per_s:>13,.0f} {rec.images_per_s if rec else 0:>13,.0f} {ratio:>16}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minddata.bench.record_read``: print the table; exit 2 on bad arguments."""
    parser = OneLineParser(prog="python -m minddata.bench.record_read", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", metavar="DIR", help="image folder (default: the generated bench set)")
    parser.add_argument("--num-images", type=positive_int, default=2000, help="size of the generated set (default 2000)")
    parser.add_argument("--workers", type=positive_int, nargs="+", default=[1, 2], help="reader/decoder workers (default 1 2)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="runs per measurement; the median is kept")
    parser.add_argument("--shards", type=positive_int, default=1, help="record files to convert into (default 1)")
    parser.add_argument("--modes", nargs="+", choices=["read", "decode"], default=["read", "decode"])
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)

    if args.data:
        data_dir = Path(args.data).expanduser()
        if not data_dir.is_dir():
            print(f"record_read: error: --data {args.data}: not a folder", file=sys.stderr)
            return 2
    else:
        from minddata.bench.images import ensure_images

        data_dir, _ = ensure_images(num_images=args.num_images, num_classes=min(10, args.num_images))
    record = ensure_record(data_dir, args.shards)
    print(f"images: {data_dir}\nrecord: {record} ({args.shards} file(s))")
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"median of {args.repeats} runs\n", flush=True)
    results = run(data_dir, record, args.modes, args.workers, args.repeats)
    print()
    for line in _table(results):
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"data": str(data_dir), "record": str(record), "results": [asdict(r) for r in results]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
