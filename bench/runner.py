"""Run one benchmark pipeline and measure it: throughput, CPU cost, memory and first-batch latency.

CPU time counts every thread of this process (``time.process_time``) plus worker processes: those
still running when the last batch arrives (read from ``/proc``) and those that ended and were reaped
(``RUSAGE_CHILDREN``). Peak RSS is this process's high-water mark over the run (Linux lets us reset it
first, so runs in one process do not inherit each other's peak), plus the peaks of worker processes.

Also here: :func:`decode_reference`, the physical limit DESIGN.md §6 asks throughput to be quoted
against: Pillow (libjpeg-turbo) reading and decoding the same files, full size, on the same number of
threads, with no pipeline around it.

Example:
    >>> from minddata.bench.runner import run
    >>> result = run("infer224", "images/", workers=2, batch_size=64)  # doctest: +SKIP
    >>> result.images_per_s  # doctest: +SKIP
"""

from __future__ import annotations

import io
import os
import resource
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minddata.bench import pipelines
from minddata.bench.images import list_images

__all__ = ["BenchResult", "decode_reference", "run"]


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

    def to_json(self) -> dict:
        return asdict(self)


# --- measuring ------------------------------------------------------------------------------------

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


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
                cpu = (int(rest[11]) + int(rest[12])) / _CLK_TCK  # utime + stime
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


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class _Meter:
    """CPU and memory of this process and its workers between :meth:`start` and :meth:`stop`."""

    def start(self) -> None:
        _reset_peak_rss()
        self._procs0 = _descendants()
        self._reaped0 = _children_cpu()
        self.t0 = time.perf_counter()
        self._cpu0 = time.process_time()

    def stop(self) -> None:
        self.seconds = time.perf_counter() - self.t0
        cpu_self = time.process_time() - self._cpu0
        procs = _descendants()
        reaped = _children_cpu() - self._reaped0
        # Workers alive now: their CPU since start. Workers alive at start that have since been reaped:
        # RUSAGE_CHILDREN holds their whole life, so take off what they had used before start.
        live = sum(cpu - self._procs0.get(pid, (0.0, 0.0))[0] for pid, (cpu, _) in procs.items())
        gone = sum(cpu for pid, (cpu, _) in self._procs0.items() if pid not in procs)
        self.cpu_seconds = cpu_self + live + max(0.0, reaped - gone)
        self.peak_rss_mb = _peak_rss_mb()
        self.worker_processes = len(procs)
        self.worker_peak_rss_mb = sum(rss for _, rss in procs.values())


# --- running --------------------------------------------------------------------------------------


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
    name: str,
    data_dir: str | os.PathLike,
    workers: int = 2,
    batch_size: int = 64,
    epochs: int = 1,
) -> BenchResult:
    """Build pipeline ``name`` over ``data_dir``, iterate it ``epochs`` times, and measure.

    The clock starts before the dataset is built, so first-batch latency includes every start-up cost
    (listing files, starting workers, filling the first batch).
    """
    _preload_kernels()
    meter = _Meter()
    meter.start()
    ds = pipelines.build(name, data_dir, workers=workers, batch_size=batch_size)
    it = ds.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    images = batches = 0
    first_batch_s = 0.0
    shape: list[int] = []
    dtype = ""
    try:
        for _ in range(epochs):
            for batch in it:
                if batches == 0:
                    first_batch_s = time.perf_counter() - meter.t0
                    shape, dtype = _check_batch(name, batch, batch_size)
                else:
                    _check_batch(name, batch, batch_size)
                images += int(batch["image"].shape[0])
                batches += 1
        # Measure before closing, while worker processes can still be read.
        meter.stop()
    finally:
        it.close()
    if images == 0:
        raise RuntimeError(f"bench {name}: the pipeline produced no images from {os.fspath(data_dir)}")
    return BenchResult(
        pipeline=name,
        images=images,
        seconds=meter.seconds,
        images_per_s=images / meter.seconds,
        cpu_seconds=meter.cpu_seconds,
        images_per_cpu_s=images / meter.cpu_seconds if meter.cpu_seconds > 0 else float("nan"),
        peak_rss_mb=meter.peak_rss_mb,
        first_batch_s=first_batch_s,
        workers=workers,
        batch_size=batch_size,
        epochs=epochs,
        batches=batches,
        output_shape=shape,
        output_dtype=dtype,
        worker_processes=meter.worker_processes,
        worker_peak_rss_mb=meter.worker_peak_rss_mb,
    )


def decode_reference(data_dir: str | os.PathLike, workers: int = 2) -> BenchResult:
    """Read and decode every image once with Pillow on ``workers`` threads: the decoder limit.

    Full-size decode to RGB, nothing else; Pillow releases the GIL while decoding, so threads scale.
    """
    from PIL import Image

    files = list_images(data_dir)
    if not files:
        raise RuntimeError(f"bench: no images in {os.fspath(data_dir)}")

    def decode(path: Path) -> tuple[int, int]:
        with Image.open(io.BytesIO(path.read_bytes())) as im:
            return im.convert("RGB").size

    meter = _Meter()
    meter.start()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        t_first = None
        n = 0
        for _ in pool.map(decode, files):
            if t_first is None:
                t_first = time.perf_counter() - meter.t0
            n += 1
    meter.stop()
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
    )
