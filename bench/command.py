"""``minddata bench``: the benchmark driver behind the command line.

``minddata.cli`` hands it the arguments after ``bench`` (:func:`main`); its options and everything the
command does live here: preparing the images, running each pipeline for several rounds, the decode reference, peers, and
the report. Each round runs in a fresh process of its own (:func:`minddata.bench.runner.run_in_own_process`),
so its peak RSS is its own. Figures are medians over rounds with their spread; the bottleneck is named
only when the rounds agree on it; a machine busy with other work is reported, because its figures are
noise, and each pipeline's one-line verdict (:mod:`minddata.bench.verdict`) agrees with that load check.

Examples:
    $ minddata bench --pipeline infer224 --rounds 5 --workers 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from minddata._command_line import (
    PROG,
    CommandParser,
    check_executor,
    library_versions,
    positive_int,
    workers_arg,
)
from minddata._progress import ProgressBar
from minddata.bench import pipelines, runner
from minddata.bench.verdict import plain_fusion_notes, verdict
from minddata.errors import UsageError

__all__ = ["main", "parser", "peer_list", "run_bench", "size_summary", "aggregate_rounds", "LoadMonitor"]



# --- checking the arguments -------------------------------------------------------------------------


def _check_data_dir(path: str) -> tuple[Path, int]:
    from minddata.bench.images import list_images

    folder = Path(path).expanduser()
    if not folder.exists():
        raise UsageError(f"{PROG} bench: error: --data {path}: no such folder; pass a folder of class sub-folders of images")
    if not folder.is_dir():
        raise UsageError(f"{PROG} bench: error: --data {path}: not a folder; pass a folder of class sub-folders of images")
    try:
        n = len(list_images(folder))
    except OSError as exc:
        raise UsageError(f"{PROG} bench: error: --data {path}: cannot read it ({exc.strerror})") from None
    if n == 0:
        raise UsageError(
            f"{PROG} bench: error: --data {path}: no images found; expected {path}/<class>/<image>.jpg "
            "(images directly in the folder have no class and are not read)"
        )
    return folder, n


def _resolve_pipelines(names: list[str]) -> list[Any]:
    """Standard pipeline names stay names; anything else must be a pipeline file."""
    resolved: list[Any] = []
    for name in names:
        if name in pipelines.PIPELINES:
            resolved.append(name)
            continue
        if name.endswith(".py") or os.path.sep in name:
            try:
                resolved.append(pipelines.load_pipeline_file(Path(name).expanduser()))
            except ValueError as exc:
                raise UsageError(f"{PROG} bench: error: --pipeline {exc}") from None
            continue
        raise UsageError(
            f"{PROG} bench: error: --pipeline {name}: unknown pipeline; choose {', '.join(pipelines.PIPELINES)}, "
            "or pass a .py file that defines build(data_dir, workers, batch_size)"
        )
    return resolved


def _check_device(device: str) -> None:
    if device in ("cpu", "auto"):
        return
    from minddata.ops.devices import get_device

    wanted = {"gpu": "GPU", "dvpp": "Dvpp"}[device]
    presence = get_device(wanted).probe()  # what pipelines get: only the device asked for is probed
    if not presence.present:
        detail = f"{presence.detail}; fix: {presence.fix}"
        raise UsageError(f"{PROG} bench: error: --device {device}: {wanted} is absent here ({detail}); "
                         f"run `{PROG} devices` to see what this machine has")


def _check_plot(path: str) -> None:
    parent = Path(path).expanduser().resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{PROG} bench: error: --plot {path}: folder {parent} does not exist; create it first")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f"{PROG} bench: error: --plot needs matplotlib: pip install 'minddata[plot]'") from None


# --- what the data looks like ---------------------------------------------------------------------


def size_summary(data_dir: Path, sample: int = 50) -> str:
    """Median width and height, each with its own range, over an even sample of the files (headers only).

    Width and height are summarized separately: sorting whole sizes by area puts a wide, short image
    below a square one and makes the range read wrong.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from PIL import Image
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "c").mkdir()
        >>> for i, size in enumerate([(40, 30), (60, 20), (50, 50)]):
        ...     Image.new("RGB", size).save(root / "c" / f"{i}.png")
        >>> size_summary(root).split(", median file")[0]
        'width 50 (40 to 60) x height 30 (20 to 50)'
    """
    from PIL import Image

    from minddata.bench.images import list_images

    files = list_images(data_dir)
    picked = files[:: max(1, len(files) // sample)][:sample]
    widths, heights, kb = [], [], []
    for f in picked:
        try:
            with Image.open(f) as im:
                w, h = im.size
            kb.append(f.stat().st_size / 1000)
        except OSError:
            continue  # an unreadable file is counted and named when the pipelines run
        widths.append(w)
        heights.append(h)
    if not widths:
        return "unknown (no sampled file could be opened)"

    def median(values: list[int]) -> int:
        return sorted(values)[len(values) // 2]

    return (f"width {median(widths)} ({min(widths)} to {max(widths)}) x height {median(heights)} "
            f"({min(heights)} to {max(heights)}), median file {sorted(kb)[len(kb) // 2]:.0f} KB, "
            f"over {len(widths)} sampled files")


# --- other work on the machine --------------------------------------------------------------------


def _machine_busy_seconds() -> float | None:
    """CPU-seconds the whole machine has spent busy (all cores), from /proc/stat; None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / runner.CLK_TCK


