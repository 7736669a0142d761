"""How the op code is laid out (docs/design.md, "Where an op lives"), checked on the source with ``ast``.

1. Plans (``ops/plans/``) are device-free: they import no kernel package (``ops/cpu``, ``ops/dvpp``,
   ``ops/gpu``) and no device library, so specs and every device's kernels can import them.
2. A kernel package imports no private name (``_name``) from another package's module: what devices
   share lives in the plans or in a public function.
3. The modules of ``ops/`` import each other without a cycle, counting imports made inside functions
   (which hide a cycle from the interpreter, not from a reader).
4. An op family has one name: its spec module ``minddata/vision/<family>.py``, its CPU kernels
   ``ops/cpu/<family>.py`` and its tests ``tests/ops/test_<family>.py`` (and its plan, if it has one,
   ``ops/plans/<family>.py``; its GPU kernels, if it has them, ``ops/gpu/<family>.py``), so a newcomer
   finds all of them by that name.

The checkers are tested on planted snippets, so a checker that sees nothing cannot pass.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import test_layering as layering

DEVICE_LIBRARIES = ("cv2", "nvidia", "torch", "torchvision", "acl", "cupy")
KERNEL_PACKAGES = ("minddata.ops.cpu", "minddata.ops.dvpp", "minddata.ops.gpu")


def _top(module: str) -> str:
    return module.split(".")[0]


def plan_violations(rel_path: str, imports: list[layering.Import]) -> list[layering.Import]:
    """A plan importing a kernel package or a device library."""
    if not rel_path.startswith("ops/plans/"):
        return []
    return [
        i
        for i in imports
        if i.module is not None
        and (
            any(layering._is_under(i.module, p) for p in KERNEL_PACKAGES)
            or _top(i.module) in DEVICE_LIBRARIES
        )
    ]


def _package(module: str) -> str:
    return module.rsplit(".", 1)[0]


def private_name_violations(
    rel_path: str, imports: list[layering.Import], modules: set[str]
) -> list[layering.Import]:
    """A file in ops/ importing a ``_private`` name from a module of another package."""
    if not rel_path.startswith("ops/"):
        return []
    own_package = _package(layering.module_name(rel_path))
    found = []
    for i in imports:
        if i.module is None or not layering._is_under(i.module, "minddata.ops"):
            continue
        owner, _, name = i.module.rpartition(".")
        if (
            name.startswith("_")
            and not name.startswith("__")
            and owner in modules
            and own_package not in (owner, _package(owner))
        ):
            found.append(i)
    return found


def import_graph(files: dict[str, list[layering.Import]]) -> dict[str, set[str]]:
    """Module → the project modules it imports (a name imported from a module counts as the module;
    a module's own parent packages do not count: importing a submodule always runs them)."""
    modules = {layering.module_name(f).removesuffix(".__init__"): f for f in files}

    def owner(name: str) -> str | None:
        parts = name.split(".")
        for k in range(len(parts), 0, -1):
            if ".".join(parts[:k]) in modules:
                return ".".join(parts[:k])
        return None

    graph: dict[str, set[str]] = {}
    for name, f in modules.items():
        targets = {owner(i.module) for i in files[f] if i.module is not None}
        graph[name] = {t for t in targets if t is not None and t != name and not name.startswith(t + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a loop (Tarjan's SCCs)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


# --- the repository -------------------------------------------------------------------------------

OPS_FILES = [f for f in layering.FILES if f.startswith("ops/")]
OPS_MODULES = {layering.module_name(f).removesuffix(".__init__") for f in OPS_FILES}


def test_plans_exist():
    # Guards the scan: with no plan files the first rule would pass vacuously.
    assert any(f.startswith("ops/plans/") for f in OPS_FILES)


def test_plans_import_no_kernel_package_or_device_library():
    offences = [o for f in OPS_FILES for o in plan_violations(f, layering.IMPORTS[f])]
    assert not offences, layering._report(
        f"ops/plans/ must stay device-free: no {', '.join(KERNEL_PACKAGES)}, no {', '.join(DEVICE_LIBRARIES)}",
        offences,
    )


def test_kernel_packages_import_no_private_names_across_packages():
    offences = [o for f in OPS_FILES for o in private_name_violations(f, layering.IMPORTS[f], OPS_MODULES)]
    assert not offences, layering._report(
        "a private name imported from another package's module (share it through ops/plans or a public function)",
        offences,
    )


def test_ops_modules_import_without_cycles():
    found = cycles(import_graph({f: layering.IMPORTS[f] for f in OPS_FILES}))
    assert not found, "import cycles in ops/ (counting imports inside functions): " + "; ".join(
        " <-> ".join(group) for group in found
    )


def _stems(folder: str, prefix: str = "") -> set[str]:
    return {
        p.stem.removeprefix(prefix)
        for p in Path(layering.ROOT, folder).glob(f"{prefix}*.py")
        if not p.stem.startswith("_") and p.stem != "conftest"
    }


def _defines_ops(module_name: str) -> bool:
    from minddata.ops.base import Op

    module = importlib.import_module(module_name)
    return any(
        isinstance(v, type) and issubclass(v, Op) and v.__module__ == module_name
        for v in vars(module).values()
    )


def test_each_vision_family_has_kernels_and_tests_of_its_name():
    # Modules of functions (no op spec) have no kernels.
    families = {f for f in _stems("minddata/vision") if _defines_ops(f"minddata.vision.{f}")}
    assert {"resize", "crop"} <= families  # guards the scan
    missing = sorted(
        f"{family}: {path}"
        for family in families
        for path in (f"ops/cpu/{family}.py", f"tests/ops/test_{family}.py")
        if not Path(layering.ROOT, path).is_file()
    )
    assert not missing, "vision op families without their namesake kernel or test module: " + ", ".join(
        missing
    )


def test_each_audio_family_has_kernels_and_tests_of_its_name():
    # The audio families (minddata/audio/<family>.py) pair with ops/cpu/<family>.py and tests/audio/test_<family>.py.
    families = {f for f in _stems("minddata/audio") if _defines_ops(f"minddata.audio.{f}")}
    assert {"spectrogram", "masking"} <= families  # guards the scan
    missing = sorted(
        f"{family}: {path}"
        for family in families
        for path in (f"ops/cpu/{family}.py", f"tests/audio/test_{family}.py")
        if not Path(layering.ROOT, path).is_file()
    )
    assert not missing, "audio op families without their namesake kernel or test module: " + ", ".join(missing)


# The GPU package's modules that are not an op family: the drivers and what the families share.
GPU_DRIVER_MODULES = {"device", "drivers", "kernels", "segment", "torch_segment", "translation"}


def test_each_gpu_module_is_a_cpu_family_or_a_driver_module():
    families = _stems("ops/gpu") - GPU_DRIVER_MODULES
    assert {"resize", "crop", "decode"} <= families  # guards the scan
    orphans = sorted(families - _stems("ops/cpu"))
    assert not orphans, (
        f"ops/gpu/ modules named after no CPU family (ops/cpu/<name>.py): {orphans}; put a GPU kernel in the "
        "module of its op's CPU family, or list a new driver module in GPU_DRIVER_MODULES"
    )


def test_each_plan_belongs_to_a_vision_or_audio_family():
    # image.py holds what the plans share.
    orphans = sorted(_stems("ops/plans") - _stems("minddata/vision") - _stems("minddata/audio") - {"image"})
    assert not orphans, (
        f"plans without a vision or audio family of their name (minddata/vision/<name>.py, "
        f"minddata/audio/<name>.py): {orphans}"
    )


# --- the checkers, on planted snippets ------------------------------------------------------------


@pytest.mark.parametrize(
    "snippet",
    [
        "from minddata.ops.cpu.image import _image",
        "import cv2",
        "def f():\n    from minddata.ops.gpu import resize\n",
    ],
)
def test_plan_checker_flags_device_code(snippet):
    assert plan_violations("ops/plans/x.py", layering.imports_in("ops/plans/x.py", snippet))


def test_plan_checker_accepts_plans_and_core():
    snippet = "import numpy as np\nfrom minddata import config\nfrom minddata.ops.plans.image import square"
    assert not plan_violations("ops/plans/x.py", layering.imports_in("ops/plans/x.py", snippet))


def test_private_name_checker_flags_only_other_packages():
    modules = {"minddata.ops.cpu.image", "minddata.ops.cpu.crop", "minddata.ops.gpu.crop"}
    snippet = "from minddata.ops.cpu.image import _image"
    assert private_name_violations(
        "ops/gpu/crop.py", layering.imports_in("ops/gpu/crop.py", snippet), modules
    )
    assert not private_name_violations(
        "ops/cpu/crop.py", layering.imports_in("ops/cpu/crop.py", snippet), modules
    )
    public = "from minddata.ops.cpu.image import channels\nfrom minddata.ops.cpu import _pixels"
    assert not private_name_violations("ops/gpu/x.py", layering.imports_in("ops/gpu/x.py", public), modules)


def test_cycle_checker_sees_cycles_hidden_in_functions():
    files = {
        "ops/cpu/a.py": layering.imports_in("ops/cpu/a.py", "from minddata.ops.cpu.b import f"),
        "ops/cpu/b.py": layering.imports_in(
            "ops/cpu/b.py", "def f():\n    from minddata.ops.cpu.a import g\n"
        ),
        "ops/cpu/c.py": layering.imports_in("ops/cpu/c.py", "from minddata.ops.cpu import a"),
    }
    assert cycles(import_graph(files)) == [["minddata.ops.cpu.a", "minddata.ops.cpu.b"]]


def test_cycle_checker_ignores_a_module_importing_its_own_package():
    files = {
        "ops/cpu/__init__.py": layering.imports_in("ops/cpu/__init__.py", "from minddata.ops.cpu import a"),
        "ops/cpu/a.py": layering.imports_in("ops/cpu/a.py", "from minddata.ops.cpu._ext import k"),
    }
    assert cycles(import_graph(files)) == []


def test_layout_scan_reads_the_checkout():
    assert Path(layering.ROOT, "ops", "plans", "__init__.py").is_file()
