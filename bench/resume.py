"""How fast a pipeline resumes mid-epoch, against starting fresh.

    python -m minddata.bench.resume [--data DIR] [--repeats 3]

The train pipeline over the 2,000-image set (batch 64): time to the first batch of a fresh
iterator, and of an iterator resumed from ``get_state()`` at the middle of the epoch (batch 16 of
32). Resuming skips at the source, so the resumed first batch should cost about what a fresh one
does, not the 16 batches before it. Also reports the time a replaying resume would take (reading
and discarding 16 batches), which is what resume costs without skipping at the source.
"""

from __future__ import annotations

import argparse
import statistics
import time

import minddata as md
from minddata.bench import pipelines


def _first_batch_seconds(build, state=None) -> float:
    start = time.perf_counter()
    it = build().create_dict_iterator(num_epochs=1, output_numpy=True, state=state)
    next(it)
    seconds = time.perf_counter() - start
    it.close()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.resume", description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--at", type=int, default=16, help="resume after this many batches")
    args = parser.parse_args(argv)
    if args.data is None:
        from minddata.bench.images import ensure_images

        args.data, _ = ensure_images()
    md.config.set_seed(1)

    def build():
        return pipelines.build("train", args.data, workers=2, batch_size=64)

    it = build().create_dict_iterator(num_epochs=1, output_numpy=True)
    for _ in range(args.at):
        next(it)
    state = it.get_state()
    it.close()

    def replay() -> float:
        start = time.perf_counter()
        it = build().create_dict_iterator(num_epochs=1, output_numpy=True)
        for _ in range(args.at + 1):
            next(it)
        seconds = time.perf_counter() - start
        it.close()
        return seconds

    fresh = statistics.median(_first_batch_seconds(build) for _ in range(args.repeats))
    resumed = statistics.median(_first_batch_seconds(build, state) for _ in range(args.repeats))
    replayed = statistics.median(replay() for _ in range(args.repeats))
    print(f"train pipeline, {args.data}; resume after {args.at} batches of 64; median of {args.repeats}")
    print(f"first batch, fresh start:              {fresh * 1e3:8.0f} ms")
    print(f"first batch, resumed (skip at source): {resumed * 1e3:8.0f} ms  ({resumed / fresh:.2f}x fresh)")
    print(f"first batch, resumed by replaying:     {replayed * 1e3:8.0f} ms  ({replayed / fresh:.2f}x fresh)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