class LoadMonitor:
    """How much CPU *other* processes used while the benchmark ran, in cores.

    The whole machine's busy time (``/proc/stat``) minus this process's and its workers' own CPU time
    over the same window. A load average alone cannot tell the benchmark's own threads from other
    work; this can. Where /proc/stat is missing, the 1-minute load average above the core count is used.

    Examples:
        >>> monitor = LoadMonitor(cores=2).start()
        >>> monitor.stop(own_cpu_seconds=0.0).other_cores >= 0.0
        True
    """

    #: Other work above this many cores on average makes the run's figures untrustworthy.
    WARN_CORES = 0.5

    def __init__(self, cores: int):
        self.cores = max(1, int(cores))
        self.other_cores = 0.0
        self.load_average: float | None = None

    def start(self) -> LoadMonitor:
        self._t0 = time.perf_counter()
        self._busy0 = _machine_busy_seconds()
        return self

    def stop(self, own_cpu_seconds: float) -> LoadMonitor:
        wall = max(time.perf_counter() - self._t0, 1e-9)
        busy1 = _machine_busy_seconds()
        if self._busy0 is not None and busy1 is not None:
            self.other_cores = max(0.0, (busy1 - self._busy0 - own_cpu_seconds) / wall)
        try:
            self.load_average = os.getloadavg()[0]
        except (OSError, AttributeError):
            self.load_average = None
        return self

    @property
    def busy(self) -> bool:
        if self._busy0 is None and self.load_average is not None:
            return self.load_average > self.cores
        return self.other_cores > self.WARN_CORES

    def warning(self) -> str:
        load = f", load average {self.load_average:.1f}" if self.load_average is not None else ""
        return (f"warning: other processes used {self.other_cores:.1f} of the {self.cores} cores on average during "
                f"this run{load}: the figures are lower and noisier than on an idle machine; rerun when it is idle")


# --- rounds ---------------------------------------------------------------------------------------


