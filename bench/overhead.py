"""Engine overhead: how fast rows move through a pipeline whose op does almost nothing.

Pipeline: ``NumpySlicesDataset(np.arange(N, dtype=np.int64), column_names=["x"], shuffle=False)``
→ ``map(lambda x: x + 1, input_columns="x", num_parallel_workers=W)`` → ``batch(32)``, for W in 1 and
2, median of 3 runs, in rows/s. Beside it:

- a plain Python loop doing the same work (row by row ``x + 1``, stacked into batches of 32): what the
  work costs with no engine at all;
- with ``--mindspore PYTHON``, the identical pipeline in ``mindspore.dataset`` run by that interpreter
  (MindSpore needs numpy<2, so it lives in its own environment, e.g. ``/opt/msvenv/bin/python``).

Every run checks its output (row count and sum), so a fast wrong pipeline cannot pass.

Usage:
    python -m minddata.bench.overhead [--rows 100000] [--repeats 3] [--mindspore /opt/msvenv/bin/python]
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["OverheadResult", "main", "run_mindspore", "run_minddata", "run_python_loop"]

BATCH = 32
RESULT_TAG = "MINDDATA_OVERHEAD_RESULT "


@dataclass
class OverheadResult:
    """Rows/s of one (implementation, worker count): the median and every run's time."""

    impl: str
    workers: int
    rows: int
    rows_per_s: float
    seconds: list[float]


def _expected_sum(rows: int) -> int:
    # sum(x + 1 for x in range(rows))
    return rows * (rows + 1) // 2


def _check(impl: str, rows_seen: int, total: int, rows: int) -> None:
    if rows_seen != rows or total != _expected_sum(rows):
        raise RuntimeError(
            f"{impl}: wrong output: {rows_seen} rows summing to {total}; "
            f"expected {rows} rows summing to {_expected_sum(rows)}"
        )


def _median_rate(impl: str, workers: int, rows: int, once: Callable[[], float], repeats: int) -> OverheadResult:
    times = [once() for _ in range(repeats)]
    return OverheadResult(impl, workers, rows, rows / statistics.median(times), times)


def run_python_loop(rows: int, repeats: int = 3) -> OverheadResult:
    """The reference: iterate the rows, apply the function, stack batches of 32, no engine."""
    data = np.arange(rows, dtype=np.int64)

    def fn(x):
        return x + 1

    def once() -> float:
        start = time.perf_counter()
        seen = total = 0
        pending = []
        # Row by row, as the pipeline hands rows to the map: each row is a 0-d array.
        for i in range(rows):
            pending.append(fn(data[i]))
            if len(pending) == BATCH:
                batch = np.stack(pending)
                seen += batch.shape[0]
                total += int(batch.sum())
                pending = []
        if pending:
            batch = np.stack(pending)
            seen += batch.shape[0]
            total += int(batch.sum())
        elapsed = time.perf_counter() - start
        _check("python loop", seen, total, rows)
        return elapsed

    return _median_rate("python loop", 1, rows, once, repeats)


def run_minddata(rows: int, workers: int, repeats: int = 3) -> OverheadResult:
    """The pipeline in minddata, timed from building the dataset to the last batch."""
    import minddata as md

    data = np.arange(rows, dtype=np.int64)

    def once() -> float:
        start = time.perf_counter()
        ds = md.NumpySlicesDataset(data, column_names=["x"], shuffle=False)
        ds = ds.map(lambda x: x + 1, input_columns="x", num_parallel_workers=workers)
        ds = ds.batch(BATCH)
        it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
        seen = total = 0
        try:
            for batch in it:
                x = batch["x"]
                seen += x.shape[0]
                total += int(x.sum())
        finally:
            it.close()
        elapsed = time.perf_counter() - start
        _check(f"minddata W={workers}", seen, total, rows)
        return elapsed

    return _median_rate("minddata", workers, rows, once, repeats)


