"""The placement pass: which device runs each op, and how a map splits into device segments.

Runs inside :func:`minddata.engine.optimizer.lower`, so devices are settled when an iterator is
created, not deep inside a worker:

1. :func:`place` (before fusion) resolves every op's device. An explicit ``"GPU"``/``"Dvpp"`` must be
   present and have a kernel for the op with its parameters; otherwise a
   :class:`~minddata.errors.DeviceError` names the map, the op, the device, what is missing and the
   fix (``config.set_device_fallback("cpu")`` turns an *absent* device into a logged CPU fallback).
   ``"auto"`` picks per op by a cost estimate (:func:`choose`) among the devices this machine has;
   it never picks the Dvpp reference model or an emulated GPU, which are previews, not accelerators.
   Ops are copied before being re-placed: the user's op objects are never changed.
2. :func:`plan_parts` (after fusion) cuts each map into parts: ``"row"`` parts run their ops per row
   in the map's workers (CPU kernels, and Dvpp's ``reference``/``ascend`` kernels); ``"segment"`` parts
   are runs of consecutive GPU ops (and Dvpp ops on the ``nvjpg`` driver), each compiled into one
   DALI pipeline that the engine feeds batch by batch. Data crosses between host and device once per
   boundary between parts; the iterator counts it (``iterator.device_stats``).

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
from minddata.engine import ir
from minddata.engine.fusions import fusion_of
from minddata.engine.ir import DevicePart
from minddata.errors import DeviceError, warn
from minddata.ops.base import Op
from minddata.ops.registry import has_kernel, ops_on

__all__ = ["DevicePart", "Machine", "cannot_run", "choose", "place", "plan_parts"]

# Estimated cost of each op in milliseconds per megapixel on one CPU core, and the factor a GPU or
# the media engine runs it at (smaller is cheaper). Only the ratios matter: every op's cost scales
# with the pixel count. The point of offload is to free the CPU, so device time is weighted lightly.
_CPU_MS_PER_MP = {
    "Decode": 8.0, "FusedDecodeResize": 5.0, "FusedDecodeRandomResizedCrop": 4.0, "RandomCropDecodeResize": 4.0,
    "Resize": 2.0, "RandomResizedCrop": 1.5, "ResizedCrop": 1.5, "Rotate": 3.0, "RandomRotation": 3.0,
    "Normalize": 1.2, "Rescale": 1.0, "HWC2CHW": 0.6, "TypeCast": 0.5, "ToType": 0.5, "Pad": 0.4,
    "CenterCrop": 0.2, "Crop": 0.2, "HorizontalFlip": 0.3, "RandomHorizontalFlip": 0.2, "VerticalFlip": 0.1,
    "RandomVerticalFlip": 0.1, "RandomColorAdjust": 4.0,
}
_DEVICE_FACTOR = {"GPU": 0.05, "Dvpp": 0.03}
# Host <-> device copy, ms per megapixel of uint8 RGB (3 MB at ~12 GB/s, plus a synchronisation).
_TRANSFER_MS_PER_MP = 0.4
# Bytes per pixel after an op, relative to uint8 RGB: float outputs cost 4x to move; encoded input 0.1x.
_FLOAT_OUTPUT = ("Normalize", "Rescale")
_DECODERS = ("Decode", "FusedDecodeResize", "FusedDecodeRandomResizedCrop", "RandomCropDecodeResize")


@dataclass
class Machine:
    """What this machine offers, probed once per compile and only when a non-CPU device is asked for."""

    gpu_backend: str | None = None  # "cuda"/"torch-cuda", "dali-cpu"/"torch-cpu" (emulation) or None
    gpu_why: str = ""
    dvpp_driver: str | None = None  # "nvjpg", "ascend", "reference" or None
    dvpp_why: str = ""
    probed: set = field(default_factory=set)

    def probe(self, device: str) -> None:
        if device in self.probed:
            return
        self.probed.add(device)
        from minddata.ops import probe

        if device == "GPU":
            self.gpu_backend, self.gpu_why = probe.gpu_backend()
        elif device == "Dvpp":
            self.dvpp_driver, self.dvpp_why = probe.dvpp_driver()

    def accelerators(self) -> set[str]:
        """Devices ``"auto"`` may choose: real hardware only."""
        self.probe("GPU")
        self.probe("Dvpp")
        found = {"CPU"}
        if self.gpu_backend in ("cuda", "torch-cuda"):
            found.add("GPU")
        if self.dvpp_driver in ("nvjpg", "ascend"):
            found.add("Dvpp")
        return found


# ---------------------------------------------------------------------------------------------- support


def _unsupported(op: Op, device: str, machine: Machine) -> str | None:
    """Why ``device`` can't run ``op`` (no kernel, or not with these parameters), or ``None``."""
    if not has_kernel(op.name, device):
        return f"no {op.name} kernel"
    if device == "GPU":
        from minddata.ops.gpu.drivers import unsupported_reason

        machine.probe("GPU")
        return unsupported_reason(op, machine.gpu_backend)
    if device == "Dvpp":
        from minddata.ops.dvpp.kernels import DRIVER_OPS, unsupported_reason

        driver = machine.dvpp_driver or "reference"
        if op.name not in DRIVER_OPS.get(driver, ()):
            return f"no {op.name} kernel on its {driver!r} driver"
        return unsupported_reason(op, driver)
    return None


