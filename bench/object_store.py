"""Object storage benchmark: the train pipeline over the bench's JPEGs read from local files, from a
local S3 API server as an image folder, and from the same server as WebDataset shards, at 0 ms and at
20 ms of latency added to every request.

In one run, on one machine:

1. the generated image set of ``minddata bench`` (``--images``, default 2,000 JPEGs of about 500x375,
   made once and cached) is uploaded to a moto S3 server this script starts on 127.0.0.1 (a child
   process on a free port, ended at exit and after ``--max-minutes`` at most; served by waitress,
   whose connections stay open between requests as S3's do, where moto's own server opens one per
   request; or, with ``--server files``, :mod:`minddata.bench.s3files`, which answers reads with
   ``sendfile`` from a folder, so that little of the two cores goes to the server): the images under
   ``s3://bench/images/<class>/``, and the same images as WebDataset tar shards of
   ``--shard-images`` samples (``<key>.jpg``, ``<key>.cls``) under ``s3://bench/shards/`` (and in a
   local folder);
2. the ``train`` pipeline (Decode → RandomResizedCrop(224) → RandomHorizontalFlip → Normalize →
   HWC2CHW, batch 64; 2 workers per stage, as ``minddata bench``) reads them: local files
   (``ImageFolderDataset`` on the folder), the local shards (``WebDataset`` on their folder: what the
   tar source itself costs, without object storage), ``ImageFolderDataset("s3://bench/images/")`` and
   ``WebDataset("s3://bench/shards/shard-*.tar")``, the latter three times: as the first run of a job (an
   empty ``$MINDDATA_CACHE``, so every shard is read once to index it), as a first run over the same
   shards with their index files next to them (``minddata index``; under ``s3://bench/shards-indexed/``)
   and as a later run ("index kept": the shards' indexes kept by an earlier run); the remote sources
   at 0 ms (the server itself)
   and at 20 ms (through a proxy that waits 20 ms before forwarding each request);
3. each case runs once per round, in its own fresh process (as ``minddata bench`` runs a round, so a
   round's peak RSS is its own), the cases of a round in a rotated order, for ``--rounds`` rounds.

The table gives each case's median images/s over the rounds, its ratio to the median of local files
and to the same source on local disk (an S3 image folder to local files, S3 shards to local shards),
and its peak RSS (the highest of its rounds: the round's process plus any worker processes). Every
source runs with its default settings (requests in flight, block sizes, no ``cache_dir``): the figures
are what a user gets without tuning.

Usage (on an idle machine; figures from a busy one are noise):
    python -m minddata.bench.object_store [--images 2000 | --quick] [--rounds 3] [--server moto|files] [--json PATH]

The credentials are dummies and every request goes to 127.0.0.1 (``AWS_EC2_METADATA_DISABLED=true``).
"""

from __future__ import annotations

import io
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["CaseResult", "main", "measure", "shard_archives", "table"]

BUCKET = "bench"
PIPELINE = "train"
SERVERS = ("moto", "files")
WORKERS = 2  # as `minddata bench` (its --workers default)
BATCH_SIZE = 64  # as `minddata bench` (its --batch-size default)
LATENCIES_MS = (0, 20)
QUICK_IMAGES = 200
# The WebDataset case of a later run: the shards' indexes kept by an earlier one (the first run of a
# job, "s3 WebDataset", reads every shard once to index it).
KEPT = "s3 WebDataset, index kept"
# A first run over shards with their index files next to them (``minddata index``): two small requests
# per shard instead of a read of the whole shard.
INDEX_FILES = "s3 WebDataset, index files"
_PREFIXES = {"s3 ImageFolder": "images", INDEX_FILES: "shards-indexed"}
LOCAL_FILES = "local files"
LOCAL_SHARDS = "local shards"
# What a round's process reads its (dummy) credentials from: nothing of the user's (profiles, tokens,
# credential files, an endpoint) reaches it, so every request goes to the local server.
_ISOLATED = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
             "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
             "AWS_SESSION_TOKEN": None, "AWS_PROFILE": None, "AWS_REGION": None, "AWS_ENDPOINT_URL": None,
             "AWS_ENDPOINT_URL_S3": None}


