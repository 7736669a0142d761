"""The coverage table: which public names of ``mindspore.dataset`` 2.x minddata has.

``bench/mindspore_names.txt`` (kept in the repository) lists MindSpore's public names; each
``dataset.X`` is looked up as ``minddata.X``, ``dataset.vision.X`` as ``minddata.vision.X`` and so on
for ``transforms``, ``text`` and ``config``; ``dataset.Dataset.X`` (a public method or attribute of
MindSpore's ``Dataset``) counts as present when every dataset in :func:`transformed_datasets` (a
source and the result of each operation on it) has ``X``. A name minddata does not have is listed with
its reason: :data:`NOT_APPLICABLE` (MindSpore's C++ runtime plumbing, which has no counterpart here) or
:data:`ABSENT` (user API minddata does not offer); a name missing from both fails the page's test.
``python -m minddata.bench.coverage`` rewrites ``docs/coverage.md``; ``--list-mindspore`` (run with a
Python that has mindspore) prints the names list afresh.

Examples:
    >>> rows = coverage()
    >>> ("dataset.ImageFolderDataset", "minddata.ImageFolderDataset", True) in rows
    True
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import sys
from pathlib import Path
from typing import Any

__all__ = ["ABSENT", "NOT_APPLICABLE", "coverage", "minddata_name", "render", "mindspore_names",
           "transformed_datasets"]

NAMES_FILE = Path(__file__).with_name("mindspore_names.txt")
# Sections of the table: MindSpore's module -> minddata's.
MODULES = {
    "dataset": "minddata",
    "dataset.vision": "minddata.vision",
    "dataset.transforms": "minddata.transforms",
    "dataset.text": "minddata.text",
    "dataset.audio": "minddata.audio",
    "dataset.config": "minddata.config",
    "dataset.Dataset": "minddata.Dataset",
}

_IR_TREE = "internal to MindSpore's C++ runtime: "
_OWN_PLAN = "; minddata compiles its own plan when an iterator is made (`Dataset.explain()` shows it)"
# MindSpore names that are plumbing of its C++ runtime rather than user API: the reason each has no
# counterpart here.
NOT_APPLICABLE = {
    "dataset.Dataset.create_ir_tree": _IR_TREE + "copies the pipeline and builds the C++ IR tree from it" + _OWN_PLAN,
    "dataset.Dataset.parse": _IR_TREE + "makes the C++ IR node of one Python dataset object" + _OWN_PLAN,
    "dataset.Dataset.parse_tree": _IR_TREE + "makes the C++ IR tree of a pipeline, children first" + _OWN_PLAN,
    "dataset.Dataset.pre_parse": _IR_TREE + "sets one worker and no multiprocessing on a node before it is parsed "
                                 "for a getter (`get_dataset_size()`...)" + _OWN_PLAN,
    "dataset.Dataset.post_parse": _IR_TREE + "attaches the cache client and worker count to a parsed C++ IR node"
                                  + _OWN_PLAN,
    "dataset.Dataset.pre_process": _IR_TREE + "inserts the batch of a GeneratorDataset given a batch_sampler before "
                                   "the IR tree is built" + _OWN_PLAN,
    "dataset.Dataset.iterator_bootstrap": _IR_TREE + "a node's start-up hook, called while the IR tree is built "
                                          "(batch's per_batch_map process pool)" + _OWN_PLAN,
    "dataset.Dataset.device_que": _IR_TREE + "wraps the pipeline in a TransferDataset that feeds the Ascend/GPU "
                                  "device queue of MindSpore's dataset sink mode; here `minddata.trainer.Model.train("
                                  "..., dataset_sink_mode=True)` stages batches on the device with its sink thread, "
                                  "and `Dataset.to_torch()` feeds a PyTorch loop",
}
# User-facing MindSpore names minddata does not offer, and why.
ABSENT = {
    "dataset.transforms.Plugin": "loads a C++ plug-in (a shared library built against MindSpore's C++ runtime and "
                                 "its tensor ABI) as a transform; minddata has no such runtime to load it into: a "
                                 "Python function (or one calling the library through ctypes/pybind11) in `map` "
                                 "does that job",
}


def mindspore_names(path: Path = NAMES_FILE) -> list[str]:
    """The names in the kept list, in its order (comments and blank lines skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def minddata_name(mindspore: str) -> str:
    """``dataset.vision.Resize`` -> ``minddata.vision.Resize``."""
    module, _, name = mindspore.rpartition(".")
    return f"{MODULES[module]}.{name}"


@functools.lru_cache(maxsize=1)
def transformed_datasets() -> dict[str, Any]:
    """A source and what each operation makes of it, by operation name: the datasets a
    ``Dataset`` method must be present on."""
    import numpy as np

    import minddata as md

    source = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False)
    return {
        "source": source, "map": source.map(abs, input_columns="x"), "batch": source.batch(2),
        "padded_batch": source.padded_batch(2), "shuffle": source.shuffle(2), "repeat": source.repeat(2),
        "project": source.project("x"), "rename": source.rename("x", "y"), "take": source.take(2),
        "skip": source.skip(1), "filter": source.filter(bool), "zip": source.zip(source.rename("x", "z")),
        "concat": source.concat(source), "split": source.split([3, 3], randomize=False)[0],
        "sync_wait": source.sync_wait("c"), "apply": source.apply(lambda d: d),
        "bucket_batch_by_length": source.bucket_batch_by_length(["x"], [2], [1, 1]),
    }