def _device_ops(device: str, machine: Machine) -> list[str]:
    if device == "Dvpp":
        from minddata.ops.dvpp.kernels import DRIVER_OPS

        return sorted(DRIVER_OPS.get(machine.dvpp_driver or "reference", ()))
    return ops_on(device)


def _absent(device: str, machine: Machine) -> str | None:
    """Why ``device`` can't be used here, or ``None`` when it can."""
    machine.probe(device)
    if device == "GPU":
        return None if machine.gpu_backend else machine.gpu_why
    if device == "Dvpp":
        return None if machine.dvpp_driver else machine.dvpp_why
    return None


def _fix(device: str) -> str:
    if device == "GPU":
        return ("run on a machine with an NVIDIA GPU and `pip install 'minddata[gpu]'`, place the op with "
                ".device('CPU'), or minddata.config.set_device_fallback('cpu') to run it on the CPU with a warning")
    return ("run where a media engine is (an A100/H100/H200 GPU with `pip install 'minddata[gpu]'`, or Ascend "
            "with CANN), place the op with .device('CPU'), minddata.config.set_device_fallback('cpu') to run it on "
            "the CPU with a warning, or minddata.config.set_dvpp_driver('reference') to preview it on the CPU "
            "model of DVPP")


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
    # state: device of the previous op -> (total cost, placement so far)
    states: dict[str, tuple[float, list[str]]] = {"CPU": (0.0, [])}
    first = getattr(ops[0], "name", "") if ops else ""
    width = 0.1 if first in _DECODERS else 1.0  # data size relative to uint8 RGB (encoded: ~0.1)
    for op in ops:
        options: list[str]
        if not isinstance(op, Op):
            options = ["CPU"]
        elif op.device_target != "auto":
            options = [op.device_target]
        else:
            options = [
                d for d in ("CPU", "GPU", "Dvpp")
                if d in devices and (d == "CPU" or _unsupported(op, d, machine) is None)
            ]
        name = getattr(op, "name", "")
        base = _CPU_MS_PER_MP.get(name, 1.0)
        new: dict[str, tuple[float, list[str]]] = {}
        for device in options:
            run = base * _DEVICE_FACTOR.get(device, 1.0)
            best: tuple[float, list[str]] = (inf, [])
            for prev, (cost, path) in states.items():
                move = 0.0 if _side(prev) == _side(device) else _TRANSFER_MS_PER_MP * width
                if cost + move + run < best[0]:
                    best = (cost + move + run, path + [device])
            new[device] = best
        states = new
        if name in _FLOAT_OUTPUT:
            width = 4.0
        elif name in _DECODERS:
            width = 1.0
    total = {d: c + (0.0 if _side(d) == "host" else _TRANSFER_MS_PER_MP * width) for d, (c, _) in states.items()}
    best_device = min(total, key=total.get)
    path = states[best_device][1]
    return [_placed(op, device) if isinstance(op, Op) else op for op, device in zip(ops, path, strict=True)]


def _side(device: str) -> str:
    # The Dvpp engine and the GPU share device memory on NVIDIA (nvjpg); Ascend's DVPP output is also
    # device memory. Only the CPU's data is on the host.
    return "host" if device == "CPU" else "device"