@dataclass
class CaseResult:
    """One case (source and added latency) over all rounds."""

    source: str
    latency_ms: int | None
    images: int
    rounds_images_per_s: list = field(default_factory=list)
    rounds_peak_rss_mb: list = field(default_factory=list)
    rounds_server_cpu_ms_per_image: list = field(default_factory=list)
    rounds_pipeline_cpu_ms_per_image: list = field(default_factory=list)
    rounds_proxy_cpu_ms_per_image: list = field(default_factory=list)
    rounds_steady_images_per_s: list = field(default_factory=list)
    median_images_per_s: float = 0.0
    ratio_to_local: float = 0.0
    # Against the same source read from local disk: local files for an image folder, local shards
    # for WebDataset (what object storage costs, the tar source's own cost left out).
    ratio_to_local_source: float = 0.0
    # After the first batch (start-up left out: imports, the client, listing, indexing): what a long
    # epoch tends to; nan when a round has too few batches to tell.
    median_steady_images_per_s: float = float("nan")
    steady_ratio_to_local: float = float("nan")
    peak_rss_mb: float = 0.0
    # Where the cores go: CPU time per image of the S3 server process (the whole case: listing,
    # indexing and reads) and of the pipeline's processes (the timed run, workers included).
    server_cpu_ms_per_image: float = 0.0
    pipeline_cpu_ms_per_image: float = 0.0
    # The latency proxy's (this process's threads, which forward every byte): on the same cores too.
    proxy_cpu_ms_per_image: float = 0.0


def shard_archives(folder: Path, per_shard: int) -> Iterator[tuple[str, bytes]]:
    """The images of ``folder`` (``<class>/<image>``) as WebDataset tar shards of ``per_shard``
    samples: ``(name, bytes)``, each sample ``<class>_<stem>.jpg`` and ``.cls`` (the class's index)."""
    from minddata.bench.images import list_images

    images = list_images(folder)
    classes = {name: i for i, name in enumerate(sorted({p.parent.name for p in images}))}
    for s, first in enumerate(range(0, len(images), per_shard)):
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for path in images[first:first + per_shard]:
                key = f"{path.parent.name}_{path.stem}"
                for ext, data in (("jpg", path.read_bytes()), ("cls", str(classes[path.parent.name]).encode())):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    info.mtime = 0
                    tar.addfile(info, io.BytesIO(data))
        yield f"shard-{s:06d}.tar", out.getvalue()


def _bucket_objects(folder: Path, shards: Path, indexed: Path) -> list[tuple[str, Path]]:
    """(key, local file) of every object of the bench's bucket: the images, the shards, and the shards
    again with their index files (another prefix: the first-run case lists none)."""
    from minddata.bench.images import list_images

    return ([(f"images/{p.parent.name}/{p.name}", p) for p in list_images(folder)]
            + [(f"shards/{p.name}", p) for p in sorted(shards.glob("*.tar"))]
            + [(f"shards-indexed/{p.name}", p) for p in sorted(shards.glob("*.tar"))]
            + [(f"shards-indexed/{p.name}", p) for p in sorted(indexed.glob("*.idx"))])


def _upload(client: Any, objects: list[tuple[str, Path]]) -> None:
    client.create_bucket(Bucket=BUCKET)

    def put(item: tuple[str, Path]) -> None:
        key, path = item
        client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, objects))


@contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """``values`` in ``os.environ`` (which a round's spawned process inherits; None: unset), restored after."""
    def put(settings: dict[str, str | None]) -> None:
        for name, value in settings.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    saved = {name: os.environ.get(name) for name in values}
    put(values)
    try:
        yield
    finally:
        put(saved)


