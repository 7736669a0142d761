"""The package layout's rules (DESIGN.md §2), checked on the source with ``ast``.

1. Nothing imports a bare ``ops``/``engine``/``trainer``/``bench``: those folders install only as
   ``minddata.ops`` etc., so a bare import works from a checkout and breaks once installed.
2. Layers point down: ``ops/`` uses only itself and the core modules (errors, config, version);
   ``engine/`` also itself; neither knows the trainer, the benchmarks or the public API modules; the
   trainer does not know the benchmarks; the core modules import nothing above them.
3. The service (``minddata/serve/``) is a consumer at the top: it uses the public API, the engine and
   the trainer but not the benchmarks, and only the CLI imports it.
4. The benchmarks sit above the public API: nothing in ``minddata/`` imports ``minddata.bench``, and
   nothing imports the command line (``minddata.cli``), the console script's entry point. The CLI
   reaches ``minddata bench`` and ``minddata parity`` through the entry-point group
   ``minddata.commands`` (pyproject.toml), not an import; :data:`DISPATCH` lists any exception.

Every rule counts imports at any depth: an import inside a function (a lazy import) breaks a layer as
much as one at the top of the file.

Each rule is its own test and names the file and line of every offence. The checker itself is tested on
planted snippets, so a checker that sees nothing cannot pass.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _layers() -> dict[str, str]:
    """setup.py's folder → package mapping, read from its source so the two cannot drift apart."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "LAYERS" for t in targets):
                return ast.literal_eval(node.value)
    raise AssertionError("setup.py defines no LAYERS mapping; this test reads the folder layout from it")


LAYERS = _layers()
BARE = tuple(folder for folder, name in LAYERS.items() if name != folder)  # ops, engine, trainer, bench
SCANNED = (*LAYERS, "tests")

CORE = ("minddata.errors", "minddata.config", "minddata._version")
PUBLIC_API = (
    "minddata.dataset", "minddata.vision", "minddata.transforms", "minddata.text", "minddata.audio", "minddata.samplers",
    "minddata.cli",
)


@dataclass(frozen=True)
class Import:
    """One imported module: ``module`` is absolute (relative imports resolved), or None when a
    relative import climbs above the top-level package."""

    file: str
    line: int
    module: str | None
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text}"


def module_name(rel_path: str) -> str:
    """The name a repository file is imported under once installed, e.g. ``ops/cpu/x.py`` →
    ``minddata.ops.cpu.x``; files outside the packages (tests) keep their path as a name."""
    parts = list(Path(rel_path).with_suffix("").parts)
    if parts[0] in LAYERS:
        parts = LAYERS[parts[0]].split(".") + parts[1:]
    return ".".join(parts)


def _is_package(rel_path: str) -> bool:
    return Path(rel_path).name == "__init__.py"


