"""The placement pass: which device runs each op, and how a map splits into device segments.

Runs inside :func:`minddata.engine.optimizer.lower`, so devices are settled when an iterator is
created, not deep inside a worker. Devices are seen only through :mod:`minddata.ops.devices`
(:class:`~minddata.ops.devices.Device`: present or why not with the fix, the ops it runs, its cost
factor, whether ``"auto"`` may choose it, how its ops run), so a new accelerator needs no change here:

1. :func:`place` (before fusion) resolves every op's device. An explicit device (``"GPU"``,
   ``"Dvpp"``) must be present and have a kernel for the op with its parameters; otherwise a
   :class:`~minddata.errors.DeviceError` names the map, the op, the device, what is missing and the
   fix (``config.set_device_fallback("cpu")`` turns an *absent* device into a logged CPU fallback).
   ``"auto"`` picks per op by a cost estimate (:func:`choose`) among the devices this machine has;
   it never picks a preview (the Dvpp reference model, an emulated GPU), only real hardware.
   Ops are copied before being re-placed: the user's op objects are never changed.
2. :func:`plan_parts` (after fusion) cuts each map into parts: ``"row"`` parts run their ops per row
   in the map's workers (CPU kernels, and Dvpp's ``reference``/``ascend`` kernels); ``"segment"`` parts
   are runs of consecutive ops that a device runs as one batched segment (GPU ops, and Dvpp ops on
   the ``nvjpg`` driver, in one DALI pipeline or torch segment) that the engine feeds batch by batch.
   Data crosses between host and device once per boundary between parts; the iterator counts it
   (``iterator.device_stats``).

Both take the run's settings as ``options`` (:class:`~minddata.config.RunOptions`).

Examples:
    >>> from minddata import vision
    >>> from minddata.engine.placement import choose
    >>> [op.device_target for op in choose([vision.Decode(), vision.Resize(256)], {"CPU"})]
    ['CPU', 'CPU']
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from minddata import config
from minddata.config import RunOptions
from minddata.engine import ir
from minddata.engine.fusions import fusion_of
from minddata.engine.ir import DevicePart
from minddata.errors import DeviceError, warn
from minddata.ops.base import Op
from minddata.ops.devices import Presence, get_device, run_options
from minddata.ops.devices import devices as _devices
from minddata.ops.registry import decoder_ops, has_kernel, op_facts

__all__ = ["DevicePart", "Machine", "cannot_run", "choose", "place", "plan_parts", "unsupported"]

# Every op's cost is its declared CPU cost per megapixel (op_facts(name).cost_ms_per_mp) times its
# device's cost factor (Device.cost_factor). Only the ratios matter: every op's cost scales with the
# pixel count. An op with no declared cost counts as this much:
_DEFAULT_MS_PER_MP = 1.0
# Host <-> device copy, ms per megapixel of uint8 RGB (3 MB at ~12 GB/s, plus a synchronisation).
_TRANSFER_MS_PER_MP = 0.4
# The host: every op's baseline, with a kernel for every op.
_HOST = "CPU"


@dataclass
class Machine:
    """What this machine offers under a run's ``options``: each device probed once per compile, and
    only when asked about (:meth:`presence`). ``found`` holds what was probed.

    Examples:
        >>> from minddata.engine.placement import Machine
        >>> Machine().presence("CPU").present
        True
    """

    options: RunOptions = field(default_factory=config.snapshot)
    found: dict[str, Presence] = field(default_factory=dict)

    def presence(self, device: str) -> Presence:
        """What probing ``device`` found (probed on the first call)."""
        found = self.found.get(device)
        if found is None:
            found = self.found[device] = get_device(device).probe(self.options)
        return found

    def accelerators(self) -> set[str]:
        """Devices ``"auto"`` may choose: real hardware only."""
        return {device.name for device in _devices() if device.auto_eligible(self.presence(device.name))}


# ---------------------------------------------------------------------------------------------- support


def unsupported(op: Op, device: str, machine: Machine) -> str | None:
    """Why ``device`` can't run ``op`` (no kernel, or not with these parameters), or ``None``.

    Examples:
        >>> from minddata import vision
        >>> from minddata.engine.placement import Machine, unsupported
        >>> unsupported(vision.HWC2CHW(), "CPU", Machine()) is None
        True
    """
    if not has_kernel(op.name, device):
        return f"no {op.name} kernel"
    return get_device(device).unsupported_reason(op, machine.presence(device))


def _absent(device: str, machine: Machine) -> str | None:
    """Why ``device`` can't be used here, or ``None`` when it can."""
    presence = machine.presence(device)
    return None if presence.present else presence.detail


# ---------------------------------------------------------------------------------------------- choosing