def _cases(latencies: Sequence[int]) -> list[tuple[str, int | None]]:
    cases: list[tuple[str, int | None]] = [(LOCAL_FILES, None), (LOCAL_SHARDS, None)]
    for latency in latencies:
        cases += [("s3 ImageFolder", latency), ("s3 WebDataset", latency), (INDEX_FILES, latency), (KEPT, latency)]
    return cases


def _run_case(source: str, data: str, endpoint: str | None, cache_folder: str) -> Any:
    from minddata.bench import pipelines, runner

    pipeline: Any = PIPELINE
    if source.startswith("s3 WebDataset") or source == LOCAL_SHARDS:
        from minddata.bench import object_store_pipeline as shards

        pipeline = pipelines.CustomPipeline("train-webdataset", os.path.abspath(shards.__file__), "train over WebDataset shards",
                                            shards.build)
    settings = {"AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT_URL_S3": endpoint} if endpoint else {}
    with _environment({**settings, "MINDDATA_CACHE": cache_folder}):
        return runner.run_in_own_process(pipeline, data, workers=WORKERS, batch_size=BATCH_SIZE)


def _keep_indexes(endpoint: str, folder: str) -> None:
    """Index the shards once at ``endpoint`` with ``folder`` as the user's cache (an earlier run)."""
    import minddata as md

    with _environment({"AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT_URL_S3": endpoint, "MINDDATA_CACHE": folder}):
        md.WebDataset(f"s3://{BUCKET}/shards/shard-*.tar", columns_list=["jpg", "cls"]).get_dataset_size()


