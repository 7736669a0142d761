"""Load benchmark of ``minddata serve`` (issue 12): images/s and latency under concurrent clients.

For each pipeline (infer224, yolo416) it starts ``minddata serve`` on 127.0.0.1 and, from an
asynchronous client (aiohttp, on uvloop where installed) in a separate process, sends the bench JPEGs to ``POST /v1/preprocess``
at each concurrency (closed loop: each of N client tasks sends its next request when its last one is
answered). Reported per level: images/s, p50/p99 latency, the status codes, and the batch sizes the
server formed (from its ``/metrics``). In the same run:

- the in-process ceiling: the same pipeline iterated offline (``minddata bench``'s runner), after
  a warm-up epoch, the median of 3 runs of 5 epochs;
- a baseline server written the usual way (FastAPI + Pillow + NumPy, one request at a time,
  ``bench/serve_baseline.py``) at the same concurrency;
- the server's own CPU per image: its process's CPU time (workers included) over ``--cost-requests``
  requests at ``--cost-concurrency``, answered as ``.npy`` (``/v1/preprocess``), as JSON, and as binary tensors
  (``/v2/models/<pipeline>/infer`` in the binary tensor extension), against the same pipeline's CPU
  per image offline (the ceiling runs), with the load client's own CPU per image beside it;
- overload: an open-loop client sending at 4x the measured capacity for ``--overload-s`` seconds:
  how many got 503 and how fast, from the client's side and from the server's (its
  ``minddata_serve_refusal_seconds`` histogram: each refused request's arrival to its answer), the
  accepted requests' p99, the client's CPU and the server's RSS over time.

Every request loop is bounded in count (``--requests``) and time (``--seconds``); traffic goes only to
127.0.0.1. Figures are ratios measured in one run on one machine: quote them as such.

Run:
    python -m minddata.bench.serve_load                       # full run (several minutes)
    python -m minddata.bench.serve_load --images 16 --requests 24 --cost-requests 24 --seconds 5 \\
        --concurrency 1,8 --overload-s 2 --pipelines infer224    # smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from minddata.bench._args import OneLineParser, positive_int
from minddata.bench.serve_process import ServerProcess

__all__ = ["main"]

ROUTE = "/v1/preprocess"
HEADERS = {"Content-Type": "image/jpeg"}


# --- the client (runs in its own process) ---------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def _summary(latencies: dict[int, list[float]], elapsed: float, sent: int) -> dict[str, Any]:
    ok = latencies.get(200, [])
    rejected = latencies.get(503, [])
    return {
        "sent": sent,
        "seconds": elapsed,
        "status": {str(k): len(v) for k, v in sorted(latencies.items())},
        "images_per_s": len(ok) / elapsed if elapsed > 0 else float("nan"),
        "p50_ms": _percentile(ok, 50) * 1e3,
        "p99_ms": _percentile(ok, 99) * 1e3,
        "rejected_p50_ms": _percentile(rejected, 50) * 1e3,
        "rejected_p99_ms": _percentile(rejected, 99) * 1e3,
    }


class _Poster:
    """POSTs the bench images with aiohttp (cheaper per request than httpx, so that the client is not
    what is measured); records each answer's latency by status (-1: no answer)."""

    def __init__(self, url: str, connections: int, accept: str | None = None, infer_model: str | None = None):
        import aiohttp

        self.aiohttp = aiohttp
        self.url = url + (f"/v2/models/{infer_model}/infer" if infer_model else ROUTE)
        self.infer_model = infer_model
        self.headers = HEADERS | ({"Accept": accept} if accept else {})
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections),
                                             timeout=aiohttp.ClientTimeout(total=60))
        self.latencies: dict[int, list[float]] = {}

    def request(self, image: bytes) -> tuple[bytes, dict[str, str]]:
        """The body and headers asking for ``image``'s tensors: the image itself (``/v1/preprocess``),
        or with ``infer_model`` an Open Inference Protocol request in the binary tensor extension, as
        ``tritonclient.http`` sends it: the image as a one-element BYTES tensor after the JSON header,
        the outputs asked for as binary data."""
        if self.infer_model is None:
            return image, self.headers
        raw = len(image).to_bytes(4, "little") + image
        header = json.dumps({"inputs": [{"name": "image", "shape": [1], "datatype": "BYTES",
                                         "parameters": {"binary_data_size": len(raw)}}],
                             "parameters": {"binary_data_output": True}}).encode()
        return header + raw, {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(len(header))}

    async def post(self, request: tuple[bytes, dict[str, str]]) -> None:
        body, headers = request
        t0 = time.perf_counter()
        try:
            async with self.session.post(self.url, data=body, headers=headers) as r:
                # The answer is read whole, but not joined into one bytes object: a 2 MB tensor joined
                # per answer made the client a large share of the machine that it measures.
                received = 0
                async for piece in r.content.iter_any():
                    received += len(piece)
                status = r.status if r.content_length in (None, received) else -1
        except (self.aiohttp.ClientError, asyncio.TimeoutError):
            status = -1
        self.latencies.setdefault(status, []).append(time.perf_counter() - t0)

    async def close(self) -> None:
        await self.session.close()


