"""The consumer's side: a segment's rows, one Ray execution per pass, fed to the local tail."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import closing
from typing import TYPE_CHECKING, Any

from minddata.engine.chunk import Chunk, Chunks
from minddata.engine.ray_executor.codec import ID, frame_rows, origins_of, take_notes
from minddata.engine.ray_executor.ray_import import require_ray, unwrap
from minddata.engine.runtime import Runtime
from minddata.engine.stages import Stage

if TYPE_CHECKING:
    from minddata.engine.ray_executor.split import RayPlan, Segment

__all__ = ["RaySegmentStage"]


def _blocks(ds: Any) -> Generator[Any, None, None]:
    """The execution's blocks (Arrow tables) in order, each as soon as its task is done.

    ``iter_batches`` yields a block only once the block ``prefetch_batches`` after it is done too: on
    a 2-CPU cluster the first rows reached the consumer 1.1 s into a 2.2 s pass instead of 0.6 s, and
    its work was left for the end of the pass, when the workers are idle. A block of another node is
    fetched when the consumer reaches it; the tasks go on meanwhile.
    """
    ray = require_ray()
    for bundle in ds.iter_internal_ref_bundles():
        for ref in bundle.block_refs:
            yield ray.get(ref)


class RaySegmentStage(Stage):
    """The consumer's source for a segment: one Ray execution per pass, rows in pass order.

    In a profiled run its own time is waiting on Ray; the profiler's stage table gets one parallel
    stage per Ray operator instead (:meth:`profile_entries`), from Ray Data's per-operator stats.
    """

    fast_skip = True
    profile_internal = True

    def __init__(self, rt: Runtime, plan: RayPlan, segment: Segment):
        super().__init__(rt, [], segment.label)
        self.plan = plan
        self.segment = segment
        # Ray operator name -> summed stats over the passes run so far (see _record_stats).
        self.operator_stats: dict[str, dict[str, float]] = {}
        # Rows stay read-only views of the blocks when the consumer copies them anyway (Segment's).
        self.consumer_copies_rows = segment.consumer_copies_rows

    def _run(self, pass_index: int, skip: int = 0) -> Chunks:
        ds = self.plan.segment_dataset(self.segment, self.rt.seed, pass_index, skip, shard_seed=self.rt.shard_seed,
                                       options=self.rt.options)
        batches = _blocks(ds)
        try:
            with closing(batches):
                for table in batches:
                    self.rt.check()
                    table = take_notes(table, self.rt.errors)
                    if len(table):
                        rows = frame_rows(table, copy=not self.consumer_copies_rows)
                        yield Chunk(rows, table.column(ID).to_pylist(), origins_of(table))
        except Exception as error:  # noqa: BLE001 - re-raised, unwrapped from Ray's wrappers
            inner = unwrap(error)
            if inner is error:
                raise
            raise inner from error
        if self.prof is not None:
            self._record_stats(ds)

    def _record_stats(self, ds: Any) -> None:
        try:
            operators = ds._get_stats_summary().operators_stats
        except Exception:  # noqa: BLE001 - stats are best effort; the rows are what matters
            return
        for op in operators:
            total = self.operator_stats.setdefault(
                op.operator_name, {"wall": 0.0, "cpu": 0.0, "rows": 0, "tasks": 0, "span": 0.0}
            )
            total["wall"] += op.wall_time.sum if op.wall_time else 0.0
            total["cpu"] += op.cpu_time.sum if op.cpu_time else 0.0
            total["rows"] += int(op.output_num_rows.sum) if op.output_num_rows else 0
            total["tasks"] += int(op.wall_time.count) if op.wall_time else 0
            if op.earliest_start_time is not None and op.latest_end_time is not None:
                total["span"] += max(0.0, op.latest_end_time - op.earliest_start_time)

    def display_name(self, operator: str) -> str:
        """A Ray operator's name in the plan's words: ``ReadX->MapBatches(Map_f_)`` → ``X → Map[f]``."""
        names = self.segment.operator_labels
        parts = []
        for part in operator.split("->"):
            if part.startswith("Read"):
                parts.append(part[len("Read"):])
            elif part.startswith("MapBatches(") and part.endswith(")"):
                inner = part[len("MapBatches("):-1]
                parts.append(names.get(inner, inner))
            else:
                parts.append(part)
        return "Ray " + " → ".join(parts)

    def profile_entries(self, first_index: int, parent: int, t0: float) -> list[dict[str, Any]]:
        """Stage-table entries for the Ray operators: each a parallel stage whose workers are the
        cluster's CPUs, busy for the operator's summed task time over its span."""
        cpus = max(1, int(_cluster_cpus()))
        entries = []
        for k, (operator, stats) in enumerate(self.operator_stats.items()):
            span = max(stats["span"], 1e-9)
            workers = [
                {"name": f"ray-cpu-{i}", "start": 0.0, "end": span, "work": stats["wall"] / cpus,
                 "cpu": stats["cpu"] / cpus, "slot_wait": 0.0, "input_wait": 0.0,
                 "chunks": stats["tasks"] / cpus, "rows": stats["rows"] / cpus}
                for i in range(cpus)
            ]
            entries.append({
                "index": first_index + k, "parent": parent, "label": operator, "name": self.display_name(operator),
                "internal": False, "kind": "parallel", "inclusive": stats["wall"], "rows_out": int(stats["rows"]),
                "chunks_out": int(stats["tasks"]), "chunk_bytes": 0.0, "node_type": "RayOperator",
                "python_ops": False, "workers_now": cpus, "slots_now": cpus, "autotune": False,
                "process_workers": True, "workers": workers,
            })
        return entries


def _cluster_cpus() -> float:
    import ray

    try:
        return float(ray.cluster_resources().get("CPU", 1))
    except Exception:  # noqa: BLE001 - not connected any more: one CPU is the safe guess
        return 1.0