def _has(full: str) -> bool:
    module, _, name = full.rpartition(".")
    if module == "minddata.Dataset":
        return all(hasattr(d, name) for d in transformed_datasets().values())
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return False
    try:
        getattr(mod, name)
    except AttributeError:
        return False
    return True


def coverage(names: list[str] | None = None) -> list[tuple[str, str, bool]]:
    """``(MindSpore name, minddata name, importable)`` for every kept name."""
    return [(n, minddata_name(n), _has(minddata_name(n))) for n in (names or mindspore_names())]


def render(rows: list[tuple[str, str, bool]]) -> str:
    """The Markdown page: a summary line per module, one table per module (each absent name with its
    reason), then the names that are MindSpore's runtime plumbing, with theirs."""
    out = [
        "# Coverage of mindspore.dataset",
        "",
        "Which public names of `mindspore.dataset` 2.10 minddata has (✔) and which it does not (✗, with the",
        "reason). Generated by `python -m minddata.bench.coverage` from `bench/mindspore_names.txt`; a test checks",
        "that every ✔ name imports, that every other name has its reason, and that this page is current.",
        "Behaviour that differs on purpose is listed in [Differences from MindSpore](mindspore_differences.md).",
        "",
        "| module | have | of | not applicable |",
        "|---|---|---|---|",
    ]
    by_module: dict[str, list[tuple[str, str, bool]]] = {m: [] for m in MODULES}
    inapplicable: list[str] = []
    for row in rows:
        if not row[2] and row[0] in NOT_APPLICABLE:
            inapplicable.append(row[0])
        else:
            by_module[row[0].rpartition(".")[0]].append(row)
    for module, items in by_module.items():
        what = "public methods and attributes" if module == "dataset.Dataset" else "names"
        skipped = sum(1 for n in inapplicable if n.rpartition(".")[0] == module)
        out.append(f"| `mindspore.{module}` ({what}) | {sum(1 for r in items if r[2])} | {len(items)} | {skipped} |")
    for module, items in by_module.items():
        out += ["", f"## mindspore.{module}", ""]
        if module == "dataset.Dataset":
            out += ["Present (✔) when a source and the result of every operation on it (`map`, `batch`,",
                    "`shuffle`, `zip`, `concat`...) have it. MindSpore's runtime plumbing is listed under",
                    "[Not applicable](#not-applicable).", ""]
        out += ["| MindSpore | minddata | | |", "|---|---|---|---|"]
        for ms, md, ok in items:
            name = ms.rpartition(".")[2]
            if ok:
                out.append(f"| `{name}` | `{md}` | ✔ | |")
            else:
                out.append(f"| `{name}` |  | ✗ | {ABSENT.get(ms, 'not implemented yet')} |")
    out += ["", "## Not applicable", "",
            "Public in MindSpore's Python API, but plumbing of its C++ runtime rather than something a pipeline",
            "calls; minddata has no such runtime, so these have no counterpart (and are not counted above).", "",
            "| MindSpore | why |", "|---|---|"]
    out += [f"| `mindspore.{name}` | {NOT_APPLICABLE[name]} |" for name in inapplicable]
    return "\n".join(out) + "\n"


def _list_mindspore() -> list[str]:
    import __future__

    import mindspore.dataset as ds  # only with --list-mindspore, in a Python that has mindspore
    import mindspore.dataset.audio  # noqa: F401  (not imported by mindspore.dataset itself)

    def public(mod, prefix):
        names = getattr(mod, "__all__", None) or dir(mod)
        # A module's `from __future__ import ...` leaves a _Feature object behind: not API.
        return [f"{prefix}.{n}" for n in sorted(names)
                if not n.startswith("_") and not inspect.ismodule(getattr(mod, n, None))
                and not isinstance(getattr(mod, n, None), __future__._Feature)]

    config = [f"dataset.config.{n}" for n in sorted(dir(ds.config))
              if not n.startswith("_") and (n.startswith(("set_", "get_")) or n == "load")]
    from mindspore.dataset.engine.datasets import TextBaseDataset

    # Dataset's public methods and attributes, with those every MindSpore dataset class also gets
    # from TextBaseDataset (build_vocab...).
    methods = sorted({n for cls in (ds.Dataset, TextBaseDataset) for n in dir(cls) if not n.startswith("_")})
    return (public(ds, "dataset") + public(ds.vision, "dataset.vision") + public(ds.transforms, "dataset.transforms")
            + public(ds.text, "dataset.text") + public(ds.audio, "dataset.audio") + config
            + [f"dataset.Dataset.{n}" for n in methods])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "coverage.md"),
                        help="page to write (default: docs/coverage.md of the checkout)")
    parser.add_argument("--list-mindspore", action="store_true", help="print mindspore.dataset's public names")
    args = parser.parse_args(argv)
    if args.list_mindspore:
        print("\n".join(_list_mindspore()))
        return 0
    rows = coverage()
    Path(args.out).write_text(render(rows), encoding="utf-8")
    print(f"wrote {args.out}: {sum(r[2] for r in rows)} of {len(rows)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