# ---------------------------------------------------------------------------------------------- the pass


def _unplaced(op: Any) -> bool:
    """Whether ``op`` is an op whose device nobody chose (neither ``op.device()`` nor ``map(device=)``)."""
    return isinstance(op, Op) and "_device" not in vars(op)


def _offload_note(chosen: list[Any], devices: set[str], machine: Machine) -> str:
    """What auto offload decided for ``chosen`` ops, and why."""
    where = ", ".join(f"{op.name} on {op.device_target}" for op in chosen)
    if devices == {"CPU"}:
        missing = "; ".join(f"{d}: {why or 'emulated only'}" for d, why in
                            (("GPU", machine.gpu_why), ("Dvpp", machine.dvpp_why)))
        return f"auto offload: {where} (no accelerator on this machine; {missing})"
    return f"auto offload: {where} (by the cost estimate among {', '.join(sorted(devices))})"


def place(tree: ir.Node, fusion: bool = True, auto_offload: bool = False) -> ir.Node:
    """``tree`` (a private plan tree) with every op's device resolved, or raise :class:`DeviceError`.

    With ``fusion``, an op a device runs only fused with the Decode before it (Resize or
    RandomResizedCrop on Dvpp's ``nvjpg`` driver, a decoder) is accepted: the fusion pass joins them.
    With ``auto_offload`` (``config.set_auto_offload``), ops whose device was not chosen are placed as
    if ``device="auto"``, and the map's notes say where they went and why.
    """
    machine = Machine()
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
            if isinstance(op, Op) and op.device_target not in ("CPU", "auto"):
                prev = placed[-1] if placed else None
                op = _check(node, op, machine, warned, prev, fusion)
            elif isinstance(op, Op) and op.device_target == "auto":
                op = _placed(op, "CPU")
            placed.append(op)
        notes = [f"{op.name} on {op.device_target}" for op in placed if isinstance(op, Op) and op.device_target != "CPU"]
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
        if config.get_device_fallback() == "cpu":
            if (op.name, device) not in warned:
                warned.add((op.name, device))
                warn(
                    "%s: op %s is placed on %s, which this machine lacks (%s); running it on the CPU "
                    "(config.set_device_fallback('cpu'))", node.label, op.name, device, absent,
                )
            return _placed(op, "CPU")
        raise DeviceError(
            f"{node.label}: op {op.name} is placed on {device}, which this machine lacks: {absent}. Fix: {_fix(device)}."
        )
    reason = _unsupported(op, device, machine)
    if reason is not None and isinstance(prev, Op) and prev.device_target == device:
        fused = _fused_with(prev, op)
        if fused is not None and _unsupported(fused, device, machine) is None:
            if fusion:
                return op  # runs as one fused op with the Decode before it
            reason += " (it runs only fused with the Decode before it, and fusion is off: " \
                "minddata.config.set_enable_fusion(True))"
    if reason is not None:
        have = ", ".join(_device_ops(device, machine)) or "none"
        driver = f" (driver {machine.dvpp_driver!r})" if device == "Dvpp" else ""
        raise DeviceError(
            f"{node.label}: op {op.name} is placed on {device}{driver}, which can't run it: {reason}. "
            f"Ops with a {device} kernel: {have}. Place {op.name} with .device('CPU')"
            + (" or change the parameter named above." if "kernel" not in reason else ".")
        )
    return op


def _with_dvpp_settings(op: Any, driver: str) -> Any:
    if not (isinstance(op, Op) and op.device_target == "Dvpp"):
        return op
    clone = copy.copy(op)
    clone._dvpp_driver = driver  # a placement decision (what the probe found), not a setting
    return clone


def cannot_run(op: Op, device: str, previous: Any = None) -> str | None:
    """Why ``device`` can't run ``op`` on this machine (absent, no kernel on its driver, parameters it
    can't honour), or ``None`` when it can. ``previous``: the op before it in the map, for ops a
    device runs only fused with the Decode before them (Resize after Decode on Dvpp's ``nvjpg``).

    For tools that place ops themselves (benchmarks): the same checks the placement pass makes.

    Examples:
        >>> from minddata import vision
        >>> from minddata.engine.placement import cannot_run
        >>> cannot_run(vision.HWC2CHW(), "CPU") is None
        True
    """
    machine = Machine()
    absent = _absent(device, machine)
    if absent is not None:
        return absent
    reason = _unsupported(op, device, machine)
    if reason is not None and isinstance(previous, Op):
        prev = copy.copy(previous)
        prev._device = device
        fused = _fused_with(prev, _placed(op, device))
        if fused is not None and _unsupported(fused, device, machine) is None:
            return None
    return reason


