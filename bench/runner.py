"""Run one benchmark pipeline and measure it: throughput, CPU cost, memory and first-batch latency.

CPU time counts every thread of this process (``time.process_time``) plus worker processes: those
still running when the last batch arrives (read from ``/proc``) and those that ended and were reaped
(``RUSAGE_CHILDREN``). Peak RSS is this process's high-water mark over the run, plus the peaks of worker
processes.

``minddata bench`` runs each pipeline round, and the decode reference, with :func:`run_in_own_process`:
a fresh interpreter (started with ``spawn``, not forked) whose peak RSS is its own, whatever ran before
it. In one long-lived process a peak cannot be separated: Linux's reset of the high-water mark
(``clear_refs``) resets it to the *current* RSS, which holds what earlier runs left behind; and
``ru_maxrss`` of a started process includes its parent's peak (it survives ``exec``), so a child reads
``VmHWM``, the peak of its own address space.

Also here: :func:`decode_reference`, the physical limit DESIGN.md §6 asks throughput to be quoted
against: the fastest full-size decoder available here (minddata's own libjpeg-turbo extension for JPEGs
when it is built, else Pillow) reading and decoding the same files on the same number of threads, with
no pipeline around it.

Examples:
    >>> from minddata.bench.runner import run
    >>> result = run("infer224", "images/", workers=2, batch_size=64)  # doctest: +SKIP
    >>> result.images_per_s  # doctest: +SKIP
"""

from __future__ import annotations

import io
import logging
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from minddata.bench import pipelines
from minddata.bench.images import list_images
from minddata.engine.autotune import is_autotune

__all__ = ["BenchResult", "OwnProcessError", "decode_reference", "decode_reference_in_own_process", "run",
           "run_in_own_process"]


@dataclass
class BenchResult:
    """What one pipeline run measured. Rates are per wall-clock second and per CPU-second."""

    pipeline: str
    images: int
    seconds: float
    images_per_s: float
    cpu_seconds: float
    images_per_cpu_s: float
    peak_rss_mb: float
    first_batch_s: float
    workers: int
    batch_size: int
    epochs: int
    batches: int = 0
    output_shape: list[int] = field(default_factory=list)
    output_dtype: str = ""
    worker_processes: int = 0
    worker_peak_rss_mb: float = 0.0
    device: str = "cpu"
    workers_setting: str = ""
    # The profiler's verdict: the limiting stage (None: the consumer, or not profiled) and why.
    bottleneck_stage: str | None = None
    bottleneck: str = ""
    autotune: list = field(default_factory=list)
    # False when several rounds named different bottlenecks (then bottleneck_stage is None).
    bottleneck_agreed: bool = True
    # What the graph optimizer changed, as Dataset.explain() says it (one note per rewrite, in plan order).
    fusion_notes: list = field(default_factory=list)
    # The evidence behind the verdict: the limiting stage's measurements (see runner._neck_facts).
    neck: dict = field(default_factory=dict)
    # images/s of every round, when the pipeline ran several (the figures above are the median round's).
    rounds_images_per_s: list = field(default_factory=list)
    # Rows an op failed on, skipped (bench --data runs in skip mode), and the first few messages.
    skipped_rows: int = 0
    skipped_samples: list = field(default_factory=list)
    # decode-only: the decoder used, and the files it could not decode (skipped).
    decoder: str = ""
    bad_images: list = field(default_factory=list)
    # Queue occupancy over time, for plots: {"t": [s], "series": {queue name: [fraction of capacity]}}.
    queues: dict = field(default_factory=dict, repr=False)
    # The steady state: the images after the first batch over the time from the first batch to the last
    # (start-up, the first batch and the closing left out); nan under STEADY_MIN_BATCHES batches.
    steady_images_per_s: float = float("nan")

    def to_json(self) -> dict:
        return asdict(self)


# --- measuring ------------------------------------------------------------------------------------

