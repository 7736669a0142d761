"""engine/compiler.py on its own: from a small graph of plan nodes to the stages of one run."""

from __future__ import annotations

import numpy as np
import pytest

from minddata.engine import ir
from minddata.engine.compiler import Planner, compile_plan, number_nodes, plan_tree
from minddata.engine.runtime import Runtime
from minddata.errors import GraphError


def _range(n=10):
    return ir.IterableSourceNode(name="Range", column_names=["x"], open_iter=lambda pass_index: iter(range(n)),
                                 to_row=lambda item, position: (np.int64(item),), size=lambda: n)


def _map(child, fn, input_columns=("x",), output_columns=None):
    return ir.MapNode(child, [fn], list(input_columns), output_columns, 1, False)


def _add_one(x):
    return x + 1


def _times_ten(x):
    return x * 10


def _values(root, seed=1):
    rt = Runtime(seed=seed, error_mode="raise")
    try:
        return [int(row[0]) for chunk in compile_plan(root, rt).run() for row in chunk.rows]
    finally:
        rt.close()


def test_a_compiled_graph_runs_its_maps_in_order():
    assert _values(_map(_map(_range(), _add_one), _times_ten)) == [10 * (k + 1) for k in range(10)]


def test_compiling_starts_no_thread():
    rt = Runtime(seed=1, error_mode="raise")
    try:
        stage = compile_plan(_map(_range(), _add_one), rt)
        assert rt.alive_threads() == []
        assert [int(row[0]) for chunk in stage.run() for row in chunk.rows] == list(range(1, 11))
    finally:
        rt.close()
    assert rt.alive_threads() == []


def test_a_map_reading_a_missing_column_fails_to_compile_naming_it():
    rt = Runtime(seed=1, error_mode="raise")
    with pytest.raises(GraphError, match="label"):
        compile_plan(_map(_range(), _add_one, input_columns=["label"]), rt)
    rt.close()


def test_fusion_merges_adjacent_maps_and_keeps_each_ops_position():
    root = _map(_map(_range(), _add_one), _times_ten)
    fused = plan_tree(root, fusion=True)
    unfused = plan_tree(root, fusion=False)
    assert [n.name for n in fused.walk()] == ["Map", "Range"]
    assert [n.name for n in unfused.walk()] == ["Map", "Map", "Range"]
    # Random ops draw from their position's stream: fusing must not renumber them.
    assert fused.op_positions == [0, 1]
    assert [n.op_positions for n in unfused.walk() if n.name == "Map"] == [[1], [0]]


def test_fused_and_unfused_plans_give_the_same_rows():
    root = _map(_map(_range(), _add_one), _times_ten)
    rows = {}
    for fusion in (True, False):
        rt = Runtime(seed=1, error_mode="raise")
        tree = plan_tree(root, fusion=fusion)
        rows[fusion] = [int(r[0]) for chunk in Planner(rt).build(tree).run() for r in chunk.rows]
        rt.close()
    assert rows[True] == rows[False]


def test_nodes_are_numbered_children_first():
    tree = plan_tree(ir.TakeNode(ir.ShuffleNode(_range(), 4), 3))
    assert number_nodes(tree) == {(0, 0): 1, (0,): 2, (): 3}


def test_a_shuffle_is_keyed_by_the_seed():
    root = ir.ShuffleNode(_range(40), 8)
    first = _values(root, seed=5)
    assert sorted(first) == list(range(40))
    assert _values(root, seed=5) == first
    assert _values(root, seed=6) != first
