"""What profiling costs: the same pipeline with and without a ``minddata.Profiler``, alternated.

    python -m minddata.bench.profiler_overhead [--data DIR] [--rounds 5] [--json PATH]

Two pipelines, each run ``--rounds`` times with profiling off and on, alternating (off, on, off,
on, ...) in one process so that machine noise hits both alike; figures are medians:

- ``train`` (the vision issue's training pipeline: 2,000 generated JPEGs, 2 workers, batch 64): the
  target is under 3% lower throughput with profiling on;
- the engine-overhead pipeline (``NumpySlicesDataset`` of 100,000 ints → ``map(lambda x: x + 1)`` →
  ``batch(32)``): about 1 µs of work per row, the worst case for any per-chunk cost, for context.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["main", "measure"]


def _train(data_dir: str, workers: int, batch_size: int) -> Callable[[], int]:
    from minddata.bench import pipelines

    def one_epoch() -> int:
        ds = pipelines.build("train", data_dir, workers=workers, batch_size=batch_size)
        return sum(b["image"].shape[0] for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True))

    return one_epoch


def _tiny_rows(rows: int, workers: int) -> Callable[[], int]:
    import numpy as np

    import minddata as md

    data = np.arange(rows, dtype=np.int64)

    def one_epoch() -> int:
        ds = md.NumpySlicesDataset({"x": data}, shuffle=False)
        ds = ds.map(lambda x: x + 1, input_columns="x", num_parallel_workers=workers).batch(32)
        return sum(b["x"].shape[0] for b in ds.create_dict_iterator(num_epochs=1, output_numpy=True))

    return one_epoch


def measure(run: Callable[[], int], rounds: int) -> dict[str, Any]:
    """Rows/s of ``run()`` without and with a Profiler, alternating, ``rounds`` times each."""
    import minddata as md

    run()  # warm-up: imports, page cache, kernel registry
    off: list[float] = []
    on: list[float] = []
    for _ in range(rounds):
        for profiled, out in ((False, off), (True, on)):
            t0 = time.perf_counter()
            if profiled:
                with md.Profiler():
                    n = run()
            else:
                n = run()
            out.append(n / (time.perf_counter() - t0))
    m_off, m_on = statistics.median(off), statistics.median(on)
    return {"off": off, "on": on, "median_off": m_off, "median_on": m_on, "overhead": 1 - m_on / m_off}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.profiler_overhead",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the engine-overhead pipeline")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="write every measurement here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds: expected a whole number >= 1, found {args.rounds}")
    if args.data is None:
        from minddata.bench.images import ensure_images

        data, _ = ensure_images()
        args.data = str(data)
    results = {}
    for name, run, unit in (
        ("train", _train(args.data, args.workers, args.batch_size), "images/s"),
        ("engine overhead (map lambda, batch 32)", _tiny_rows(args.rows, args.workers), "rows/s"),
    ):
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        results[name] = r = measure(run, args.rounds) | {"unit": unit}
    print(f"{args.rounds} alternating rounds each, medians; {args.workers} workers")
    print(f"{'pipeline':40s} {'profiling off':>14s} {'profiling on':>14s} {'cost':>7s}")
    for name, r in results.items():
        print(f"{name:40s} {r['median_off']:14,.0f} {r['median_on']:14,.0f} {r['overhead']:7.1%}  ({r['unit']})")
    train = results["train"]["overhead"]
    print(f"target (train: under 3% lower throughput with profiling on): {'met' if train < 0.03 else 'NOT met'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"data": args.data, "workers": args.workers, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