def _resolve(rel_path: str, level: int, module: str | None) -> str | None:
    """Absolute name of ``from <level dots><module> import ...`` in file ``rel_path``."""
    if Path(rel_path).parts[0] not in LAYERS:
        return None  # not inside an installed package: any relative import escapes
    parts = module_name(rel_path).split(".")
    if _is_package(rel_path):
        parts = parts[:-1]  # ``minddata.ops.__init__`` → package ``minddata.ops``
    # A module's package is its name minus the last part; each extra dot climbs one more.
    package = parts[:-1] if not _is_package(rel_path) else parts
    if level - 1 >= len(package):
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_in(rel_path: str, source: str) -> list[Import]:
    """Every module ``source`` (the file at ``rel_path``) imports, at any depth (also in functions),
    including ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name."""
    tree = ast.parse(source, filename=rel_path)
    lines = source.splitlines()
    found: list[Import] = []

    def add(node: ast.AST, module: str | None) -> None:
        text = lines[node.lineno - 1].strip() if node.lineno - 1 < len(lines) else ""
        found.append(Import(rel_path, node.lineno, module, text))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(node, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module if node.level == 0 else _resolve(rel_path, node.level, node.module)
            if base is None:
                add(node, None)
                continue
            # Judge ``from minddata import vision`` by what it names, minddata.vision: the package's
            # own __init__ runs either way, and ops/ must be able to write ``from minddata import config``.
            for alias in node.names:
                add(node, base if alias.name == "*" else f"{base}.{alias.name}")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                target = node.args[0].value
                if not target.startswith("."):
                    add(node, target)
    return found


def _is_under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def bare_import_violations(imports: list[Import]) -> list[Import]:
    """Imports of a bare top-level ``ops``/``engine``/``trainer``/``bench``, or escaping the package."""
    return [i for i in imports if i.module is None or any(_is_under(i.module, b) for b in BARE)]


def _project(imports: list[Import]) -> list[Import]:
    return [i for i in imports if i.module is not None and _is_under(i.module, "minddata")]


def layer_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    """Project imports ``rel_path``'s layer may not make (the allow-lists of ops/ and engine/)."""
    folder = Path(rel_path).parts[0]
    if folder == "ops":
        allowed = ("minddata.ops", *CORE)
    elif folder == "engine":
        allowed = ("minddata.ops", "minddata.engine", *CORE)
    else:
        return []
    return [i for i in _project(imports) if not any(_is_under(i.module, a) for a in allowed)]


def upward_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    """ops/ and engine/ importing the trainer, the benchmarks or a public API module."""
    if Path(rel_path).parts[0] not in ("ops", "engine"):
        return []
    banned = ("minddata.trainer", "minddata.bench", *PUBLIC_API)
    return [i for i in _project(imports) if any(_is_under(i.module, b) for b in banned)]


def trainer_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    if Path(rel_path).parts[0] != "trainer":
        return []
    return [i for i in _project(imports) if _is_under(i.module, "minddata.bench")]


def core_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    """The core modules that ops/ may use must not pull in anything above them."""
    if module_name(rel_path) not in CORE:
        return []
    return [i for i in _project(imports) if not any(_is_under(i.module, c) for c in CORE)]


SERVE = "minddata.serve"


def serve_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    """The service importing the benchmarks, or anything but the CLI (and the service itself, and
    tests) importing the service."""
    module = module_name(rel_path)
    if _is_under(module, SERVE):
        return [i for i in _project(imports) if _is_under(i.module, "minddata.bench")]
    if module == "minddata.cli" or Path(rel_path).parts[0] == "tests":
        return []
    return [i for i in _project(imports) if _is_under(i.module, SERVE)]


BENCH = "minddata.bench"
CLI = "minddata.cli"
# The exceptions to rule 4, each (file, module it may import) with its reason. None today: the CLI finds
# `minddata bench` and `minddata parity` through the entry-point group "minddata.commands".
DISPATCH: dict[tuple[str, str], str] = {}


def bench_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    """The public API, the service and the library's helpers (``minddata/``) importing the benchmarks,
    but for the documented dispatch."""
    if Path(rel_path).parts[0] != "minddata":
        return []
    return [
        i for i in _project(imports)
        if _is_under(i.module, BENCH) and (rel_path, i.module) not in DISPATCH
    ]


def cli_violations(rel_path: str, imports: list[Import]) -> list[Import]:
    """Anything but tests importing the command line: it is the entry point, and the commands behind it
    share what they need through lower modules (minddata._command_line)."""
    if Path(rel_path).parts[0] == "tests" or module_name(rel_path) == CLI:
        return []
    return [i for i in _project(imports) if _is_under(i.module, CLI)]


# --- the repository -------------------------------------------------------------------------------


def _repo_files() -> list[str]:
    files = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if not any(p in ("__pycache__", "build") or p.endswith(".egg-info") for p in rel.parts):
                files.append(rel.as_posix())
    return files


FILES = _repo_files()
IMPORTS = {f: imports_in(f, (ROOT / f).read_text(encoding="utf-8")) for f in FILES}


def _report(rule: str, offences: list[Import]) -> str:
    return f"{rule}:\n" + "\n".join(f"  {o}" for o in offences)


def test_scans_every_layer():
    # Guards the scan itself: an empty or partial file list would make every rule pass vacuously.
    for folder in ("minddata", "ops", "engine", "trainer", "bench", "tests"):
        assert any(f.startswith(folder + "/") for f in FILES), f"no Python files found under {folder}/"
    assert "tests/test_layering.py" in FILES


def test_no_bare_imports_of_installed_subpackages():
    offences = [o for f in FILES for o in bare_import_violations(IMPORTS[f])]
    assert not offences, _report(
        f"bare import of {'/'.join(BARE)} (they install only as minddata.<name>: write "
        "'from minddata.ops ...') or a relative import climbing out of the package",
        offences,
    )


def test_ops_imports_only_ops_and_core():
    offences = [o for f in FILES if f.startswith("ops/") for o in layer_violations(f, IMPORTS[f])]
    assert not offences, _report(
        f"ops/ may import from the project only minddata.ops.* and {', '.join(CORE)}", offences
    )


def test_engine_imports_only_engine_ops_and_core():
    offences = [o for f in FILES if f.startswith("engine/") for o in layer_violations(f, IMPORTS[f])]
    assert not offences, _report(
        f"engine/ may import from the project only minddata.engine.*, minddata.ops.* and {', '.join(CORE)}",
        offences,
    )


def test_ops_and_engine_do_not_import_upper_layers():
    offences = [o for f in FILES for o in upward_violations(f, IMPORTS[f])]
    assert not offences, _report(
        "ops/ and engine/ must not import the trainer, the benchmarks or public API modules "
        f"({', '.join(PUBLIC_API)})",
        offences,
    )


def test_trainer_does_not_import_bench():
    offences = [o for f in FILES for o in trainer_violations(f, IMPORTS[f])]
    assert not offences, _report("trainer/ must not import minddata.bench", offences)


def test_core_modules_import_only_core():
    offences = [o for f in FILES for o in core_violations(f, IMPORTS[f])]
    assert not offences, _report(
        f"{', '.join(CORE)} are used by ops/ and engine/, so they may import only each other", offences
    )


def test_only_the_cli_imports_the_service_and_it_does_not_import_bench():
    offences = [o for f in FILES for o in serve_violations(f, IMPORTS[f])]
    assert not offences, _report(
        "minddata.serve may be imported only by minddata.cli (and tests), and must not import minddata.bench",
        offences,
    )


def test_the_library_does_not_import_the_benchmarks():
    offences = [o for f in FILES for o in bench_violations(f, IMPORTS[f])]
    assert not offences, _report(
        "minddata/ (public API, service, helpers) must not import minddata.bench, also not inside a function; "
        f"the one exception is the documented dispatch {sorted(DISPATCH)}",
        offences,
    )


def test_nothing_imports_the_command_line():
    offences = [o for f in FILES for o in cli_violations(f, IMPORTS[f])]
    assert not offences, _report(
        "minddata.cli is the console script's entry point: only tests import it (share code through a lower "
        "module such as minddata._command_line)",
        offences,
    )


def test_every_dispatch_exception_is_still_used():
    # An exception nobody needs any more would silently allow a new import of that module.
    for (rel_path, module), _reason in DISPATCH.items():
        assert any(i.module == module for i in IMPORTS[rel_path]), f"{rel_path} no longer imports {module}"


# --- the checker, on planted snippets -------------------------------------------------------------


@pytest.mark.parametrize(
    "path, snippet",
    [
        ("minddata/x.py", "import ops"),
        ("minddata/x.py", "import ops.cpu as c"),
        ("minddata/x.py", "import numpy, engine"),
        ("engine/x.py", "from engine import compiler"),
        ("minddata/vision/x.py", "from ops.cpu import y"),
        ("tests/test_x.py", "from trainer.model import Model"),
        ("bench/x.py", "def f():\n    import bench.images\n"),
        ("minddata/x.py", "import importlib\nimportlib.import_module('engine.compiler')"),
        ("minddata/x.py", "from .. import ops"),  # climbs out of minddata
        ("ops/cpu/x.py", "from .... import y"),  # minddata.ops.cpu → above minddata
        ("tests/test_x.py", "from . import helpers"),  # tests are not a package
    ],
)
def test_checker_flags_bare_imports(path, snippet):
    assert bare_import_violations(imports_in(path, snippet)), f"not flagged in {path}: {snippet!r}"


@pytest.mark.parametrize(
    "path, snippet",
    [
        ("minddata/x.py", "import minddata.ops"),
        ("minddata/x.py", "from minddata.ops.cpu import y"),
        ("minddata/x.py", "import operator, opsin, engineering"),
        ("ops/cpu/x.py", "from .. import base"),  # minddata.ops.base
        ("ops/cpu/x.py", "from ... import config"),  # minddata.config
        ("ops/__init__.py", "from .registry import get_kernel"),
        ("tests/test_x.py", "import pytest\nfrom minddata.bench import images"),
    ],
)
def test_checker_accepts_proper_imports(path, snippet):
    assert not bare_import_violations(imports_in(path, snippet)), f"wrongly flagged in {path}: {snippet!r}"


def test_checker_resolves_relative_imports():
    assert [i.module for i in imports_in("ops/cpu/x.py", "from ..registry import k")] == ["minddata.ops.registry.k"]
    assert [i.module for i in imports_in("ops/cpu/x.py", "from ... import config, errors")] == [
        "minddata.config",
        "minddata.errors",
    ]
    assert imports_in("ops/__init__.py", "from .base import Op")[0].module == "minddata.ops.base.Op"
    assert imports_in("engine/a.py", "from ... import x")[0].module is None


def test_checker_reports_file_and_line():
    (found,) = bare_import_violations(imports_in("ops/x.py", "import numpy\n\nimport engine.ir\n"))
    assert str(found) == "ops/x.py:3: import engine.ir"


@pytest.mark.parametrize(
    "path, snippet, rule",
    [
        ("ops/cpu/x.py", "from minddata.engine import ir", layer_violations),
        ("ops/cpu/x.py", "import minddata", layer_violations),
        ("ops/cpu/x.py", "from minddata import vision", upward_violations),
        ("engine/x.py", "from minddata.dataset import base", upward_violations),
        ("engine/x.py", "def f():\n    from ..dataset import sources\n", upward_violations),
        ("engine/x.py", "from minddata.trainer import Model", layer_violations),
        ("engine/x.py", "import minddata.samplers", upward_violations),
        ("trainer/x.py", "from minddata.bench.runner import run", trainer_violations),
        ("minddata/config.py", "from minddata.dataset import x", core_violations),
        ("minddata/serve/app.py", "from minddata.bench.pipelines import make_ops", serve_violations),
        ("bench/x.py", "from minddata.serve.server import serve", serve_violations),
        ("engine/x.py", "from minddata import serve", serve_violations),
        ("minddata/cli.py", "def f():\n    from minddata.bench.pipelines import PIPELINES\n", bench_violations),
        ("minddata/cli.py", "def f():\n    import minddata.bench.command\n", bench_violations),
        ("minddata/dataset/x.py", "def f():\n    from minddata import bench\n", bench_violations),
        ("minddata/x.py", "def f():\n    importlib.import_module('minddata.bench.runner')\n", bench_violations),
        ("bench/command.py", "def f():\n    from minddata.cli import library_versions\n", cli_violations),
        ("minddata/serve/x.py", "from minddata import cli", cli_violations),
    ],
)
def test_checker_flags_layer_breaks(path, snippet, rule):
    assert rule(path, imports_in(path, snippet)), f"{rule.__name__} did not flag {snippet!r} in {path}"


@pytest.mark.parametrize(
    "path, snippet",
    [
        ("ops/cpu/x.py", "from minddata.ops.registry import register_kernel\nfrom minddata.errors import ArgumentError"),
        ("ops/base.py", "from minddata import config"),
        ("engine/x.py", "from minddata.engine.ir import Node\nfrom minddata.ops import get_kernel\nimport numpy"),
        ("trainer/x.py", "from minddata.engine import iterator"),
        ("minddata/errors.py", "from minddata._version import __version__"),
        ("minddata/cli.py", "from minddata.serve.server import serve"),
        ("minddata/serve/model.py", "from minddata.trainer import OnnxModel\nimport minddata.engine"),
        ("bench/command.py", "from minddata._command_line import CommandParser\nimport minddata.bench.runner"),
        ("tests/test_x.py", "from minddata.cli import main"),
    ],
)
def test_checker_accepts_downward_imports(path, snippet):
    imports = imports_in(path, snippet)
    for rule in (layer_violations, upward_violations, trainer_violations, core_violations, serve_violations,
                 bench_violations, cli_violations):
        assert not rule(path, imports), f"{rule.__name__} wrongly flagged {snippet!r} in {path}"
