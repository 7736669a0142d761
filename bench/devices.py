"""Preprocessing on CPU vs Dvpp vs GPU: throughput and the CPU time each image costs.

The shape of MindSpore's Dvpp experiment (YOLOv3 inference preprocessing on Ascend 310, reported as
+129% images/s for Dvpp over the CPU): ``Decode → Resize((416, 416)) → Normalize → HWC2CHW`` over a
generated COCO-like set (default 2,000 JPEGs around 640x480, some portrait, 10% progressive, 10%
grayscale), run with each device placement:

========= ===================================================================================
CPU       every op on the CPU (with the CPU's fusions: reduced-DCT-scale decode)
Dvpp      Decode and Resize on the media engine (one fused decode-resize op, as MindSpore's
          ``DvppDecodeResizeJpeg``), Normalize and HWC2CHW on the CPU (into the batch buffer)
GPU       every op on the GPU, one DALI pipeline (decode on the ``mixed`` backend)
========= ===================================================================================

Reported per run: images/s (and the ratio to the CPU run of the same pipeline, measured in the same
process: DESIGN.md §6), CPU-seconds per image (every thread of the process: workers, DALI's threads,
the consumer; the point of offload is to free the CPU), rows moved between devices and rows a device
sent back to the CPU. A device this machine lacks is reported as skipped, with the reason.

``--pipelines train,infer224,yolo416`` runs the three standard pipelines instead (bench/pipelines.py)
with the same placements (ops a device can't run stay on the CPU). ``--dvpp-driver reference`` and
``--gpu-emulation`` run the Dvpp reference model and DALI's CPU backend: previews of the output, not
speed-ups, useful to check that the script runs.

Examples:
    $ python -m minddata.bench.devices --num-images 2000 --workers 8 --json devices.json
    $ python -m minddata.bench.devices --num-images 64 --dvpp-driver reference --gpu-emulation  # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["DeviceRun", "main", "run", "yolo_ops"]

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]
DEVICES = ("CPU", "Dvpp", "GPU")
# Ops each device takes in these benchmarks; the rest of a pipeline stays on the CPU. Dvpp gets what
# DVPP runs (decode and resize/crop); the GPU everything it has a kernel for.
_DVPP_OPS = ("Decode", "Resize", "CenterCrop", "Crop", "RandomResizedCrop")


@dataclass
class DeviceRun:
    """One pipeline on one placement."""

    pipeline: str
    device: str
    driver: str = ""  # Dvpp: nvjpg/ascend/reference; GPU: cuda/dali-cpu (previews are marked)
    images: int = 0
    seconds: float = float("nan")
    images_per_s: float = float("nan")
    cpu_seconds: float = float("nan")
    cpu_ms_per_image: float = float("nan")
    vs_cpu: float = float("nan")
    placement: str = ""
    transfers: dict[str, int] = field(default_factory=dict)
    cpu_rows: dict[str, int] = field(default_factory=dict)
    skipped: str = ""
    # The run raised: its type and first line (the table shows it; the other runs still happen).
    failed: str = ""


def yolo_ops(vision: Any) -> list[Any]:
    """YOLOv3's inference preprocessing, as MindSpore's model zoo writes it."""
    return [vision.Decode(), vision.Resize((416, 416)), vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()]


def _ops(pipeline: str) -> list[Any]:
    from minddata import vision

    if pipeline == "yolov3":
        return yolo_ops(vision)
    from minddata.bench.pipelines import make_ops

    return make_ops(pipeline)


def _place(ops: list[Any], device: str) -> list[Any]:
    from minddata.engine.placement import cannot_run

    if device == "CPU":
        return ops
    prev = None
    for op in ops:
        wanted = device == "GPU" or op.name in _DVPP_OPS
        op.device(device if wanted and cannot_run(op, device, prev) is None else "CPU")
        prev = op
    return ops


def _driver(device: str) -> tuple[str, str]:
    """(driver, why absent) of ``device`` here."""
    from minddata.ops import probe

    if device == "GPU":
        backend, why = probe.gpu_backend()
        return (backend, "") if backend else ("", why)
    if device == "Dvpp":
        driver, why = probe.dvpp_driver()
        return (driver, "") if driver else ("", why)
    return "", ""


def run(pipeline: str, device: str, data_dir: str | os.PathLike, *, workers: int, batch_size: int) -> DeviceRun:
    """Iterate ``pipeline`` once over ``data_dir`` with ``device``'s placement and measure it."""
    import minddata as md

    result = DeviceRun(pipeline, device)
    result.driver, why = _driver(device)
    if why:
        result.skipped = why
        return result
    ops = _place(_ops(pipeline), device)
    result.placement = ", ".join(f"{op.name}:{op.device_target}" for op in ops)
    t0, c0 = time.perf_counter(), time.process_time()
    ds = md.ImageFolderDataset(os.fspath(data_dir), shuffle=False, num_parallel_workers=workers)
    ds = ds.map(ops, input_columns="image", num_parallel_workers=workers).batch(batch_size)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    try:
        for batch in it:
            result.images += int(batch["image"].shape[0])
        result.seconds = time.perf_counter() - t0
        result.cpu_seconds = time.process_time() - c0
        result.transfers = dict(it.device_stats.transfers)
        result.cpu_rows = dict(it.device_stats.cpu_rows)
    finally:
        it.close()
    result.images_per_s = result.images / result.seconds
    result.cpu_ms_per_image = 1000.0 * result.cpu_seconds / max(1, result.images)
    return result


def _fmt(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}" if x == x else "n/a"