def _placed(op: Op, device: str) -> Op:
    if op.device_target == device:
        return op
    clone = copy.copy(op)
    clone._device = device
    return clone


def choose(ops: list[Any], devices: set[str], machine: Machine | None = None) -> list[Any]:
    """Place a map's ``"auto"`` ops (others are kept) on ``devices`` by the cost estimate.

    Dynamic programming over the op sequence: each op's estimated cost on each device that can run
    it, plus a host <-> device copy wherever consecutive ops sit on different sides (data starts and
    ends on the host). Costs are per megapixel, so the choice does not depend on the image size.
    """
    machine = machine or Machine()
    inf = float("inf")
    decoders = decoder_ops()
    # state: device of the previous op -> (total cost, placement so far)
    states: dict[str, tuple[float, list[str]]] = {_HOST: (0.0, [])}
    first = getattr(ops[0], "name", "") if ops else ""
    width = 0.1 if first in decoders else 1.0  # data size relative to uint8 RGB (encoded: ~0.1)
    for op in ops:
        options: list[str]
        if not isinstance(op, Op):
            options = [_HOST]
        elif op.device_target != "auto":
            options = [op.device_target]
        else:
            options = [
                d.name for d in _devices()
                if d.name in devices and (d.name == _HOST or unsupported(op, d.name, machine) is None)
            ]
        name = getattr(op, "name", "")
        facts = op_facts(name) if isinstance(op, Op) else None
        base = facts.cost_ms_per_mp if facts is not None and facts.cost_ms_per_mp is not None else _DEFAULT_MS_PER_MP
        new: dict[str, tuple[float, list[str]]] = {}
        for device in options:
            run = base * get_device(device).cost_factor
            best: tuple[float, list[str]] = (inf, [])
            for prev, (cost, path) in states.items():
                move = 0.0 if _side(prev) == _side(device) else _TRANSFER_MS_PER_MP * width
                if cost + move + run < best[0]:
                    best = (cost + move + run, path + [device])
            new[device] = best
        states = new
        # Bytes per pixel after an op, relative to uint8 RGB: float outputs cost 4x to move.
        if facts is not None and facts.float_output:
            width = 4.0
        elif name in decoders:
            width = 1.0
    total = {d: c + (0.0 if _side(d) == "host" else _TRANSFER_MS_PER_MP * width) for d, (c, _) in states.items()}
    best_device = min(total, key=lambda d: total[d])
    path = states[best_device][1]
    return [_placed(op, device) if isinstance(op, Op) else op for op, device in zip(ops, path, strict=True)]


def _side(device: str) -> str:
    # Accelerators share device memory (on NVIDIA the media engine's output is the GPU's; Ascend's DVPP
    # output is device memory too); only the host's data is on the host.
    return "host" if get_device(device).on_host else "device"


# ---------------------------------------------------------------------------------------------- the pass


def _unplaced(op: Any) -> bool:
    """Whether ``op`` is an op whose device nobody chose (neither ``op.device()`` nor ``map(device=)``)."""
    return isinstance(op, Op) and "_device" not in vars(op)


def _offload_note(chosen: list[Any], devices: set[str], machine: Machine) -> str:
    """What auto offload decided for ``chosen`` ops, and why."""
    where = ", ".join(f"{op.name} on {op.device_target}" for op in chosen)
    if devices == {_HOST}:
        missing = "; ".join(f"{d.name}: {machine.presence(d.name).detail or 'emulated only'}"
                            for d in _devices() if d.name != _HOST)
        return f"auto offload: {where} (no accelerator on this machine; {missing})"
    return f"auto offload: {where} (by the cost estimate among {', '.join(sorted(devices))})"