# Fewer batches than this give no steady state: the first ones are already queued when the first
# arrives, so their rate is how fast a queue is emptied, not how fast the pipeline runs.
STEADY_MIN_BATCHES = 8

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _descendants() -> dict[int, tuple[float, float]]:
    """{pid: (cpu seconds, peak RSS MB)} of every live descendant process, read from /proc (Linux).

    /proc rather than psutil: psutil is not a core dependency, and ``minddata bench`` must work after a
    plain ``pip install .``.
    """
    parents: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                raw = f.read()
        except OSError:
            continue  # exited meanwhile
        # The command name is in parentheses and may hold spaces: split after the last ')'.
        rest = raw[raw.rfind(")") + 2 :].split()
        pid = int(entry)
        parents[pid] = int(rest[1])
        stats[pid] = rest
    me = os.getpid()
    out: dict[int, tuple[float, float]] = {}
    frontier = [me]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in out:
                rest = stats[pid]
                cpu = (int(rest[11]) + int(rest[12])) / CLK_TCK  # utime + stime
                out[pid] = (cpu, _peak_rss_mb(pid))
                frontier.append(pid)
    return out


def _peak_rss_mb(pid: int | str = "self") -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    if pid == "self":
        # ru_maxrss is KiB on Linux, bytes on macOS.
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss / (1 << 20) if sys.platform == "darwin" else rss / 1024
    return 0.0


def _reset_peak_rss() -> None:
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0); elsewhere the peak is
    # the process's lifetime peak, which is still an upper bound.
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def process_tree_cpu(pid: int | None) -> float:
    """User and system CPU seconds so far of process ``pid`` and every process under it (0 without
    psutil, or without ``pid``)."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil comes with the bench's dependencies
        return 0.0
    if pid is None:
        return 0.0
    process = psutil.Process(pid)
    total = 0.0
    for p in (process, *process.children(recursive=True)):
        try:
            times = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def children_cpu() -> float:
    """CPU-seconds of this process's reaped children (``RUSAGE_CHILDREN``)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class _Meter:
    """CPU and memory of this process and its workers between :meth:`start` and :meth:`stop`."""

    def start(self) -> None:
        _reset_peak_rss()
        self._procs0 = _descendants()
        self._reaped0 = children_cpu()
        self.t0 = time.perf_counter()
        self._cpu0 = time.process_time()

    def stop(self) -> None:
        self.seconds = time.perf_counter() - self.t0
        cpu_self = time.process_time() - self._cpu0
        procs = _descendants()
        reaped = children_cpu() - self._reaped0
        # Workers alive now: their CPU since start. Workers alive at start that have since been reaped:
        # RUSAGE_CHILDREN holds their whole life, so take off what they had used before start.
        live = sum(cpu - self._procs0.get(pid, (0.0, 0.0))[0] for pid, (cpu, _) in procs.items())
        gone = sum(cpu for pid, (cpu, _) in self._procs0.items() if pid not in procs)
        self.cpu_seconds = cpu_self + live + max(0.0, reaped - gone)
        self.peak_rss_mb = _peak_rss_mb()
        self.worker_processes = len(procs)
        self.worker_peak_rss_mb = sum(rss for _, rss in procs.values())


# --- running --------------------------------------------------------------------------------------


def _check_custom(name: str, batch: dict, batch_size: int) -> tuple[list[int], str]:
    """A pipeline file's output: its "image" column (else its first) must be a batch of at most
    ``batch_size`` rows."""
    if not batch:
        raise RuntimeError(f"bench {name}: the pipeline produced rows with no columns")
    image = batch.get("image", next(iter(batch.values())))
    shape = list(getattr(image, "shape", ()))
    if not shape or not 0 < shape[0] <= batch_size:
        raise RuntimeError(
            f"bench {name}: expected batches of at most batch_size={batch_size} images (a leading batch axis); "
            f"found an output of shape {tuple(shape)}: does build() end with .batch(batch_size)?"
        )
    return shape, str(image.dtype)


def _count(batch: dict) -> int:
    image = batch.get("image", next(iter(batch.values())))
    return int(image.shape[0])


