"""Devices behind one interface (DESIGN.md §5): the engine sees CPU, GPU and Dvpp only through
:class:`minddata.ops.devices.Device`.

1. The engine has no device-name branches and imports no concrete device module; checked on the
   source with ``ast``, and the checker itself on planted snippets so that a checker that sees nothing
   cannot pass.
2. The registry: names, aliases, and a new device taking part in placement by registering alone.
3. The bundled devices: probes that read a run's options (not the settings now) and say why a device is
   absent and the fix, and a GPU segment built through the interface.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib
from pathlib import Path

import numpy as np
import pytest

import minddata as md
from minddata import config, vision
from minddata.engine import ir, placement
from minddata.engine.placement import Machine
from minddata.errors import ArgumentError, DeviceError
from minddata.ops import probe, registry
from minddata.ops.base import KernelContext
from minddata.ops.devices import (
    CpuDevice,
    Device,
    Presence,
    RowFailure,
    devices,
    get_device,
    register_device,
    segment_needs_gpu,
    unregister_device,
)

ENGINE = Path(__file__).resolve().parents[2] / "engine"
# Names only a concrete device may know: the engine branches on none of them.
DEVICE_NAMES = frozenset({"GPU", "Dvpp", "Ascend"})
CONCRETE_PACKAGES = ("minddata.ops.gpu", "minddata.ops.dvpp")


# --- 1. the engine knows devices only through the interface ---------------------------------------


def _names_in(node: ast.AST) -> set[str]:
    """Device names a comparison operand spells: a string, or a tuple/list/set of strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & DEVICE_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts)) if node.elts else set()
    return set()


