"""Plan nodes are immutable: lowering derives a private plan and never changes the user's graph."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import minddata as md
from minddata import transforms, vision
from minddata.engine import ir
from minddata.engine.compiler import plan_tree


def fusable_pipeline() -> md.Dataset:
    """A graph that every rewrite touches: two maps to merge, Decode+RandomResizedCrop to fuse, a
    Normalize to move into the batch."""
    images = np.zeros((4, 16), dtype=np.uint8)
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False)
    ds = ds.map([vision.Decode(), vision.RandomResizedCrop(8)], input_columns=["image"])
    ds = ds.map(
        [vision.Normalize([0, 0, 0], [1, 1, 1]), transforms.TypeCast(np.float32)], input_columns=["image"]
    )
    return ds.batch(2)


def test_lowering_leaves_the_users_graph_as_built():
    ds = fusable_pipeline()
    before = [(node, list(getattr(node, "operations", []))) for node in ds._node.walk()]
    plan = plan_tree(ds._node, fusion=True)
    assert any(node.fusion_notes for node in plan.walk())
    for node, operations in before:
        assert node.fusion_notes == ()
        assert list(getattr(node, "operations", [])) == operations
        if isinstance(node, ir.MapNode):
            assert node.op_positions == [] and node.device_parts == () and not node.reads_source
        if isinstance(node, ir.BatchNode):
            assert node.epilogues == {}


def test_lowering_gives_each_use_of_a_shared_node_its_own_copy():
    ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False)
    plan = plan_tree(md.zip((ds, ds.rename(["x"], ["y"])))._node, fusion=True)
    sources = [node for node in plan.walk() if isinstance(node, ir.RandomAccessSourceNode)]
    assert len(sources) == 2 and sources[0] is not sources[1]


def test_a_node_refuses_to_be_changed():
    node = fusable_pipeline()._node
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.batch_size = 3  # type: ignore[misc]
