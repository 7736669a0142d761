"""The standard image pipelines run by minddata, MindSpore and DALI (CPU-only), same images, same run.

    python -m minddata.bench.compare --mindspore /opt/msvenv/bin/python --dali /opt/dalivenv/bin/python

Each implementation runs in its own fresh process (peers live in their own virtual environments:
MindSpore needs numpy<2), one after another, over the same generated ImageNet-like JPEGs, with 2
workers and batch 64; every process reports wall time, CPU time (all threads and children) and peak
RSS (its own, ``VmHWM``, and for PyTorch's worker processes the largest one's). The table gives medians over ``--repeats`` rounds and ratios to each peer measured in the same
run. The peers' pipelines are the idiomatic translations of the same steps (DALI's
``crop_mirror_normalize`` does its Normalize and HWC2CHW in one op, as DALI users write it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass

__all__ = ["PEERS", "Peer", "find_peer", "main", "run_one", "SCRIPTS"]

PIPELINES = ("train", "infer224", "yolo416")

_MEASURE = """
import json, os, resource, sys, time
def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
def _own_peak_mb():
    # VmHWM: the peak of this process's own memory. Not ru_maxrss: it keeps the peak of the process that
    # started this one (it survives exec), so every peer would report the bench's own peak.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def _report(images, t0, c0, worker_processes=0):
    seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    rss = _own_peak_mb()
    # Forked worker processes, reaped by now (PyTorch's DataLoader): the largest one's peak. Only for a
    # script that says it started some: a fork+exec'd helper's ru_maxrss would be this process's peak.
    workers_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 if worker_processes else 0.0
    print("RESULT " + json.dumps(dict(images=images, seconds=seconds, cpu_seconds=cpu, peak_rss_mb=rss,
                                      worker_processes=worker_processes, worker_peak_rss_mb=workers_rss)))
DATA, PIPE, WORKERS, BATCH, FUSION = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]
"""

# The same op list for minddata and MindSpore: only the imports differ (the API is the same).
_OPS_AND_LOOP = """
ops = {
    "train": [vision.Decode(), vision.RandomResizedCrop(224), vision.RandomHorizontalFlip(), vision.Normalize(MEAN, STD), vision.HWC2CHW()],
    "infer224": [vision.Decode(), vision.Resize(256), vision.CenterCrop(224), vision.Normalize(MEAN, STD), vision.HWC2CHW()],
    "yolo416": [vision.Decode(), vision.Resize((416, 416)), vision.Normalize(MEAN, STD), vision.HWC2CHW()],
}[PIPE]
t0, c0 = time.perf_counter(), _cpu()
d = ds.ImageFolderDataset(DATA, shuffle=False, num_parallel_workers=WORKERS)
d = d.map(ops, input_columns="image", num_parallel_workers=WORKERS).batch(BATCH)
n = 0
for batch in d.create_dict_iterator(num_epochs=1, output_numpy=True):
    n += batch["image"].shape[0]
_report(n, t0, c0)
"""

_MINDDATA = _MEASURE + """
import minddata as ds
from minddata import vision
import minddata.ops.cpu  # kernels loaded before the clock, as the peers' are by their imports
ds.config.set_seed(1)
ds.config.set_enable_fusion(FUSION)
""" + _OPS_AND_LOOP

_MINDSPORE = _MEASURE + """
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
ds.config.set_seed(1)
ds.config.set_num_parallel_workers(WORKERS)
""" + _OPS_AND_LOOP

_DALI = _MEASURE + """
from nvidia.dali import pipeline_def, fn, types
import math
count = sum(len(os.listdir(os.path.join(DATA, d))) for d in os.listdir(DATA) if os.path.isdir(os.path.join(DATA, d)))
@pipeline_def(batch_size=BATCH, num_threads=WORKERS, device_id=None, seed=1, prefetch_queue_depth=2)
def pipe():
    jpegs, labels = fn.readers.file(file_root=DATA, random_shuffle=False, name="Reader")
    images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
    mirror = 0
    if PIPE == "train":
        images = fn.random_resized_crop(images, size=(224, 224))
        mirror = fn.random.coin_flip()
        crop = None
    elif PIPE == "infer224":
        images = fn.resize(images, resize_shorter=256)
        crop = (224, 224)
    else:
        images = fn.resize(images, resize_x=416, resize_y=416)
        crop = None
    kw = dict(crop=crop) if crop else {}
    images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD, mirror=mirror, **kw)
    return images, labels
t0, c0 = time.perf_counter(), _cpu()
p = pipe()
p.build()
n = 0
for _ in range(math.ceil(count / BATCH)):
    images, labels = p.run()
    n += len(images)
n = min(n, count)
_report(n, t0, c0)
"""

# torchvision's transforms on PIL images in DataLoader worker processes, as PyTorch users write it;
# ToTensor scales to [0, 1], so the mean/std are scaled alike.
_TORCH = _MEASURE + """
import torch
from torchvision import datasets, transforms as T
torch.manual_seed(1)
torch.set_num_threads(1)
norm = T.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])
tf = {
    "train": T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), norm]),
    "infer224": T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), norm]),
    "yolo416": T.Compose([T.Resize((416, 416)), T.ToTensor(), norm]),
}[PIPE]
t0, c0 = time.perf_counter(), _cpu()
d = datasets.ImageFolder(DATA, transform=tf)
loader = torch.utils.data.DataLoader(d, batch_size=BATCH, shuffle=False, num_workers=WORKERS)
n = 0
for images, labels in loader:
    n += images.shape[0]
