"""Trainer benchmarks: the data stall of ``Model.train`` against a ``DataLoader`` loop, and the trainer's
own overhead against a hand-written loop.

``stall``: ResNet-18 (torchvision's, or minddata.trainer.nets' identical one) on the CPU, the standard train pipeline (Decode →
RandomResizedCrop(224) → RandomHorizontalFlip → Normalize → HWC2CHW) at batch 64 over a generated
image folder (or ``--data DIR``). minddata's ``Model.train`` in sink mode, measured by its own step
trace, against the same network and optimizer in a torch loop fed by ``torch.utils.data.DataLoader``
over torchvision's ``ImageFolder`` with its PIL transforms (an equivalent PIL implementation
without torchvision) and ``--loader-workers`` (default 2) workers,
measured around ``next()``. Both in the same run, same steps; reported: the share of step time spent
waiting for data (the stall) and steps/s. Target: lower stall and more steps/s than the DataLoader.

``overhead``: a tiny linear model on a fast in-memory pipeline (``NumpySlicesDataset`` batches).
``Model.train`` against a hand-written loop (``torch.from_numpy``, forward, backward, step) over the
same kind of iterator. Target: ``Model.train`` at most 5% slower (ratio >= 0.95).

Usage:
    python -m minddata.bench.trainer stall [--images 512] [--steps 20] [--batch 64] [--workers 2] [--width 64] [--json PATH]
    python -m minddata.bench.trainer overhead [--rows 65536] [--batch 64] [--epochs 3] [--rounds 9] [--json PATH]

Never run this as a test: figures from a busy machine are noise.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["StallResult", "OverheadResult", "run_stall", "run_overhead", "main"]

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


@dataclass
class StallResult:
    impl: str
    steps: int
    steps_per_s: float
    stall: float  # share of step time waiting for data (first step left out)
    mean_wait_ms: float
    mean_step_ms: float


@dataclass
class OverheadResult:
    impl: str
    steps: int
    steps_per_s: float
    seconds: float


@dataclass
class Report:
    benchmark: str
    machine: dict[str, Any]
    settings: dict[str, Any]
    results: list[Any] = field(default_factory=list)
    ratio: float | None = None


def _machine() -> dict[str, Any]:
    import torch

    return {"python": platform.python_version(), "torch": torch.__version__, "cores": os.cpu_count(),
            "platform": platform.platform(), "torch_threads": torch.get_num_threads()}


def _resnet18(classes: int, width: int) -> Any:
    from minddata.trainer.nets import resnet18

    return resnet18(classes, width)


class _PilImageFolder:
    """torchvision's ImageFolder + RandomResizedCrop/RandomHorizontalFlip/ToTensor/Normalize, in PIL
    and torch, for machines without torchvision (same sampling rule: scale (0.08, 1), ratio (3/4, 4/3))."""

    def __init__(self, folder: str, crop: int) -> None:
        from minddata.bench.images import list_images

        self.files = list_images(folder)
        names = sorted({f.parent.name for f in self.files})
        self.labels = [names.index(f.parent.name) for f in self.files]
        self.crop = crop

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        import math
        import random

        import torch
        from PIL import Image

        with Image.open(self.files[index]) as im:
            image = im.convert("RGB")
        width, height = image.size
        area = width * height
        box = (0, 0, width, height)
        for _ in range(10):
            target = area * random.uniform(0.08, 1.0)
            ratio = math.exp(random.uniform(math.log(3 / 4), math.log(4 / 3)))
            w, h = round(math.sqrt(target * ratio)), round(math.sqrt(target / ratio))
            if 0 < w <= width and 0 < h <= height:
                x, y = random.randint(0, width - w), random.randint(0, height - h)
                box = (x, y, x + w, y + h)
                break
        image = image.resize((self.crop, self.crop), Image.BILINEAR, box=box)
        if random.random() < 0.5:
            image = image.transpose(Image.FLIP_LEFT_RIGHT)
        tensor = torch.from_numpy(np.asarray(image, dtype=np.float32)).permute(2, 0, 1)
        mean = torch.tensor(MEAN).view(3, 1, 1)
        std = torch.tensor(STD).view(3, 1, 1)
        return (tensor - mean) / std, self.labels[index]


def _pil_dataset(folder: str, crop: int) -> Any:
    try:
        import torchvision
        from torchvision import transforms as T
    except ImportError:
        return _PilImageFolder(folder, crop)
    transform = T.Compose([T.RandomResizedCrop(crop), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])])
    return torchvision.datasets.ImageFolder(folder, transform=transform)


def _folder(args: Any) -> tuple[str, int]:
    from minddata.bench.images import ensure_images, list_images

    if args.data:
        folder = args.data
        list_images(folder)  # fails clearly on an empty or missing folder
    else:
        width, height = args.image_size
        folder, _ = ensure_images(num_images=args.images, num_classes=args.classes, size=(width, height),
                                  cache_dir=args.cache)
    classes = len([d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))])
    return str(folder), classes


def _minddata_stall(folder: str, classes: int, args: Any) -> StallResult:
    import torch

    import minddata as md
    from minddata import vision
    from minddata.trainer import Model

    torch.manual_seed(0)
    md.config.set_seed(0)
    net = _resnet18(classes, args.width)
    ds = md.ImageFolderDataset(folder, shuffle=True, num_parallel_workers=args.workers)
    ds = ds.map([vision.Decode(), vision.RandomResizedCrop(args.crop), vision.RandomHorizontalFlip(),
                 vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()],
                input_columns="image", num_parallel_workers=args.workers)
    ds = ds.batch(args.batch, drop_remainder=True)
    model = Model(net, torch.nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9),
                  device="cpu")
    with md.Profiler() as prof:
        model.train(1, ds, sink_size=args.steps)
    steps = prof.train_steps()
    return _stall("minddata Model.train (sink)", [s["data_wait"] for s in steps],
                  [sum(s[k] for k in ("data_wait", "h2d", "forward", "backward", "optimizer", "callbacks"))
                   for s in steps])


def _dataloader_stall(folder: str, classes: int, args: Any) -> StallResult:
    import torch

    torch.manual_seed(0)
    net = _resnet18(classes, args.width)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    data = _pil_dataset(folder, args.crop)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=True, drop_last=True,
                                         num_workers=args.loader_workers,
                                         persistent_workers=args.loader_workers > 0)
    waits, totals = [], []
    net.train()
    done = 0
    while done < args.steps:
        iterator = iter(loader)
        while done < args.steps:
            t0 = time.perf_counter()
            try:
                images, labels = next(iterator)
            except StopIteration:
                break
            t1 = time.perf_counter()
            loss = loss_fn(net(images), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            float(loss.detach())
            waits.append(t1 - t0)
            totals.append(time.perf_counter() - t0)
            done += 1
    return _stall(f"torch DataLoader ({args.loader_workers} workers, PIL)", waits, totals)


def _stall(impl: str, waits: list[float], totals: list[float]) -> StallResult:
    if not totals:
        raise SystemExit(f"bench.trainer: {impl} ran no step: the folder has fewer images than one batch")
    first = 1 if len(totals) > 1 else 0
    wait, total = sum(waits[first:]), sum(totals[first:])
    steady = len(totals) - first
    return StallResult(impl, len(totals), steady / total if total else 0.0, wait / total if total else 0.0,
                       wait / steady * 1e3, total / steady * 1e3)


def run_stall(args: Any) -> Report:
    folder, classes = _folder(args)
    report = Report("stall", _machine(), {"folder": folder, "batch": args.batch, "steps": args.steps,
                                          "workers": args.workers, "loader_workers": args.loader_workers,
                                          "crop": args.crop, "width": args.width})
    ours = _minddata_stall(folder, classes, args)
    theirs = _dataloader_stall(folder, classes, args)
    report.results = [ours, theirs]
    report.ratio = ours.steps_per_s / theirs.steps_per_s if theirs.steps_per_s else None
    return report


def run_overhead(args: Any) -> Report:
    import torch

    import minddata as md
    from minddata.trainer import Model

    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.rows, 32)).astype(np.float32)
    y = rng.integers(0, 10, size=args.rows).astype(np.int64)

    def dataset() -> Any:
        return md.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(args.batch, drop_remainder=True)

    def fresh() -> tuple[Any, Any]:
        torch.manual_seed(0)
        net = torch.nn.Linear(32, 10)
        return net, torch.optim.SGD(net.parameters(), lr=0.01)

    def model_train() -> tuple[int, float]:
        net, optimizer = fresh()
        model = Model(net, torch.nn.CrossEntropyLoss(), optimizer, device="cpu")
        t0 = time.perf_counter()
        model.train(args.epochs, dataset())
        seconds = time.perf_counter() - t0
        return args.epochs * (args.rows // args.batch), seconds

    def hand_loop() -> tuple[int, float]:
        net, optimizer = fresh()
        loss_fn = torch.nn.CrossEntropyLoss()
        steps = 0
        t0 = time.perf_counter()
        iterator = dataset().create_tuple_iterator(num_epochs=args.epochs, output_numpy=True)
        for _ in range(args.epochs):
            for xb, yb in iterator:
                loss = loss_fn(net(torch.from_numpy(xb)), torch.from_numpy(yb))
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                float(loss.detach())
                steps += 1
        iterator.close()
        return steps, time.perf_counter() - t0

    # Rounds alternate which runs first (the first run of a process pays for warm-up). The ratio is
    # the median of the rounds' ratios: each round's two runs are back to back, so a machine whose
    # speed drifts (a shared VM) moves both, where separate medians could pair a fast run with a slow one.
    ours: list[tuple[int, float]] = []
    loops: list[tuple[int, float]] = []
    for r in range(args.rounds):
        pair = (model_train, hand_loop) if r % 2 == 0 else (hand_loop, model_train)
        for fn in pair:
            (ours if fn is model_train else loops).append(fn())
    ratios = sorted((o_steps / o_s) / (h_steps / h_s) for (o_steps, o_s), (h_steps, h_s) in zip(ours, loops))
    ours_steps, ours_seconds = sorted(ours, key=lambda x: x[1])[len(ours) // 2]
    steps, loop_seconds = sorted(loops, key=lambda x: x[1])[len(loops) // 2]
    report = Report("overhead", _machine(), {"rows": args.rows, "batch": args.batch, "epochs": args.epochs,
                                             "rounds": args.rounds})
    report.results = [OverheadResult("minddata Model.train", ours_steps, ours_steps / ours_seconds, ours_seconds),
                      OverheadResult("hand-written torch loop", steps, steps / loop_seconds, loop_seconds)]
    report.ratio = ratios[len(ratios) // 2]
    return report


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"expected WIDTHxHEIGHT, found {text!r}") from None
    return width, height


def _print(report: Report) -> None:
    print(f"== trainer {report.benchmark}  ({report.machine['cores']} cores, torch {report.machine['torch']})")
    for r in report.results:
        if isinstance(r, StallResult):
            print(f"  {r.impl:<40} {r.steps_per_s:8.3f} steps/s  stall {r.stall:6.1%}  "
                  f"wait {r.mean_wait_ms:8.2f} ms  step {r.mean_step_ms:8.2f} ms")
        else:
            print(f"  {r.impl:<40} {r.steps_per_s:10.1f} steps/s  ({r.steps} steps in {r.seconds:.2f} s)")
    if report.ratio is not None:
        print(f"  ratio (minddata / peer steps/s): {report.ratio:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.trainer", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="benchmark", required=True)
    stall = sub.add_parser("stall", help="data stall: Model.train vs a DataLoader loop, ResNet-18 on the CPU")
    stall.add_argument("--data", help="an image folder (class sub-folders); default: generated images")
    stall.add_argument("--images", type=positive_int, default=512)
    stall.add_argument("--classes", type=positive_int, default=10)
    stall.add_argument("--image-size", type=_size, default=(500, 375), help="generated images, WIDTHxHEIGHT")
    stall.add_argument("--cache", help="where generated images are cached")
    stall.add_argument("--steps", type=positive_int, default=20)
    stall.add_argument("--batch", type=positive_int, default=64)
    stall.add_argument("--crop", type=positive_int, default=224)
    stall.add_argument("--width", type=positive_int, default=64,
                       help="ResNet-18's first-stage channels (64: ResNet-18 itself; 8: a narrow one whose "
                            "step the data pipeline can stall)")
    stall.add_argument("--workers", type=positive_int, default=2, help="minddata's workers per stage")
    stall.add_argument("--loader-workers", type=int, default=2, help="the DataLoader's worker processes")
    stall.add_argument("--json", help="also write the report as JSON")
    overhead = sub.add_parser("overhead", help="Model.train vs a hand-written loop, tiny model, in-memory data")
    overhead.add_argument("--rows", type=positive_int, default=65536)
    overhead.add_argument("--batch", type=positive_int, default=64)
    overhead.add_argument("--epochs", type=positive_int, default=3)
    overhead.add_argument("--rounds", type=positive_int, default=9,
                          help="alternating rounds of each; steps/s are the median runs, the ratio the median round's ratio (default 9)")
    overhead.add_argument("--json", help="also write the report as JSON")
    args = parser.parse_args(argv)
    report = run_stall(args) if args.benchmark == "stall" else run_overhead(args)
    _print(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(asdict(report), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