async def _closed_loop(url: str, images: list[bytes], concurrency: int, max_requests: int,
                       max_seconds: float, accept: str | None = None, infer_model: str | None = None) -> dict[str, Any]:
    poster = _Poster(url, concurrency, accept, infer_model)
    requests = [poster.request(image) for image in images]
    counter = itertools.count()
    start = time.perf_counter()
    stop_at = start + max_seconds

    async def worker() -> None:
        while True:
            i = next(counter)
            if i >= max_requests or time.perf_counter() >= stop_at:
                return
            await poster.post(requests[i % len(requests)])

    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        await poster.close()
    elapsed = time.perf_counter() - start
    return _summary(poster.latencies, elapsed, sum(len(v) for v in poster.latencies.values()))


async def _open_loop(url: str, images: list[bytes], rate: float, seconds: float, max_open: int) -> dict[str, Any]:
    """Send at ``rate`` requests/s for ``seconds`` whatever the answers; at most ``max_open`` unanswered
    (beyond that a send is skipped and counted, so the client itself stays bounded)."""
    poster = _Poster(url, max_open)
    requests = [poster.request(image) for image in images]
    skipped = 0
    tasks: set[asyncio.Task] = set()
    start = time.perf_counter()
    total = int(rate * seconds)
    try:
        for i in range(total):
            delay = start + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if len(tasks) >= max_open:
                skipped += 1
                continue
            task = asyncio.ensure_future(poster.post(requests[i % len(requests)]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.wait(tasks, timeout=60)
    finally:
        await poster.close()
    elapsed = time.perf_counter() - start
    result = _summary(poster.latencies, elapsed, total - skipped)
    result["skipped_by_client"] = skipped
    result["offered_rate"] = rate
    return result


def _client(kind: str, url: str, files: list[str], **kw: Any) -> dict[str, Any]:
    images = [Path(f).read_bytes() for f in files]
    main = _closed_loop(url, images, **kw) if kind == "closed" else _open_loop(url, images, **kw)
    # process_time, not os.times: os.times counts in clock ticks (10 ms), more than a short run's whole client
    before = time.process_time()
    try:  # the faster event loop, where installed: the client's own lag is part of every latency it sees
        import uvloop
    except ImportError:
        result = asyncio.run(main)
    else:
        result = uvloop.run(main)
    result["client_cpu_s"] = time.process_time() - before
    return result


# --- the driver -----------------------------------------------------------------------------------


def _histogram(url: str, name: str) -> dict[Any, float]:
    """A histogram of the server's ``/metrics``: cumulative bucket counts by upper bound (a float,
    ``inf`` last), and ``"sum"`` and ``"count"``."""
    import httpx

    text = httpx.get(f"{url}/metrics", timeout=10).text
    out: dict[Any, float] = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket"):
            out[float(line.split('le="')[1].split('"')[0])] = float(line.rsplit(" ", 1)[1])
        elif line.startswith((f"{name}_sum", f"{name}_count")):
            out[line.split(" ")[0].rsplit("_", 1)[1]] = float(line.rsplit(" ", 1)[1])
    return out


def _observed(before: dict[Any, float], after: dict[Any, float]) -> tuple[float, dict[float, float]]:
    """What a histogram observed between two reads: the count, and the cumulative count per bound."""
    buckets = {le: after[le] - before.get(le, 0) for le in sorted(k for k in after if not isinstance(k, str))}
    return after.get("count", 0) - before.get("count", 0), buckets


def _quantile_bound_ms(before: dict[Any, float], after: dict[Any, float], q: float) -> float:
    """The upper bound (ms) of the bucket holding quantile ``q`` (0-100) of what was observed between two
    reads of a histogram; nan when nothing was."""
    count, buckets = _observed(before, after)
    if count <= 0:
        return float("nan")
    return next((le * 1e3 for le, n in buckets.items() if n >= q / 100 * count), float("inf"))


def _share_within(before: dict[Any, float], after: dict[Any, float], bound_s: float) -> float:
    """The share of what was observed between two reads of a histogram that took at most ``bound_s``,
    which must be one of its bucket bounds; nan when nothing was observed."""
    count, buckets = _observed(before, after)
    if bound_s not in buckets:
        raise ValueError(f"serve_load: {bound_s} s is not a bucket bound of the histogram: {sorted(buckets)}")
    return buckets[bound_s] / count if count > 0 else float("nan")


def _batch_delta(before: dict[Any, float], after: dict[Any, float]) -> dict[str, Any]:
    count, buckets = _observed(before, after)
    total = after.get("sum", 0) - before.get("sum", 0)
    return {"batches": count, "mean_batch": total / count if count else float("nan"),
            "cumulative_buckets": {f"{le:g}" if le != float("inf") else "+Inf": n for le, n in buckets.items()}}


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _run_client(pool: ProcessPoolExecutor, kind: str, url: str, files: list[str], timeout_s: float,
                **kw: Any) -> dict[str, Any]:
    return pool.submit(_client, kind, url, files, **kw).result(timeout=timeout_s)


def _overload(pool: ProcessPoolExecutor, server: ServerProcess, files: list[str], capacity: float,
              seconds: float) -> dict[str, Any]:
    rate = max(1.0, 4 * capacity)
    refusals = _histogram(server.url, "minddata_serve_refusal_seconds")
    future = pool.submit(_client, "open", server.url, files, rate=rate, seconds=seconds, max_open=4096)
    rss = []
    start = time.monotonic()
    while not future.done() and time.monotonic() - start < seconds + 120:
        rss.append((round(time.monotonic() - start, 1), round(_rss_mb(server.pid), 1)))
        time.sleep(1.0)
    result = future.result(timeout=120)
    after = _histogram(server.url, "minddata_serve_refusal_seconds")
    # The server's own view: from each refused request's arrival to its 503 (bucket bounds).
    result["server_refusals"] = after.get("count", 0) - refusals.get("count", 0)
    result["server_rejected_p50_ms_at_most"] = _quantile_bound_ms(refusals, after, 50)
    result["server_rejected_p99_ms_at_most"] = _quantile_bound_ms(refusals, after, 99)
    result["server_rejected_within_10ms"] = _share_within(refusals, after, 0.01)
    result["server_rss_mb"] = rss
    result["server_alive"] = server.proc is not None and server.proc.poll() is None
    return result


def _fmt(v: float, digits: int = 0) -> str:
    return f"{v:,.{digits}f}" if v == v else "n/a"


def _cpu_cost(pool: ProcessPoolExecutor, server: ServerProcess, files: list[str], args: argparse.Namespace,
              answer: str, request: dict[str, Any]) -> dict[str, Any]:
    """The server's own CPU per image over ``--cost-requests`` requests at ``--cost-concurrency``, from the
    server process's CPU time (its workers included), and the client's, answered as ``answer``
    (``request``: the client's ``accept`` or ``infer_model``)."""
    from minddata.bench import runner

    print(f"  CPU per image, {answer} answers, concurrency {args.cost_concurrency} ...", flush=True)
    before = runner.process_tree_cpu(server.pid)
    level = _run_client(pool, "closed", server.url, files, args.seconds + 120, concurrency=args.cost_concurrency,
                        max_requests=args.cost_requests, max_seconds=args.seconds, **request)
    spent = runner.process_tree_cpu(server.pid) - before
    served = level["status"].get("200", 0)
    return {"answer": answer, "concurrency": args.cost_concurrency, "served": served, "status": level["status"],
            "images_per_s": level["images_per_s"],
            "server_cpu_ms_per_image": spent / served * 1e3 if served else float("nan"),
            "client_cpu_ms_per_image": level["client_cpu_s"] / served * 1e3 if served else float("nan")}


def _bench_pipeline(name: str, args: argparse.Namespace, files: list[str], data_dir: Path,
                    pool: ProcessPoolExecutor) -> dict[str, Any]:
    from minddata.bench import runner

    out: dict[str, Any] = {"pipeline": name}
    print(f"{name}: in-process ceiling ...", flush=True)
    # Warm (one epoch first) and long enough that the pipeline's start does not weigh: 5 passes over
    # the images per run, the median of 3 runs.
    runner.run(name, data_dir, workers=args.workers, batch_size=args.max_batch, profile=False)
    runs = [runner.run(name, data_dir, workers=args.workers, batch_size=args.max_batch, epochs=5, profile=False)
            for _ in range(3)]
    out["ceiling_images_per_s"] = sorted(r.images_per_s for r in runs)[1]
    # What the same pipeline costs offline, per image: this process and its workers, all threads.
    out["offline_cpu_ms_per_image"] = sorted(1e3 / r.images_per_cpu_s for r in runs)[1]

    limit = args.seconds + 120
    serve_args = [name, "--workers", str(args.workers), "--max-batch", str(args.max_batch), "--max-delay-ms",
                  str(args.max_delay_ms), "--max-queue", str(args.max_queue), "--pipeline-nice", str(args.pipeline_nice)]
    levels = []
    with ServerProcess(serve_args) as server:
        for c in args.concurrency:
            print(f"{name}: minddata serve, concurrency {c} ...", flush=True)
            before = _histogram(server.url, "minddata_serve_batch_size")
            level = _run_client(pool, "closed", server.url, files, limit, concurrency=c,
                                max_requests=args.requests, max_seconds=args.seconds)
            level |= {"concurrency": c, "batch": _batch_delta(before, _histogram(server.url, "minddata_serve_batch_size"))}
            levels.append(level)
        capacity = max((lv["images_per_s"] for lv in levels if lv["images_per_s"] == lv["images_per_s"]), default=1.0)
        out["serve"] = levels
        answers = ((".npy", {}), ("JSON", {"accept": "application/json"}),
                   ("binary tensor (v2 infer)", {"infer_model": name}))
        out["cpu_cost"] = [_cpu_cost(pool, server, files, args, answer, request) for answer, request in answers]
        if args.overload_s > 0:
            print(f"{name}: overload at 4x capacity ({4 * capacity:,.0f} requests/s) for {args.overload_s:g} s ...",
                  flush=True)
            out["overload"] = _overload(pool, server, files, capacity, args.overload_s)
        out["serve_exit_status"] = server.stop()

    with ServerProcess(["--pipeline", name], module=["minddata.bench.serve_baseline"]) as baseline:
        c = args.baseline_concurrency
        print(f"{name}: baseline server (FastAPI + Pillow + NumPy), concurrency {c} ...", flush=True)
        out["baseline"] = _run_client(pool, "closed", baseline.url, files, limit, concurrency=c,
                                      max_requests=args.requests, max_seconds=args.seconds) | {"concurrency": c}
    return out


def _report(result: dict[str, Any]) -> None:
    ceiling = result["ceiling_images_per_s"]
    base = result["baseline"]
    print(f"\n{result['pipeline']}: in-process ceiling {_fmt(ceiling)} images/s; baseline server "
          f"{_fmt(base['images_per_s'])} images/s at concurrency {base['concurrency']} "
          f"(p50 {_fmt(base['p50_ms'], 1)} ms, p99 {_fmt(base['p99_ms'], 1)} ms)")
    header = ("concurrency", "images/s", "vs ceiling", "vs baseline", "p50 ms", "p99 ms", "p99/p50", "mean batch",
              "status")
    rows = []
    for lv in result["serve"]:
        rows.append((str(lv["concurrency"]), _fmt(lv["images_per_s"]), f"{lv['images_per_s'] / ceiling:.0%}",
                     f"{lv['images_per_s'] / base['images_per_s']:.2f}x" if base["images_per_s"] else "n/a",
                     _fmt(lv["p50_ms"], 1), _fmt(lv["p99_ms"], 1), _fmt(lv["p99_ms"] / lv["p50_ms"], 1),
                     _fmt(lv["batch"]["mean_batch"], 1), " ".join(f"{k}:{v}" for k, v in lv["status"].items())))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    for row in (header, *rows):
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
    offline = result["offline_cpu_ms_per_image"]
    for cost in result.get("cpu_cost", []):
        print(f"CPU per image, {cost['answer']} answers at concurrency {cost['concurrency']} ({cost['served']} served): "
              f"server {_fmt(cost['server_cpu_ms_per_image'], 2)} ms against {_fmt(offline, 2)} ms offline "
              f"({cost['server_cpu_ms_per_image'] / offline:.2f}x); the load client {_fmt(cost['client_cpu_ms_per_image'], 2)} ms")
    over = result.get("overload")
    if over:
        rss = [r for _, r in over["server_rss_mb"]]
        print(f"overload at {_fmt(over['offered_rate'])} requests/s: status {over['status']}, 503 p50 "
              f"{_fmt(over['rejected_p50_ms'], 1)} ms, p99 {_fmt(over['rejected_p99_ms'], 1)} ms at the client; at the "
              f"server (arrival to answer, {over['server_refusals']:.0f} refusals) p50 <= "
              f"{_fmt(over['server_rejected_p50_ms_at_most'], 1)} ms, p99 <= {_fmt(over['server_rejected_p99_ms_at_most'], 1)} ms, "
              f"{100 * over.get('server_rejected_within_10ms', float('nan')):.2f}% within 10 ms; "
              f"accepted p99 {_fmt(over['p99_ms'], 1)} ms, client CPU {_fmt(over['client_cpu_s'], 1)} s, server RSS "
              f"{_fmt(min(rss, default=float('nan')))}-{_fmt(max(rss, default=float('nan')))} MB, "
              f"alive: {over['server_alive']}, client skipped {over['skipped_by_client']}")


def _int_list(text: str) -> list[int]:
    try:
        values = [positive_int(t) for t in text.split(",") if t.strip()]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers >= 1: {exc}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers >= 1, found {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.serve_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipelines", default="infer224,yolo416", help="comma-separated (default infer224,yolo416)")
    parser.add_argument("--concurrency", type=_int_list, default=[1, 8, 32, 128], help="default 1,8,32,128")
    parser.add_argument("--baseline-concurrency", type=positive_int, default=32, help="default 32")
    parser.add_argument("--requests", type=positive_int, default=3000, help="requests per level at most (default 3000)")
    parser.add_argument("--seconds", type=float, default=30.0, help="seconds per level at most (default 30)")
    parser.add_argument("--overload-s", type=float, default=120.0, help="overload duration; 0 skips it (default 120)")
    parser.add_argument("--cost-requests", type=positive_int, default=1000,
                        help="requests per answer format for the server's CPU per image (default 1000)")
    parser.add_argument("--cost-concurrency", type=positive_int, default=32, help="default 32")
    parser.add_argument("--images", type=positive_int, default=200, help="bench JPEGs generated (default 200)")
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count() or 2,
                        help="pipeline workers, server and ceiling (default: all cores)")
    parser.add_argument("--max-batch", type=positive_int, default=32)
    parser.add_argument("--max-delay-ms", type=float, default=5.0)
    parser.add_argument("--max-queue", type=positive_int, default=256)
    parser.add_argument("--pipeline-nice", type=int, choices=range(20), default=10, metavar="0-19",
                        help="the server's --pipeline-nice (default 10)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 3600 or not 0 <= args.overload_s <= 3600:
        parser.error("--seconds must be in (0, 3600] and --overload-s in [0, 3600]")
    names = [n.strip() for n in args.pipelines.split(",") if n.strip()]
    unknown = [n for n in names if n not in ("infer224", "yolo416")]
    if unknown or not names:
        parser.error(f"--pipelines: choose from infer224, yolo416. Found: {args.pipelines!r}")

    from minddata.bench.images import ensure_images, list_images

    data_dir, _ = ensure_images(num_images=args.images)
    files = [str(p) for p in list_images(data_dir)]
    results = []
    # One client process for the whole run (spawned: no state inherited from this process).
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        for name in names:
            results.append(_bench_pipeline(name, args, files, data_dir, pool))
    for result in results:
        _report(result)
    if args.json:
        Path(args.json).write_text(json.dumps({"settings": vars(args), "results": results}, indent=1) + "\n")
        print(f"\nwrote {args.json}")
    failed = [r["pipeline"] for r in results if r.get("serve_exit_status") not in (0, None)
              or (r.get("overload") and not r["overload"]["server_alive"])]
    if failed:
        print(f"serve_load: the server crashed or did not drain cleanly for {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
