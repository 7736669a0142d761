"""The ``minddata`` command: ``--version``, ``devices`` and ``bench``.

Bad arguments give one line on stderr that names the problem and the fix, and exit status 2.

Example:
    $ minddata --version
    $ minddata devices
    $ minddata bench                                  # generated images, every standard pipeline
    $ minddata bench --data ~/imagenet/val --pipeline infer224 --workers 8 --json out.json
    $ minddata convert ~/imagenet/train train.mindrecord --shards 8   # image folder -> record files
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = ["main"]

PROG = "minddata"


class UsageError(Exception):
    """A bad command line; reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage block and exits; we want one line and a return code.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message} (see {self.prog} --help)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {value}")
    return value


def _workers_arg(text: str) -> int | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 or 'auto', found {text!r}") from None


def _peer_list(text: str) -> list[str]:
    from minddata.bench.compare import PEERS

    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in PEERS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown peer(s) {', '.join(unknown) or repr(text)}; choose from {', '.join(PEERS)}, comma-separated"
        )
    return list(dict.fromkeys(names))


def _parser() -> _Parser:
    from minddata.bench.pipelines import PIPELINES

    parser = _Parser(prog=PROG, description="minddata: data pipelines for deep learning.")
    parser.add_argument("--version", action="store_true", help="print versions of minddata and its libraries")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    dev = sub.add_parser("devices", help="list the devices pipelines can use here, or why one is absent")
    dev.add_argument("-v", "--verbose", action="store_true", help="also list each device's ops and drivers")

    bench = sub.add_parser(
        "bench",
        help="benchmark the standard pipelines",
        description="Run the standard pipelines on the CPU and report images/s, images per CPU-second, "
        "peak RSS and first-batch latency. Without --data, a built-in image set is generated once and "
        "cached under $MINDDATA_CACHE/bench or ~/.cache/minddata/bench.",
    )
    bench.add_argument("--data", metavar="DIR", help="image folder: class sub-folders of images")
    bench.add_argument(
        "--pipeline",
        action="append",
        metavar="NAME|FILE.py",
        help=f"pipeline to run, repeatable: {', '.join(PIPELINES)} (default: all), or a Python file that "
        "defines build(data_dir, workers, batch_size) returning a batched dataset",
    )
    bench.add_argument(
        "--device", type=str.lower, choices=["cpu", "gpu", "dvpp", "auto"], default="cpu",
        help="where the pipelines' ops run: each op with a kernel on that device runs there (auto: the "
        "placement pass chooses); default cpu",
    )
    bench.add_argument("--workers", type=_workers_arg, default=2,
                       help="parallel workers per stage, or 'auto' to start at 1 and autotune (default 2)")
    bench.add_argument("--batch-size", type=_positive_int, default=64, help="batch size (default 64)")
    bench.add_argument("--epochs", type=_positive_int, default=1, help="passes over the data (default 1)")
    bench.add_argument(
        "--num-images", type=_positive_int, default=2000,
        help="size of the generated set (default 2000; not used with --data)"
    )
    bench.add_argument("--executor", choices=["local", "ray"], default="local",
                       help="run the pipelines here (local, default) or their per-row part on Ray (ray: the "
                       "cluster ray.init() connects to, a local one by default; needs pip install 'minddata[ray]')")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    bench.add_argument("--plot", metavar="PATH",
                       help="also draw a PNG of throughput per pipeline and device, and of queue occupancy over "
                       "time (needs matplotlib: pip install 'minddata[plot]')")
    bench.add_argument("--compare", metavar="PEERS", type=_peer_list,
                       help="also run the standard pipelines through these installed peers, comma-separated: "
                       "mindspore,dali,torch (each found by $MINDDATA_<PEER>_PYTHON or its default venv)")
    conv = sub.add_parser(
        "convert",
        help="convert an image folder to record files",
        description="Write every image of SOURCE/<class>/<image> (undecoded, with its label and file name) to "
        "record files read by MindDataset. With --shards N the files are DEST0 ... DEST{N-1}. Files appear only "
        "when every image is written.",
    )
    conv.add_argument("source", metavar="SOURCE", help="image folder: class sub-folders of images")
    conv.add_argument("dest", metavar="DEST", help="record file to write (its folder must exist)")
    conv.add_argument("--shards", type=_positive_int, default=1, help="number of files to write (default 1)")
    conv.add_argument("--overwrite", action="store_true", help="replace existing files of the same names")
    conv.add_argument("--extensions", nargs="+", metavar="EXT", help="image extensions to read (default: common image types)")
    conv.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    conv.add_argument("--executor", choices=["local", "ray"], default="local",
                      help="read the images here (local, default) or in Ray tasks (ray: the cluster ray.init() "
                      "connects to, a local one by default; needs pip install 'minddata[ray]')")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``minddata`` console script; returns the exit status."""
    try:
        parser = _parser()
        args = parser.parse_args(argv)
        if args.version:
            return _version()
        if args.command == "devices":
            return _devices(verbose=args.verbose)
        if args.command == "convert":
            return _convert(args)
        if args.command == "bench":
            return _bench(args)
        parser.print_help(sys.stderr)
        return 2
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into e.g. `head`, which stopped reading: not an error worth a traceback. Point
        # stdout at /dev/null so the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


# --- version --------------------------------------------------------------------------------------


def _library_versions() -> dict[str, str]:
    from minddata._version import __version__

    versions = {"minddata": __version__, "Python": f"{platform.python_version()} ({sys.executable})"}
    try:
        import numpy

        versions["numpy"] = numpy.__version__
    except ImportError:
        versions["numpy"] = "not installed"
    try:
        import PIL
        from PIL import features

        if features.check_feature("libjpeg_turbo"):
            kind = f"libjpeg-turbo {features.version_feature('libjpeg_turbo') or ''}".rstrip()
        else:
            kind = f"libjpeg {features.version('jpg') or '?'}, not libjpeg-turbo: JPEG decode is slower"
        versions["Pillow"] = f"{PIL.__version__} (JPEG: {kind})"
    except ImportError:
        versions["Pillow"] = "not installed"
    try:
        import cv2

        versions["OpenCV"] = cv2.__version__
    except ImportError:
        versions["OpenCV"] = "not installed"
    return versions


def _version() -> int:
    for name, version in _library_versions().items():
        print(f"{name} {version}")
    return 0


# --- devices --------------------------------------------------------------------------------------


def _devices(verbose: bool) -> int:
    from minddata._devices import devices

    found = devices()
    width = max(len(d.name) for d in found)
    for d in found:
        state = "present" if d.present else "absent "
        print(f"{d.name:<{width}}  {state}  {d.detail}  [{len(d.ops)} ops]")
        if verbose:
            print(f"{'':<{width}}    ops: {', '.join(d.ops) or 'none registered'}")
            for drv in d.drivers:
                print(f"{'':<{width}}    driver {drv.name}: {'yes' if drv.available else 'no'} ({drv.detail})")
    return 0


# --- convert --------------------------------------------------------------------------------------


class _ProgressBar:
    """``[#####.....] 1,234/2,000 images  52.1 MB  3.2 s`` on stderr: redrawn in place at most 10 times a
    second on a terminal, else one line per 10% (logs stay short)."""

    def __init__(self, stream: Any = None):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.last_tenth = -1

    def __call__(self, done: int, total: int, nbytes: int) -> None:
        now = time.perf_counter()
        line = self._line(done, total, nbytes, now - self.start)
        if self.tty:
            if now - self.last_draw >= 0.1 or done == total:
                self.stream.write("\r" + line)
                if done == total:
                    self.stream.write("\n")
                self.stream.flush()
                self.last_draw = now
        else:
            tenth = done * 10 // max(total, 1)
            if tenth != self.last_tenth:
                self.stream.write(line + "\n")
                self.stream.flush()
                self.last_tenth = tenth

    @staticmethod
    def _line(done: int, total: int, nbytes: int, seconds: float) -> str:
        width = 30
        filled = width * done // max(total, 1)
        return (f"[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} images  "
                f"{nbytes / 1e6:,.1f} MB  {seconds:.1f} s")


def _check_executor(command: str, executor: str) -> None:
    if executor == "ray":
        from minddata.engine.ray_executor import require_ray

        try:
            require_ray()
        except ImportError as exc:
            raise UsageError(f"{PROG} {command}: error: --executor ray: {exc}") from None


def _convert(args: argparse.Namespace) -> int:
    from minddata.errors import MinddataError
    from minddata.record.convert import convert_image_folder

    _check_executor("convert", args.executor)

    source = Path(args.source).expanduser()
    if not source.is_dir():
        raise UsageError(f"{PROG} convert: error: SOURCE {args.source}: not a folder; pass a folder of class "
                         "sub-folders of images")
    dest = Path(args.dest).expanduser()
    if not dest.resolve().parent.is_dir():
        raise UsageError(f"{PROG} convert: error: DEST {args.dest}: folder {dest.resolve().parent} does not exist; "
                         "create it first")
    try:
        result = convert_image_folder(source, dest, shard_num=args.shards, overwrite=args.overwrite,
                                      extensions=args.extensions, progress=None if args.quiet else _ProgressBar(),
                                      executor=args.executor)
    except MinddataError as exc:
        message = str(exc).removeprefix("convert: ")
        raise UsageError(f"{PROG} convert: error: {message}") from None
    rate = result.images / result.seconds if result.seconds > 0 else float("nan")
    print(f"wrote {result.images:,} images ({result.bytes / 1e6:,.1f} MB, {len(result.classes)} classes) to "
          f"{len(result.files)} file(s) in {result.seconds:.1f} s ({_fmt(rate)} images/s):")
    for path in result.files:
        print(f"  {path}")
    return 0


# --- bench ----------------------------------------------------------------------------------------


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


def _size_summary(data_dir: Path, sample: int = 50) -> str:
    """Median and range of image sizes over an even sample of the files (headers only: fast)."""
    from PIL import Image

    from minddata.bench.images import list_images

    files = list_images(data_dir)
    picked = files[:: max(1, len(files) // sample)][:sample]
    sizes, kb = [], []
    for f in picked:
        try:
            with Image.open(f) as im:
                sizes.append(im.size)
            kb.append(f.stat().st_size / 1000)
        except OSError:
            continue  # an unreadable file is the pipeline's to report
    if not sizes:
        return "unknown (no sampled file could be opened)"
    areas = sorted(sizes, key=lambda s: s[0] * s[1])
    mid = areas[len(areas) // 2]
    return (f"median {mid[0]}x{mid[1]} (from {areas[0][0]}x{areas[0][1]} to {areas[-1][0]}x{areas[-1][1]}), "
            f"median file {sorted(kb)[len(kb) // 2]:.0f} KB, over {len(sizes)} sampled files")


def _fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if value == value else "n/a"  # NaN != NaN


def _bench_progress_enabled(stream: Any) -> bool:
    # A bar redrawn in place is for people at a terminal; CI logs would fill with carriage returns.
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")


class _BenchProgress:
    """``train     [######........] 1,280/2,000 images  845 img/s`` redrawn in place on stderr, at most 10
    times a second, only on a terminal and not under CI."""

    def __init__(self, label: str, total: int, stream: Any = None):
        self.stream = stream or sys.stderr
        self.enabled = _bench_progress_enabled(self.stream)
        self.label = label
        self.total = max(total, 1)
        self.start = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1:
            return
        self.last = now
        width = 28
        filled = min(width, width * done // self.total)
        rate = done / (now - self.start) if now > self.start else 0.0
        self.stream.write(f"\r{self.label:<9} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{self.total:,} "
                          f"images  {rate:,.0f} img/s ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.last:
            self.stream.write("\r" + " " * 79 + "\r")
            self.stream.flush()


def _resolve_pipelines(names: list[str]) -> list[Any]:
    """Standard pipeline names stay names; anything else must be a pipeline file."""
    from minddata.bench import pipelines

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
    from minddata._devices import devices

    wanted = {"gpu": "GPU", "dvpp": "Dvpp"}[device]
    info = next((d for d in devices() if d.name == wanted), None)
    if info is None or not info.present:
        detail = info.detail if info is not None else "not known to this minddata"
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


def _bench(args: argparse.Namespace) -> int:
    from minddata.bench import images as images_mod
    from minddata.bench import pipelines, runner

    chosen = _resolve_pipelines(list(dict.fromkeys(args.pipeline or pipelines.PIPELINES)))  # keep order, no repeats
    if args.json:
        # Found out now, not after minutes of benchmarking.
        parent = Path(args.json).expanduser().resolve().parent
        if not parent.is_dir():
            raise UsageError(f"{PROG} bench: error: --json {args.json}: folder {parent} does not exist; create it first")
    if args.plot:
        _check_plot(args.plot)
    _check_device(args.device)
    _check_executor("bench", args.executor)
    if args.data is not None:
        data_dir, count = _check_data_dir(args.data)
        source = f"{count} images in {data_dir}"
    else:
        print(f"preparing {args.num_images} generated images (made once, then cached) ...", flush=True)
        num_classes = min(10, args.num_images)
        try:
            data_dir, made = images_mod.ensure_images(num_images=args.num_images, num_classes=num_classes)
        except (OSError, ValueError) as exc:
            print(f"{PROG} bench: error: cannot prepare the generated images: {exc}", file=sys.stderr)
            return 1
        count = args.num_images
        source = (
            f"{count} generated ImageNet-like JPEGs ({num_classes} classes, ~500x375, q90) in {data_dir}"
            f"{' (generated now)' if made else ' (cached)'}"
        )

    versions = _library_versions()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers_text = "autotuned workers (starting at 1)" if args.workers == "auto" else f"{args.workers} workers"
    print(f"data:      {source}")
    print(f"sizes:     {_size_summary(data_dir)}")
    print(f"machine:   {platform.node()}, {cores} usable cores, {platform.machine()}, "
          f"Python {platform.python_version()}, Pillow {versions['Pillow']}")
    print(f"settings:  device {args.device}, {workers_text}, batch {args.batch_size}, {args.epochs} epoch(s), "
          f"{args.executor} executor")
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
    ref_workers = (cores or 1) if args.workers == "auto" else args.workers
    results: list[runner.BenchResult] = []
    failed: list[str] = []
    references = [_decode_reference(runner, data_dir, ref_workers)]
    for p in chosen:
        label = p if isinstance(p, str) else p.name
        print(f"running {label} ...", flush=True)
        bar = _BenchProgress(label, count * args.epochs)
        try:
            results.append(runner.run(p, data_dir, workers=workers, batch_size=args.batch_size, epochs=args.epochs,
                                      device=args.device, progress=bar, executor=args.executor))
        except Exception as exc:
            bar.close()
            # A failing pipeline is a bug, not bad input: one summary line, then the trace to report.
            print(f"{PROG} bench: pipeline {label} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            traceback.print_exc()
            failed.append(label)
        else:
            bar.close()

    peer_runs = _run_peers(peers, [p for p in chosen if isinstance(p, str)], data_dir, ref_workers, args.batch_size)
    # The reference runs before and after the pipelines and the faster run is kept: on a shared machine
    # noise only ever slows a run down, so the faster one is the better estimate of the limit.
    references.append(_decode_reference(runner, data_dir, ref_workers))
    measured = [r for r in references if r is not None]
    reference = max(measured, key=lambda r: r.images_per_s) if measured else None
    print()
    _print_table(results, reference)
    _print_bottlenecks(results)
    if peers:
        _print_peers(results, peers, peer_runs)
    if args.json:
        payload = {
            "versions": versions,
            "machine": {"node": platform.node(), "usable_cores": cores, "arch": platform.machine()},
            "data": {"dir": str(data_dir), "images": count, "generated": args.data is None},
            "settings": {"device": args.device, "workers": args.workers, "batch_size": args.batch_size,
                         "epochs": args.epochs, "executor": args.executor},
            "decode_reference": reference.to_json() if reference else None,
            "decode_reference_runs_images_per_s": [r.images_per_s for r in measured],
            "results": [r.to_json() for r in results],
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


def _decode_reference(runner: Any, data_dir: Path, workers: int) -> Any:
    try:
        return runner.decode_reference(data_dir, workers=workers)
    except Exception as exc:  # the reference is context, not the benchmark: report and go on
        print(f"{PROG} bench: decode reference failed: {type(exc).__name__}: {exc}", file=sys.stderr)
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


def _print_table(results: list, reference: object | None) -> None:
    header = ("pipeline", "device", "images", "seconds", "images/s", "img/CPU-s", "peak RSS MB", "1st batch s",
              "vs decode", "bottleneck")
    rows = []
    for r in ([reference] if reference else []) + results:
        ratio = f"{r.images_per_s / reference.images_per_s:.2f}x" if reference and r is not reference else ""
        rss = _fmt(r.peak_rss_mb)
        if r.worker_processes:
            rss += f" +{_fmt(r.worker_peak_rss_mb)} in {r.worker_processes} procs"
        if r is reference:
            neck = ""
        elif r.bottleneck_stage is None:
            neck = "the consumer (not the pipeline)" if r.bottleneck else "n/a"
        else:
            neck = r.bottleneck_stage if len(r.bottleneck_stage) <= 48 else r.bottleneck_stage[:47] + "…"
        rows.append((r.pipeline, "cpu" if r is reference else r.device, str(r.images), _fmt(r.seconds, 2),
                     _fmt(r.images_per_s), _fmt(r.images_per_cpu_s), rss, _fmt(r.first_batch_s, 3), ratio, neck))
    _table(header, rows)
    if reference:
        print(f"\ndecode-only: Pillow reading and decoding every image at full size on {reference.workers} "
              "threads, no pipeline (faster of a run before and one after the pipelines): the CPU's limit.\n"
              "'vs decode' is each pipeline's images/s over it; above 1x means the pipeline decodes less "
              "than the full image.")
    print("img/CPU-s: images per CPU-second of this process and its workers (all threads); "
          "higher means less CPU spent per image.")


def _print_bottlenecks(results: list) -> None:
    verdicts = [r for r in results if r.bottleneck]
    if not verdicts:
        return
    print("\nbottlenecks (the profiler's verdict for each pipeline):")
    for r in verdicts:
        print(f"  {r.pipeline}: {r.bottleneck}")
        for d in r.autotune:
            if d.get("action") == "resize":
                print(f"    autotune at {d['t']:.2f} s: {d['stage']} workers {d['workers_from']} → {d['workers_to']}"
                      f" ({d['why']})")


def _print_peers(results: list, peers: dict, runs: list) -> None:
    print("\npeers (same images, same batch size; each peer in its own process):")
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
        rows.append((run.pipeline, run.impl, _fmt(run.images_per_s), _fmt(run.images_per_cpu_s), _fmt(run.peak_rss_mb),
                     ratio))
    _table(("pipeline", "peer", "images/s", "img/CPU-s", "peak RSS MB", "minddata / peer"), rows)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