def aggregate_rounds(runs: Sequence[runner.BenchResult]) -> runner.BenchResult:
    """One result for a pipeline run several times: the median of each figure over the rounds (the
    true median: with an even number of rounds, the mean of the two middle ones), every round's
    images/s, and a bottleneck only when the rounds agree on it. The verdict's evidence (busy share,
    CPU share, fusion) is the round whose rate is nearest the median's.

    Examples:
        >>> from minddata.bench.runner import BenchResult
        >>> def run(rate, stage):
        ...     return BenchResult("p", 100, 100 / rate, rate, 1.0, 100.0, 10.0, 0.1, 2, 8, 1,
        ...                        bottleneck_stage=stage, bottleneck=f"{stage} is busy")
        >>> r = aggregate_rounds([run(90, "Map"), run(100, "Map"), run(80, "Batch")])
        >>> r.images_per_s, r.rounds_images_per_s, r.bottleneck_stage
        (90, [90, 100, 80], None)
        >>> r.bottleneck
        'unclear: the rounds disagree (Map in 2 of 3 rounds, Batch in 1); rerun with more --rounds on an idle machine'
        >>> aggregate_rounds([run(100, "Map"), run(300, "Map")]).images_per_s
        200.0
    """
    if not runs:
        raise ValueError("aggregate_rounds: no runs")
    rates = [r.images_per_s for r in runs]
    median_rate = statistics.median(rates)
    middle = min(runs, key=lambda r: abs(r.images_per_s - median_rate))
    figures = {name: statistics.median(getattr(r, name) for r in runs) for name in _MEDIAN_FIGURES}
    verdicts = [_stage_named(r) for r in runs if r.bottleneck]
    result = replace(middle, images_per_s=median_rate, rounds_images_per_s=rates, **figures)
    ops = {r.neck.get("op") for r in runs if r.neck}
    if len(set(verdicts)) == 1 and len(ops) > 1 and result.neck.get("stage"):
        # The same stage, its dominant op named in some rounds only: agree on the stage, name no op.
        result = replace(result, bottleneck_stage=result.neck["stage"],
                         neck={**result.neck, "op": None, "op_share": None})
    if len(set(verdicts)) > 1:
        counts: dict[str, int] = {}
        for v in verdicts:
            counts[v] = counts.get(v, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        parts = [f"{name} in {n} of {len(verdicts)} rounds" if i == 0 else f"{name} in {n}"
                 for i, (name, n) in enumerate(ranked)]
        result = replace(result, bottleneck_stage=None, bottleneck_agreed=False,
                         bottleneck=f"unclear: the rounds disagree ({', '.join(parts)}); rerun with more --rounds on "
                                    "an idle machine")
    return result


def _stage_named(r: runner.BenchResult) -> str:
    """The stage a round names as its bottleneck (not the op in it: rounds that agree on a stage agree
    even when only some found one op taking most of its time)."""
    stage = r.neck.get("stage") if r.neck else r.bottleneck_stage
    return stage if stage is not None else "(the consumer)"


# Each is the median over rounds; images/s is too (from the rates).
_MEDIAN_FIGURES = ("seconds", "cpu_seconds", "images_per_cpu_s", "peak_rss_mb", "first_batch_s",
                   "worker_peak_rss_mb", "steady_images_per_s")


def _spread(result: runner.BenchResult) -> str:
    rates = result.rounds_images_per_s
    if len(rates) < 2:
        return ""
    return f"{min(rates):,.0f}-{max(rates):,.0f}"


# --- the command ----------------------------------------------------------------------------------


def _fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if value == value else "n/a"  # NaN != NaN


def _prepare_images(num_images: int) -> tuple[Path, str, int]:
    from minddata.bench import images as images_mod

    num_classes = min(10, num_images)
    bar = ProgressBar(f"preparing {num_images:,} generated images (made once, then cached)", num_images,
                      unit="images")
    try:
        data_dir, made = images_mod.ensure_images(num_images=num_images, num_classes=num_classes, progress=bar)
    finally:
        bar.close()
    source = (f"{num_images} generated ImageNet-like JPEGs ({num_classes} classes, ~500x375, q90) in {data_dir}"
              f"{' (generated now)' if made else ' (cached)'}")
    return data_dir, source, num_images


def parser() -> CommandParser:
    """The parser of ``minddata bench``'s options."""
    bench = CommandParser(
        prog=f"{PROG} bench",
        description="Run the standard pipelines on the CPU and report images/s, images per CPU-second, "
        "peak RSS and first-batch latency. Without --data, a built-in image set is generated once and "
        "cached under $MINDDATA_CACHE/bench or ~/.cache/minddata/bench.",
    )
    bench.add_argument("--data", metavar="DIR", help="image folder: class sub-folders of images")
    bench.add_argument(
        "--pipeline",
        action="append",
        metavar="NAME|FILE.py",
        help=f"pipeline to run, repeatable: {', '.join(pipelines.PIPELINES)} (default: all), or a Python file that "
        "defines build(data_dir, workers, batch_size) returning a batched dataset",
    )
    bench.add_argument(
        "--device", type=str.lower, choices=["cpu", "gpu", "dvpp", "auto"], default="cpu",
        help="where the pipelines' ops run: each op with a kernel on that device runs there (auto: the "
        "placement pass chooses); default cpu",
    )
    bench.add_argument("--workers", type=workers_arg, default=2,
                       help="parallel workers per stage, or 'auto' to start at 1 and autotune (default 2)")
    bench.add_argument("--batch-size", type=positive_int, default=64, help="batch size (default 64)")
    bench.add_argument("--epochs", type=positive_int, default=1, help="passes over the data per round (default 1)")
    bench.add_argument("--rounds", type=positive_int, default=3,
                       help="times each pipeline is run, alternating pipelines; figures are medians over the rounds, "
                       "with the spread, and a bottleneck is named only when the rounds agree (default 3)")
    bench.add_argument(
        "--num-images", type=positive_int, default=2000,
        help="size of the generated set (default 2000; not used with --data)"
    )
    bench.add_argument("--executor", choices=["local", "ray"], default="local",
                       help="run the pipelines here (local, default) or their per-row part on Ray (ray: the "
                       "cluster ray.init() connects to, a local one by default; needs pip install 'minddata[ray]')")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    bench.add_argument("--plot", metavar="PATH",
                       help="also draw a PNG of throughput per pipeline and device, and of queue occupancy over "
                       "time (needs matplotlib: pip install 'minddata[plot]')")
    bench.add_argument("--compare", metavar="PEERS", type=peer_list,
                       help="also run the standard pipelines through these installed peers, comma-separated: "
                       "mindspore,dali,torch (each found by $MINDDATA_<PEER>_PYTHON or its default venv)")
    return bench


def peer_list(text: str) -> list[str]:
    """``--compare``'s value: known peer names, comma-separated, each once."""
    from minddata.bench.compare import PEERS

    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in PEERS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown peer(s) {', '.join(unknown) or repr(text)}; choose from {', '.join(PEERS)}, comma-separated"
        )
    return list(dict.fromkeys(names))


