"""Running a compiled plan on Ray Data (DESIGN.md §7): the same pipeline, on a cluster.

This is an executor over the plan the local engine runs (:func:`minddata.engine.compiler.plan_tree`,
after fusion and placement), not a second graph. Its parts, by concern:

* :mod:`~minddata.engine.ray_executor.split`: which nodes run on Ray (segments: a source and the
  per-row steps above it) and which in the consumer (the tail, built by the local compiler's
  :class:`~minddata.engine.compiler.Planner`, so both executors number the plan alike);
* :mod:`~minddata.engine.ray_executor.datasource`: read tasks, each reading its own rows (files,
  objects) inside the Ray worker;
* :mod:`~minddata.engine.ray_executor.actors`: the steps as ``map_batches`` tasks and actor pools,
  running the local engine's stages with the run's settings;
* :mod:`~minddata.engine.ray_executor.codec`: the blocks rows travel in, bit for bit;
* :mod:`~minddata.engine.ray_executor.stage`: the consumer's stage over a segment's Ray execution;
* here: :func:`to_ray`, a pipeline as a ``ray.data.Dataset``.

What cannot run distributed fails when the plan is built, naming the op and why. Ray is imported
lazily: without it, asking for the Ray executor raises an ImportError naming
``pip install 'minddata[ray]'``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata import config
from minddata.engine import ir
from minddata.engine.ray_executor.actors import Chain, Step, named_fn, op_name
from minddata.engine.ray_executor.codec import frame_rows, objects, take_notes
from minddata.engine.ray_executor.ray_import import RAY_INSTALL_HINT, require_ray
from minddata.engine.ray_executor.split import ROW_STEPS, RayPlan
from minddata.engine.runtime import ErrorStats
from minddata.errors import GraphError

__all__ = ["RayPlan", "require_ray", "to_ray", "RAY_INSTALL_HINT"]


def to_ray(root: ir.Node, columns: list[str]) -> Any:
    """A ``ray.data.Dataset`` of the pipeline's rows (one pass), with the pipeline's column names.

    The plan must be one segment, optionally ending in ``batch`` with a fixed ``batch_size``; read
    tasks then hold whole batches, so the batches are the local engine's. The settings are taken now
    (:func:`minddata.config.snapshot`) and travel with the dataset's tasks.
    """
    options = config.snapshot()
    plan = RayPlan(root, options=options)
    node: ir.Node = plan.tree
    path: tuple[int, ...] = ()
    batch, batch_size = None, 1
    if isinstance(node, ir.BatchNode) and path not in plan.segments:
        batch, node, path = node, node.children[0], (0,)
        if callable(batch.batch_size):
            raise GraphError(f"to_ray(): {batch.label} with a callable batch_size can't be cut into Ray read tasks.")
        batch_size = batch.batch_size
    segment = plan.segments.get(path)
    if segment is None:
        tail = _first_in_consumer(plan, node, path) or node
        raise GraphError(
            f"to_ray(): {tail.label} runs in the consumer, so it can't be part of a Ray dataset. Iterate with "
            "create_dict_iterator(executor='ray') instead, or apply it to the Ray dataset yourself."
        )
    # As an iterator's runtime: the set seed, else one from the OS; shards agree on config's seed.
    seed = options.seed if options.seed is not None else int.from_bytes(np.random.bytes(4), "little")
    shard_seed = options.seed if options.seed is not None else config.DEFAULT_SEED
    ds = plan.segment_dataset(segment, seed, 0, rows_multiple=batch_size, shard_seed=shard_seed)
    if batch is not None:
        collate = Chain([Step(batch, seed, plan.error_mode, 0, options)])
        ds = ds.map_batches(named_fn(collate, op_name(batch)), batch_format="pyarrow", batch_size=None)
    names = list(columns)
    return ds.map_batches(_Columns(names), batch_format="pyarrow", batch_size=None)


def _first_in_consumer(plan: RayPlan, node: ir.Node, path: tuple[int, ...]) -> ir.Node | None:
    """The first node at or under ``node`` (at ``path``) that runs in the consumer, not on Ray."""
    if path not in plan.segments:
        if not isinstance(node, ROW_STEPS):
            return node
        for k, child in enumerate(node.children):
            found = _first_in_consumer(plan, child, (*path, k))
            if found is not None:
                return found
    return None


class _Columns:
    """Internal blocks → the pipeline's columns (arrays stay arrays; Ray lays out tensor columns)."""

    def __init__(self, names: list[str]):
        self.names = names

    def __call__(self, table: Any) -> dict[str, Any]:
        rows = frame_rows(take_notes(table, ErrorStats()))
        out: dict[str, Any] = {}
        for k, name in enumerate(self.names):
            values = [np.asarray(row[k]) for row in rows]
            try:
                out[name] = np.stack(values) if values else np.empty(0)
            except ValueError:  # ragged: one array per row
                out[name] = objects(values)
        return out
