"""The ``minddata`` command: ``--version``, ``devices``, ``bench``, ``convert``, ``index``, ``serve``, ``parity`` and ``cache``.

Bad arguments give one line on stderr that names the problem and the fix, and exit status 2.

Examples:
    $ minddata --version
    $ minddata devices
    $ minddata bench                                  # generated images, every standard pipeline
    $ minddata bench --data ~/imagenet/val --pipeline infer224 --workers 8 --json out.json
    $ minddata convert ~/imagenet/train train.mindrecord --shards 8   # image folder -> MindSpore MindRecord
    $ minddata serve infer224 --port 8000 --max-batch 32           # HTTP inference preprocessing
    $ minddata convert ms/train.mindrecord0 arrow/train.arrow --format arrow  # MindRecord -> Arrow record files
    $ minddata index 's3://bucket/train/shard-*.tar'               # WebDataset shards' index files (DALI's format)
    $ minddata cache list                                          # DatasetCache sessions of this host
    $ minddata parity net.onnx --against pil,opencv,dali           # the pipeline's pixels in other frameworks
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from minddata._command_line import (
    PROG,
    CommandParser,
    check_executor,
    library_versions,
    non_negative_float,
    port_number,
    positive_float,
    positive_int,
    whole_number,
)
from minddata._standard_pipelines import PIPELINES, make_ops, place
from minddata.errors import UsageError

__all__ = ["main"]


def _parser() -> CommandParser:
    parser = CommandParser(prog=PROG, description="minddata: data pipelines for deep learning.")
    parser.add_argument("--version", action="store_true", help="print versions of minddata and its libraries")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)

    dev = sub.add_parser("devices", help="list the devices pipelines can use here, or why one is absent")
    dev.add_argument("-v", "--verbose", action="store_true", help="also list each device's ops and drivers")

    # `minddata bench` is the benchmarks' own command: its options and its work live in bench/command.py
    # (see _bench). Listed here so that `minddata --help` shows it.
    sub.add_parser("bench", help="benchmark the standard pipelines (minddata bench --help lists its options)",
                   add_help=False)
    sub.add_parser("parity", help="compare a model's (or pipeline's) preprocessing with other frameworks' "
                   "(minddata parity --help lists its options)", add_help=False)
    conv = sub.add_parser(
        "convert",
        help="convert an image folder or a record set to MindSpore's MindRecord files (or Arrow record files, or "
        "WebDataset shards)",
        description="A folder SOURCE: write every image of SOURCE/<class>/<image> (undecoded, with its label and "
        "file name) to record files read by MindDataset. A file SOURCE: convert its record set (MindRecord or "
        "Arrow record files, told by content). DEST is written in MindSpore's MindRecord format, which MindSpore "
        "and MindDataset read; --format arrow writes minddata's Arrow record files and --format webdataset "
        "WebDataset tar shards instead. With --shards N the files are DEST0 ... DEST{N-1}. Files appear only when "
        "every row is written.",
    )
    conv.add_argument("source", metavar="SOURCE",
                      help="image folder (class sub-folders of images), or one file of a MindRecord or Arrow record set")
    conv.add_argument("dest", metavar="DEST", help="record file or WebDataset shard to write, a local path (missing folders above it are "
                      "created; upload the files to object storage afterwards)")
    conv.add_argument("--format", choices=["mindrecord", "arrow", "webdataset"], default="mindrecord",
                      help="what to write: MindSpore's MindRecord files (default; each shard with its .db index), "
                      "minddata's Arrow record files (each with its .meta.json), or WebDataset tar shards (DEST, or "
                      "DEST-000000.tar ... with --shards N for DEST.tar; images as <class>/<name>.<ext> with their "
                      "label as .cls, record rows with one member per column)")
    conv.add_argument("--shards", type=positive_int, default=1, help="number of files to write (default 1)")
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
    _index_parser(sub)
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
    actions = cache.add_subparsers(dest="action", metavar="ACTION", parser_class=CommandParser, required=True)
    for name, text in (("start", "prepare the cache folder"), ("stop", "destroy every session, freeing its memory and files"),
                       ("list", "list the sessions and what they hold"), ("create-session", "print a fresh session id")):
        action = actions.add_parser(name, help=text)
        action.add_argument("--dir", metavar="DIR", help="cache folder (default: $MINDDATA_CACHE_DIR or "
                            "~/.cache/minddata/dataset-cache)")
    destroy = actions.add_parser("destroy-session", help="free one session's memory and files")
    destroy.add_argument("session_id", type=whole_number(0, what="a session id"), metavar="SESSION_ID")
    destroy.add_argument("--dir", metavar="DIR", help="cache folder (default: $MINDDATA_CACHE_DIR or "
                         "~/.cache/minddata/dataset-cache)")


def _index_parser(sub: Any) -> None:
    index = sub.add_parser(
        "index",
        help="write WebDataset shards' index files (DALI's format), so that a first run reads no shard whole",
        description="For each shard, write its index file next to it (shard-000000.tar -> shard-000000.idx; a PUT "
        "for shards in object storage), from its member headers. WebDataset reads a remote shard's index file "
        "instead of the whole shard on a first run; DALI's fn.readers.webdataset reads them as index_paths.",
    )
    index.add_argument("shards", nargs="+", metavar="SHARD",
                       help="a shard, a glob or a brace pattern (shard-{000000..000099}.tar), local or "
                       "s3://, gs:// (quote patterns so that the shell leaves them alone)")
    index.add_argument("--overwrite", action="store_true", help="replace index files that exist already")


def _index(args: argparse.Namespace) -> int:
    from minddata.dataset.webdataset import write_index_files
    from minddata.errors import MinddataError

    try:
        written = write_index_files(args.shards, overwrite=args.overwrite)
    except MinddataError as exc:
        message = str(exc).removeprefix("minddata index: ").replace("Pass overwrite=True", "Pass --overwrite")
        raise UsageError(f"{PROG} index: error: {message}") from None
    _print_written(f"{len(written)} index file(s)", written)
    return 0


def _print_written(what: str, paths: Sequence[str]) -> None:
    print(f"wrote {what}:")
    for path in paths:
        print(f"  {path}")


def _serve_parser(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="serve a pipeline over HTTP (Open Inference Protocol v2) with dynamic batching",
        description="Inference preprocessing service: clients POST encoded images (KServe/Triton v2 infer, or "
        "the raw image to /v1/preprocess); requests are batched through the pipeline (and the model) and each "
        "gets its tensors back. Needs pip install 'minddata[serve]'. SIGTERM drains and exits 0.",
    )
    serve.add_argument("pipeline", metavar="PIPELINE",
                       help=f"a standard pipeline ({', '.join(n for n in PIPELINES if n != 'train')}), a Python "
                       "file that defines ops() (and optionally postprocess(outputs)), or a model file exported with "
                       "its pipeline (Model.export_onnx(..., pipeline=)), served with that pipeline")
    serve.add_argument("--allow-pipeline-mismatch", action="store_true",
                       help="serve even when PIPELINE differs from the model's embedded pipeline, or the start-up "
                       "golden check finds drift (a warning, and the model's metadata says so)")
    serve.add_argument("--model", metavar="PATH", help="ONNX file (ONNX Runtime) or TorchScript file run once per "
                       "batch; without it the preprocessed tensors are returned")
    serve.add_argument("--name", help="model name in the /v2/models/NAME routes (default: the pipeline's name)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=8000, help="port (default 8000; 0 picks a free one)")
    serve.add_argument("--max-batch", type=positive_int, default=32, help="images per batch at most (default 32)")
    serve.add_argument("--max-delay-ms", type=non_negative_float, default=5.0,
                       help="how long the first request of a batch waits for more (default 5)")
    serve.add_argument("--max-queue", type=positive_int, default=256,
                       help="images waiting at most; beyond it requests get 503 with Retry-After (default 256)")
    serve.add_argument("--timeout-s", type=positive_float, default=30.0,
                       help="request deadline (504 past it) and the drain time on SIGTERM (default 30)")
    serve.add_argument("--device", type=str.lower, choices=["cpu", "gpu", "dvpp", "auto"], default="cpu",
                       help="where the ops run: each op with a kernel on that device runs there (default cpu)")
    serve.add_argument("--workers", type=positive_int, default=2, help="pipeline worker threads (default 2)")
    serve.add_argument("--pipeline-nice", type=whole_number(0, 19), default=10,
                       help="how much lower the pipeline threads' OS priority is than the request handling's, 0-19 "
                            "(Linux; default 10: refusals and answers are not queued behind preprocessing)")
    serve.add_argument("--max-body-mb", type=positive_float, default=16.0,
                       help="largest request body in MB; larger gets 413 (default 16)")
    limits = serve.add_argument_group(
        "limits against hostile or careless clients",
        "what the server enforces by itself (TLS, authentication and rate limits belong to a gateway in front "
        "of it: see docs/serve.md)")
    limits.add_argument("--max-json-mb", type=positive_float, default=4.0,
                        help="largest JSON request body (or JSON header before binary tensors) in MB; larger gets 413 "
                             "(default 4)")
    limits.add_argument("--max-json-answer-mb", type=positive_float, default=64.0,
                        help="largest JSON answer in MB (estimated before the work when the output's shape is "
                             "known); larger gets 413 naming binary outputs as the fix (default 64)")
    limits.add_argument("--max-body-memory-mb", type=positive_float, default=256.0,
                        help="request bodies held at once, in all, in MB; past it requests get 503 with "
                             "Retry-After (default 256)")
    limits.add_argument("--max-image-pixels", type=positive_int, default=24_000_000,
                        help="largest image, in pixels, read from its header before decoding; larger gets 422 "
                             "(default 24000000, well below the library's 179 million for datasets)")
    limits.add_argument("--max-header-kb", type=positive_int, default=32,
                        help="request line and headers together at most, in KB; larger gets 431 (default 32)")
    limits.add_argument("--header-timeout-s", type=positive_float, default=10.0,
                        help="time for a request's headers to arrive, from the connection's opening or the "
                             "request's first byte; past it 408 and the connection closes (default 10)")
    limits.add_argument("--body-timeout-s", type=positive_float, default=30.0,
                        help="time for a request's body to arrive after its headers; past it 408 and the "
                             "connection closes (default 30)")
    limits.add_argument("--max-connections", type=positive_int, default=4096,
                        help="open connections at most; the next get 503 with Retry-After and are closed "
                             "(default 4096)")
    limits.add_argument("--keep-alive-s", type=positive_float, default=5.0,
                        help="how long an idle kept-alive connection stays open (default 5)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``minddata`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] and argv[0] in COMMANDS_ABOVE:
            return load_command(argv[0], declared_commands())(argv[1:])
        parser = _parser()
        args = parser.parse_args(argv)
        if args.version:
            return _version()
        if args.command == "devices":
            return _devices(verbose=args.verbose)
        if args.command == "convert":
            return _convert(args)
        if args.command == "serve":
            return _serve(args)
        if args.command == "index":
            return _index(args)
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


def _version() -> int:
    for name, version in library_versions().items():
        print(f"{name} {version}")
    return 0


# --- devices --------------------------------------------------------------------------------------


def _devices(verbose: bool) -> int:
    from minddata._devices import devices
    from minddata.ops.fused import __all__ as optimizer_ops

    # The ops a user can write: not the fused ops the graph optimizer substitutes for them.
    internal = set(optimizer_ops)
    found = devices()
    width = max(len(d.name) for d in found)
    for d in found:
        state = "present" if d.present else "absent "
        ops = [op for op in d.ops if op not in internal]
        print(f"{d.name:<{width}}  {state}  {d.detail}  [{len(ops)} ops]")
        if verbose:
            print(f"{'':<{width}}    ops: {', '.join(ops) or 'none registered'}")
            for drv in d.drivers:
                print(f"{'':<{width}}    driver {drv.name}: {'yes' if drv.available else 'no'} ({drv.detail})")
    return 0


# --- convert --------------------------------------------------------------------------------------


def _convert(args: argparse.Namespace) -> int:
    from minddata._progress import ProgressBar
    from minddata.errors import MinddataError
    from minddata.record.convert import convert_image_folder

    check_executor("convert", args.executor)

    source = Path(args.source).expanduser()
    if not source.is_dir() and not source.is_file():
        from minddata.record.reader import numbered_shards

        shards = numbered_shards(str(source))
        if shards:  # a set written with --shards N: its files are SOURCE0, SOURCE1, ...
            raise UsageError(f"{PROG} convert: error: SOURCE {args.source}: no such file, but its folder has the shard "
                             f"files of a record set named after it; pass one of them, e.g. {shards[0]}")
        raise UsageError(f"{PROG} convert: error: SOURCE {args.source}: no such folder or file; pass a folder of "
                         "class sub-folders of images, or one file of a record set")
    from minddata.dataset.base import local_destination

    try:
        dest_text = local_destination("convert", "DEST", args.dest)
    except MinddataError as exc:
        raise UsageError(f"{PROG} convert: error: {str(exc).removeprefix('convert: ')}") from None
    dest = Path(dest_text).expanduser()  # its folder is made by the conversion, as the README's example expects
    if args.format == "webdataset":
        if args.executor != "local" or args.skip_bad:
            raise UsageError(f"{PROG} convert: error: --format webdataset copies the files as they are: "
                             "--executor ray and --skip-bad apply to record files only")
        from minddata.dataset import MindDataset
        from minddata.dataset.webdataset import image_folder_samples, write_samples, write_webdataset

        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            if source.is_file():
                data = MindDataset(str(source), shuffle=False)
                iterator = data.create_tuple_iterator(num_epochs=1, output_numpy=True)
                try:
                    files = write_webdataset(iter(iterator), data.get_col_names(), str(dest), args.shards,
                                             overwrite=args.overwrite)
                finally:
                    iterator.close()
            else:
                files = write_samples(image_folder_samples(str(source), args.extensions), str(dest), args.shards,
                                      overwrite=args.overwrite)
        except MinddataError as exc:
            message = str(exc).removeprefix("save: ").replace("Pass overwrite=True", "Pass --overwrite")
            raise UsageError(f"{PROG} convert: error: {message}") from None
        _print_written(f"{len(files)} WebDataset shard(s)", files)
        return 0
    if source.is_file():
        return _convert_records(args, source, dest)
    bar = ProgressBar("converting", 1, unit="images", quiet=args.quiet)
    try:
        result = convert_image_folder(source, dest, shard_num=args.shards, overwrite=args.overwrite,
                                      extensions=args.extensions, check=args.check, skip_bad=args.skip_bad,
                                      progress=bar, executor=args.executor, format=args.format)
    except MinddataError as exc:
        bar.close()
        # Library errors name keyword arguments; on the command line they are flags.
        message = str(exc).removeprefix("convert: ").replace("Pass overwrite=True", "Pass --overwrite")
        message = message.replace("pass skip_bad=True (`--skip-bad`)", "pass --skip-bad")
        raise UsageError(f"{PROG} convert: error: {message}") from None
    bar.close()
    rate = result.images / result.seconds if result.seconds > 0 else float("nan")
    print(f"wrote {result.images:,} images ({result.bytes / 1e6:,.1f} MB, {len(result.classes)} classes) to "
          f"{len(result.files)} {_FORMAT_NAMES[args.format]} file(s) in {result.seconds:.1f} s ({_fmt(rate)} images/s):")
    for path in result.files:
        print(f"  {path}")
    if result.skipped:
        print(f"skipped {len(result.skipped)} file(s) that failed the {args.check} check:")
        for line in result.skipped:
            print(f"  {line}")
    return 0


_FORMAT_NAMES = {"mindrecord": "MindRecord", "arrow": "Arrow record"}


def _convert_records(args: argparse.Namespace, source: Path, dest: Path) -> int:
    from minddata.errors import MinddataError
    from minddata.record.convert import convert_records

    try:
        result = convert_records(source, dest, shard_num=args.shards, overwrite=args.overwrite, format=args.format)
    except MinddataError as exc:
        message = str(exc).removeprefix("convert: ").replace("Pass overwrite=True", "Pass --overwrite")
        raise UsageError(f"{PROG} convert: error: {message}") from None
    names = _FORMAT_NAMES
    print(f"converted {result.rows:,} rows from {names[result.source_format]} to {names[result.dest_format]} "
          f"files in {result.seconds:.1f} s:")
    for path in result.files:
        print(f"  {path}")
    return 0


# --- serve --------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    from minddata.serve import ServePipeline, load_pipeline_file
    from minddata.serve.parity import resolve
    from minddata.serve.server import ServeSettings, serve

    standard = [n for n in PIPELINES if n != "train"]

    def given() -> ServePipeline:
        if args.pipeline in PIPELINES:
            return ServePipeline(args.pipeline, make_ops(args.pipeline))
        if not os.path.exists(args.pipeline) and not args.pipeline.endswith(".py"):
            raise ValueError(f"unknown pipeline {args.pipeline!r}: the standard pipelines are {', '.join(standard)}; "
                             "or pass a Python file that defines ops(), or a model file with its pipeline embedded")
        return load_pipeline_file(args.pipeline)

    try:
        pipeline, model_path, parity = resolve(args.pipeline, args.model, given, args.allow_pipeline_mismatch)
        place([op for op in pipeline.ops if hasattr(op, "device_target")], args.device)  # not plain functions
    except Exception as exc:  # a bad pipeline file or device: one line
        raise UsageError(f"{PROG} serve: error: {exc}") from None
    settings = ServeSettings(
        name=args.name or pipeline.name, host=args.host, port=args.port, max_batch=args.max_batch,
        max_delay_ms=args.max_delay_ms, max_queue=args.max_queue, timeout_s=args.timeout_s, workers=args.workers,
        pipeline_nice=args.pipeline_nice,
        max_body_bytes=int(args.max_body_mb * (1 << 20)), max_inflight=max(2, args.workers),
        max_json_bytes=int(args.max_json_mb * (1 << 20)), max_json_answer_bytes=int(args.max_json_answer_mb * (1 << 20)),
        max_body_memory_bytes=int(args.max_body_memory_mb * (1 << 20)), max_image_pixels=args.max_image_pixels,
        max_header_bytes=args.max_header_kb << 10, header_timeout_s=args.header_timeout_s,
        body_timeout_s=args.body_timeout_s, max_connections=args.max_connections, keep_alive_s=args.keep_alive_s,
    )
    return serve(pipeline, model_path, settings, parity=parity)


def _fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if value == value else "n/a"  # NaN != NaN


# --- commands of the layers above (bench, parity) ------------------------------------------------

# The commands whose work lives above the public API (the benchmarks and the peers' adapters). The CLI
# knows only their names: each is found through the entry-point group COMMAND_GROUP, as pyproject.toml
# declares it, so this module imports nothing of bench/ (tests/test_layering.py).
COMMAND_GROUP = "minddata.commands"
COMMANDS_ABOVE = ("bench", "parity")


def declared_commands() -> dict[str, str]:
    """``{command: "module:function"}`` of :data:`COMMAND_GROUP`: from the installed package's metadata,
    or, in a source checkout whose metadata lacks them, from the checkout's pyproject.toml."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group=COMMAND_GROUP)}
    if all(name in found for name in COMMANDS_ABOVE):
        return found
    from minddata._checkout import checkout_root

    root = checkout_root(os.path.dirname(os.path.abspath(__file__)))
    if root is not None:
        found = {**checkout_commands(Path(root) / "pyproject.toml"), **found}
    return found


def checkout_commands(pyproject: Path) -> dict[str, str]:
    """The :data:`COMMAND_GROUP` entry points a pyproject.toml declares (empty when it declares none)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: no TOML reader in the standard library
        return {}
    try:
        with open(pyproject, "rb") as f:
            project = tomllib.load(f).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return dict(project.get("entry-points", {}).get(COMMAND_GROUP, {}))


def load_command(name: str, declared: Mapping[str, str]) -> Callable[[list[str]], int]:
    """The function behind command ``name`` in ``declared`` (as :func:`declared_commands` gives it), or
    a UsageError that says what is missing and how to fix it."""
    import importlib

    target = declared.get(name)
    if target is None:
        raise UsageError(
            f"{PROG} {name}: error: this installation of minddata declares no {name!r} command (entry point group "
            f"{COMMAND_GROUP!r}): its package metadata is missing or stale. Reinstall minddata (pip install "
            "--no-deps .) from the source tree, or run from a source checkout."
        )
    module, _, function = target.partition(":")
    try:
        return getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as error:
        raise UsageError(
            f"{PROG} {name}: error: the {name!r} command's entry point {target} does not load ({error}). Reinstall "
            "minddata (pip install --no-deps .) so that its package metadata matches its files."
        ) from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
