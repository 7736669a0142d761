"""The graph optimizer: copy the user's graph into a plan tree, then fuse ("graph kernel fusion").

Rewrites (each checked fused vs unfused by tests/engine/test_fusion.py; ``explain()`` states each
one's bound, from :data:`BOUNDS`):

- adjacent maps over the same single column merge into one stage (one hand-off per row, not two);
- Decode → Resize becomes a reduced-scale JPEG decode then resize (``FusedDecodeResize``), only
  with ``config.set_fast_decode_resize(True)``: its pixels differ from the full decode's (MindSpore's)
  by more than one grey level on average, so by default the two ops stay as written;
- Decode → RandomResizedCrop draws the crop from the header's size and decodes only that region at
  the smallest adequate scale (``FusedDecodeRandomResizedCrop``), with the crop op's own random
  stream, so it draws the same crop as the unfused pipeline;
- Normalize (→ HWC2CHW) (→ float TypeCast) ending a map that feeds a batch moves into the batch:
  rows are normalized straight into the batch buffer, with no float array per row; a check left in
  the map still fails bad rows there, with their row and file. Where the map runs on threads of this
  process right under a batch of a fixed size, each of its workers normalizes the images it has just
  made into their slots (``BatchSlots``); otherwise rows travel to the batch as uint8 (4x smaller);
- Normalize → HWC2CHW left in a map (no batch follows, e.g. an online session) becomes one op that
  normalizes a uint8 row straight into its CHW float32 array (``FusedNormalizeHWC2CHW``);
- a map right after a file-reading source reads the files in its own workers: one stage and one
  hand-off fewer, and the reads run in parallel across the map's workers.

Op positions (which key random streams) are assigned before any rewrite, so fused and unfused
plans draw identical random numbers.

Placement (:mod:`minddata.engine.placement`) runs first: it settles each op's device, so fusion
joins only ops on the same device into a fused op that device can run, and then cuts each map into
its device parts.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from minddata.engine import ir
from minddata.engine.autotune import is_autotune
from minddata.engine.fusions import FUSIONS, Fusion
from minddata.engine.placement import Machine, place, plan_parts, unsupported
from minddata.ops.base import Op
from minddata.ops.devices import run_options
from minddata.ops.fused import FusedNormalizeHWC2CHW, NormalizeInputCheck

if TYPE_CHECKING:
    from minddata.config import RunOptions

__all__ = ["lower", "flatten_operations", "BOUNDS"]

# How far each rewrite's output may be from the unfused graph's. The pixel figures are measured by
# ``python -m minddata.bench.fusion_pixels`` (mean absolute difference per image, in grey levels)
# and asserted by tests/engine/test_fusion.py.
BOUNDS = {
    "merge": "bit-exact",
    "decode_resize": (
        "pixels differ from the unfused full decode + resize by 5-9 grey levels on average "
        "(per image at most 12) on generated ImageNet-like images (opt-in: config.set_fast_decode_resize(True))"
    ),
    "decode_resize_off": (
        "exact: the full decode + resize, MindSpore's pixels (config.set_fast_decode_resize(True) fuses "
        "them for decode time, at 5-9 grey levels of mean difference)"
    ),
    "decode_random_resized_crop": (
        "same crop as unfused; pixels differ by 3-7.5 grey levels on average (per image at most 11), "
        "a random augmentation"
    ),
    "device": "the device's own kernel: its contract-test tolerance against the CPU kernels",
    "normalize_into_batch": "bit-exact",
    "normalize_hwc2chw": "bit-exact",
    "absorb_source": "bit-exact (same rows, same order)",
}


def flatten_operations(operations: list[Any]) -> list[Any]:
    """Inline ``Compose`` ops: a map over ``[Compose([a, b]), c]`` runs ``a, b, c``."""
    flat: list[Any] = []
    for op in operations:
        inner = getattr(op, "transforms", None) if isinstance(op, Op) and op.name == "Compose" else None
        if inner is not None:
            flat.extend(flatten_operations(list(inner)))
        else:
            flat.append(op)
    return flat


def lower(root: ir.Node, fusion: bool, *, fast_decode_resize: bool = False, auto_offload: bool = False,
          options: RunOptions | None = None) -> ir.Node:
    """A private copy of ``root`` as a tree (one copy per use of a shared node), with op positions
    assigned, fused when ``fusion`` is on; ``fast_decode_resize`` allows the CPU's reduced-scale
    Decode → Resize (``config.set_fast_decode_resize``); ``auto_offload`` places ops nobody placed as
    ``"auto"`` (``config.set_auto_offload``). ``options``: the run's settings, which placement reads
    (the iterator's snapshot; default: the settings now)."""
    counter = itertools.count()

    def copy_tree(node: ir.Node) -> ir.Node:
        children = [copy_tree(child) for child in node.children]
        if isinstance(node, ir.MapNode):
            operations = flatten_operations(node.operations)
            return node.with_children(children, operations=operations, op_positions=[next(counter) for _ in operations])
        return node.with_children(children)

    # One probe of the devices per compile, shared by placement, fusion and the cut into device parts.
    machine = Machine(run_options(options))
    tree = place(copy_tree(root), fusion, auto_offload, machine=machine)
    if fusion:
        tree = ir.rewrite(tree, _merge_maps)
        tree = ir.rewrite(tree, functools.partial(_fuse_ops, fast_decode_resize=fast_decode_resize, machine=machine))
        tree = ir.rewrite(tree, _move_normalize_into_batch)
        tree = ir.rewrite(tree, _fuse_normalize_hwc2chw)
        tree = ir.rewrite(tree, _absorb_sources)
    return plan_parts(tree, machine=machine)


def _single_column(node: ir.MapNode) -> str | None:
    inputs, outputs = node.resolved_inputs(), node.resolved_outputs()
    if len(inputs) == 1 and inputs == outputs:
        return inputs[0]
    return None


def _merge_maps(node: ir.Node) -> ir.Node:
    if not isinstance(node, ir.MapNode):
        return node
    child = node.child
    if (
        isinstance(child, ir.MapNode)
        and _single_column(node) is not None
        and _single_column(node) == _single_column(child)
        and node.python_multiprocessing == child.python_multiprocessing
    ):
        return dataclasses.replace(
            child,
            operations=child.operations + node.operations,
            op_positions=child.op_positions + node.op_positions,
            # AUTOTUNE (an int equal to 1) would lose to any fixed count under max(): it wins instead.
            num_workers=next(
                (n for n in (child.num_workers, node.num_workers) if is_autotune(n)),
                max(child.num_workers, node.num_workers),
            ),
            fusion_notes=(
                *child.fusion_notes,
                *node.fusion_notes,
                f"merged the adjacent map over {_single_column(node)!r} into this one; bound: {BOUNDS['merge']}",
            ),
        )
    return node


def _is(op: Any, name: str, device: str = "CPU") -> bool:
    return isinstance(op, Op) and op.name == name and op.device_target in (device, "auto" if device == "CPU" else device)


def _on_device(fused: Op, device: str, machine: Machine) -> Op | None:
    """``fused`` placed on ``device``, or ``None`` when that device can't run it (then the ops stay
    unfused). Only the media engine and the GPU gain from these fusions besides the CPU."""
    if device == "CPU":
        return fused
    if unsupported(fused, device, machine) is not None:
        return None
    fused._device = device
    return fused


def _fusion_at(ops: list[Any], i: int, device: str) -> Fusion | None:
    """The fusion of ``ops[i]`` with the op after it on ``device``, or ``None``."""
    op = ops[i]
    if i + 1 >= len(ops) or not isinstance(op, Op) or getattr(op, "to_pil", False):
        return None
    return next((f for f in FUSIONS if _is(op, f.first, device) and _is(ops[i + 1], f.second, device)), None)


def _fuse_pairs(node: ir.Node, pair: Any) -> ir.Node:
    """Walk a map's ops left to right; ``pair(ops, i, positions, notes)`` returns ``(fused_op, position)`` for
    ``ops[i]`` and the op after it (the position keys the fused op's random stream), or ``None`` to keep
    ``ops[i]``. ``notes`` collects what ``explain()`` says."""
    if not isinstance(node, ir.MapNode):
        return node
    ops, positions = node.operations, node.op_positions
    notes = list(node.fusion_notes)
    out_ops: list[Any] = []
    out_positions: list[int] = []
    i = 0
    while i < len(ops):
        found = pair(ops, i, positions, notes) if i + 1 < len(ops) else None
        if found is not None:
            out_ops.append(found[0])
            out_positions.append(found[1])
            i += 2
            continue
        out_ops.append(ops[i])
        out_positions.append(positions[i])
        i += 1
    if len(out_ops) == len(ops) and len(notes) == len(node.fusion_notes):
        return node
    return dataclasses.replace(node, operations=out_ops, op_positions=out_positions, fusion_notes=tuple(notes))


def _fuse_ops(node: ir.Node, fast_decode_resize: bool, machine: Machine) -> ir.Node:
    def pair(ops: list[Any], i: int, positions: list[int], notes: list[str]) -> tuple[Op, int] | None:
        op = ops[i]
        device = op.device_target if isinstance(op, Op) else "CPU"
        fusion = _fusion_at(ops, i, device)
        if fusion is None:
            return None
        if fusion.cpu_opt_in and device == "CPU" and not fast_decode_resize:
            notes.append(f"{fusion.first}+{fusion.second} kept as two ops; bound: {BOUNDS[fusion.bound_off]}")
            return None
        fused = _on_device(fusion.fused(op, ops[i + 1]), device, machine)
        if fused is None:
            return None
        if device != "CPU":
            notes.append(f"{fused.label} on {device}: one fused op (decode and resize on the engine); "
                         f"bound: {BOUNDS['device']}")
        else:
            notes.append(f"{fusion.first}+{fusion.second}: {fusion.what}; bound: {BOUNDS[fusion.bound]}")
        # The second op's random stream: the fused op draws exactly what the crop would.
        return fused, positions[i + 1]

    return _fuse_pairs(node, pair)


def _float_cast(op: Any) -> np.dtype | None:
    if not (_is(op, "TypeCast") or _is(op, "ToType")):
        return None
    dtype = np.dtype(getattr(op, "data_type", None) or getattr(op, "dtype", None))
    return dtype if dtype.kind == "f" else None


def _move_normalize_into_batch(node: ir.Node) -> ir.Node:
    if not isinstance(node, ir.BatchNode) or node.per_batch_map is not None or node.pad_info:
        return node
    child = node.child
    if not isinstance(child, ir.MapNode) or child.python_multiprocessing:
        return node
    column = _single_column(child)
    if column is None:
        return node
    ops = child.operations
    tail_start = None
    for start in range(len(ops) - 1, -1, -1):
        if _is(ops[start], "Normalize") and ops[start].is_hwc:
            tail_start = start
            break
    if tail_start is None:
        return node
    tail = ops[tail_start:]
    chw = False
    out_dtype: np.dtype = np.dtype(np.float32)
    for op in tail[1:]:
        if _is(op, "HWC2CHW") and not chw:
            chw = True
        elif (cast_dtype := _float_cast(op)) is not None:
            out_dtype = cast_dtype
        else:
            return node
    normalize = tail[0]
    moved = " → ".join(op.name for op in tail)
    checked = dataclasses.replace(
        child,
        operations=ops[:tail_start] + [NormalizeInputCheck(normalize)],
        op_positions=child.op_positions[:tail_start] + [child.op_positions[tail_start]],
        fusion_notes=(
            *child.fusion_notes,
            f"{moved} moved into the following batch; a row check stays here; bound: {BOUNDS['normalize_into_batch']}",
        ),
    )
    return node.with_children(
        [checked],
        epilogues={**node.epilogues, child.columns.index(column): (normalize, chw, out_dtype)},
        fusion_notes=(
            *node.fusion_notes,
            f"{moved} on {column!r} moved into the batch: each image is normalized straight into its slot of the "
            "batch buffer, by the map's workers where the map keeps every row on threads of this process under a "
            f"batch of a fixed size; bound: {BOUNDS['normalize_into_batch']}",
        ),
    )


def _fuse_normalize_hwc2chw(node: ir.Node) -> ir.Node:
    """Normalize (HWC) → HWC2CHW left in a map (no batch took them) becomes one op per row."""

    noted = False

    def pair(ops: list[Any], i: int, positions: list[int], notes: list[str]) -> tuple[Op, int] | None:
        nonlocal noted
        op = ops[i]
        if not (_is(op, "Normalize") and op.is_hwc and _is(ops[i + 1], "HWC2CHW")):
            return None
        if not noted:  # one note per map, however many pairs it fuses
            noted = True
            notes.append("Normalize → HWC2CHW: one pass per row, normalized straight into the CHW array; "
                         f"bound: {BOUNDS['normalize_hwc2chw']}")
        return FusedNormalizeHWC2CHW(op, ops[i + 1]), positions[i]

    return _fuse_pairs(node, pair)


def _absorb_sources(node: ir.Node) -> ir.Node:
    """A map right after a file-reading source reads the rows in its own workers."""
    if not isinstance(node, ir.MapNode) or node.python_multiprocessing:
        return node
    source = node.child
    if isinstance(source, ir.RandomAccessSourceNode) and not source.inline and not source.python_multiprocessing:
        return dataclasses.replace(
            node,
            reads_source=True,
            fusion_notes=(
                *node.fusion_notes,
                f"reads {source.name}'s rows in its own workers (no separate reader stage); "
                f"bound: {BOUNDS['absorb_source']}",
            ),
        )
    return node