def place(tree: ir.Node, fusion: bool = True, auto_offload: bool = False, *,
          options: RunOptions | None = None, machine: Machine | None = None) -> ir.Node:
    """``tree`` (a private plan tree) with every op's device resolved, or raise :class:`DeviceError`.

    With ``fusion``, an op a device runs only fused with the Decode before it (Resize or
    RandomResizedCrop on Dvpp's ``nvjpg`` driver, a decoder) is accepted: the fusion pass joins them.
    With ``auto_offload`` (``config.set_auto_offload``), ops whose device was not chosen are placed as
    if ``device="auto"``, and the map's notes say where they went and why. ``options``: the run's
    settings (``device_fallback``, the drivers the probes pick); default: the settings now. ``machine``:
    the compile's probed devices, shared with its other passes (default: a new one under ``options``).
    """
    machine = machine or Machine(run_options(options))
    warned: set[tuple[str, str]] = set()

    def place_map(node: ir.Node) -> ir.Node:
        if not isinstance(node, ir.MapNode):
            return node
        ops = list(node.operations)
        offloaded = [i for i, op in enumerate(ops) if _unplaced(op)] if auto_offload else []
        offload_notes: tuple[str, ...] = ()
        for i in offloaded:
            ops[i] = _placed(ops[i], "auto")
        if any(isinstance(op, Op) and op.device_target == "auto" for op in ops):
            devices = machine.accelerators()
            ops = choose(ops, devices, machine)
            if offloaded:
                offload_notes = (_offload_note([ops[i] for i in offloaded], devices, machine),)
        placed: list[Any] = []
        for op in ops:
            if isinstance(op, Op) and op.device_target not in (_HOST, "auto"):
                prev = placed[-1] if placed else None
                op = _check(node, op, machine, warned, prev, fusion)
            elif isinstance(op, Op) and op.device_target == "auto":
                op = _placed(op, _HOST)
            placed.append(op)
        notes = [f"{op.name} on {op.device_target}" for op in placed if isinstance(op, Op) and op.device_target != _HOST]
        placed_notes = ("placed: " + ", ".join(notes),) if notes else ()
        return dataclasses.replace(
            node, operations=placed, fusion_notes=(*node.fusion_notes, *offload_notes, *placed_notes)
        )

    # Parents first, as the user reads the pipeline: the first map that can't be placed is named.
    return ir.rewrite(tree, place_map, top_down=True)


def _fused_with(prev: Any, op: Op) -> Op | None:
    """The fused op the fusion pass makes of ``prev`` and ``op`` on one device, or ``None``."""
    if not (isinstance(prev, Op) and prev.device_target == op.device_target):
        return None
    fusion = fusion_of(prev.name, op.name)
    return fusion.fused(prev, op) if fusion is not None else None


def _check(node: ir.MapNode, op: Op, machine: Machine, warned: set[tuple[str, str]], prev: Any = None,
           fusion: bool = True) -> Op:
    device = op.device_target
    absent = _absent(device, machine)
    if absent is not None:
        if machine.options.device_fallback == "cpu":
            if (op.name, device) not in warned:
                warned.add((op.name, device))
                warn(
                    "%s: op %s is placed on %s, which this machine lacks (%s); running it on the CPU "
                    "(config.set_device_fallback('cpu'))", node.label, op.name, device, absent,
                )
            return _placed(op, _HOST)
        fix = machine.presence(device).fix
        raise DeviceError(
            f"{node.label}: op {op.name} is placed on {device}, which this machine lacks: {absent}. Fix: {fix}."
        )
    reason = unsupported(op, device, machine)
    if reason is not None and isinstance(prev, Op) and prev.device_target == device:
        fused = _fused_with(prev, op)
        if fused is not None and unsupported(fused, device, machine) is None:
            if fusion:
                return op  # runs as one fused op with the Decode before it
            reason += " (it runs only fused with the Decode before it, and fusion is off: " \
                "minddata.config.set_enable_fusion(True))"
    if reason is not None:
        presence = machine.presence(device)
        have = ", ".join(get_device(device).ops(presence)) or "none"
        driver = get_device(device).driver_note(presence)
        raise DeviceError(
            f"{node.label}: op {op.name} is placed on {device}{driver}, which can't run it: {reason}. "
            f"Ops with a {device} kernel: {have}. Place {op.name} with .device('CPU')"
            + (" or change the parameter named above." if "kernel" not in reason else ".")
        )
    return op


def cannot_run(op: Op, device: str, previous: Any = None, *, options: RunOptions | None = None) -> str | None:
    """Why ``device`` can't run ``op`` on this machine (absent, no kernel on its driver, parameters it
    can't honour), or ``None`` when it can. ``previous``: the op before it in the map, for ops a
    device runs only fused with the Decode before them (Resize after Decode on Dvpp's ``nvjpg``).

    For tools that place ops themselves (benchmarks): the same checks the placement pass makes, under
    ``options`` (default: the settings now).

    Examples:
        >>> from minddata import vision
        >>> from minddata.engine.placement import cannot_run
        >>> cannot_run(vision.HWC2CHW(), "CPU") is None
        True
    """
    machine = Machine(run_options(options))
    absent = _absent(device, machine)
    if absent is not None:
        return absent
    reason = unsupported(op, device, machine)
    if reason is not None and isinstance(previous, Op):
        prev = copy.copy(previous)
        prev._device = device
        fused = _fused_with(prev, _placed(op, device))
        if fused is not None and unsupported(fused, device, machine) is None:
            return None
    return reason


# Nodes that pass rows on without looking into them.
_PASS_THROUGH = (ir.RepeatNode, ir.TakeNode, ir.SkipNode, ir.ProjectNode, ir.RenameNode, ir.ShuffleNode)