def main(argv: Sequence[str]) -> int:
    """``minddata bench`` with ``argv``, the arguments after ``bench``; returns the exit status.

    ``minddata.cli`` hands the command its arguments unparsed: the options of a command live with it.
    """
    return run_bench(parser().parse_args(list(argv)))


def run_bench(args: argparse.Namespace) -> int:
    """``minddata bench`` with parsed arguments; returns the exit status."""
    chosen = _resolve_pipelines(list(dict.fromkeys(args.pipeline or pipelines.PIPELINES)))  # keep order, no repeats
    if args.json:
        # Found out now, not after minutes of benchmarking.
        parent = Path(args.json).expanduser().resolve().parent
        if not parent.is_dir():
            raise UsageError(f"{PROG} bench: error: --json {args.json}: folder {parent} does not exist; create it first")
    if args.plot:
        _check_plot(args.plot)
    _check_device(args.device)
    executor = getattr(args, "executor", "local")
    check_executor("bench", executor)
    if args.data is not None:
        data_dir, count = _check_data_dir(args.data)
        source = f"{count} images in {data_dir}"
    else:
        try:
            data_dir, source, count = _prepare_images(args.num_images)
        except (OSError, ValueError) as exc:
            print(f"{PROG} bench: error: cannot prepare the generated images: {exc}", file=sys.stderr)
            return 1

    versions = library_versions()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers_text = "autotuned workers (starting at 1)" if args.workers == "auto" else f"{args.workers} workers"
    print(f"data:      {source}")
    print(f"sizes:     {size_summary(data_dir)}")
    print(f"machine:   {platform.node()}, {cores} usable cores, {platform.machine()}, "
          f"Python {platform.python_version()}, Pillow {versions['Pillow']}")
    print(f"settings:  device {args.device}, {workers_text}, batch {args.batch_size}, {args.epochs} epoch(s) "
          f"per round, {args.rounds} round(s), {executor} executor")
    print("pipelines:")
    for p in chosen:
        if isinstance(p, str):
            print(f"  {p:<9} {pipelines.describe(p)}")
        else:
            print(f"  {p.name:<9} {p.summary} ({p.path})")
    peers = _find_peers(args.compare or [])
    print(flush=True)

    from minddata.engine.autotune import AUTOTUNE

    workers = AUTOTUNE if args.workers == "auto" else args.workers
    ref_workers = cores if args.workers == "auto" else args.workers
    rounds: dict[str, list[runner.BenchResult]] = {}
    failed: list[str] = []
    monitor = LoadMonitor(cores).start()
    cpu_before = time.process_time() + runner.children_cpu()
    # The floor is the CPU kernels' limit: it says nothing of pipelines placed on a GPU or Dvpp.
    floors = _floors([p for p in chosen if isinstance(p, str)], data_dir, cores) if args.device == "cpu" else {}
    references = [_decode_reference(data_dir, ref_workers)]
    stop_ray = _ray_for_the_rounds(executor, cores)
    try:
        own_cpu = _run_rounds(chosen, args, data_dir, count, workers, executor, rounds, failed)
    finally:
        stop_ray()

    peer_runs = _run_peers(peers, [p for p in chosen if isinstance(p, str)], data_dir, ref_workers, args.batch_size)
    if floors:
        # Timed again after the rounds, each kernel's faster time kept, as the decode reference below.
        from minddata.bench.floor import fastest_of

        again = _floors(list(floors), data_dir, cores, again=True)
        floors = {name: fastest_of(floor, again[name]) if name in again else floor for name, floor in floors.items()}
    # The reference runs before and after the pipelines and the faster run is kept: on a shared machine
    # noise only ever slows a run down, so the faster one is the better estimate of the limit.
    references.append(_decode_reference(data_dir, ref_workers))
    # Our own CPU: the pipelines' measured CPU is a subset of what this process and its children used;
    # take the larger so that peers and references count as our own work too.
    own_cpu = max(own_cpu, time.process_time() + runner.children_cpu() - cpu_before)
    monitor.stop(own_cpu_seconds=own_cpu)
    measured = [r for r in references if r is not None]
    reference = max(measured, key=lambda r: r.images_per_s) if measured else None
    results = [aggregate_rounds(runs) for runs in rounds.values()]
    verdicts = {r.pipeline: verdict(r, cores=cores, other_cores=monitor.other_cores, busy=monitor.busy)
                for r in results}
    print()
    _print_table(results, reference, verdicts, floors)
    _print_bad_images(results, reference)
    _print_verdicts(results, verdicts)
    if peers:
        _print_peers(results, peers, peer_runs)
    if monitor.busy:
        print("\n" + monitor.warning())
    if args.json:
        payload = {
            "versions": versions,
            "machine": {"node": platform.node(), "usable_cores": cores, "arch": platform.machine(),
                        "other_processes_cores": round(monitor.other_cores, 3),
                        "load_average": monitor.load_average, "busy_warning": monitor.busy},
            "data": {"dir": str(data_dir), "images": count, "generated": args.data is None},
            "settings": {"device": args.device, "workers": args.workers, "batch_size": args.batch_size,
                         "epochs": args.epochs, "rounds": args.rounds, "executor": executor},
            "decode_reference": reference.to_json() if reference else None,
            "decode_reference_runs_images_per_s": [r.images_per_s for r in measured],
            "floors": {name: floor.to_json() for name, floor in floors.items()},
            "results": [r.to_json() | {"verdict": asdict(verdicts[r.pipeline])} for r in results],
            "peers": {name: {"python": python, "detail": detail} for name, (python, detail) in peers.items()},
            "peer_results": [vars(r) | {"images_per_s": r.images_per_s} for r in peer_runs],
            "failed": failed,
        }
        try:
            Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
        except OSError as exc:
            print(f"{PROG} bench: error: --json {args.json}: cannot write ({exc.strerror})", file=sys.stderr)
            return 1
        print(f"\nwrote {args.json}")
    if args.plot:
        from minddata.bench.plot import plot

        try:
            plot(results, args.plot, peer_runs)
        except OSError as exc:
            print(f"{PROG} bench: error: --plot {args.plot}: cannot write ({exc.strerror})", file=sys.stderr)
            return 1
        print(f"wrote {args.plot}")
    return 1 if failed else 0