# Runs inside the MindSpore interpreter: the same pipeline, checked the same way, one JSON line out.
_MINDSPORE_SCRIPT = r"""
import json, sys, time
import numpy as np
import mindspore
import mindspore.dataset as ds

rows, repeats, workers_list, tag = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
expected = rows * (rows + 1) // 2
data = np.arange(rows, dtype=np.int64)
out = {"version": mindspore.__version__, "numpy": np.__version__, "times": {}}
for workers in workers_list:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        d = ds.NumpySlicesDataset(data, column_names=["x"], shuffle=False)
        d = d.map(lambda x: x + 1, input_columns="x", num_parallel_workers=workers)
        d = d.batch(32)
        seen = total = 0
        for batch in d.create_dict_iterator(num_epochs=1, output_numpy=True):
            seen += batch["x"].shape[0]
            total += int(batch["x"].sum())
        times.append(time.perf_counter() - start)
        if seen != rows or total != expected:
            raise SystemExit(f"mindspore W={workers}: wrong output: {seen} rows summing to {total}")
    out["times"][str(workers)] = times
print(tag + json.dumps(out), flush=True)
"""


def run_mindspore(
    python: str, rows: int, workers_list: Sequence[int], repeats: int = 3, timeout_s: float = 900.0
) -> tuple[str, list[OverheadResult]]:
    """Run the pipeline with ``mindspore.dataset`` under interpreter ``python``.

    Returns (MindSpore version, results). Raises ``RuntimeError`` with the interpreter's last output
    lines when it fails.
    """
    cmd = [python, "-c", _MINDSPORE_SCRIPT, str(rows), str(repeats), json.dumps(list(workers_list)), RESULT_TAG]
    # Run outside the repository so that its folders cannot shadow anything in the other interpreter.
    env = dict(os.environ, GLOG_v="3")  # MindSpore's logger: errors only
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, cwd="/", env=env, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_TAG)]
    if proc.returncode != 0 or not lines:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
        raise RuntimeError(f"{python} could not run the MindSpore pipeline (exit {proc.returncode}):\n{tail}")
    out = json.loads(lines[-1][len(RESULT_TAG) :])
    results = [
        OverheadResult("mindspore", int(w), rows, rows / statistics.median(times), times)
        for w, times in out["times"].items()
    ]
    return f"{out['version']} (numpy {out['numpy']})", results


def _table(results: list[OverheadResult], reference: OverheadResult) -> list[str]:
    by = {(r.impl, r.workers): r for r in results}
    header = f"{'implementation':<16} {'W':>2} {'rows/s (median)':>16} {'vs python loop':>15} {'minddata / mindspore':>21}"
    lines = [header, "-" * len(header)]
    for r in [reference, *results]:
        vs_loop = f"{r.rows_per_s / reference.rows_per_s:.2f}x"
        peer = by.get(("mindspore", r.workers))
        vs_ms = f"{r.rows_per_s / peer.rows_per_s:.2f}x" if r.impl == "minddata" and peer else ""
        w = "-" if r is reference else str(r.workers)
        lines.append(f"{r.impl:<16} {w:>2} {r.rows_per_s:>16,.0f} {vs_loop:>15} {vs_ms:>21}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minddata.bench.overhead``: print the table; exit 2 on bad arguments."""
    parser = OneLineParser(prog="python -m minddata.bench.overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=positive_int, default=100_000, help="rows in the source (default 100000)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="runs per measurement; the median is kept")
    parser.add_argument("--workers", type=positive_int, nargs="+", default=[1, 2], help="map worker counts (default 1 2)")
    parser.add_argument("--mindspore", metavar="PYTHON", help="interpreter with mindspore installed, to run the peer")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.mindspore and not (os.path.isfile(args.mindspore) and os.access(args.mindspore, os.X_OK)):
        print(f"overhead: error: --mindspore {args.mindspore}: not an executable file; pass the path of a "
              "Python interpreter that has mindspore installed", file=sys.stderr)
        return 2

    print(f"pipeline: NumpySlicesDataset({args.rows:,} int64) → map(lambda x: x + 1, W workers) → batch({BATCH}); "
          f"median of {args.repeats} runs")
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}\n", flush=True)
    reference = run_python_loop(args.rows, args.repeats)
    results = [run_minddata(args.rows, w, args.repeats) for w in args.workers]
    ms_version = None
    if args.mindspore:
        try:
            ms_version, ms_results = run_mindspore(args.mindspore, args.rows, args.workers, args.repeats)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
            print(f"overhead: mindspore run failed: {exc}", file=sys.stderr)
            return 1
        results += ms_results
        print(f"mindspore {ms_version} via {args.mindspore}\n")
    for line in _table(results, reference):
        print(line)
    if args.json:
        payload = {"rows": args.rows, "repeats": args.repeats, "mindspore": ms_version,
                   "reference": asdict(reference), "results": [asdict(r) for r in results]}
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
