"""The kernel floor of a standard pipeline: the fastest way available here to compute each of its steps,
timed warm on one thread, summed, and spread over the cores.

A pipeline's images/s can at best reach ``cores / (sum of its steps' CPU time per image)``: every image
must be read, decoded, resized and normalized by someone, and nothing here computes the same pixels
faster than the fastest candidate for each step. ``minddata bench`` prints this as its "floor" column,
and each pipeline's images/s over it as "vs floor": the share of the machine's limit the engine
reaches, where "vs decode" only compares with a full decode.

How each step is timed: every candidate kernel that gives the step's pixels (the decoder of minddata's
libjpeg-turbo extension, OpenCV's and Pillow's; OpenCV's resize; minddata's compiled normalize and an
OpenCV plane-by-plane one, ...) runs over the same images, once to warm up, then ``repeats`` times;
a candidate's cost is its fastest pass (noise only ever slows a pass down), in thread CPU time, with
OpenCV at one thread (as the pipelines run it). The step's cost is its fastest candidate's. Normalize
writes into a preallocated batch slot, as the pipelines do; the one-off cost of first touching a new
batch buffer's pages is not in the floor.

The floor assumes ``cores`` threads each run as fast as one alone. They share caches, memory
bandwidth and, on SMT machines, execution units, so the floor also measures the chain of the same
fastest kernels on all cores at once (a thread per core, each image read, decoded, resized and
normalized into the thread's own batch slots, no pipeline): ``Floor.all_cores_images_per_s``, the
rate this machine gives those kernels, which a pipeline can approach but not pass.

    python -m minddata.bench.floor [--data DIR] [--images N] [--pipeline NAME]

Examples:
    >>> from minddata.bench.floor import FLOOR_PIPELINES
    >>> FLOOR_PIPELINES
    ('train', 'infer224', 'yolo416')
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FLOOR_PIPELINES", "Floor", "Step", "fastest_of", "measure_floor", "measure_floors", "usable_cores"]

FLOOR_PIPELINES = ("train", "infer224", "yolo416")


@dataclass(frozen=True)
class Step:
    """One step of a pipeline: the fastest candidate's name and cost, and every candidate's cost."""

    name: str
    kernel: str
    us_per_image: float
    candidates: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Floor:
    """A pipeline's kernel floor on ``cores`` cores.

    >>> f = Floor("p", (Step("decode", "ours", 1000.0), Step("resize", "cv2", 250.0)), cores=2, images=10)
    >>> f.us_per_image, round(f.images_per_s)
    (1250.0, 1600)
    """

    pipeline: str
    steps: tuple[Step, ...]
    cores: int
    images: int
    # The same fastest kernels chained per image on all cores at once (a thread per core, no pipeline):
    # what the machine gives when its cores share caches, memory bandwidth and (SMT) execution units,
    # which ``cores`` times one thread's rate assumes away. None when not measured.
    all_cores_images_per_s: float | None = None

    @property
    def us_per_image(self) -> float:
        return sum(s.us_per_image for s in self.steps)

    @property
    def images_per_s(self) -> float:
        return self.cores * 1e6 / self.us_per_image

    def describe(self) -> str:
        """One line: the steps with their fastest kernel and cost."""
        parts = ", ".join(f"{s.name} {s.us_per_image:.0f} ({s.kernel})" for s in self.steps)
        return f"{self.us_per_image:.0f} us per image = {parts}"

    def to_json(self) -> dict[str, Any]:
        return {
            "us_per_image": round(self.us_per_image, 1),
            "images_per_s": round(self.images_per_s, 1),
            "cores": self.cores,
            "images": self.images,
            "all_cores_images_per_s": None if self.all_cores_images_per_s is None else round(self.all_cores_images_per_s, 1),
            "steps": [{"step": s.name, "kernel": s.kernel, "us_per_image": round(s.us_per_image, 1),
                       "candidates": {k: round(v, 1) for k, v in s.candidates.items()}} for s in self.steps],
        }


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _timed(kernel: Callable[[int, Any], Any], inputs: Sequence[Any], repeats: int) -> float:
    """The fastest of ``repeats`` warm passes of ``kernel(i, input)`` over ``inputs``: us per input."""
    for i, x in enumerate(inputs):  # warm-up: caches, lazily built tables, allocator pools
        kernel(i, x)
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        for i, x in enumerate(inputs):
            kernel(i, x)
        best = min(best, time.thread_time() - start)
    return best / len(inputs) * 1e6


def _all_cores(make_chain: Callable[[], Callable[[int, Any], Any]], inputs: Sequence[Any], cores: int,
               passes: int) -> float:
    """Images/s of ``cores`` threads each running its own ``make_chain()`` over ``inputs`` at once: one
    warm pass, then ``passes`` timed passes, from a shared start to the last thread's end."""
    import threading

    chains = [make_chain() for _ in range(cores)]
    ready = threading.Barrier(cores + 1)
    errors: list[BaseException] = []

    def work(chain: Callable[[int, Any], Any]) -> None:
        try:
            for i, x in enumerate(inputs):
                chain(i, x)
        except BaseException as error:  # noqa: BLE001 - reported by the caller
            errors.append(error)
        ready.wait()
        try:
            for _ in range(0 if errors else passes):
                for i, x in enumerate(inputs):
                    chain(i, x)
        except BaseException as error:  # noqa: BLE001 - reported by the caller
            errors.append(error)

    threads = [threading.Thread(target=work, args=(chain,), name=f"minddata-floor-{k}") for k, chain in enumerate(chains)]
    for t in threads:
        t.start()
    ready.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if errors:
        raise errors[0]
    return cores * passes * len(inputs) / seconds