def _run_rounds(chosen: list, args: argparse.Namespace, data_dir: Path, count: int, workers: Any, executor: str,
                rounds: dict[str, list[runner.BenchResult]], failed: list[str]) -> float:
    """Run every pipeline ``args.rounds`` times, alternating pipelines, each round in a process of its
    own; fills ``rounds`` and ``failed`` and returns the CPU-seconds the rounds measured."""
    own_cpu = 0.0
    for round_index in range(args.rounds):
        for p in chosen:
            label = p if isinstance(p, str) else p.name
            if label in failed:
                continue
            print(f"running {label} (round {round_index + 1} of {args.rounds}) ...", flush=True)
            bar = ProgressBar(label, count * args.epochs, unit="images", in_logs=False)
            try:
                # Each round in a fresh process: its peak RSS is its own, not what ran before it.
                result = runner.run_in_own_process(
                    p, data_dir, workers=workers, batch_size=args.batch_size, epochs=args.epochs,
                    device=args.device, progress=bar, skip_bad_images=args.data is not None, executor=executor)
            except Exception as exc:
                bar.close()
                # A failing pipeline is a bug, not bad input: one summary line, then the trace to report.
                print(f"{PROG} bench: pipeline {label} failed: {getattr(exc, 'kind', type(exc).__name__)}: {exc}",
                      file=sys.stderr)
                trace = getattr(exc, "trace", None)
                if trace:
                    print(trace, file=sys.stderr, end="")
                else:
                    traceback.print_exc()
                failed.append(label)
                continue
            bar.close()
            own_cpu += result.cpu_seconds
            rounds.setdefault(label, []).append(result)
    return own_cpu