def execution(op: Any, machine_driver: str | None) -> str:
    """``"segment"`` for ops that run as a batch on a device driver (GPU, Dvpp on nvjpg), else ``"row"``."""
    if not isinstance(op, Op):
        return "row"
    if op.device_target == "GPU" or (op.device_target == "Dvpp" and machine_driver == "nvjpg"):
        return "segment"
    return "row"


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


def plan_parts(tree: ir.Node) -> ir.Node:
    """``tree`` with every map cut into :class:`DevicePart` s (after fusion, which may merge maps)."""
    machine = Machine()

    def visit(node: ir.Node, ancestors: list[ir.Node]) -> ir.Node:
        if isinstance(node, ir.MapNode):
            node = _cut(node, ancestors, machine)
        children = [visit(child, [node, *ancestors]) for child in node.children]
        if any(new is not old for new, old in zip(children, node.children)):
            node = node.with_children(children)
        return node

    return visit(tree, [])


def _cut(node: ir.MapNode, ancestors: list[ir.Node], machine: Machine) -> ir.MapNode:
    """``node`` cut into its device parts; ``ancestors``: the nodes above it, nearest first."""
    ops = node.operations
    if not any(isinstance(op, Op) and op.device_target in ("GPU", "Dvpp") for op in ops):
        return dataclasses.replace(node, device_parts=(DevicePart("row", 0, len(ops)),))
    if any(isinstance(op, Op) and op.device_target == "Dvpp" for op in ops):
        machine.probe("Dvpp")
    if any(isinstance(op, Op) and op.device_target == "GPU" for op in ops):
        machine.probe("GPU")
    if machine.dvpp_driver is not None:
        # The resolved driver travels with the op; settings reach kernels through ctx.options.
        ops = [_with_dvpp_settings(op, machine.dvpp_driver) for op in ops]
    kinds = [execution(op, machine.dvpp_driver) for op in ops]
    parts: list[DevicePart] = []
    start = 0
    for i in range(1, len(ops) + 1):
        if i == len(ops) or kinds[i] != kinds[start]:
            backend = None
            if kinds[start] == "segment":
                # Dvpp on nvjpg needs the real GPU; GPU ops may run emulated on DALI's CPU backend.
                backend = "cuda" if any(
                    isinstance(op, Op) and op.device_target == "Dvpp" for op in ops[start:i]
                ) else (machine.gpu_backend or "cuda")
            parts.append(DevicePart(kinds[start], start, i, backend))
            start = i
    reads_source = node.reads_source
    notes = list(node.fusion_notes)
    if parts[0].kind == "segment" and reads_source:
        # Files are read by the source's workers and merged into DALI-sized batches instead of
        # being read chunk by chunk in the DALI part's one thread.
        reads_source = False
        notes = [n for n in notes if "in its own workers" not in n]
    parent = ancestors[0] if ancestors else None
    segment_rows = None
    if isinstance(parent, ir.BatchNode) and isinstance(parent.batch_size, int):
        # One DALI run per batch of the pipeline: the size the consumer wants anyway.
        segment_rows = min(max(parent.batch_size, 8), 512)
    for part in parts:
        if part.kind == "segment":
            from minddata.ops.gpu.drivers import describe

            names = ", ".join(op.name for op in ops[part.start : part.end])
            notes.append(f"{names}: {describe(part.backend)}, fed a batch of rows per run")
    return dataclasses.replace(
        node,
        operations=ops,
        device_parts=tuple(parts),
        reads_source=reads_source,
        # A GPU segment ending the map hands its rows on still on the GPU (torch CUDA tensors, or CuPy
        # arrays for CuPy and JAX consumers) when the consumer takes such tensors
        # (config.set_framework) and what follows only stacks them (a plain batch) or hands them over.
        # Anything else gets host arrays.
        device_output=config.get_framework() in ("torch", "cupy", "jax") and _hands_over(ancestors),
        segment_rows=segment_rows,
        fusion_notes=tuple(notes),
    )
