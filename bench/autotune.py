"""Autotune against the best hand-picked worker counts, on the train pipeline.

    python -m minddata.bench.autotune [--data DIR] [--repeats 3] [--json PATH]

1. Hand-picked: every combination of map workers (``--grid``, default 1,2,3,4; the image source is
   read by the map's own workers) and batch workers (inline, 2) runs two epochs; its throughput is
   the second epoch's (settled). The best combination is the target.
2. Autotune: every stage (source, map, batch) starts at one worker with
   ``num_parallel_workers=minddata.AUTOTUNE`` and runs two epochs. Reported: the first epoch's
   throughput (start-up and tuning included), the throughput over the first epoch's second half
   (what autotune reached within the first epoch), the second epoch's, the image of the first epoch
   at which a 256-image sliding window first reached 90% of the target, and every decision.

The pass mark (issue 4): the first epoch's second half at 90% of the best hand-picked throughput or
more. Figures are medians over ``--repeats`` rounds; each round runs everything once, in the same
process, one after the other (the machine is shared: compare figures from the same round).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["main", "run_fixed", "run_autotuned"]

WINDOW = 256


@dataclass
class Timeline:
    """Images delivered and when, per epoch: ``marks[e]`` is a list of (seconds from the epoch's
    start, images so far in the epoch)."""

    marks: list[list[tuple[float, int]]] = field(default_factory=list)

    def rate(self, epoch: int, start_image: int = 0) -> float:
        marks = self.marks[epoch]
        first = next((m for m in marks if m[1] >= start_image), None) if start_image else (0.0, 0)
        last = marks[-1]
        if first is None or last[0] <= first[0]:
            return float("nan")
        return (last[1] - first[1]) / (last[0] - first[0])

    def first_reaching(self, epoch: int, target: float, window: int = WINDOW) -> int | None:
        """The image count at which a ``window``-image sliding rate first reached ``target``."""
        marks = self.marks[epoch]
        j = 0
        for i, (t, n) in enumerate(marks):
            while j < i and n - marks[j + 1][1] >= window:
                j += 1
            t0, n0 = marks[j]
            if n - n0 >= window and t > t0 and (n - n0) / (t - t0) >= target:
                return n
        return None


def _build(data_dir: str, map_workers: Any, batch_workers: Any, batch_size: int) -> Any:
    import minddata as md
    from minddata.bench import pipelines

    ds = md.ImageFolderDataset(data_dir, shuffle=False, num_parallel_workers=map_workers)
    ds = ds.map(pipelines.make_ops("train"), input_columns="image", num_parallel_workers=map_workers)
    return ds.batch(batch_size, num_parallel_workers=batch_workers)


def _iterate(ds: Any, epochs: int) -> tuple[Timeline, Any]:
    timeline = Timeline()
    it = ds.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    try:
        for _ in range(epochs):
            marks: list[tuple[float, int]] = []
            n = 0
            t0 = time.perf_counter()
            for batch in it:
                n += batch["image"].shape[0]
                marks.append((time.perf_counter() - t0, n))
            timeline.marks.append(marks)
        return timeline, it
    finally:
        it.close()


def run_fixed(data_dir: str, map_workers: int, batch_workers: int | None, batch_size: int = 64) -> float:
    """Second-epoch images/s of the train pipeline with these worker counts."""
    timeline, _ = _iterate(_build(data_dir, map_workers, batch_workers, batch_size), epochs=2)
    return timeline.rate(1)


def run_autotuned(data_dir: str, batch_size: int = 64) -> tuple[Timeline, list[dict], dict]:
    """Two epochs with every stage at AUTOTUNE; the timeline, autotune's decisions and final counts."""
    import minddata as md

    timeline, it = _iterate(_build(data_dir, md.AUTOTUNE, md.AUTOTUNE, batch_size), epochs=2)
    summary = it.profiler.summary()
    final = {s.name: s.workers_now for s in summary.stages if s.kind == "parallel"}
    return timeline, summary.autotune, final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.autotune", description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument("--images", type=int, default=2000, help="size of the generated set (default 2000)")
    parser.add_argument("--grid", default="1,2,3,4", help="map worker counts to try by hand (default 1,2,3,4)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write every measurement here")
    args = parser.parse_args(argv)
    try:
        grid = [int(x) for x in args.grid.split(",")]
        if not grid or min(grid) < 1:
            raise ValueError
    except ValueError:
        parser.error(f"--grid: expected comma-separated whole numbers >= 1, found {args.grid!r}")
    if args.data is None:
        from minddata.bench.images import ensure_images

        data, _ = ensure_images(num_images=args.images)
        args.data = str(data)
    elif not os.path.isdir(args.data):
        parser.error(f"--data {args.data}: no such folder")
    from minddata.bench.runner import _preload_kernels

    _preload_kernels()
    _iterate(_build(args.data, 2, None, args.batch_size), epochs=1)  # warm the page cache

    rounds = []
    for r in range(args.repeats):
        fixed = {}
        for w in grid:
            for b in (None, 2):
                fixed[f"map {w}, batch {'inline' if b is None else b}"] = rate = run_fixed(args.data, w, b, args.batch_size)
                print(f"  round {r + 1}: map {w} workers, batch {'inline' if b is None else f'{b} workers'}: "
                      f"{rate:,.0f} img/s", file=sys.stderr, flush=True)
        timeline, decisions, final = run_autotuned(args.data, args.batch_size)
        best_name = max(fixed, key=fixed.get)  # type: ignore[arg-type]
        best = fixed[best_name]
        half = len(timeline.marks[0]) and timeline.marks[0][-1][1] // 2
        reached = timeline.first_reaching(0, 0.9 * best)
        rounds.append({
            "fixed": fixed, "best": best_name, "best_rate": best,
            "auto_epoch1": timeline.rate(0), "auto_epoch1_second_half": timeline.rate(0, half),
            "auto_epoch2": timeline.rate(1), "reached_90_at_image": reached,
            "images_per_epoch": timeline.marks[0][-1][1], "decisions": decisions, "final_workers": final,
        })
        print(f"  round {r + 1}: autotune epoch 1 {timeline.rate(0):,.0f}, its second half {timeline.rate(0, half):,.0f}, "
              f"epoch 2 {timeline.rate(1):,.0f} img/s; best by hand {best_name} {best:,.0f}", file=sys.stderr, flush=True)

    med = lambda key: statistics.median(x[key] for x in rounds)  # noqa: E731
    print(f"data: {args.data}; batch {args.batch_size}; {len(rounds)} round(s), medians")
    print(f"{'setting':28s} {'img/s':>8s}  vs best")
    names = list(rounds[0]["fixed"])
    best_med = max(statistics.median(x["fixed"][n] for x in rounds) for n in names)
    for n in names:
        v = statistics.median(x["fixed"][n] for x in rounds)
        print(f"{'by hand: ' + n:28s} {v:8,.0f}  {v / best_med:6.0%}")
    for label, key in (("autotune, epoch 1", "auto_epoch1"), ("autotune, epoch 1 2nd half", "auto_epoch1_second_half"),
                       ("autotune, epoch 2", "auto_epoch2")):
        print(f"{label:28s} {med(key):8,.0f}  {med(key) / best_med:6.0%}")
    reached = [x["reached_90_at_image"] for x in rounds]
    print(f"a {WINDOW}-image window first at 90% of the round's best, at image: "
          f"{', '.join('never' if x is None else str(x) for x in reached)} (of {rounds[0]['images_per_epoch']})")
    print(f"final worker counts (last round): {rounds[-1]['final_workers']}")
    print("decisions (last round):")
    for d in rounds[-1]["decisions"]:
        what = (f"workers {d['workers_from']} → {d['workers_to']}" if d["action"] == "resize"
                else "keeps" if d["action"] == "kept" else "note")
        print(f"  {d['t']:6.2f} s  {d['stage']}: {what} ({d['why']})")
    ok = med("auto_epoch1_second_half") >= 0.9 * best_med
    print(f"target (first epoch's second half >= 90% of the best by hand): {'met' if ok else 'NOT met'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"data": args.data, "batch_size": args.batch_size, "rounds": rounds}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