def _module_of(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def device_branches(source: str, package: str = "minddata.engine") -> list[str]:
    """Every comparison with a device name and every import of a concrete device package in
    ``source`` (a module of ``package``), as ``"line N: text"``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        offence = False
        if isinstance(node, ast.Compare):
            offence = any(_names_in(operand) for operand in [node.left, *node.comparators])
        elif isinstance(node, ast.Import):
            offence = any(alias.name.startswith(CONCRETE_PACKAGES) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _module_of(node, package)
            offence = module.startswith(CONCRETE_PACKAGES) or (
                module == "minddata.ops" and any(alias.name in ("gpu", "dvpp") for alias in node.names)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            offence = node.value in CONCRETE_PACKAGES or node.value.startswith(tuple(f"{p}." for p in CONCRETE_PACKAGES))
        if offence:
            found.append(f"line {node.lineno}: {ast.get_source_segment(source, node)}")
    return found


@pytest.mark.parametrize(("snippet", "caught"), [
    ('if op.device_target == "GPU":\n    pass', True),
    ('x = device in ("CPU", "Dvpp")', True),
    ('x = "Ascend" != name', True),
    ('x = name not in {"GPU"}', True),
    ("from minddata.ops.gpu.drivers import make_segment", True),
    ("import minddata.ops.dvpp.kernels", True),
    ("from minddata.ops import gpu", True),
    ("from ...ops.dvpp import kernels", True),
    ('importlib.import_module("minddata.ops.gpu.segment")', True),
    ('x = device == "CPU"', False),
    ('message = "placed on GPU"', False),
    ("from minddata.ops.devices import get_device", False),
    ('"""See :mod:`minddata.ops.gpu.drivers`."""', False),
])
def test_the_checker_sees_device_branches_and_imports(snippet, caught):
    assert bool(device_branches(snippet, "minddata.engine.sub")) is caught


def test_the_engine_has_no_device_name_branches_or_concrete_device_imports():
    offences = []
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE.parent)
        package = ".".join(["minddata", *rel.parent.parts])  # what its relative imports start from
        offences += [f"{rel}: {o}" for o in device_branches(path.read_text(), package)]
    assert not offences, (
        "the engine reaches devices only through minddata.ops.devices (get_device(name), Device's "
        "methods); move these into the device's implementation:\n" + "\n".join(offences)
    )


# --- 2. the registry ------------------------------------------------------------------------------


def test_the_registry_holds_cpu_gpu_and_dvpp_with_their_aliases():
    assert [d.name for d in devices()] == ["CPU", "GPU", "Dvpp"]
    assert get_device("Ascend") is get_device("Dvpp") is get_device("dvpp")
    assert get_device("gpu") is get_device("GPU")
    with pytest.raises(DeviceError, match="no device 'TPU'; devices: CPU, GPU, Dvpp"):
        get_device("TPU")


def test_bundled_devices_stay_registered():
    with pytest.raises(ValueError, match="Dvpp is bundled with minddata"):
        unregister_device("Ascend")
    with pytest.raises(TypeError, match="expected a minddata.ops.devices.Device"):
        register_device("GPU")


class _Spare(Device):
    """An accelerator that is here and real: placement may offer it to device="auto"."""

    name = "Spare"
    cost_factor = 0.5

    def probe(self, options=None):
        return Presence(self.name, "spare-driver", "a spare accelerator")

    def backends(self):
        return ("spare-driver",)


@pytest.fixture
def spare():
    device = register_device(_Spare())
    yield device
    unregister_device(device.name)


def test_a_registered_device_is_one_placement_offers(spare):
    machine = Machine()
    assert machine.accelerators() >= {"CPU", "Spare"}
    assert machine.presence("Spare").backend == "spare-driver"
    assert get_device("spare") is spare and not segment_needs_gpu("spare-driver")


def _flip_on_spare(op, ctx, image):
    return np.ascontiguousarray(np.asarray(image)[:, ::-1])


def test_a_new_accelerator_is_one_implementation_and_its_kernels(spare, monkeypatch):
    # Its kernel, registered as any device's is (the registry is patched so that the test leaves none).
    monkeypatch.setitem(registry._KERNELS, ("HorizontalFlip", "Spare"), _flip_on_spare)
    images = [np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3) + i for i in range(3)]
    flip = vision.HorizontalFlip().device("spare")  # placed by its name, any case
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False).map([flip], input_columns="image")
    assert "placed: HorizontalFlip on Spare" in ds.explain()
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    rows = [row["image"] for row in it]
    assert all(np.array_equal(row, image[:, ::-1]) for row, image in zip(rows, images, strict=True))
    assert it.device_stats.transfers == {"CPU->Spare": 3, "Spare->CPU": 3}
    rotate = vision.Rotate(90).device("Spare")  # no Spare kernel: placement names it and the fix
    with pytest.raises(DeviceError, match=r"op Rotate is placed on Spare, which can't run it: no Rotate kernel\. "
                                          r"Ops with a Spare kernel: HorizontalFlip"):
        md.NumpySlicesDataset({"image": images}).map([rotate], input_columns="image").explain()


def test_the_devices_listing_shows_an_added_accelerator(spare):
    listed = {d.name: d for d in md.devices()}
    assert list(listed)[:3] == ["CPU", "GPU", "Dvpp"]
    assert listed["Spare"].present and listed["Spare"].detail == "a spare accelerator"
    assert listed["Spare"].driver == "spare-driver"


def test_an_unregistered_device_is_gone():
    register_device(_Spare())
    unregister_device("spare")
    with pytest.raises(DeviceError, match="no device 'Spare'"):
        get_device("Spare")
    with pytest.raises(ArgumentError, match="Decode.device: device must be one of"):
        vision.Decode().device("Spare")


# --- 3. the bundled devices -----------------------------------------------------------------------


@pytest.fixture
def no_hardware(monkeypatch):
    monkeypatch.setattr(probe, "visible_gpus", lambda: ([], "no NVIDIA GPU visible (nvidia-smi -L found none)"))
    monkeypatch.setattr(probe, "ascend_driver", lambda: probe.DriverInfo("ascend", False, "no 'acl' module"))


def _options(**changes):
    return dataclasses.replace(config.snapshot(), **changes)


def test_absent_devices_say_why_and_the_fix(no_hardware):
    gpu = get_device("GPU").probe(_options(gpu_emulation=False))
    dvpp = get_device("Dvpp").probe(_options(dvpp_driver="auto"))
    assert not gpu.present and "no NVIDIA GPU visible" in gpu.detail and "pip install 'minddata[gpu]'" in gpu.fix
    assert not dvpp.present and "ascend: no 'acl' module" in dvpp.detail
    assert "set_dvpp_driver('reference')" in dvpp.fix


def test_the_dvpp_probe_reads_the_runs_options_not_the_settings_now(no_hardware):
    config.set_dvpp_driver("auto")
    dvpp = get_device("Dvpp")
    presence = dvpp.probe(_options(dvpp_driver="reference"))
    assert presence.backend == "reference" and presence.fix == ""
    assert not dvpp.auto_eligible(presence)  # a preview on the CPU, never chosen by device="auto"
    assert dvpp.segment_host(presence) is None  # it runs per row
    assert "AdjustBrightness" in dvpp.ops(presence) and dvpp.ops(presence) != dvpp.ops(Presence("Dvpp", "nvjpg", ""))


def test_the_gpu_probe_reads_the_runs_emulation_and_driver(no_hardware):
    pytest.importorskip("nvidia.dali")
    config.set_gpu_emulation(False)
    gpu = get_device("GPU")
    presence = gpu.probe(_options(gpu_emulation=True, gpu_driver="dali"))
    assert presence.backend == "dali-cpu" and not gpu.auto_eligible(presence)
    assert gpu.segment_host(presence) == "GPU" and not segment_needs_gpu(presence.backend)
    assert not gpu.probe(_options(gpu_emulation=False, gpu_driver="dali")).present


def test_the_gpu_probe_names_the_runs_device_and_refuses_one_not_visible(monkeypatch):
    pytest.importorskip("nvidia.dali")
    monkeypatch.setattr(probe, "visible_gpus", lambda: (["NVIDIA H100", "NVIDIA H200"], ""))
    gpu = get_device("GPU")
    chosen = gpu.probe(_options(gpu_driver="dali", gpu_emulation=False, gpu_device_id=1))
    assert chosen.backend == "cuda" and chosen.detail.startswith("NVIDIA H200;")
    missing = gpu.probe(_options(gpu_driver="dali", gpu_emulation=False, gpu_device_id=2))
    assert not missing.present and "set_gpu_device_id(2) names GPU 2, but 2 NVIDIA GPU(s)" in missing.detail


def test_the_gpu_lists_the_ops_of_the_driver_it_runs_on():
    gpu = get_device("GPU")
    on_dali, on_torch = gpu.ops(Presence("GPU", "cuda", "")), gpu.ops(Presence("GPU", "torch-cpu", ""))
    assert "Decode" in on_torch and set(on_torch) <= set(on_dali)
    assert on_dali == sorted(on_dali) and on_torch == sorted(on_torch)


def test_placement_falls_back_under_the_runs_options(no_hardware, caplog):
    ds = md.NumpySlicesDataset({"image": [np.zeros((4, 4, 3), np.uint8)]}).map(
        [vision.HorizontalFlip().device("GPU")], input_columns="image")
    with pytest.raises(DeviceError, match="op HorizontalFlip is placed on GPU, which this machine lacks"):
        placement.place(ds._node, options=_options(device_fallback="raise"))
    placed = placement.place(ds._node, options=_options(device_fallback="cpu"))
    (flip,) = next(n for n in placed.walk() if isinstance(n, ir.MapNode)).operations
    assert flip.device_target == "CPU"
    assert "HorizontalFlip is placed on GPU, which this machine lacks" in caplog.text


def test_a_gpu_segment_built_through_the_interface_matches_the_cpu():
    pytest.importorskip("nvidia.dali")
    image = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    flip = vision.HorizontalFlip().device("GPU")
    segment = get_device("GPU").build_segment([flip], backend="dali-cpu", options=config.snapshot(), batch_size=2,
                                              num_threads=1)
    try:
        with segment.lock:
            results, stats = segment.run([image, b"not an image"], [[KernelContext(0, 0, 0, 0)],
                                                                    [KernelContext(0, 0, 1, 0)]])
    finally:
        segment.close()
    np.testing.assert_array_equal(results[0], image[:, ::-1])
    assert isinstance(results[1], RowFailure) and results[1].op_index == 0
    assert stats.to_device == 1


def test_the_host_builds_no_segment():
    with pytest.raises(DeviceError, match="CPU: its ops run per row"):
        CpuDevice().build_segment([], backend=None, options=config.snapshot(), batch_size=1, num_threads=1)


@pytest.mark.parametrize("name", ["minddata.ops.devices", "minddata.ops.gpu.device", "minddata.ops.dvpp.device"])
def test_the_interfaces_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted and result.failed == 0


def test_per_row_gpu_kernels_probe_again_for_another_gpu_device_id(monkeypatch):
    from minddata.ops.gpu import kernels

    monkeypatch.setattr(kernels, "_backends", {})
    monkeypatch.setattr(probe, "visible_gpus", lambda: (["NVIDIA H100"], ""))
    monkeypatch.setattr(probe, "dali_status", lambda: (False, "nvidia.dali not installed"))
    monkeypatch.setattr(probe, "torch_status", lambda: (True, True, "PyTorch 2.5"))
    torch_on_gpu = {"gpu_driver": "torch", "gpu_emulation": False}
    assert kernels.row_backend(options=_options(**torch_on_gpu)) == "torch-cuda"
    with pytest.raises(DeviceError, match=r"set_gpu_device_id\(1\) names GPU 1, but 1 NVIDIA GPU"):
        kernels.row_backend(options=_options(**torch_on_gpu, gpu_device_id=1))


def test_a_compile_probes_each_device_once(spare, monkeypatch):
    # Placement, fusion and the cut into device parts share one probe: a GPU probe runs nvidia-smi.
    probes = []
    monkeypatch.setattr(spare, "probe", lambda options=None: probes.append(options) or _Spare.probe(spare, options))
    monkeypatch.setitem(registry._KERNELS, ("HorizontalFlip", "Spare"), _flip_on_spare)
    images = [np.zeros((4, 5, 3), np.uint8)]
    ds = md.NumpySlicesDataset({"image": images}, shuffle=False).map(
        [vision.Decode(), vision.HorizontalFlip().device("Spare"), vision.Resize(2)], input_columns="image")
    ds.explain()
    assert len(probes) == 1