def _ray_for_the_rounds(executor: str, cores: int) -> Any:
    """With ``--executor ray`` every round's process joins one Ray cluster: the one this process is
    connected to, the one ``RAY_ADDRESS`` names, else a local one started here (on 127.0.0.1 only) for
    the rounds. Returns what stops what was started (nothing, unless this started a cluster)."""
    ray = sys.modules.get("ray")
    if executor != "ray" or os.environ.get("RAY_ADDRESS") or (ray is not None and ray.is_initialized()):
        return lambda: None
    from minddata.bench.ray_cluster import init_local_cluster

    return init_local_cluster(cores).shutdown


def _find_peers(names: list[str]) -> dict[str, tuple[str | None, str]]:
    if not names:
        return {}
    from minddata.bench.compare import find_peer

    found = {}
    for name in names:
        python, detail = find_peer(name)
        found[name] = (python, detail)
        print(f"peer:      {name}: " + (f"{detail} ({python})" if python else detail))
    return found


def _run_peers(peers: dict, names: list[str], data_dir: Path, workers: int, batch_size: int) -> list:
    from minddata.bench.compare import PEERS, run_one

    runs = []
    for peer, (python, _) in peers.items():
        if python is None:
            continue
        for name in names:
            print(f"running {name} with {peer} ...", flush=True)
            try:
                runs.append(run_one(python, PEERS[peer].impl, name, str(data_dir), workers, batch_size))
            except Exception as exc:  # a peer's failure is reported, and the others still run
                print(f"{PROG} bench: {peer} {name} failed: {type(exc).__name__}: {str(exc).splitlines()[0]}",
                      file=sys.stderr)
    return runs


