"""Kernels registered per (op name, device), and each op's facts, declared where its kernels are.

Two registries, filled as the kernel packages import (``minddata.ops.cpu``, ``.gpu``, ``.dvpp``):

* kernels: :func:`register_kernel` per (op, device); the engine and eager calls look them up with
  :func:`get_kernel`; the devices an op runs on are :func:`available_devices`.
* facts: :func:`declare_op` states what the engine and the tests need to know about an op, next to
  its kernels (as DALI registers an operator with its schema): whether it decodes, its CPU cost for
  placement, whether its output is float, its tolerance on each device against the CPU kernel, and
  the ops it fuses with. Placement (costs, float outputs, decoders), the contract test
  (tolerances) and docs/devices.md read :func:`op_facts`; ``minddata devices -v`` reads the kernel
  registry; the fusion rewrites (``minddata.engine.fusions``) are checked against the declared
  fusion partners by tests/ops/test_op_facts.py.

An op's CPU module declares its cost, ``decodes``, ``float_output`` and fusion partners; each device
module declares that device's tolerance when it registers the kernel. Facts for one op may come in
several declarations: each fact may be stated any number of times with the same value, and stating it
with another value is an error naming both.

Examples:
    >>> from minddata.ops.registry import op_facts, decoder_ops
    >>> op_facts("Decode").decodes
    True
    >>> "FusedDecodeResize" in decoder_ops()
    True
    >>> op_facts("NoSuchOp")
    OpFacts(name='NoSuchOp', decodes=False, cost_ms_per_mp=None, float_output=False, tolerances={}, fusion_partners=())
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from minddata.errors import DeviceError

__all__ = [
    "OpFacts",
    "available_devices",
    "declare_op",
    "declared_ops",
    "decoder_ops",
    "get_kernel",
    "has_kernel",
    "op_facts",
    "ops_on",
    "register_kernel",
]

Kernel = Callable[..., Any]

_KERNELS: dict[tuple[str, str], Kernel] = {}
# Kernel modules import lazily: device packages may need optional dependencies.
_KERNEL_PACKAGES = {"CPU": "minddata.ops.cpu", "GPU": "minddata.ops.gpu", "Dvpp": "minddata.ops.dvpp"}
_loaded: set[str] = set()
# Worker threads look up their first kernels at the same time: one imports, the others wait.
_load_lock = threading.RLock()


@dataclass(frozen=True)
class OpFacts:
    """What the engine, the tests and the docs know about one op, declared once (:func:`declare_op`).

    ``tolerances`` maps a device to the largest |difference| of its kernel's output from the CPU
    kernel's, per element on the data's own scale (grey levels for uint8). Keys: a device
    (``"GPU"``, ``"Dvpp"``), or a device and backend (``"GPU:cuda"``, a bound that holds on that
    backend only); ``"<key> mean"`` bounds the mean |difference| the same way. Read them with
    :meth:`tolerance`.

    Examples:
        >>> facts = OpFacts("Resize", cost_ms_per_mp=2.0, tolerances={"GPU": 1.0, "GPU mean": 0.25})
        >>> facts.tolerance("GPU")
        (1.0, 0.25)
        >>> facts.tolerance("Dvpp") is None
        True
    """

    name: str
    decodes: bool = False  # takes encoded bytes, gives pixels
    cost_ms_per_mp: float | None = None  # CPU cost per megapixel for placement (None: not priced)
    float_output: bool = False  # output is float (4x bytes to move)
    tolerances: Mapping[str, float] = field(default_factory=dict)  # device -> max |diff| vs the CPU kernel
    fusion_partners: tuple[str, ...] = ()  # ops it fuses with when they follow it

    def tolerance(self, device: str, backend: str | None = None) -> tuple[float, float] | None:
        """(largest, mean) |difference| from the CPU kernel on ``device`` (and ``backend``, whose own
        bound wins where one is declared), or ``None`` when none is declared. The mean defaults to the
        largest."""
        keys = ([f"{device}:{backend}"] if backend else []) + [device]
        for key in keys:
            if key in self.tolerances:
                largest = self.tolerances[key]
                return largest, self.tolerances.get(f"{key} mean", largest)
        return None


_FACT_FIELDS = tuple(f.name for f in dataclasses.fields(OpFacts) if f.name != "name")
# op name -> the facts stated so far (only those stated: an unstated fact keeps OpFacts' default).
_STATED: dict[str, dict[str, Any]] = {}
# op name -> (fact, value) -> where it was stated, for the conflict message.
_WHERE: dict[str, dict[str, str]] = {}
# What decoder_ops() answers (kernels ask it per row), until a declaration of ``decodes`` changes it.
_decoders: frozenset[str] | None = None


def _caller() -> str:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"


def declare_op(name: str, **facts: Any) -> OpFacts:
    """State facts about op ``name`` (the fields of :class:`OpFacts`); returns all its facts so far.

    Declaring a fact again with the same value is a no-op; ``tolerances`` merge per key. A fact
    stated with a different value than before raises a ``ValueError`` naming the op, the fact, both
    values and where the first was declared.

    Examples:
        >>> from minddata.ops.registry import declare_op, op_facts
        >>> op_facts("Normalize").float_output  # ops/cpu/normalize.py declares it
        True
        >>> declare_op("Normalize", float_output=True).float_output  # the same again: no change
        True
    """
    unknown = sorted(set(facts) - set(_FACT_FIELDS))
    if unknown:
        raise TypeError(f"declare_op({name!r}): unknown facts {unknown}; the facts are {list(_FACT_FIELDS)}")
    global _decoders
    if "fusion_partners" in facts:
        facts["fusion_partners"] = tuple(facts["fusion_partners"])
    if "cost_ms_per_mp" in facts and facts["cost_ms_per_mp"] is not None:
        facts["cost_ms_per_mp"] = float(facts["cost_ms_per_mp"])
    where = _caller()
    with _load_lock:
        stated = _STATED.setdefault(name, {})
        origins = _WHERE.setdefault(name, {})
        tolerances = dict(stated.get("tolerances", {}))
        for key, value in dict(facts.pop("tolerances", {})).items():
            _check_same(name, f"tolerances[{key!r}]", tolerances.get(key), float(value), origins, where)
            tolerances[key] = float(value)
        for fact, value in facts.items():
            _check_same(name, fact, stated.get(fact), value, origins, where)
        stated.update(facts)
        if "decodes" in facts:
            _decoders = None
        if tolerances:
            stated["tolerances"] = tolerances
        return _facts_of(name)


def _check_same(name: str, fact: str, old: Any, new: Any, origins: dict[str, str], where: str) -> None:
    if old is not None and old != new:
        raise ValueError(
            f"{name}: {fact} declared as {new!r} at {where}, but as {old!r} at {origins[fact]}; "
            f"an op's facts are declared once: keep one value"
        )
    origins.setdefault(fact, where)


def _facts_of(name: str) -> OpFacts:
    stated = dict(_STATED.get(name, {}))
    if "tolerances" in stated:
        stated["tolerances"] = dict(sorted(stated["tolerances"].items()))
    return OpFacts(name, **stated)


def op_facts(name: str) -> OpFacts:
    """Everything declared about op ``name`` (after loading the kernel packages, as
    :func:`has_kernel` does); an op nobody declared gets ``OpFacts(name)``, every fact at its
    default.

    Examples:
        >>> from minddata.ops.registry import op_facts
        >>> op_facts("Normalize").float_output
        True
    """
    for device in _KERNEL_PACKAGES:
        _load(device)
    return _facts_of(name)


def declared_ops() -> list[OpFacts]:
    """The facts of every declared op, sorted by name (the kernel packages loaded first)."""
    for device in _KERNEL_PACKAGES:
        _load(device)
    return [_facts_of(name) for name in sorted(_STATED)]


def decoder_ops() -> frozenset[str]:
    """Names of the ops that take encoded bytes and give pixels (``decodes=True``).

    Decoding is declared with the CPU kernel (every op has one), so only the CPU package is loaded:
    device packages may call this while they import. The answer is kept until a declaration of
    ``decodes`` changes it, so kernels may ask per row.
    """
    global _decoders
    _load("CPU")
    found = _decoders
    if found is None:
        with _load_lock:
            found = _decoders = frozenset(name for name, stated in _STATED.items() if stated.get("decodes"))
    return found


# ---------------------------------------------------------------------------------------------- kernels


def register_kernel(
    op_name: str, device: str, *, tolerance: float | None = None, mean_tolerance: float | None = None
) -> Callable[[Kernel], Kernel]:
    """Decorator: ``@register_kernel("Decode", "CPU")`` over ``def kernel(op, ctx, *inputs)``.

    ``tolerance`` (and ``mean_tolerance``) declare, with the kernel, how far a non-CPU kernel's output
    may be from the CPU kernel's (:attr:`OpFacts.tolerances` of ``device``).
    """
    if tolerance is not None:
        bounds = {device: tolerance}
        if mean_tolerance is not None:
            bounds[f"{device} mean"] = mean_tolerance
        declare_op(op_name, tolerances=bounds)

    def wrap(fn: Kernel) -> Kernel:
        _KERNELS[(op_name, device)] = fn
        return fn

    return wrap


def _load(device: str) -> None:
    if device in _loaded:
        return
    with _load_lock:
        if device in _loaded:
            return
        package = _KERNEL_PACKAGES.get(device)
        if package:
            importlib.import_module(package)
        _loaded.add(device)


def has_kernel(op_name: str, device: str) -> bool:
    _load(device)
    return (op_name, device) in _KERNELS


def ops_on(device: str) -> list[str]:
    """Names of the ops with a kernel on ``device``, sorted."""
    _load(device)
    return sorted(name for name, dev in _KERNELS if dev == device)


def available_devices(op_name: str) -> list[str]:
    return [dev for dev in _KERNEL_PACKAGES if has_kernel(op_name, dev)]


def get_kernel(op_name: str, device: str) -> Kernel:
    _load(device)
    try:
        return _KERNELS[(op_name, device)]
    except KeyError:
        have = ", ".join(ops_on(device)) or "none"
        raise DeviceError(
            f"{op_name}: no kernel on device {device!r}. Ops with a {device} kernel: {have}. "
            f"Place {op_name} on a device that has it, e.g. .device('CPU')."
        ) from None