del loader  # joins (reaps) the worker processes, so their CPU time and peak memory are counted
_report(n, t0, c0, worker_processes=WORKERS)
"""

SCRIPTS = {
    "minddata": _MINDDATA, "minddata-unfused": _MINDDATA, "mindspore": _MINDSPORE, "dali-cpu": _DALI, "torch": _TORCH,
}


@dataclass(frozen=True)
class Peer:
    """Another data-loading library ``minddata bench --compare`` can run: the script it runs
    (``impl``), the module that must import, where to look for a Python that has it, how to install it."""

    name: str
    impl: str
    module: str
    env: str
    default: str
    pip: str


PEERS = {
    "mindspore": Peer("mindspore", "mindspore", "mindspore.dataset", "MINDDATA_MINDSPORE_PYTHON",
                      "/opt/msvenv/bin/python", "pip install mindspore"),
    "dali": Peer("dali", "dali-cpu", "nvidia.dali", "MINDDATA_DALI_PYTHON", "/opt/dalivenv/bin/python",
                 "pip install nvidia-dali-cuda120"),
    "torch": Peer("torch", "torch", "torchvision", "MINDDATA_TORCH_PYTHON", "/opt/torchvenv/bin/python",
                  "pip install torch torchvision"),
}


def find_peer(name: str, timeout: float = 120.0) -> tuple[str | None, str]:
    """``(python, version)`` of an interpreter that imports peer ``name``, or ``(None, why not)``.

    Looks at ``$<PEER>_PYTHON`` when set (and only there), else the peer's default virtual
    environment, else this interpreter. Peers live in their own environments (MindSpore needs numpy<2).
    """
    peer = PEERS[name]
    explicit = os.environ.get(peer.env)
    candidates = [explicit] if explicit else [peer.default, sys.executable]
    root = peer.module.split(".")[0]
    code = (f"import {peer.module} as m, {root} as r; "
            "print(getattr(m, '__version__', '') or getattr(r, '__version__', '') or '?')")
    tried = []
    for python in dict.fromkeys(candidates):
        if not python or not os.path.exists(python):
            tried.append(f"{python} (no such file)")
            continue
        try:
            proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout, cwd="/")
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append(f"{python} ({type(exc).__name__})")
            continue
        if proc.returncode == 0:
            return python, proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "?"
        tried.append(f"{python} (no {peer.module})")
    return None, (f"not installed ({'; '.join(tried)}): {peer.pip} in a virtual environment, "
                  f"then set {peer.env} to its python")


@dataclass
class Run:
    impl: str
    pipeline: str
    images: int
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    # Worker processes the run started (0: threads only) and the largest one's peak RSS.
    worker_processes: int = 0
    worker_peak_rss_mb: float = 0.0

    @property
    def images_per_s(self) -> float:
        return self.images / self.seconds

    @property
    def images_per_cpu_s(self) -> float:
        return self.images / self.cpu_seconds


def run_one(python: str, impl: str, pipeline: str, data: str, workers: int, batch: int) -> Run:
    fusion = "0" if impl == "minddata-unfused" else "1"
    cmd = [python, "-c", SCRIPTS[impl], data, pipeline, str(workers), str(batch), fusion]
    # Run outside the repository so the checkout's bare minddata/ folder can't shadow the install.
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd="/")
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"{impl} {pipeline} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return Run(impl, pipeline, **json.loads(line[len("RESULT "):]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.compare", description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument("--mindspore", help="python with mindspore installed")
    parser.add_argument("--dali", help="python with nvidia-dali installed")
    parser.add_argument("--pipeline", action="append", choices=PIPELINES)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--unfused", action="store_true", help="also run minddata with fusion off")
    parser.add_argument("--json", help="write all runs here")
    args = parser.parse_args(argv)
    if args.data is None:
        from minddata.bench.images import ensure_images

        data, _ = ensure_images()
        args.data = str(data)
    impls = [("minddata", sys.executable)]
    if args.unfused:
        impls.append(("minddata-unfused", sys.executable))
    if args.mindspore:
        impls.append(("mindspore", args.mindspore))
    if args.dali:
        impls.append(("dali-cpu", args.dali))
    runs: list[Run] = []
    for _ in range(args.repeats):
        for pipeline in args.pipeline or PIPELINES:
            for impl, python in impls:
                run = run_one(python, impl, pipeline, args.data, args.workers, args.batch_size)
                print(f"  {impl:17s} {pipeline:9s} {run.images_per_s:8.1f} img/s", file=sys.stderr, flush=True)
                runs.append(run)
    print(f"data: {args.data}; {args.workers} workers, batch {args.batch_size}; median of {args.repeats} round(s)")
    header = f"{'pipeline':9s} {'impl':17s} {'img/s':>8s} {'img/CPU-s':>9s} {'peak RSS MB':>11s}  ratios (minddata / peer)"
    print(header)
    print("-" * len(header))
    for pipeline in args.pipeline or PIPELINES:
        med = {}
        for impl, _ in impls:
            rs = [r for r in runs if r.impl == impl and r.pipeline == pipeline]
            med[impl] = (
                statistics.median(r.images_per_s for r in rs),
                statistics.median(r.images_per_cpu_s for r in rs),
                statistics.median(r.peak_rss_mb for r in rs),
            )
        for impl, _ in impls:
            ips, icpu, rss = med[impl]
            ratio = f"{med['minddata'][0] / ips:.2f}x" if impl != "minddata" else ""
            print(f"{pipeline:9s} {impl:17s} {ips:8.1f} {icpu:9.1f} {rss:11.0f}  {ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.__dict__ for r in runs], f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