def _floors(names: list[str], data_dir: Path, cores: int, again: bool = False) -> dict[str, Any]:
    """Each standard pipeline's kernel floor (:mod:`minddata.bench.floor`), measured here before the
    rounds (and ``again`` after them)."""
    from minddata.bench.floor import FLOOR_PIPELINES, measure_floors, sample_files

    names = [n for n in names if n in FLOOR_PIPELINES]
    if not names:
        return {}
    print(f"timing the kernels of {', '.join(names)} {'again ' if again else ''}(their floors) ...", flush=True)
    try:
        return measure_floors(names, sample_files(data_dir, 200), cores)
    except Exception as exc:  # the floor is context, not the benchmark: report once and go on
        print(f"{PROG} bench: no floor for {data_dir}: {exc}", file=sys.stderr)
        return {}


def _decode_reference(data_dir: Path, workers: int) -> Any:
    try:
        return runner.decode_reference_in_own_process(data_dir, workers=workers)
    except Exception as exc:  # the reference is context, not the benchmark: report and go on
        print(f"{PROG} bench: decode reference failed: {getattr(exc, 'kind', type(exc).__name__)}: {exc}",
              file=sys.stderr)
        return None


def _table(header: Sequence[str], rows: list[Sequence[str]]) -> None:
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 or i == len(widths) - 1 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    print(line(header))
    print(line(tuple("-" * w for w in widths)))
    for row in rows:
        print(line(row))


def _print_table(results: list, reference: Any | None, verdicts: dict, floors: dict | None = None) -> None:
    floors = floors or {}
    header = ("pipeline", "device", "images", "images/s", "spread", "img/CPU-s", "peak RSS MB", "1st batch s",
              "vs decode", "floor", "vs floor", "limit")
    rows = []
    for r in ([reference] if reference else []) + results:
        ratio = f"{r.images_per_s / reference.images_per_s:.2f}x" if reference and r is not reference else ""
        rss = _fmt(r.peak_rss_mb)
        if r.worker_processes:
            rss += f" +{_fmt(r.worker_peak_rss_mb)} in {r.worker_processes} procs"
        limit = "" if r is reference else verdicts[r.pipeline].label
        floor = floors.get(r.pipeline) if r is not reference else None
        rows.append((r.pipeline, "cpu" if r is reference else r.device, str(r.images), _fmt(r.images_per_s),
                     _spread(r), _fmt(r.images_per_cpu_s), rss, _fmt(r.first_batch_s, 3), ratio,
                     _fmt(floor.images_per_s) if floor else "", f"{r.images_per_s / floor.images_per_s:.0%}" if floor else "",
                     limit))
    _table(header, rows)
    rounds = max((len(r.rounds_images_per_s) for r in results), default=1)
    if rounds > 1:
        even = " (the mean of the middle two)" if rounds % 2 == 0 else ""
        print(f"\nfigures: the median of {rounds} rounds{even}; spread: the slowest and fastest round's images/s.")
    if reference:
        print(f"decode-only: {reference.decoder} reading and decoding every image at full size on "
              f"{reference.workers} threads, no pipeline (the faster of a run before and one after the pipelines): "
              "the decoder's limit on this machine.")
        above = [r.pipeline for r in results if r.images_per_s > reference.images_per_s]
        if above:
            print(f"'vs decode' is each pipeline's images/s over it; {', '.join(above)} exceed 1x because they "
                  "decode less than the full image (reduced-scale or cropped decode).")
        else:
            print("'vs decode' is each pipeline's images/s over it.")
    shown = [r for r in results if r.pipeline in floors]
    if shown:
        cores = floors[shown[0].pipeline].cores
        print(f"floor: the {cores}-core limit of the CPU kernels, the fastest kernel available here for each step "
              "timed warm on one thread, before and after the rounds, the faster time kept (python -m "
              "minddata.bench.floor); 'vs floor' is images/s over it; "
              "'steady' leaves out the start-up (the images after the first batch over the time from it to the last):")
        for r in shown:
            floor = floors[r.pipeline]
            steady = r.steady_images_per_s
            at = f"; steady {_fmt(steady)} images/s, {steady / floor.images_per_s:.0%} of it" if steady == steady else ""
            print(f"  {r.pipeline}: {floor.describe()}{at}")
            together = floor.all_cores_images_per_s
            if together:
                steady_share = f", steady {steady / together:.0%}" if steady == steady else ""
                print(f"    the same kernels chained on all {floor.cores} cores at once (no pipeline): {_fmt(together)} "
                      f"images/s, {together / floor.images_per_s:.0%} of the floor; this pipeline reached "
                      f"{r.images_per_s / together:.0%} of it{steady_share}")
    print("img/CPU-s: images per CPU-second of the run's process and its workers (all threads); "
          "higher means less CPU spent per image.")
    print("peak RSS MB: the most memory the run's process held; each pipeline round (and the decode-only run) "
          "has a fresh process of its own, so no figure includes another run's memory.")
    if results:
        print("limit: what holds each pipeline back, in a word; the verdicts below say it in full.")