def _copy_to_folder(root: Path, objects: list[tuple[str, Path]]) -> None:
    """What :func:`_upload` puts in the bucket, copied straight into the folder a
    :class:`~minddata.bench.s3files.FileS3Server` serves (it serves reads only)."""
    import shutil

    for key, path in objects:
        target = root / BUCKET / key
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def measure(folder: Path, rounds: int, latencies: Sequence[int], per_shard: int, max_minutes: float,
            progress: Any = print, server_kind: str = "moto") -> list[CaseResult]:
    """Upload ``folder`` to a fresh local S3 server (``server_kind``: ``"moto"``, or ``"files"`` for
    :mod:`minddata.bench.s3files`) and run every case ``rounds`` times (see the module's notes); the
    server and the latency proxy are gone when this returns."""
    from minddata.bench import runner
    from minddata.bench.images import list_images
    from minddata.bench.s3files import FileS3Server
    from minddata.bench.s3server import FaultProxy, MotoServer

    if server_kind not in SERVERS:
        raise ValueError(f"server_kind must be one of {', '.join(SERVERS)}. Found: {server_kind!r}")
    count = len(list_images(folder))
    cases = _cases(latencies)
    results = {case: CaseResult(case[0], case[1], count) for case in cases}
    proxies: dict[int, Any] = {}
    with _environment(_ISOLATED), tempfile.TemporaryDirectory(prefix="minddata-bench-") as scratch, \
            (MotoServer(max_lifetime_s=max_minutes * 60, keep_alive=True) if server_kind == "moto"
             else FileS3Server(Path(scratch, "s3"), max_lifetime_s=max_minutes * 60)) as server:
        began = time.monotonic()
        local_shards = Path(scratch, "shards")  # made once: the local case's, and the bucket's copy
        local_shards.mkdir()
        for name, data in shard_archives(folder, per_shard):
            (local_shards / name).write_bytes(data)
        from minddata.dataset.webdataset import write_index_files

        indexes = Path(scratch, "indexes")  # the shards' index files, as `minddata index` writes them
        indexes.mkdir()
        for written in write_index_files(str(local_shards / "*.tar")):
            os.replace(written, indexes / os.path.basename(written))
        objects = _bucket_objects(folder, local_shards, indexes)
        if isinstance(server, MotoServer):
            _upload(server.client(), objects)
        else:
            _copy_to_folder(server.root, objects)
        progress(f"uploaded {count} images and their shards to {server.url} in {time.monotonic() - began:.1f} s")
        try:
            for latency in latencies:
                if latency:
                    proxies[latency] = FaultProxy(server.port, {"delay": 1.0}, delay_s=latency / 1000,
                                                  keep_alive=True).start()
            kept_folder = os.path.join(scratch, "kept")
            for latency in latencies:  # the earlier run whose indexes KEPT reads (kept per endpoint)
                _keep_indexes(proxies[latency].url if latency else server.url, kept_folder)
            for r in range(rounds):
                order = cases[r % len(cases):] + cases[:r % len(cases)]
                for source, latency in order:
                    if source == LOCAL_FILES:
                        data, endpoint = str(folder), None
                    elif source == LOCAL_SHARDS:
                        data, endpoint = f"{local_shards}{os.sep}", None
                    else:
                        data = f"s3://{BUCKET}/{_PREFIXES.get(source, 'shards')}/"
                        endpoint = proxies[latency].url if latency else server.url
                    server_before, proxy_before = runner.process_tree_cpu(server.pid), time.process_time()
                    result = _run_case(source, data, endpoint, kept_folder if source == KEPT else tempfile.mkdtemp(prefix="fresh-", dir=scratch))
                    server_cpu = runner.process_tree_cpu(server.pid) - server_before
                    # this process only waits for the round's own while its proxy threads forward
                    proxy_cpu = time.process_time() - proxy_before if latency else 0.0
                    shown = "" if latency is None else f" at {latency} ms"
                    if result.images != count:
                        raise RuntimeError(f"round {r + 1}: {source}{shown} read {result.images} images of {count} "
                                           f"from {data}; every case must read each image once")
                    case = results[(source, latency)]
                    case.rounds_images_per_s.append(result.images_per_s)
                    case.rounds_peak_rss_mb.append(result.peak_rss_mb + result.worker_peak_rss_mb)
                    case.rounds_server_cpu_ms_per_image.append(1000 * server_cpu / result.images)
                    case.rounds_pipeline_cpu_ms_per_image.append(1000 * result.cpu_seconds / result.images)
                    case.rounds_proxy_cpu_ms_per_image.append(1000 * proxy_cpu / result.images)
                    case.rounds_steady_images_per_s.append(result.steady_images_per_s)
                    progress(f"round {r + 1}/{rounds}: {source}{shown}: {result.images_per_s:.1f} images/s")
        finally:
            for proxy in proxies.values():
                proxy.stop()
    for case in results.values():
        case.median_images_per_s = statistics.median(case.rounds_images_per_s)
    local = results[(LOCAL_FILES, None)].median_images_per_s
    local_steady = statistics.median(results[(LOCAL_FILES, None)].rounds_steady_images_per_s)
    for case in results.values():
        same_source = results[(LOCAL_SHARDS if "WebDataset" in case.source or case.source == LOCAL_SHARDS else LOCAL_FILES, None)]
        case.ratio_to_local = case.median_images_per_s / local if local else float("nan")
        case.ratio_to_local_source = (case.median_images_per_s / same_source.median_images_per_s
                                      if same_source.median_images_per_s else float("nan"))
        case.median_steady_images_per_s = statistics.median(case.rounds_steady_images_per_s)
        case.steady_ratio_to_local = case.median_steady_images_per_s / local_steady if local_steady else float("nan")
        case.peak_rss_mb = max(case.rounds_peak_rss_mb)
        case.server_cpu_ms_per_image = statistics.median(case.rounds_server_cpu_ms_per_image)
        case.pipeline_cpu_ms_per_image = statistics.median(case.rounds_pipeline_cpu_ms_per_image)
        case.proxy_cpu_ms_per_image = statistics.median(case.rounds_proxy_cpu_ms_per_image)
    return list(results.values())


