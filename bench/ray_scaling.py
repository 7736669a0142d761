"""Ray executor scaling: the train pipeline's images/s locally and on Ray, Ray's per-block overhead,
and an estimate for 8 and 64 nodes.

In one run, on one machine and one image set:

1. the ``train`` pipeline (Decode → RandomResizedCrop(224) → RandomHorizontalFlip → Normalize →
   HWC2CHW, batch) on the local executor with ``--workers`` workers, in rounds alternating with
2. the same pipeline with ``executor="ray"`` on a local Ray cluster of 2 CPUs (bound to 127.0.0.1),
   then on a cluster of 1 CPU;
3. Ray's fixed cost per block: an identity map over tiny rows cut into many small read tasks and
   into a few large ones; the difference in time over the difference in blocks;
4. the consumer's cost per image (unpacking a 224x224 row from a block, batching it with Normalize),
   which bounds one consumer process whatever the cluster size;
5. a written estimate for 8 and 64 nodes of ``--cores-per-node`` cores: per-core rate from the
   2-CPU Ray run, capped by the consumer (one driver; with ``streaming_split`` each trainer is one)
   and by the network into the consumer's node (``--network-gbps``).

Usage (on an idle machine; figures from a busy one are noise):
    python -m minddata.bench.ray_scaling [--num-images 2000] [--batch-size 64] [--workers 2] [--repeats 5]
        [--cores-per-node 32] [--network-gbps 25] [--json PATH]

Local and 2-CPU Ray epochs alternate for ``--repeats`` rounds (two epochs each; each Ray side on a
fresh cluster after :data:`RAY_WARMUP_EPOCHS` warm-up epochs, and no cluster up during the local
side), and the ratio is the median of the rounds' own ratios: the machine's drift moves both sides of
a round. The 1-CPU cluster runs its warm-up and 3 epochs of its own.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["ScalingResult", "main", "measure", "estimate"]

TRAIN_ROW_BYTES = 224 * 224 * 3  # a cropped uint8 image as it travels from the Ray tasks


@dataclass
class ScalingResult:
    images: int
    local_images_per_s: float
    ray_1cpu_images_per_s: float
    ray_2cpu_images_per_s: float
    ray_block_overhead_ms: float
    consumer_images_per_s: float
    ray_2cpu_vs_local: float  # the median of alternating rounds' ratios (Ray 2 CPUs / local)
    ray_2cpu_vs_local_rounds: list[float] = field(default_factory=list)  # each round's own ratio

    @property
    def ray_2cpu_vs_local_iqr(self) -> tuple[float, float]:
        """The interquartile range of the rounds' ratios (the spread the median hides).

        >>> r = ScalingResult(1, 1.0, 1.0, 1.0, 0.0, 1.0, 0.85, [0.63, 0.8, 0.85, 0.9, 0.95])
        >>> r.ray_2cpu_vs_local_iqr
        (0.8, 0.9)
        """
        return iqr(self.ray_2cpu_vs_local_rounds)


def _train_rate(data_dir: str, workers: int, batch_size: int, executor: str) -> float:
    from minddata.bench import runner

    result = runner.run("train", data_dir, workers=workers, batch_size=batch_size, epochs=1, profile=False,
                        executor=executor)
    return result.images_per_s


# Epochs a fresh Ray cluster runs before it is measured. Its first epoch starts the workers (imports);
# its second still ran at 75-80% of the later ones (first touches of the object store's and the
# workers' memory: 30,000 page faults per worker, against 10,000-15,000 from the fourth epoch on).
RAY_WARMUP_EPOCHS = 2


def _median_rate(data_dir: str, workers: int, batch_size: int, executor: str, repeats: int) -> float:
    """The median of ``repeats`` epochs after warm-up epochs (page cache, imports, Ray's workers)."""
    for _ in range(RAY_WARMUP_EPOCHS if executor == "ray" else 1):
        _train_rate(data_dir, workers, batch_size, executor)
    rates = sorted(_train_rate(data_dir, workers, batch_size, executor) for _ in range(repeats))
    return rates[len(rates) // 2]


def _ray_rate(cpus: int, data_dir: str, workers: int, batch_size: int, repeats: int) -> float:
    from minddata.bench.ray_cluster import init_local_cluster

    ray = init_local_cluster(cpus)
    try:
        return _median_rate(data_dir, workers, batch_size, "ray", repeats)
    finally:
        ray.shutdown()


def iqr(values: Sequence[float]) -> tuple[float, float]:
    """The first and third quartiles (``statistics.quantiles``, inclusive method); a single value twice.

    >>> iqr([1.0, 2.0, 3.0, 4.0, 5.0])
    (2.0, 4.0)
    """
    if not values:
        return (float("nan"), float("nan"))
    if len(values) == 1:
        return (values[0], values[0])
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return (q1, q3)


def _alternating_rates(data_dir: str, workers: int, batch_size: int,
                       repeats: int) -> tuple[float, float, float, list[float]]:
    """``repeats`` rounds of two local epochs, then two 2-CPU Ray epochs on a fresh cluster after its
    warm-up epochs: the medians of both rates and of the rounds' own ratios (and those ratios). The machine's drift moves
    both sides of a round. The cluster is down while the local epochs run: an idle Ray cluster took
    about 7% off the local rate here."""
    from minddata.bench.ray_cluster import init_local_cluster

    _train_rate(data_dir, workers, batch_size, "local")  # page cache, imports
    local, on_ray, ratios = [], [], []
    for _ in range(repeats):
        local_round = statistics.median(_train_rate(data_dir, workers, batch_size, "local") for _ in range(2))
        ray = init_local_cluster(2)
        try:
            for _ in range(RAY_WARMUP_EPOCHS):
                _train_rate(data_dir, workers, batch_size, "ray")
            ray_round = statistics.median(_train_rate(data_dir, workers, batch_size, "ray") for _ in range(2))
        finally:
            ray.shutdown()
        local.append(local_round)
        on_ray.append(ray_round)
        ratios.append(ray_round / max(local_round, 1e-9))
    return statistics.median(local), statistics.median(on_ray), statistics.median(ratios), ratios


def _block_overhead_ms(rows: int = 4096, small: int = 16, large: int = 1024) -> float:
    """Seconds per Ray block, in ms: the same rows in ``rows/small`` blocks and in ``rows/large``."""
    import minddata as md
    from minddata.bench.ray_cluster import init_local_cluster
    from minddata.engine.ray_executor import RayPlan

    ray = init_local_cluster(2)
    try:
        ds = md.NumpySlicesDataset({"x": np.arange(rows)}, shuffle=False).map(lambda x: x, input_columns="x")
        plan = RayPlan(ds._node)
        (segment,) = plan.segments.values()

        def timed(per_task: int) -> float:
            t0 = time.perf_counter()
            n = sum(b.num_rows for b in plan.segment_dataset(segment, 0, 0, rows_per_task=per_task)
                    .iter_batches(batch_size=None, batch_format="pyarrow"))
            assert n == rows, f"block overhead run lost rows: {n} of {rows}"
            return time.perf_counter() - t0

        timed(large)  # warm-up
        t_small, t_large = timed(small), timed(large)
        blocks = rows // small - rows // large
        return max(0.0, t_small - t_large) / blocks * 1e3
    finally:
        ray.shutdown()


def _consumer_rate(batch_size: int, rows: int = 1024) -> float:
    """Images/s one consumer can take: unpack each row from a block (as they arrive from Ray) and batch
    them with the train pipeline's Normalize + HWC2CHW (moved into the batch, as the optimizer does)."""
    import minddata as md
    from minddata import vision
    from minddata.engine.ray_executor.codec import pack_rows, unpack_rows

    rng = np.random.default_rng(0)
    block = pack_rows([(rng.integers(0, 256, (224, 224, 3), dtype=np.uint8), np.int32(0))
                        for _ in range(min(rows, 64))])
    t0 = time.perf_counter()
    unpacked = 0
    while unpacked < rows:
        unpacked += len(unpack_rows(block))
    unpack_s = (time.perf_counter() - t0) / unpacked
    images = [row[0] for row in unpack_rows(block)]
    ds = md.NumpySlicesDataset({"image": [images[i % len(images)] for i in range(rows)]}, shuffle=False)
    ds = ds.map([vision.Normalize([123.7, 116.3, 103.5], [58.4, 57.1, 57.4]), vision.HWC2CHW()],
                input_columns="image").batch(batch_size)

    def batch_seconds() -> float:
        t0 = time.perf_counter()
        n = sum(len(b[0]) for b in ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
        return (time.perf_counter() - t0) / n

    batch_seconds()  # warm-up: the pipeline's start-up is not a per-image cost
    return 1.0 / (unpack_s + min(batch_seconds() for _ in range(3)))


def measure(data_dir: str, images: int, workers: int, batch_size: int, repeats: int = 5) -> ScalingResult:
    local, ray2, ratio, ratios = _alternating_rates(data_dir, workers, batch_size, repeats)
    ray1 = _ray_rate(1, data_dir, workers, batch_size, 3)
    return ScalingResult(images, local, ray1, ray2, _block_overhead_ms(), _consumer_rate(batch_size), ratio, ratios)


def estimate(result: ScalingResult, cores_per_node: int, network_gbps: float) -> str:
    """The written estimate for 8 and 64 nodes, from the measured figures."""
    per_core = result.ray_2cpu_images_per_s / 2
    network_limit = network_gbps * 1e9 / 8 / TRAIN_ROW_BYTES
    lines = [
        f"per core on Ray: {per_core:,.0f} images/s (2-CPU run / 2; 1-CPU run: {result.ray_1cpu_images_per_s:,.0f})",
        f"one consumer (unpack + batch + normalize): {result.consumer_images_per_s:,.0f} images/s",
        f"network into one node at {network_gbps:g} Gbit/s: {network_limit:,.0f} images/s of 224x224x3 uint8",
        f"Ray per-block overhead: {result.ray_block_overhead_ms:.2f} ms (blocks of >= 64 images keep it "
        f"under {result.ray_block_overhead_ms / 64 * per_core / 1e3:.1%} of a core's time per image)",
    ]
    for nodes in (8, 64):
        compute = per_core * cores_per_node * nodes
        single = min(compute, result.consumer_images_per_s, network_limit)
        limit = min(
            (compute, "the cluster's cores"),
            (result.consumer_images_per_s, "the single consumer (the driver)"),
            (network_limit, "the network into the consumer's node"),
        )[1]
        lines.append(
            f"{nodes} nodes x {cores_per_node} cores: compute {compute:,.0f} images/s; one consumer gets "
            f"{single:,.0f} (limited by {limit}); with streaming_split across {nodes} trainers, one per node, "
            f"up to {min(compute, nodes * min(result.consumer_images_per_s, network_limit)):,.0f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.ray_scaling", description=__doc__.split("\n")[0])
    parser.add_argument("--num-images", type=positive_int, default=2000)
    parser.add_argument("--repeats", type=positive_int, default=5,
                        help="alternating rounds of local and 2-CPU Ray epochs (medians)")
    parser.add_argument("--data", help="image folder (default: generated ImageNet-like JPEGs, cached)")
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--workers", type=positive_int, default=2, help="local executor's workers (default 2)")
    parser.add_argument("--cores-per-node", type=positive_int, default=32)
    parser.add_argument("--network-gbps", type=float, default=25.0)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    from minddata.engine.ray_executor import require_ray

    try:
        ray = require_ray()
    except ImportError as exc:
        parser.error(str(exc))
    if ray.is_initialized():
        parser.error("Ray is already initialized in this process; this benchmark starts its own clusters")
    if args.data is not None:
        data_dir = os.fspath(args.data)
    else:
        from minddata.bench import images

        data_dir = os.fspath(images.ensure_images(num_images=args.num_images, num_classes=10)[0])
    result = measure(data_dir, args.num_images, args.workers, args.batch_size, args.repeats)
    print(f"train pipeline, {args.num_images} images, batch {args.batch_size}:")
    print(f"  local executor ({args.workers} workers): {result.local_images_per_s:,.0f} images/s")
    print(f"  Ray, 1 CPU:  {result.ray_1cpu_images_per_s:,.0f} images/s")
    print(f"  Ray, 2 CPUs: {result.ray_2cpu_images_per_s:,.0f} images/s "
          f"({result.ray_2cpu_vs_local:.0%} of local, median of {args.repeats} alternating rounds; target >= 85%)")
    low, high = result.ray_2cpu_vs_local_iqr
    rounds = ", ".join(f"{r:.0%}" for r in result.ray_2cpu_vs_local_rounds)
    print(f"  rounds' ratios: {rounds}; interquartile range {low:.0%}-{high:.0%}")
    print(estimate(result, args.cores_per_node, args.network_gbps))
    if args.json:
        payload: dict[str, Any] = asdict(result) | {"ray_2cpu_vs_local_iqr": list(result.ray_2cpu_vs_local_iqr)}
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