def _hands_over(ancestors: list[ir.Node]) -> bool:
    """Whether rows leaving a node whose ``ancestors`` (nearest first) are these go to the consumer
    untouched but for one plain batch."""
    batched = False
    for node in ancestors:
        if isinstance(node, ir.BatchNode) and not batched:
            if node.per_batch_map is not None or node.pad_info or node.epilogues:
                return False
            batched = True
        elif not isinstance(node, _PASS_THROUGH):
            return False
    return True


def plan_parts(tree: ir.Node, *, options: RunOptions | None = None, machine: Machine | None = None) -> ir.Node:
    """``tree`` with every map cut into :class:`DevicePart` s (after fusion, which may merge maps),
    under the run's ``options`` (default: the settings now) and the compile's ``machine``."""
    machine = machine or Machine(run_options(options))

    def visit(node: ir.Node, ancestors: list[ir.Node]) -> ir.Node:
        if isinstance(node, ir.MapNode):
            node = _cut(node, ancestors, machine)
        children = [visit(child, [node, *ancestors]) for child in node.children]
        if any(new is not old for new, old in zip(children, node.children)):
            node = node.with_children(children)
        return node

    return visit(tree, [])


def _off_host(op: Any) -> bool:
    """Whether ``op`` is placed on an accelerator (names are canonical: the host, ``"auto"`` or one)."""
    return isinstance(op, Op) and op.device_target not in (_HOST, "auto")


def _bound(op: Any, machine: Machine) -> Any:
    """``op`` carrying what its device's probe decided (e.g. the driver); settings reach kernels
    through ``ctx.options``."""
    if not _off_host(op):
        return op
    return get_device(op.device_target).bind(op, machine.presence(op.device_target))


def _segment_host(op: Any, machine: Machine) -> str | None:
    """The device whose segment runs ``op`` as a batch, or ``None`` when it runs per row."""
    if not _off_host(op):
        return None
    return get_device(op.device_target).segment_host(machine.presence(op.device_target))


def _segment_backend(ops: list[Op], host: str, machine: Machine) -> str | None:
    """The backend of a segment of ``host`` over ``ops``: an op of another device riding in it (Dvpp on
    the GPU's hardware decoder) needs its own backend; else the host's."""
    chosen = None
    for op in ops:
        device = get_device(op.device_target)
        backend = device.segment_backend(machine.presence(device.name))
        if device.name != host:
            return backend
        chosen = chosen or backend
    return chosen


def _cut(node: ir.MapNode, ancestors: list[ir.Node], machine: Machine) -> ir.MapNode:
    """``node`` cut into its device parts; ``ancestors``: the nodes above it, nearest first."""
    ops = node.operations
    if not any(_off_host(op) for op in ops):
        return dataclasses.replace(node, device_parts=(DevicePart("row", 0, len(ops)),))
    ops = [_bound(op, machine) for op in ops]
    hosts = [_segment_host(op, machine) for op in ops]
    parts: list[DevicePart] = []
    part_hosts: list[str | None] = []
    start = 0
    for i in range(1, len(ops) + 1):
        if i == len(ops) or hosts[i] != hosts[start]:
            host = hosts[start]
            backend = _segment_backend(ops[start:i], host, machine) if host is not None else None
            parts.append(DevicePart("segment" if host is not None else "row", start, i, backend))
            part_hosts.append(host)
            start = i
    reads_source = node.reads_source
    notes = list(node.fusion_notes)
    if parts[0].kind == "segment" and reads_source:
        # Files are read by the source's workers and merged into segment-sized batches instead of
        # being read chunk by chunk in the segment part's one thread.
        reads_source = False
        notes = [n for n in notes if "in its own workers" not in n]
    parent = ancestors[0] if ancestors else None
    segment_rows = None
    if isinstance(parent, ir.BatchNode) and isinstance(parent.batch_size, int):
        # One segment run per batch of the pipeline: the size the consumer wants anyway.
        segment_rows = min(max(parent.batch_size, 8), 512)
    for part, host in zip(parts, part_hosts, strict=True):
        if host is not None:
            names = ", ".join(op.name for op in ops[part.start : part.end])
            notes.append(f"{names}: {get_device(host).describe_segment(part.backend)}, fed a batch of rows per run")
    return dataclasses.replace(
        node,
        operations=ops,
        device_parts=tuple(parts),
        reads_source=reads_source,
        # A segment ending the map hands its rows on still on the device (torch CUDA tensors, or CuPy
        # arrays for CuPy and JAX consumers) when the consumer takes such tensors
        # (config.set_framework) and what follows only stacks them (a plain batch) or hands them over.
        # Anything else gets host arrays.
        device_output=machine.options.framework in ("torch", "cupy", "jax") and _hands_over(ancestors),
        segment_rows=segment_rows,
        fusion_notes=tuple(notes),
    )