def _step(name: str, candidates: dict[str, Callable[[int, Any], Any]], inputs: Sequence[Any],
          repeats: int) -> Step:
    costs = {kernel: _timed(fn, inputs, repeats) for kernel, fn in candidates.items()}
    fastest = min(costs, key=costs.__getitem__)
    return Step(name, fastest, costs[fastest], costs)


def _read_candidates() -> dict[str, Callable[[int, Any], Any]]:
    def read_bytes(i: int, path: Path) -> np.ndarray:
        return np.frombuffer(path.read_bytes(), np.uint8)

    from minddata.ops.file_bytes import read_file

    return {"np.fromfile": lambda i, path: np.fromfile(path, np.uint8), "read_bytes": read_bytes,
            "read_file (minddata)": lambda i, path: read_file(path)}


def _decode_candidates() -> dict[str, Callable[[int, Any], Any]]:
    import cv2
    from PIL import Image

    from minddata.ops.cpu import jpeg

    def pillow(i: int, data: np.ndarray) -> np.ndarray:
        import io

        with Image.open(io.BytesIO(data.tobytes())) as im:
            return np.asarray(im.convert("RGB"))

    candidates: dict[str, Callable[[int, Any], Any]] = {}
    if jpeg.AVAILABLE:
        candidates["libjpeg-turbo (minddata)"] = lambda i, data: jpeg.decode(data)
    if hasattr(cv2, "IMREAD_COLOR_RGB"):  # OpenCV >= 4.10 decodes straight to RGB
        candidates["cv2.imdecode"] = lambda i, data: cv2.imdecode(data, cv2.IMREAD_COLOR_RGB)
    else:
        candidates["cv2.imdecode+cvtColor"] = lambda i, data: cv2.cvtColor(
            cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    candidates["Pillow"] = pillow
    return candidates


def _normalize_candidates(out: np.ndarray, mean: Sequence[float], std: Sequence[float]) -> dict[str, Callable[[int, Any], Any]]:
    """HWC uint8 -> normalized float32 CHW, written into one slot of a preallocated batch (returned)."""
    import cv2

    from minddata.ops.cpu.normalize import normalize_into

    mean = np.asarray(mean, np.float32)
    std = np.asarray(std, np.float32)
    # The 256 float32 results of (v - mean) / std per channel, with the Normalize kernel's float32
    # arithmetic: a lookup gives exactly the same floats.
    values = np.arange(256, dtype=np.float32)
    luts = [((values - mean[c]) / std[c]).astype(np.float32).reshape(256, 1) for c in range(3)]

    def ours(i: int, image: np.ndarray) -> np.ndarray:
        slot = out[i % len(out)]
        normalize_into(image, mean, std, slot, True)
        return slot

    def lookup(i: int, image: np.ndarray) -> np.ndarray:
        slot = out[i % len(out)]
        for c, plane in enumerate(cv2.split(image)):
            cv2.LUT(plane, luts[c], dst=slot[c])
        return slot

    return {"normalize_into (minddata)": ours, "cv2.LUT per plane": lookup}


def _decodable(files: Sequence[Path]) -> list[Path]:
    """The files that decode (a bench over a user's folder skips bad images; so does its floor)."""
    from minddata.ops.cpu import jpeg

    good = []
    for path in files:
        try:
            jpeg.decode(np.fromfile(path, np.uint8))
        except Exception:  # noqa: BLE001 - any failure to decode leaves the file out
            continue
        good.append(path)
    return good


def _chain(inputs: Sequence[Any], fn: Callable[[int, Any], Any]) -> list[Any]:
    return [fn(i, x) for i, x in enumerate(inputs)]


def fastest_of(first: Floor, second: Floor) -> Floor:
    """Two measurements of one pipeline's floor as one: each candidate kernel at its faster time, each
    step at its fastest candidate, the all-cores run at its faster rate. On a shared machine noise
    only ever slows a kernel down, so the faster time is the better estimate of its cost.

    >>> a = Floor("p", (Step("decode", "x", 1000.0, {"x": 1000.0, "y": 1100.0}),), cores=2, images=10)
    >>> b = Floor("p", (Step("decode", "y", 1050.0, {"x": 1200.0, "y": 1050.0}),), cores=2, images=10,
    ...           all_cores_images_per_s=1500.0)
    >>> f = fastest_of(a, b)
    >>> f.steps[0].kernel, f.steps[0].us_per_image, f.all_cores_images_per_s
    ('x', 1000.0, 1500.0)
    """
    if first.pipeline != second.pipeline or [s.name for s in first.steps] != [s.name for s in second.steps]:
        raise ValueError(f"fastest_of: the floors of {first.pipeline!r} and {second.pipeline!r} do not have the same steps")
    steps = []
    for a, b in zip(first.steps, second.steps):
        candidates = {k: min(v, b.candidates.get(k, v)) for k, v in a.candidates.items()}
        candidates.update({k: v for k, v in b.candidates.items() if k not in candidates})
        if candidates:
            kernel = min(candidates, key=candidates.__getitem__)
            steps.append(Step(a.name, kernel, candidates[kernel], candidates))
        else:
            steps.append(a if a.us_per_image <= b.us_per_image else b)
    rates = [r for r in (first.all_cores_images_per_s, second.all_cores_images_per_s) if r is not None]
    return Floor(first.pipeline, tuple(steps), first.cores, max(first.images, second.images),
                 max(rates) if rates else None)


def _op(ops: Sequence[Any], kind: str) -> Any:
    return next((op for op in ops if type(op).__name__ == kind), None)


def measure_floors(pipelines: Sequence[str], files: Sequence[Path], cores: int | None = None,
                   repeats: int = 3) -> dict[str, Floor]:
    """Time each step of the standard ``pipelines`` over ``files`` (JPEGs) and return their floors. The
    steps' parameters are the pipelines' own ops (:func:`minddata.bench.pipelines.make_ops`); reading
    and a full decode, which several pipelines share, are timed once."""
    for name in pipelines:
        if name not in FLOOR_PIPELINES:
            raise ValueError(f"measure_floor: pipeline must be one of {list(FLOOR_PIPELINES)}. Found: {name!r}")
    given = len(files)
    files = _decodable(files)
    if not files:
        raise ValueError(f"measure_floor: none of the {given} files given decodes as a JPEG; the floor times JPEG "
                         "kernels: give a folder of JPEGs (--data).")
    from minddata.ops import kernel_threads

    release = kernel_threads.hold()  # OpenCV at one thread, as while a pipeline runs
    try:
        shared: dict[str, Any] = {"read": _step("read", _read_candidates(), files, repeats), "files": files,
                                  "encoded": _chain(files, lambda i, path: np.fromfile(path, np.uint8))}
        return {name: _measure(name, shared, repeats, cores or usable_cores(), len(files)) for name in pipelines}
    finally:
        release()


def measure_floor(pipeline: str, files: Sequence[Path], cores: int | None = None, repeats: int = 3) -> Floor:
    """Time each step of standard pipeline ``pipeline`` over ``files`` (JPEGs) and return its floor."""
    return measure_floors([pipeline], files, cores, repeats)[pipeline]


def _measure(pipeline: str, shared: dict[str, Any], repeats: int, cores: int, count: int) -> Floor:
    import cv2

    from minddata.bench.pipelines import make_ops
    from minddata.ops.base import KernelContext
    from minddata.ops.cpu.crop import center_crop
    from minddata.ops.cpu.flip import random_horizontal_flip
    from minddata.ops.cpu.fused import decode_random_resized_crop
    from minddata.ops.plans.flip import flips as flips_row
    from minddata.ops.plans.resize import resize_output_size

    ops = make_ops(pipeline)
    known = {"Decode", "RandomResizedCrop", "RandomHorizontalFlip", "Resize", "CenterCrop", "Normalize", "HWC2CHW"}
    unknown = [type(op).__name__ for op in ops if type(op).__name__ not in known]
    if unknown:
        raise ValueError(f"measure_floor: {pipeline} has ops the floor has no kernels for: {unknown}; add their "
                         "candidates to minddata.bench.floor")
    encoded = shared["encoded"]
    steps: list[Step] = [shared["read"]]
    crop = _op(ops, "RandomResizedCrop")
    if crop is not None:
        fused = {"crop-decode + resize (minddata)":
                 lambda i, data: decode_random_resized_crop(crop, KernelContext(1, 0, i, 1), data, "RandomResizedCrop")}
        steps.append(_step("crop-decode + resize", fused, encoded, repeats))
        images = _chain(encoded, fused["crop-decode + resize (minddata)"])
        decode_fn = fused["crop-decode + resize (minddata)"]
    else:
        if "decode" not in shared:
            decoders = _decode_candidates()
            shared["decode"] = _step("decode", decoders, encoded, repeats)
            shared["decoded"] = _chain(encoded, decoders[shared["decode"].kernel])
        steps.append(shared["decode"])
        images = shared["decoded"]
        decode_fn = _decode_candidates()[shared["decode"].kernel]
    chained: list[Callable[[int, Any], Any]] = [_read_candidates()[shared["read"].kernel], decode_fn]
    resize_op = _op(ops, "Resize")
    if resize_op is not None:
        # The output size as the pipeline's Resize computes it (MindSpore's rule for the short side).
        sizes = [resize_output_size(*image.shape[:2], resize_op.size) for image in images]
        resizes = {"cv2.resize": lambda i, image: cv2.resize(image, (sizes[i][1], sizes[i][0]),
                                                             interpolation=cv2.INTER_LINEAR)}
        steps.append(_step("resize", resizes, images, repeats))
        images = _chain(images, resizes["cv2.resize"])
        chained.append(resizes["cv2.resize"])
    center = _op(ops, "CenterCrop")
    if center is not None:
        crops = {"center crop (minddata)": lambda i, image: center_crop(center, KernelContext(1, 0, i, 1), image)}
        steps.append(_step("center crop", crops, images, repeats))
        images = _chain(images, crops["center crop (minddata)"])
        chained.append(crops["center crop (minddata)"])
    flip = _op(ops, "RandomHorizontalFlip")
    if flip is not None:
        # The same rows flipped as minddata's kernel flips (its per-row keyed draw, made here once).
        flipped = [flips_row(KernelContext(1, 0, i, 2).rng, flip.prob) for i in range(len(images))]
        flips = {"flip (minddata)": lambda i, image: random_horizontal_flip(flip, KernelContext(1, 0, i, 2), image),
                 "cv2.flip": lambda i, image: cv2.flip(image, 1) if flipped[i] else image}
        steps.append(_step("flip", flips, images, repeats))
        chained.append(flips[steps[-1].kernel])
    images = [np.ascontiguousarray(im) for im in images]
    normalize = _op(ops, "Normalize")
    height, width = images[0].shape[:2]
    batch = np.empty((8, 3, height, width), np.float32)  # slots reused, as a recycled batch buffer's are
    steps.append(_step("normalize into batch", _normalize_candidates(batch, normalize.mean, normalize.std), images,
                       repeats))
    fastest_normalize = steps[-1].kernel

    def make_chain() -> Callable[[int, Any], Any]:
        # A thread's own batch slots, as each pipeline worker fills its own batch's.
        own = np.empty_like(batch)
        normalize_fn = _normalize_candidates(own, normalize.mean, normalize.std)[fastest_normalize]

        def run(i: int, path: Any) -> Any:
            x = path
            for fn in chained:
                x = np.ascontiguousarray(fn(i, x))
            return normalize_fn(i, x)

        return run

    all_cores = _all_cores(make_chain, shared["files"], cores, repeats)
    return Floor(pipeline, tuple(steps), cores, count, all_cores)


def sample_files(data_dir: str | os.PathLike, images: int) -> list[Path]:
    """``images`` JPEGs of an image folder, spread evenly over it (so over its classes)."""
    from minddata.bench.images import list_images

    files = [p for p in list_images(Path(data_dir)) if p.suffix.lower() in (".jpg", ".jpeg")]
    return files[:: max(1, len(files) // max(images, 1))][:images]


def main(argv: Sequence[str] | None = None) -> int:
    from minddata.bench._args import OneLineParser, positive_int

    parser = OneLineParser(prog="python -m minddata.bench.floor", description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: the generated 2,000-image set)")
    parser.add_argument("--images", type=positive_int, default=200, help="images to time each kernel over (default 200)")
    parser.add_argument("--pipeline", action="append", choices=FLOOR_PIPELINES,
                        help="pipeline, repeatable (default: all)")
    args = parser.parse_args(argv)
    if args.data is None:
        from minddata.bench.images import ensure_images

        args.data, _ = ensure_images()
    if not Path(args.data).is_dir():
        parser.error(f"--data {args.data}: no such folder; give an image folder of class sub-folders")
    files = sample_files(args.data, args.images)
    cores = usable_cores()
    print(f"{len(files)} images from {args.data}; CPU microseconds per image, one thread, warm; {cores} cores")
    for name, floor in measure_floors(args.pipeline or FLOOR_PIPELINES, files, cores).items():
        print(f"{name:9s} floor {floor.images_per_s:7,.0f} img/s  ({floor.describe()})")
        print(f"{'':9s}   all {cores} cores at once: {floor.all_cores_images_per_s:,.0f} img/s")
        for step in floor.steps:
            if len(step.candidates) > 1:
                others = ", ".join(f"{k} {v:.0f}" for k, v in step.candidates.items())
                print(f"{'':9s}   {step.name}: {others}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