def table(results: list[DeviceRun]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| pipeline | device | images | images/s | vs CPU | CPU ms/image | CPU saved | moved | rows on CPU |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    cpu = {r.pipeline: r for r in results if r.device == "CPU" and not r.skipped and not r.failed}
    for r in results:
        if r.skipped or r.failed:
            what = f"skipped: {r.skipped}" if r.skipped else f"FAILED: {r.failed}"
            lines.append(f"| {r.pipeline} | {r.device} | {what} | | | | | | |")
            continue
        base = cpu.get(r.pipeline)
        ratio = f"{r.images_per_s / base.images_per_s:.2f}x ({100 * (r.images_per_s / base.images_per_s - 1):+.0f}%)" \
            if base and r is not base else ""
        saved = f"{100 * (1 - r.cpu_ms_per_image / base.cpu_ms_per_image):.0f}%" if base and r is not base else ""
        moved = ", ".join(f"{k} {v}" for k, v in sorted(r.transfers.items()))
        fallback = ", ".join(f"{k} {v}" for k, v in sorted(r.cpu_rows.items()))
        name = f"{r.device} ({r.driver})" if r.driver else r.device
        if r.driver in ("reference", "dali-cpu", "torch-cpu"):
            name += " preview"
        lines.append(
            f"| {r.pipeline} | {name} | {r.images} | {_fmt(r.images_per_s)} | {ratio} | "
            f"{_fmt(r.cpu_ms_per_image, 2)} | {saved} | {moved} | {fallback} |"
        )
    return "\n".join(lines)


def _machine() -> str:
    import minddata as md

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    found = md.devices()
    parts = [f"{platform.node()}: {cores} usable cores"]
    for d in found[1:]:
        parts.append(f"{d.name} {'present' if d.present else 'absent'} ({d.detail})")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.devices", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="image folder (<class>/<image>); default: a generated COCO-like set")
    parser.add_argument("--num-images", type=int, default=2000, help="size of the generated set (default 2000)")
    parser.add_argument("--pipelines", default="yolov3",
                        help="comma-separated: yolov3 (default), train, infer224, yolo416")
    parser.add_argument("--devices", default=",".join(DEVICES), help="comma-separated, of CPU, Dvpp, GPU")
    parser.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--dvpp-driver", choices=("auto", "nvjpg", "ascend", "reference"), default="auto")
    parser.add_argument("--dvpp-policy", choices=("error", "cpu"), default="cpu",
                        help="rows the engine refuses (progressive JPEGs on DVPP) run on the CPU (default)")
    parser.add_argument("--gpu-emulation", action="store_true", help="run GPU ops on DALI's CPU backend (a smoke run)")
    parser.add_argument("--json", help="also write the results as JSON here")
    parser.add_argument("--markdown", help="also write the table (with the machine) as Markdown here")
    args = parser.parse_args(argv)

    import minddata as md
    from minddata.bench import images

    md.config.set_dvpp_driver(args.dvpp_driver)
    md.config.set_dvpp_policy(args.dvpp_policy)
    md.config.set_gpu_emulation(args.gpu_emulation)
    if args.data:
        data_dir = Path(args.data)
        source = f"{data_dir}"
    else:
        print(f"preparing {args.num_images} COCO-like JPEGs (~640x480; made once, then cached) ...", flush=True)
        data_dir, _ = images.ensure_images(num_images=args.num_images, num_classes=min(10, args.num_images),
                                           size=(640, 480))
        source = f"{args.num_images} generated COCO-like JPEGs in {data_dir}"
    machine = _machine()
    print(f"data:    {source}\nmachine: {machine}\nsettings: {args.workers} workers, batch {args.batch_size}, "
          f"dvpp driver {args.dvpp_driver}, dvpp policy {args.dvpp_policy}", flush=True)
    results = []
    for pipeline in args.pipelines.split(","):
        for device in args.devices.split(","):
            print(f"running {pipeline} on {device} ...", flush=True)
            # Settings are read per iterator: re-apply so a pipeline can't leak into the next.
            md.config.set_dvpp_driver(args.dvpp_driver)
            md.config.set_dvpp_policy(args.dvpp_policy)
            md.config.set_gpu_emulation(args.gpu_emulation)
            results.append(_run_reporting(pipeline.strip(), device.strip(), data_dir, args))
            # Written after every run: a later crash or a timeout still leaves the table so far.
            _write(results, args, machine, source)
    print()
    print(table(results))
    return 1 if any(r.failed for r in results) else 0


def _run_reporting(pipeline: str, device: str, data_dir: Path, args: argparse.Namespace) -> DeviceRun:
    """``run``, with a failure recorded in the result (and its traceback printed) instead of raised."""
    import traceback

    try:
        return run(pipeline, device, data_dir, workers=args.workers, batch_size=args.batch_size)
    except Exception as error:  # one placement failing must not lose the others' results
        traceback.print_exc()
        first = str(error).strip().splitlines()
        return DeviceRun(pipeline, device, failed=f"{type(error).__name__}: {first[0][:200] if first else ''}")


def _write(results: list[DeviceRun], args: argparse.Namespace, machine: str, source: str) -> None:
    text = table(results)
    if args.json:
        payload = {"machine": machine, "data": source, "workers": args.workers, "batch_size": args.batch_size,
                   "dvpp_driver": args.dvpp_driver, "results": [asdict(r) for r in results]}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(f"machine: {machine}\n\ndata: {source}; {args.workers} workers, batch "
                                       f"{args.batch_size}\n\n{text}\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
