"""The compiler's planner: one numbering of plan nodes (number_nodes) that every executor builds with,
so random streams keyed by a node's position agree between the local and the Ray executor."""

from __future__ import annotations

import numpy as np

import minddata as md
from minddata.engine import ir
from minddata.engine.cache_stage import CacheNode
from minddata.engine.compiler import Planner, number_nodes, plan_tree
from minddata.engine.ray_executor import RayPlan
from minddata.engine.runtime import Runtime
from minddata.engine.stages import ShuffleStage


def _stages(stage):
    yield stage
    for child in stage.children:
        yield from _stages(child)


def test_nodes_are_numbered_in_post_order_by_path():
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False)
    tree = plan_tree(md.zip((ds, ds.skip(1).rename("x", "y")))._node)
    # A node feeding two consumers is numbered once per use.
    assert number_nodes(tree) == {(0,): 1, (1, 0, 0): 2, (1, 0): 3, (1,): 4, (): 5}


def test_a_cache_node_takes_no_position():
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False).shuffle(4)
    tree = plan_tree(ds._node)
    assert isinstance(tree, ir.ShuffleNode)
    cached = tree.with_children([CacheNode.over(tree.children[0], 1, 0, False, "test")])
    assert number_nodes(cached) == {(0, 0): 1, (): 2}
    assert number_nodes(tree) == {(0,): 1, (): 2}


def test_the_planner_keys_stages_by_the_numbering():
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False).shuffle(4).shuffle(3)
    tree = plan_tree(ds._node)
    rt = Runtime(seed=1, error_mode="raise")
    try:
        shuffles = [s for s in _stages(Planner(rt).build(tree)) if isinstance(s, ShuffleStage)]
    finally:
        rt.close()
    assert [s.position for s in shuffles] == [number_nodes(tree)[()], number_nodes(tree)[(0,)]] == [3, 2]


def test_a_substituted_stage_stands_for_its_subtree_and_the_nodes_above_keep_their_positions():
    ds = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False).shuffle(4).shuffle(3)
    tree = plan_tree(ds._node)
    rt = Runtime(seed=1, error_mode="raise")
    stand_in = Planner(rt).build(tree.children[0])
    asked = []

    def substitute(node, path):
        asked.append(path)
        return stand_in if path == (0,) else None

    try:
        top = Planner(rt, substitute=substitute).build(tree)
        assert asked == [(), (0,)]  # nothing under the substituted node is built
        assert top.children == [stand_in] and top.position == 3
        assert sorted(row[0].item() for chunk in top.run() for row in chunk.rows) == list(range(6))
    finally:
        rt.close()


def test_the_ray_plan_draws_the_local_row_order():
    # The driver plans a pass's rows with the compiler's own sampler and shuffle stages, at the
    # compiler's positions: the ids a Ray pass reads are the rows a local pass yields.
    md.config.set_seed(11)
    ds = md.NumpySlicesDataset({"x": np.arange(40)}, shuffle=True).shuffle(7).map(lambda x: x, input_columns="x")
    local = [int(row[0]) for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    (segment,) = RayPlan(ds._node).segments.values()
    rt = Runtime(seed=11, error_mode="raise", shard_seed=11)
    try:
        assert segment.pass_ids(rt, 0).tolist() == local
    finally:
        rt.close()
