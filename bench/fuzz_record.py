"""Seeded mutation fuzzing of record sets: their metadata (``.meta.json``) and their data files.

Each target builds one input in a work folder (a copy of a small valid two-shard set, then one to
three random mutations of one file) and reads it back with :class:`minddata.record.FileReader`. The
outcome is one of:

- ``"rows"``: every row read back equals the row written;
- ``"error"``: a :class:`minddata.errors.MinddataError` whose message names the damaged file;
- ``"crash: <what>"``: anything else (another exception, wrong rows, an error not naming the file).

``TARGETS`` maps a target name to ``fn(rng, work_folder) -> outcome``; ``bench/fuzz.py`` runs them
alongside the other formats' targets. Run alone::

    python -m minddata.bench.fuzz_record [--inputs 2000] [--seed 0]

prints the outcomes by kind per target and exits 1 if any input crashed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["TARGETS", "run", "main", "SCHEMA", "make_rows"]

SCHEMA = {
    "image": {"type": "bytes"},
    "label": {"type": "int32"},
    "name": {"type": "string"},
    "mask": {"type": "float32", "shape": [2]},
    "boxes": {"type": "int64", "shape": [-1, 2]},
}
NAME = "f.mindrecord"
ROWS = 12


def make_rows(n: int = ROWS) -> list[dict[str, Any]]:
    return [
        {
            "image": bytes([i % 256]) * (i * 7 + 1),
            "label": i,
            "name": f"row{i}",
            "mask": np.asarray([i, -i], np.float32),
            "boxes": np.arange(2 * (i % 3), dtype=np.int64).reshape(i % 3, 2),
        }
        for i in range(n)
    ]


_pristine: dict[str, bytes] = {}


def _pristine_files() -> dict[str, bytes]:
    """The files of a valid two-shard set (written once per process), by name."""
    if not _pristine:
        from minddata.record import ArrowRecordWriter

        folder = tempfile.mkdtemp(prefix="minddata-fuzz-")
        try:
            writer = ArrowRecordWriter(os.path.join(folder, NAME), shard_num=2)
            writer.add_schema(SCHEMA, "fuzz")
            writer.add_index(["label"])
            # Small record batches, so mutations land in several batches and their metadata.
            for start in range(0, ROWS, 3):
                writer.write_raw_data(make_rows()[start : start + 3])
                for shard in range(2):
                    writer._flush(shard)  # noqa: SLF001 - one record batch per call, for the fuzzer
            writer.commit()
            for name in os.listdir(folder):
                _pristine[name] = Path(folder, name).read_bytes()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return _pristine


def _fresh_set(work: Path) -> Path:
    """A copy of the pristine set in a new sub-folder of ``work``; returns the folder."""
    folder = Path(tempfile.mkdtemp(dir=work))
    for name, data in _pristine_files().items():
        (folder / name).write_bytes(data)
    return folder


def _same_rows(got: list[dict[str, Any]]) -> bool:
    expected = make_rows()
    # Shards deal rows round-robin; the file order is shard 0's rows, then shard 1's.
    order = [i for shard in range(2) for i in range(shard, ROWS, 2)]
    if len(got) != len(order):
        return False
    for row, i in zip(got, order):
        want = expected[i]
        if (
            row["image"].tobytes() != want["image"]
            or int(row["label"]) != want["label"]
            or str(row["name"]) != want["name"]
            or row["mask"].shape != want["mask"].shape
            or not np.array_equal(row["mask"], want["mask"])
            or row["boxes"].shape != want["boxes"].shape
            or not np.array_equal(row["boxes"], want["boxes"])
        ):
            return False
    return True


def _read(folder: Path, damaged: Path) -> str:
    """Read the whole set back and classify the outcome."""
    from minddata.errors import MinddataError
    from minddata.record import FileReader

    try:
        rows = list(FileReader(str(folder / f"{NAME}0")).get_next())
    except MinddataError as error:
        text = str(error)
        # The file named may be the damaged one, or (for metadata) its data file or a shard it lists.
        if damaged.name.removesuffix(".meta.json") in text or str(folder) in text:
            return "error"
        return f"crash: {type(error).__name__} not naming {damaged.name}: {text[:200]}"
    except Exception as error:  # noqa: BLE001 - this is what the fuzzer counts
        return f"crash: {type(error).__name__}: {str(error)[:200]}"
    return "rows" if _same_rows(rows) else "crash: wrong rows read without an error"


_VALUES: list[Callable[[random.Random], Any]] = [
    lambda r: None,
    lambda r: r.choice([True, False]),
    lambda r: r.randint(-3, 3),
    lambda r: r.choice([2**31, 2**32, 2**63, -(2**63) - 1, 10**30]),
    lambda r: r.random() * 1e6,
    lambda r: float("nan"),
    lambda r: r.choice(["", "x", "10", "int32", "../../etc/hostname", "/etc/hostname", "f.mindrecord1", "a" * 300]),
    lambda r: [],
    lambda r: [r.randint(-1, 5)],
    lambda r: {},
    lambda r: {"type": r.choice(["int32", "bytes", "float16", "nope"])},
]


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indices) into a JSON value, the root excluded."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _mutate_json(rng: random.Random, meta: dict[str, Any]) -> None:
    path = rng.choice(_paths(meta))
    parent: Any = meta
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    action = rng.random()
    if action < 0.15 and isinstance(parent, dict):
        del parent[key]
    elif action < 0.25 and isinstance(parent, list):
        parent.insert(key, parent[key])
    elif action < 0.35 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += rng.choice([-1, 1, 1024, -(2**20)])
    else:
        parent[key] = rng.choice(_VALUES)(rng)


def fuzz_record_meta(rng: random.Random, work: Path) -> str:
    """Mutate one shard's ``.meta.json``: its JSON values, or (sometimes) its bytes."""
    folder = _fresh_set(work)
    target = folder / f"{NAME}{rng.randrange(2)}.meta.json"
    if rng.random() < 0.2:
        data = bytearray(target.read_bytes())
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
        target.write_bytes(bytes(data))
    else:
        meta = json.loads(target.read_text())
        for _ in range(rng.randint(1, 3)):
            _mutate_json(rng, meta)
        target.write_text(json.dumps(meta))
    return _read(folder, target)