def _print_bad_images(results: list, reference: Any | None) -> None:
    lines = []
    if reference is not None and reference.bad_images:
        lines.append(f"  decode-only: {len(reference.bad_images)} file(s) could not be decoded and were skipped: "
                     + ", ".join(reference.bad_images[:5]) + (" ..." if len(reference.bad_images) > 5 else ""))
    for r in results:
        if r.skipped_rows:
            lines.append(f"  {r.pipeline}: {r.skipped_rows} row(s) skipped per round because an op failed on them:")
            lines.extend(f"    {_file_and_reason(m)}" for m in r.skipped_samples)
    if lines:
        print("\nbad images (skipped and counted; the figures cover the rest):")
        for line in lines:
            print(line)


def _file_and_reason(message: str) -> str:
    """"<file>: <reason>" from the engine's row-error line, which also names stages and fused ops."""
    import re

    match = re.search(r"file (.+?)\): \w+: (.*)", message)
    return f"{match.group(1)}: {match.group(2)}" if match else message


def _print_verdicts(results: list, verdicts: dict) -> None:
    if not results:
        return
    print("\nverdicts (what limits each pipeline, checked against the machine's load; the evidence below each):")
    width = max(len(r.pipeline) for r in results) + 1
    for r in results:
        v = verdicts[r.pipeline]
        print(f"  {r.pipeline + ':':<{width}} {v.line}")
        details = list(v.details)
        details += [f"optimized: {text}" for text in plain_fusion_notes(r.fusion_notes)]
        details += [f"autotune at {d['t']:.2f} s: {d['stage']} workers {d['workers_from']} → {d['workers_to']} "
                    f"({d['why']})" for d in r.autotune if d.get("action") == "resize"]
        for line in details:
            print(f"  {'':<{width}}   {line}")


def _print_peers(results: list, peers: dict, runs: list) -> None:
    print("\npeers (same images, same batch size; each peer and pipeline in a process of its own, whose own peak "
          "RSS is shown):")
    for name, (python, detail) in peers.items():
        if python is None:
            print(f"  {name}: {detail}")
    if not runs:
        return
    ours = {r.pipeline: r for r in results}
    rows = []
    for run in runs:
        mine = ours.get(run.pipeline)
        ratio = f"{mine.images_per_s / run.images_per_s:.2f}x" if mine and run.images_per_s > 0 else "n/a"
        rss = _fmt(run.peak_rss_mb)
        if run.worker_processes:
            rss += f" +{run.worker_processes} procs of up to {_fmt(run.worker_peak_rss_mb)}"
        rows.append((run.pipeline, run.impl, _fmt(run.images_per_s), _fmt(run.images_per_cpu_s), rss, ratio))
    _table(("pipeline", "peer", "images/s", "img/CPU-s", "peak RSS MB", "minddata / peer"), rows)