def table(results: Sequence[CaseResult], rounds: int) -> str:
    """The results as a text table, one case a line.

    Examples:
        >>> from minddata.bench.object_store import CaseResult, table
        >>> print(table([CaseResult("local files", None, 40, median_images_per_s=80.0, ratio_to_local=1.0,
        ...                         ratio_to_local_source=1.0, peak_rss_mb=120.4, pipeline_cpu_ms_per_image=1.84,
        ...                         median_steady_images_per_s=95.0, steady_ratio_to_local=1.0)], rounds=1).splitlines()[2])
        local files        -      40      80.0      1.00                   1.00          95.0             1.00          120                 0.00                   1.84                   -
    """
    header = ("source", "latency", "images", "images/s", "vs local", "vs local, same source", "steady img/s",
              "steady vs local", "peak RSS MB",
              "server CPU ms/image", "pipeline CPU ms/image", "proxy CPU ms/image")
    rows = [header]
    for r in results:
        rows.append((r.source, "-" if r.latency_ms is None else f"{r.latency_ms} ms", str(r.images),
                     f"{r.median_images_per_s:.1f}", f"{r.ratio_to_local:.2f}", f"{r.ratio_to_local_source:.2f}",
                     f"{r.median_steady_images_per_s:.1f}",
                     f"{r.steady_ratio_to_local:.2f}", f"{r.peak_rss_mb:.0f}",
                     f"{r.server_cpu_ms_per_image:.2f}", f"{r.pipeline_cpu_ms_per_image:.2f}",
                     "-" if r.latency_ms is None or not r.latency_ms else f"{r.proxy_cpu_ms_per_image:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.append(f"images/s: median of {rounds} round(s), each in its own process, from building the dataset to its "
                 "last batch; steady: after the first batch (start-up left out); vs local: against local files; "
                 "same source: an image folder against local files, WebDataset against the local shards; "
                 "peak RSS: the highest round's, workers included; latency: added to every request by a proxy "
                 "(0 ms: the local server directly); CPU ms/image: medians, the S3 server process over the whole case, "
                 "the pipeline's processes (workers included) over the timed run, the latency proxy (this process's "
                 "threads) over the whole case")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.object_store", description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=positive_int, default=None,
                        help=f"generated images to read (default 2000, {QUICK_IMAGES} with --quick)")
    parser.add_argument("--quick", action="store_true", help=f"a short run: {QUICK_IMAGES} images (a check, not a measurement)")
    parser.add_argument("--rounds", type=positive_int, default=3, help="rounds of every case (default 3)")
    parser.add_argument("--shard-images", type=positive_int, default=100, help="samples per WebDataset shard (default 100)")
    parser.add_argument("--max-minutes", type=float, default=60.0,
                        help="the local S3 server ends itself after this long at most (default 60)")
    parser.add_argument("--server", choices=SERVERS, default="moto",
                        help="the local S3 server: moto (default), or files: minddata.bench.s3files, which answers "
                             "reads with sendfile from a folder, so that the server's own CPU (shared with the "
                             "pipeline on this machine's cores) is a file server's, as a remote store's would not be")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.max_minutes <= 0:
        parser.error(f"--max-minutes must be > 0, found {args.max_minutes}")
    try:
        if args.server == "moto":
            import botocore  # noqa: F401
            import moto  # noqa: F401
            import waitress  # noqa: F401
    except ImportError as error:
        print(f"{parser.prog}: needs botocore, moto[server] and waitress ({error.name} is missing): "
              "pip install 'minddata[storage]' 'moto[server]' waitress", file=sys.stderr)
        return 1
    from minddata.bench.images import ensure_images

    num_images = args.images or (QUICK_IMAGES if args.quick else 2000)
    folder, made = ensure_images(num_images=num_images)
    print(f"images: {num_images} in {folder}{' (generated now)' if made else ' (cached)'}")
    print(f"server: {args.server}")
    results = measure(folder, args.rounds, LATENCIES_MS, args.shard_images, args.max_minutes, server_kind=args.server)
    print()
    print(table(results, args.rounds))
    if args.json:
        report = {"settings": {"images": num_images, "rounds": args.rounds, "pipeline": PIPELINE, "workers": WORKERS,
                               "batch_size": BATCH_SIZE, "shard_images": args.shard_images, "server": args.server,
                               "latencies_ms": list(LATENCIES_MS)},
                  "cases": [asdict(r) for r in results]}
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
