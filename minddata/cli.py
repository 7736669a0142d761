"""The ``minddata`` command: ``--version``, ``devices``, ``bench``, ``convert``, ``serve`` and ``cache``.

Bad arguments give one line on stderr that names the problem and the fix, and exit status 2.

Examples:
    $ minddata --version
    $ minddata devices
    $ minddata bench                                  # generated images, every standard pipeline
    $ minddata bench --data ~/imagenet/val --pipeline infer224 --workers 8 --json out.json
    $ minddata convert ~/imagenet/train train.mindrecord --shards 8   # image folder -> record files
    $ minddata serve infer224 --port 8000 --max-batch 32           # HTTP inference preprocessing
    $ minddata convert ms/train.mindrecord0 arrow/train.mindrecord     # MindRecord <-> Arrow record files
    $ minddata cache list                                          # DatasetCache sessions of this host
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from minddata.errors import UsageError

__all__ = ["main"]

PROG = "minddata"


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
    bench.add_argument("--epochs", type=_positive_int, default=1, help="passes over the data per round (default 1)")
    bench.add_argument("--rounds", type=_positive_int, default=3,
                       help="times each pipeline is run, alternating pipelines; figures are the median round with "
                       "the spread, and a bottleneck is named only when the rounds agree (default 3)")
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
        help="convert an image folder to record files, or MindRecord files to Arrow record files and back",
        description="A folder SOURCE: write every image of SOURCE/<class>/<image> (undecoded, with its label and "
        "file name) to record files read by MindDataset. A file SOURCE: convert its record set between MindSpore's "
        "MindRecord format and minddata's Arrow record files (the format is told by content; DEST gets the other "
        "one). With --shards N the files are DEST0 ... DEST{N-1}. Files appear only when every row is written.",
    )
    conv.add_argument("source", metavar="SOURCE",
                      help="image folder (class sub-folders of images), or one file of a MindRecord or Arrow record set")
    conv.add_argument("dest", metavar="DEST", help="record file to write (its folder must exist)")
    conv.add_argument("--shards", type=_positive_int, default=1, help="number of files to write (default 1)")
    conv.add_argument("--overwrite", action="store_true", help="replace existing files of the same names")
    conv.add_argument("--extensions", nargs="+", metavar="EXT", help="image extensions to read (default: common image types)")
    conv.add_argument("--check", choices=["header", "decode", "none"], default="header",
                      help="check each image before writing it: its header parses (default), it decodes fully, or no "
                      "check; a file that fails stops the conversion, naming it, unless --skip-bad")
    conv.add_argument("--skip-bad", action="store_true", help="leave out images that fail --check, and list them")
    conv.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    conv.add_argument("--executor", choices=["local", "ray"], default="local",
                      help="read the images here (local, default) or in Ray tasks (ray: the cluster ray.init() "
                      "connects to, a local one by default; needs pip install 'minddata[ray]')")
    _serve_parser(sub)
    _cache_parser(sub)
    return parser


def _cache_parser(sub: Any) -> None:
    cache = sub.add_parser(
        "cache",
        help="manage this host's dataset cache (DatasetCache sessions), as MindSpore's cache_admin",
        description="Sessions of DatasetCache keep rows in this host's shared memory (spilled rows in Arrow files "
        "under $MINDDATA_CACHE_DIR). There is no server: start prepares the folder, stop frees every session.",
    )
    actions = cache.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    for name, text in (("start", "prepare the cache folder"), ("stop", "destroy every session, freeing its memory and files"),
                       ("list", "list the sessions and what they hold"), ("create-session", "print a fresh session id")):
        action = actions.add_parser(name, help=text)
        action.add_argument("--dir", metavar="DIR", help="cache folder (default: $MINDDATA_CACHE_DIR or "
                            "~/.cache/minddata/dataset-cache)")
    destroy = actions.add_parser("destroy-session", help="free one session's memory and files")
    destroy.add_argument("session_id", type=_session_id, metavar="SESSION_ID")
    destroy.add_argument("--dir", metavar="DIR", help="cache folder (default: $MINDDATA_CACHE_DIR or "
                         "~/.cache/minddata/dataset-cache)")


def _session_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a session id (a whole number >= 0), found {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a session id (a whole number >= 0), found {value}")
    return value


def _serve_parser(sub: Any) -> None:
    from minddata.bench.pipelines import PIPELINES

    serve = sub.add_parser(
        "serve",
        help="serve a pipeline over HTTP (Open Inference Protocol v2) with dynamic batching",
        description="Inference preprocessing service: clients POST encoded images (KServe/Triton v2 infer, or "
        "the raw image to /v1/preprocess); requests are batched through the pipeline (and the model) and each "
        "gets its tensors back. Needs pip install 'minddata[serve]'. SIGTERM drains and exits 0.",
    )
    serve.add_argument("pipeline", metavar="PIPELINE",
                       help=f"a standard pipeline ({', '.join(n for n in PIPELINES if n != 'train')}) or a Python "
                       "file that defines ops() (and optionally postprocess(outputs))")
    serve.add_argument("--model", metavar="PATH", help="ONNX file (ONNX Runtime) or TorchScript file run once per "
                       "batch; without it the preprocessed tensors are returned")
    serve.add_argument("--name", help="model name in the /v2/models/NAME routes (default: the pipeline's name)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0 picks a free one)")
    serve.add_argument("--max-batch", type=_positive_int, default=32, help="images per batch at most (default 32)")
    serve.add_argument("--max-delay-ms", type=_non_negative_float, default=5.0,
                       help="how long the first request of a batch waits for more (default 5)")
    serve.add_argument("--max-queue", type=_positive_int, default=256,
                       help="images waiting at most; beyond it requests get 503 with Retry-After (default 256)")
    serve.add_argument("--timeout-s", type=_positive_float, default=30.0,
                       help="request deadline (504 past it) and the drain time on SIGTERM (default 30)")
    serve.add_argument("--device", type=str.lower, choices=["cpu", "gpu", "dvpp", "auto"], default="cpu",
                       help="where the ops run: each op with a kernel on that device runs there (default cpu)")
    serve.add_argument("--workers", type=_positive_int, default=2, help="pipeline worker threads (default 2)")
    serve.add_argument("--max-body-mb", type=_positive_float, default=16.0,
                       help="largest request body in MB; larger gets 413 (default 16)")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, found {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, found {value}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, found {text}")
    return value


def _positive_float(text: str) -> float:
    value = _non_negative_float(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, found {text}")
    return value


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
        if args.command == "serve":
            return _serve(args)
        if args.command == "cache":
            from minddata.dataset.cache_admin import run_cache_command

            return run_cache_command(args.action, sys.stdout, getattr(args, "session_id", None), args.dir)
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


def library_versions() -> dict[str, str]:
    """Versions of minddata, Python and the libraries its kernels use (``minddata --version``)."""
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
    for name, version in library_versions().items():
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


def check_executor(command: str, executor: str) -> None:
    """A usage error for ``--executor ray`` when Ray is not installed (found now, not mid-run)."""
    if executor == "ray":
        from minddata.engine.ray_executor import require_ray

        try:
            require_ray()
        except ImportError as exc:
            raise UsageError(f"{PROG} {command}: error: --executor ray: {exc}") from None


def _convert(args: argparse.Namespace) -> int:
    from minddata._progress import ProgressBar
    from minddata.errors import MinddataError
    from minddata.record.convert import convert_image_folder

    check_executor("convert", args.executor)

    source = Path(args.source).expanduser()
    if not source.is_dir() and not source.is_file():
        raise UsageError(f"{PROG} convert: error: SOURCE {args.source}: no such folder or file; pass a folder of "
                         "class sub-folders of images, or one file of a record set")
    dest = Path(args.dest).expanduser()
    if not dest.resolve().parent.is_dir():
        raise UsageError(f"{PROG} convert: error: DEST {args.dest}: folder {dest.resolve().parent} does not exist; "
                         "create it first")
    if source.is_file():
        return _convert_records(args, source, dest)
    bar = ProgressBar("converting", 1, unit="images", quiet=args.quiet)
    try:
        result = convert_image_folder(source, dest, shard_num=args.shards, overwrite=args.overwrite,
                                      extensions=args.extensions, check=args.check, skip_bad=args.skip_bad,
                                      progress=bar, executor=args.executor)
    except MinddataError as exc:
        bar.close()
        # Library errors name keyword arguments; on the command line they are flags.
        message = str(exc).removeprefix("convert: ").replace("Pass overwrite=True", "Pass --overwrite")
        message = message.replace("pass skip_bad=True (`--skip-bad`)", "pass --skip-bad")
        raise UsageError(f"{PROG} convert: error: {message}") from None
    bar.close()
    rate = result.images / result.seconds if result.seconds > 0 else float("nan")
    print(f"wrote {result.images:,} images ({result.bytes / 1e6:,.1f} MB, {len(result.classes)} classes) to "
          f"{len(result.files)} file(s) in {result.seconds:.1f} s ({_fmt(rate)} images/s):")
    for path in result.files:
        print(f"  {path}")
    if result.skipped:
        print(f"skipped {len(result.skipped)} file(s) that failed the {args.check} check:")
        for line in result.skipped:
            print(f"  {line}")
    return 0


def _convert_records(args: argparse.Namespace, source: Path, dest: Path) -> int:
    from minddata.errors import MinddataError
    from minddata.record.convert import convert_records

    try:
        result = convert_records(source, dest, shard_num=args.shards, overwrite=args.overwrite)
    except MinddataError as exc:
        message = str(exc).removeprefix("convert: ").replace("Pass overwrite=True", "Pass --overwrite")
        raise UsageError(f"{PROG} convert: error: {message}") from None
    names = {"mindrecord": "MindRecord", "arrow": "Arrow record"}
    print(f"converted {result.rows:,} rows from {names[result.source_format]} to {names[result.dest_format]} "
          f"files in {result.seconds:.1f} s:")
    for path in result.files:
        print(f"  {path}")
    return 0


# --- serve --------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    from minddata.bench.pipelines import PIPELINES, make_ops, place
    from minddata.serve import ServePipeline, load_pipeline_file
    from minddata.serve.server import ServeSettings, serve

    try:
        if args.pipeline in PIPELINES:
            pipeline = ServePipeline(args.pipeline, make_ops(args.pipeline))
        else:
            pipeline = load_pipeline_file(args.pipeline)
        place([op for op in pipeline.ops if hasattr(op, "device_target")], args.device)  # not plain functions
    except Exception as exc:  # a bad pipeline file or device: one line
        raise UsageError(f"{PROG} serve: error: {exc}") from None
    settings = ServeSettings(
        name=args.name or pipeline.name, host=args.host, port=args.port, max_batch=args.max_batch,
        max_delay_ms=args.max_delay_ms, max_queue=args.max_queue, timeout_s=args.timeout_s, workers=args.workers,
        max_body_bytes=int(args.max_body_mb * (1 << 20)), max_inflight=max(2, args.workers),
    )
    return serve(pipeline, args.model, settings)


def _fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if value == value else "n/a"  # NaN != NaN


# --- bench ----------------------------------------------------------------------------------------


def _bench(args: argparse.Namespace) -> int:
    # The benchmark driver lives with the benchmarks; the command line only parses and dispatches.
    from minddata.bench.command import run_bench

    return run_bench(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