def _queues(snapshot: dict, max_points: int = 500) -> dict:
    """Occupancy (fraction of capacity) of each parallel stage's output queue and of the prefetch
    queue, thinned to at most ``max_points`` samples."""
    t = snapshot["samples"]["t"]
    if not t:
        return {}
    step = max(1, len(t) // max_points)
    names = {str(s["index"]): s["name"] for s in snapshot["stages"]}
    series = {
        names[k]: [s[0] / s[2] if s[2] else 0.0 for s in v[::step]]
        for k, v in snapshot["samples"]["stages"].items()
    }
    series["prefetch queue"] = [n / c if c else 0.0 for n, c in snapshot["samples"]["prefetch"][::step]]
    return {"t": t[::step], "series": series}


def _check_batch(name: str, batch: dict, batch_size: int) -> tuple[list[int], str]:
    """A fast wrong pipeline must not pass for a fast pipeline: check what comes out."""
    if "image" not in batch or "label" not in batch:
        raise RuntimeError(f"bench {name}: expected columns 'image' and 'label'. Found: {sorted(batch)}")
    image, label = batch["image"], batch["label"]
    expected = pipelines.PIPELINES[name].image_shape
    if tuple(image.shape[1:]) != expected or str(image.dtype) != "float32":
        raise RuntimeError(
            f"bench {name}: expected images of shape (batch, {', '.join(map(str, expected))}) float32. "
            f"Found: {tuple(image.shape)} {image.dtype}"
        )
    if not 0 < image.shape[0] <= batch_size or label.shape[0] != image.shape[0]:
        raise RuntimeError(
            f"bench {name}: batch of {image.shape[0]} images and {label.shape[0]} labels; "
            f"expected equal counts, at most batch_size={batch_size}"
        )
    return list(image.shape), str(image.dtype)


def _preload_kernels() -> None:
    # The first pipeline would otherwise pay for importing the CPU kernels (OpenCV...) in its
    # first-batch latency, and later ones not.
    try:
        from minddata.ops import ops_on

        ops_on("CPU")
    except Exception:  # the pipeline itself will report a real problem
        pass


def run(
    name: str | pipelines.CustomPipeline,
    data_dir: str | os.PathLike,
    workers: int = 2,
    batch_size: int = 64,
    epochs: int = 1,
    *,
    device: str = "cpu",
    profile: bool = True,
    progress: Callable[[int], Any] | None = None,
    skip_bad_images: bool = False,
    executor: str = "local",
) -> BenchResult:
    """Build pipeline ``name`` (a standard one, or a :class:`~minddata.bench.pipelines.CustomPipeline`)
    over ``data_dir``, iterate it ``epochs`` times, and measure.

    The clock starts before the dataset is built, so first-batch latency includes every start-up cost
    (listing files, starting workers, filling the first batch). With ``profile`` (the default) the
    run is profiled (a few per cent of cost at most) and the result names its bottleneck.
    ``progress(images_so_far)`` is called after each batch. ``skip_bad_images`` runs the pipeline with
    ``config.set_error_samples_mode("skip")``: rows an op fails on (a corrupt file in a user's folder)
    are skipped and counted in ``skipped_rows`` instead of ending the run. ``executor="ray"`` runs the
    pipeline's per-row part on Ray (see ``Dataset.create_dict_iterator``).
    """
    from minddata import config
    from minddata.profiler import Profiler

    custom = name if isinstance(name, pipelines.CustomPipeline) else None
    label = custom.name if custom is not None else str(name)
    check = (lambda b: _check_custom(label, b, batch_size)) if custom else (lambda b: _check_batch(label, b, batch_size))
    _preload_kernels()
    meter = _Meter()
    previous_mode = config.get_error_samples_mode()
    logger = logging.getLogger("minddata")
    previous_level = logger.level
    if skip_bad_images:
        config.set_error_samples_mode("skip")
        logger.setLevel(logging.ERROR)  # bench reports skipped rows itself, once, after the table
    meter.start()
    if custom is not None:
        ds = custom.build(os.fspath(data_dir), workers, batch_size)
    else:
        ds = pipelines.build(label, data_dir, workers=workers, batch_size=batch_size, device=device)
    fusion_notes = _fusion_notes(ds)
    prof = Profiler().start() if profile else None
    it = None
    images = batches = 0
    first_batch_s = 0.0
    shape: list[int] = []
    dtype = ""
    try:
        # Only a Ray run names its executor: pipeline files may build dataset-like objects without it.
        chosen = {"executor": executor} if executor != "local" else {}
        it = ds.create_dict_iterator(num_epochs=epochs, output_numpy=True, **chosen)
        first_at = last_at = 0.0
        first_images = 0
        for _ in range(epochs):
            for batch in it:
                if batches == 0:
                    first_at = time.perf_counter()
                    first_batch_s = first_at - meter.t0
                    shape, dtype = check(batch)
                    first_images = _count(batch)
                else:
                    check(batch)
                images += _count(batch)
                batches += 1
                last_at = time.perf_counter()
                if progress is not None:
                    progress(images)
        # Measure before closing, while worker processes can still be read.
        meter.stop()
        stats = getattr(it, "error_stats", None)  # a custom pipeline's own iterator may not count errors
        skipped = (stats.skipped, list(stats.samples)) if stats is not None else (0, [])
    finally:
        config.set_error_samples_mode(previous_mode)
        logger.setLevel(previous_level)
        if prof is not None:
            prof.stop()
        if it is not None:
            it.close()
    if images == 0:
        raise RuntimeError(f"bench {label}: the pipeline produced no images from {os.fspath(data_dir)}")
    verdict: dict[str, Any] = {}
    if prof is not None and prof.runs:
        summary = prof.summary()
        neck = summary.bottleneck
        stage = f"{neck.op} in {neck.stage}" if neck.op and neck.stage else neck.stage
        verdict = {"bottleneck_stage": stage, "bottleneck": str(neck), "neck": _neck_facts(summary),
                   "autotune": summary.autotune, "queues": _queues(prof.runs[-1])}
    return BenchResult(
        pipeline=label,
        images=images,
        seconds=meter.seconds,
        images_per_s=images / meter.seconds,
        cpu_seconds=meter.cpu_seconds,
        images_per_cpu_s=images / meter.cpu_seconds if meter.cpu_seconds > 0 else float("nan"),
        peak_rss_mb=meter.peak_rss_mb,
        first_batch_s=first_batch_s,
        steady_images_per_s=(images - first_images) / (last_at - first_at)
        if batches >= STEADY_MIN_BATCHES and last_at > first_at else float("nan"),
        workers=int(workers),
        batch_size=batch_size,
        epochs=epochs,
        batches=batches,
        output_shape=shape,
        output_dtype=dtype,
        worker_processes=meter.worker_processes,
        worker_peak_rss_mb=meter.worker_peak_rss_mb,
        device=device,
        workers_setting="auto" if is_autotune(workers) else str(workers),
        fusion_notes=fusion_notes,
        skipped_rows=skipped[0],
        skipped_samples=skipped[1],
        **verdict,
    )


def _fusion_notes(ds: Any) -> list[str]:
    """What the graph optimizer did to the user's ops, from ``Dataset.explain()`` (one note per rewrite)."""
    explain = getattr(ds, "explain", None)
    if explain is None:
        return []
    try:
        return [line.split("fused: ", 1)[1] for line in explain().splitlines() if "fused: " in line]
    except Exception:  # explaining is a courtesy; the run itself reports real problems
        return []


def _neck_facts(summary: Any) -> dict:
    """The profiler's verdict as plain data, with the limiting stage's measurements: what the bench's
    report needs to word its own verdict and to check the advice against the machine's load."""
    neck = summary.bottleneck
    facts: dict[str, Any] = {"pipeline_bound": bool(neck.pipeline_bound), "stage": neck.stage, "op": neck.op,
                             "reason": neck.reason, "advice": neck.advice, "cores": int(summary.cores),
                             "cpu_fallback_rows": dict(summary.device_cpu_rows)}
    stage = next((s for s in summary.stages if s.name == neck.stage), None)
    if stage is not None:
        cpu = stage.cpu if stage.cpu is not None and stage.cpu == stage.cpu else None  # NaN: not measured
        facts.update(kind=stage.kind, node_type=stage.node_type, busy=stage.busy, cpu=cpu,
                     workers=int(stage.workers_now or max(1, round(stage.workers))),
                     ops=[o.name for o in stage.ops if not o.name.startswith("read ")])
        op = next((o for o in stage.ops if o.name == neck.op), None)
        if op is not None:
            facts["op_share"] = op.share
    return facts


def _reference_decoder() -> tuple[str, Callable[[bytes], Any]]:
    """The fastest full-size decoder available here, and its name: minddata's libjpeg-turbo extension
    for JPEGs (bit-equal to Pillow, without Pillow's per-image overhead) when it is built, else Pillow."""
    from PIL import Image

    def pillow(data: bytes) -> Any:
        with Image.open(io.BytesIO(data)) as im:
            return im.convert("RGB").size

    try:
        from minddata.ops.cpu import jpeg
    except ImportError:
        jpeg = None  # type: ignore[assignment]
    if jpeg is None or not jpeg.AVAILABLE:
        return "Pillow (libjpeg-turbo)", pillow

    def extension(data: bytes) -> Any:
        if jpeg.is_jpeg(data):
            return jpeg.decode(data).shape
        return pillow(data)

    return "minddata's libjpeg-turbo extension (JPEG; Pillow for other formats)", extension


def decode_reference(data_dir: str | os.PathLike, workers: int = 2) -> BenchResult:
    """Read and decode every image once at full size on ``workers`` threads: the decoder limit.

    Full-size decode to RGB, nothing else, with the fastest decoder available (``decoder`` names it);
    both decoders release the GIL, so threads scale. A file that cannot be decoded is skipped and named
    in ``bad_images``, as the pipelines skip it.
    """
    files = list_images(data_dir)
    if not files:
        raise RuntimeError(f"bench: no images in {os.fspath(data_dir)}")
    name, decode_bytes = _reference_decoder()

    def decode(path: Path) -> str | None:
        try:
            decode_bytes(path.read_bytes())
        except Exception as error:  # a corrupt file: the reference skips it, as the pipelines do
            if type(error).__name__ == "UnidentifiedImageError":  # Pillow's text names a BytesIO, not the file
                return f"{path} (not an image format Pillow can identify)"
            return f"{path} ({type(error).__name__}: {str(error).splitlines()[0] if str(error) else 'unreadable'})"
        return None

    meter = _Meter()
    meter.start()
    bad: list[str] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        t_first = None
        n = 0
        for failure in pool.map(decode, files):
            if t_first is None:
                t_first = time.perf_counter() - meter.t0
            if failure is None:
                n += 1
            else:
                bad.append(failure)
    meter.stop()
    if n == 0:
        raise RuntimeError(f"bench: none of the {len(files)} images in {os.fspath(data_dir)} could be decoded; "
                           f"first: {bad[0]}")
    return BenchResult(
        pipeline="decode-only",
        images=n,
        seconds=meter.seconds,
        images_per_s=n / meter.seconds,
        cpu_seconds=meter.cpu_seconds,
        images_per_cpu_s=n / meter.cpu_seconds if meter.cpu_seconds > 0 else float("nan"),
        peak_rss_mb=meter.peak_rss_mb,
        first_batch_s=t_first or 0.0,
        workers=workers,
        batch_size=1,
        epochs=1,
        batches=n,
        decoder=name,
        bad_images=bad,
    )


# --- a process of its own -------------------------------------------------------------------------


class OwnProcessError(RuntimeError):
    """What a run in its own process raised: ``kind`` is the exception's type name, ``trace`` its
    traceback as the process printed it."""

    def __init__(self, kind: str, message: str, trace: str):
        super().__init__(message)
        self.kind = kind
        self.trace = trace


def run_in_own_process(
    name: str | pipelines.CustomPipeline,
    data_dir: str | os.PathLike,
    workers: int = 2,
    batch_size: int = 64,
    epochs: int = 1,
    *,
    device: str = "cpu",
    progress: Callable[[int], Any] | None = None,
    skip_bad_images: bool = False,
    executor: str = "local",
) -> BenchResult:
    """:func:`run` in a fresh process of its own, so that its peak RSS is its own: nothing that ran before
    in this process (another pipeline, a previous round) is in it. ``progress`` is called here, as
    the run reports batches. An exception in the run is raised here as :class:`OwnProcessError`.

    The process is started with ``spawn`` (a new interpreter: the import of minddata and its kernels,
    a few tenths of a second, is paid before the clock starts). With ``executor="ray"`` it joins the
    Ray cluster this process is connected to, else the one ``RAY_ADDRESS`` names, else a running local
    one (``minddata bench`` starts one for its rounds when none is named).
    """
    target = ("file", name.path) if isinstance(name, pipelines.CustomPipeline) else ("name", str(name))
    kwargs = {"data_dir": os.fspath(data_dir), "workers": workers, "batch_size": batch_size, "epochs": epochs,
              "device": device, "skip_bad_images": skip_bad_images, "executor": executor}
    return _in_own_process("run", target, kwargs, progress, _ray_address() if executor == "ray" else None)


def decode_reference_in_own_process(data_dir: str | os.PathLike, workers: int = 2) -> BenchResult:
    """:func:`decode_reference` in a fresh process of its own (see :func:`run_in_own_process`)."""
    return _in_own_process("decode_reference", None, {"data_dir": os.fspath(data_dir), "workers": workers},
                           None, None)


def _ray_address() -> dict[str, str] | None:
    """What a child needs to join the Ray cluster this process is connected to: its address and, when
    the cluster checks tokens, the token mode (a connecting process does not infer it); None if none."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    try:
        settings = {"RAY_ADDRESS": ray.get_runtime_context().gcs_address}
    except Exception:  # an older Ray: the child falls back to RAY_ADDRESS or a running local cluster
        return None
    try:
        from ray._raylet import AuthenticationMode, get_authentication_mode

        if get_authentication_mode() == AuthenticationMode.TOKEN and "RAY_AUTH_MODE" not in os.environ:
            settings["RAY_AUTH_MODE"] = "token"
    except ImportError:  # a Ray without token authentication
        pass
    return settings


def _join_ray(settings: dict[str, str] | None) -> None:
    """Connect this (child) process to the bench's Ray cluster (``settings`` from :func:`_ray_address`),
    else to the one ``RAY_ADDRESS`` names, else to a running local one."""
    from minddata.bench.ray_cluster import NO_USAGE_STATS_ENV, SINGLE_MACHINE_ENV, quiet_data_context
    from minddata.engine.ray_executor import require_ray

    os.environ.update(SINGLE_MACHINE_ENV)
    os.environ.update(NO_USAGE_STATS_ENV)
    os.environ.update(settings or {})
    ray = require_ray()
    ray.init(address=os.environ.get("RAY_ADDRESS") or "auto", log_to_driver=False, configure_logging=False)
    quiet_data_context(ray)


def _in_own_process(task: str, target: Any, kwargs: dict, progress: Callable[[int], Any] | None,
                    ray_address: dict[str, str] | None) -> BenchResult:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # fork would copy this process's memory, and its peak
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_own_process_main, args=(send, task, target, kwargs, ray_address),
                       name=f"minddata-bench-{task}")
    proc.start()
    send.close()  # only the child's copy is left: its exit ends our recv() with EOFError
    try:
        while True:
            try:
                message = receive.recv()
            except EOFError:
                proc.join()
                raise RuntimeError(f"the process running it ended (exit code {proc.exitcode}) without a result; "
                                   "a negative code is the signal that stopped it, -9 often the kernel's "
                                   "out-of-memory killer") from None
            if message[0] == "progress":
                if progress is not None:
                    progress(message[1])
            elif message[0] == "result":
                return message[1]
            else:
                raise OwnProcessError(*message[1:])
    finally:
        receive.close()
        proc.join(timeout=60)
        if proc.is_alive():  # stuck at exit, or we were interrupted: do not leave it behind
            proc.terminate()
            proc.join()


def _own_process_main(send: Any, task: str, target: Any, kwargs: dict, ray_address: dict[str, str] | None) -> None:
    try:
        if kwargs.get("executor") == "ray":
            _join_ray(ray_address)
        if task == "run":
            kind, value = target
            pipeline = pipelines.load_pipeline_file(value) if kind == "file" else value
            data_dir = kwargs.pop("data_dir")
            result = run(pipeline, data_dir, progress=lambda images: send.send(("progress", images)), **kwargs)
        else:
            result = decode_reference(**kwargs)
        send.send(("result", result))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent, which reports it
        try:
            send.send(("error", type(exc).__name__, str(exc), traceback.format_exc()))
        except OSError:
            pass  # the parent is gone (interrupted)
    finally:
        send.close()