def fuzz_record_data(rng: random.Random, work: Path) -> str:
    """Mutate one shard's data file: flipped bytes, a zeroed or copied range, truncation, growth."""
    folder = _fresh_set(work)
    target = folder / f"{NAME}{rng.randrange(2)}"
    data = bytearray(target.read_bytes())
    for _ in range(rng.randint(1, 3)):
        action = rng.random()
        at = rng.randrange(len(data))
        if action < 0.5:
            data[at] ^= 1 << rng.randrange(8)
        elif action < 0.65:
            data[at : at + rng.randint(1, 64)] = bytes(min(64, len(data) - at))
        elif action < 0.8:
            src = rng.randrange(len(data))
            chunk = data[src : src + rng.randint(1, 32)]
            data[at : at + len(chunk)] = chunk
        elif action < 0.9:
            del data[at:]
            if not data:
                break
        else:
            data.extend(bytes(rng.randint(1, 100)))
    target.write_bytes(bytes(data))
    return _read(folder, target)


TARGETS: dict[str, Callable[[random.Random, Path], str]] = {
    "record_meta": fuzz_record_meta,
    "record_data": fuzz_record_data,
}


def run(inputs: int, seed: int = 0, targets: dict[str, Callable[[random.Random, Path], str]] | None = None
        ) -> dict[str, collections.Counter]:
    """``inputs`` inputs per target, seeded; returns outcome counts per target ("crash: ..." kept whole)."""
    results: dict[str, collections.Counter] = {}
    with tempfile.TemporaryDirectory(prefix="minddata-fuzz-") as root:
        for name, target in (targets or TARGETS).items():
            counts: collections.Counter = collections.Counter()
            for k in range(inputs):
                work = Path(root, name, str(k))
                work.mkdir(parents=True)
                counts[target(random.Random(f"{seed}:{name}:{k}"), work)] += 1
                shutil.rmtree(work, ignore_errors=True)
            results[name] = counts
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minddata.bench.fuzz_record", description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=2000, help="inputs per target (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    results = run(args.inputs, args.seed)
    crashed = 0
    for name, counts in results.items():
        crashes = {k: v for k, v in counts.items() if k.startswith("crash")}
        crashed += sum(crashes.values())
        print(f"{name}: {sum(counts.values())} inputs: rows {counts['rows']}, error {counts['error']}, "
              f"crash {sum(crashes.values())}")
        for kind, n in sorted(crashes.items(), key=lambda kv: -kv[1])[:10]:
            print(f"  {n} x {kind}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
