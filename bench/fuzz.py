"""Mutation fuzzing of the inputs: TFRecord, CSV, encoded images and record files, read through real pipelines.

Each target builds a small valid input in a work folder, mutates it with a seeded mutator
(:func:`minddata.bench.corpus.mutate`: bit flips, edge bytes, insertions, deletions, cuts), reads it
through the dataset (and, for images, Decode) and says what happened:

* ``"rows"``: the pipeline gave well-formed rows (the columns and types the dataset promises);
* ``"error"``: a minddata error (:class:`~minddata.errors.MinddataError`) that names the file;
* ``"crash: <description>"``: anything else: another exception type, a minddata error that does
  not name the file, or malformed rows. The run fails on any.

``TARGETS`` maps a name to ``target(rng, work_folder) -> outcome``; the record targets come from
bench/fuzz_record.py. The suite runs a short seeded pass of each (tests/dataset/test_fuzz.py, tests/record).

Run::

    python -m minddata.bench.fuzz --count 2000 --seed 1            # every target, 2000 inputs each
    python -m minddata.bench.fuzz --seconds 600 --targets csv,tfrecord
"""

from __future__ import annotations

import collections
import gzip
import pathlib
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

from minddata.bench._args import OneLineParser, positive_int
from minddata.bench.corpus import (
    bomb_jpeg,
    csv_text,
    jpeg_bytes,
    mutate,
    tf_example,
    tf_feature,
    tfrecord_bytes,
)

__all__ = ["TARGETS", "classify", "main", "run"]


def _names_file(error: BaseException, path: pathlib.Path) -> bool:
    return path.name in str(error) or getattr(error, "path", None) == str(path) or getattr(error, "source", None) == str(path)


def classify(read: Callable[[], list], path: pathlib.Path, check_row: Callable[[tuple], str | None]) -> str:
    """Run ``read()`` and classify the outcome (see the module docstring). ``check_row`` returns why
    a row is malformed, or ``None``."""
    from minddata.errors import MinddataError

    try:
        rows = read()
    except MinddataError as error:
        if _names_file(error, path):
            return "error"
        return f"crash: {type(error).__name__} without the file name: {str(error)[:200]}"
    except Exception as error:  # noqa: BLE001 - every other exception is what the fuzzer looks for
        return f"crash: {type(error).__name__}: {str(error)[:200]}"
    for row in rows:
        why = check_row(row)
        if why is not None:
            return f"crash: malformed row: {why}"
    return "rows"


def _rows(ds) -> list:
    return list(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))


# ---------------------------------------------------------------------------------------------- targets


def tfrecord_target(rng: random.Random, work: pathlib.Path) -> str:
    """A TFRecord of a few Examples (plain, GZIP or ZLIB), mutated, read with and without a schema."""
    import zlib

    import minddata as md

    records = [
        tf_example({
            "label": tf_feature("int64", [rng.randrange(-5, 5)]),
            "score": tf_feature("float", [rng.random()]),
            "blob": tf_feature("bytes", [bytes(rng.randrange(256) for _ in range(rng.randrange(8)))]),
        })
        for _ in range(rng.randint(1, 4))
    ]
    compression = rng.choice(["", "", "GZIP", "ZLIB"])
    data = tfrecord_bytes(records)
    mutate_after = rng.random() < 0.5  # mutate the compressed bytes, or the records inside
    if not mutate_after:
        data = mutate(rng, data)
    data = gzip.compress(data) if compression == "GZIP" else zlib.compress(data) if compression == "ZLIB" else data
    if mutate_after and compression:
        data = mutate(rng, data)
    path = work / "f.tfrecord"
    path.write_bytes(data)
    schema = None
    if rng.random() < 0.5:
        schema = md.Schema()
        schema.add_column("label", "int64")
        schema.add_column("score", "float32")
        schema.add_column("blob", "bytes")

    def read() -> list:
        return _rows(md.TFRecordDataset(str(path), schema=schema, shuffle=False, compression_type=compression or None))

    def check(row: tuple) -> str | None:
        if schema is not None and (len(row) != 3 or row[0].dtype != np.int64 or row[1].dtype != np.float32):
            return f"{[(getattr(v, 'dtype', type(v)), getattr(v, 'shape', None)) for v in row]}"
        return None

    return classify(read, path, check)


def csv_target(rng: random.Random, work: pathlib.Path) -> str:
    """A CSV of int, float and string columns (with a header), mutated as text bytes."""
    import minddata as md

    rows = [[rng.randrange(-1000, 1000), round(rng.uniform(-9, 9), 3), rng.choice(["a", "bb", "c c"])] for _ in range(4)]
    data = mutate(rng, csv_text(rows, ["i", "f", "s"]).encode())
    path = work / "f.csv"
    path.write_bytes(data)

    def read() -> list:
        return _rows(md.CSVDataset(str(path), column_defaults=[0, 0.0, ""], shuffle=False))

    def check(row: tuple) -> str | None:
        if len(row) != 3 or row[0].dtype != np.int32 or row[1].dtype != np.float32 or row[2].dtype.kind != "U":
            return f"{[(getattr(v, 'dtype', type(v))) for v in row]}"
        if np.isinf(row[1]) and b"inf" not in data.lower():
            return f"a float overflowed to {row[1]} instead of being refused"
        return None

    return classify(read, path, check)


def image_target(rng: random.Random, work: pathlib.Path) -> str:
    """An encoded image (JPEG, progressive JPEG, PNG, a bomb), mutated, through ImageFolder + Decode."""
    import io

    from PIL import Image

    import minddata as md
    from minddata import vision

    kind = rng.choice(["jpeg", "progressive", "png", "bomb"])
    if kind == "png":
        buf = io.BytesIO()
        Image.fromarray(np.full((9, 13, 3), rng.randrange(256), np.uint8)).save(buf, "PNG")
        data = buf.getvalue()
    elif kind == "bomb":
        data = bomb_jpeg(junk_before_sof=rng.random() < 0.5)
    else:
        data = jpeg_bytes(rng.randint(1, 40), rng.randint(1, 40), seed=rng.randrange(100), progressive=kind == "progressive")
    folder = work / "images" / "c"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "f.jpg"
    path.write_bytes(mutate(rng, data))

    def read() -> list:
        ds = md.ImageFolderDataset(str(work / "images"), shuffle=False, num_parallel_workers=1)
        return _rows(ds.map([vision.Decode()], input_columns="image", num_parallel_workers=1))

    def check(row: tuple) -> str | None:
        image = row[0]
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            return f"decoded to {image.shape} {image.dtype}"
        if image.shape[0] * image.shape[1] > 178_956_970:
            return f"a {image.shape[1]}x{image.shape[0]} image got past the pixel limit"
        return None

    return classify(read, path, check)


def _record_targets() -> dict[str, Callable[[random.Random, pathlib.Path], str]]:
    from minddata.bench.fuzz_record import TARGETS as record_targets

    return dict(record_targets)


TARGETS: dict[str, Callable[[random.Random, pathlib.Path], str]] = {
    "tfrecord": tfrecord_target,
    "csv": csv_target,
    "image": image_target,
    **_record_targets(),  # record_meta, record_data: mutated record metadata and data files
}


# ---------------------------------------------------------------------------------------------- driver


def run(
    targets: dict[str, Callable[[random.Random, pathlib.Path], str]],
    count: int | None,
    seconds: float | None,
    seed: int,
) -> dict[str, collections.Counter]:
    """Each target ``count`` times (or until ``seconds`` per target run out); outcomes per target,
    crashes under their full description."""
    outcomes: dict[str, collections.Counter] = {}
    for name, target in targets.items():
        tally: collections.Counter = collections.Counter()
        deadline = time.monotonic() + seconds if seconds else None
        i = 0
        while (count is None or i < count) and (deadline is None or time.monotonic() < deadline):
            rng = random.Random(f"{seed}:{name}:{i}")  # each input reproducible on its own
            work = pathlib.Path(tempfile.mkdtemp(prefix="minddata-fuzz-"))
            try:
                tally[target(rng, work)] += 1
            finally:
                shutil.rmtree(work, ignore_errors=True)
            i += 1
        outcomes[name] = tally
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=positive_int, help="inputs per target (default 500 unless --seconds)")
    parser.add_argument("--seconds", type=positive_int, help="time budget per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--targets", default=",".join(TARGETS), help=f"comma-separated, of {', '.join(TARGETS)}")
    args = parser.parse_args(argv)
    chosen = [t for t in args.targets.split(",") if t]
    unknown = [t for t in chosen if t not in TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {unknown}; known: {list(TARGETS)}")
    count = args.count if args.count or args.seconds else 500
    outcomes = run({t: TARGETS[t] for t in chosen}, count, args.seconds, args.seed)
    crashes = 0
    for name, tally in outcomes.items():
        total = sum(tally.values())
        kinds = collections.Counter("crash" if k.startswith("crash") else k for k in tally.elements())
        print(f"{name}: {total} inputs: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
        for outcome, n in tally.items():
            if outcome.startswith("crash"):
                crashes += n
                print(f"  {n} x {outcome}")
    print(f"total: {sum(sum(t.values()) for t in outcomes.values())} inputs, {crashes} crash(es) (seed {args.seed})")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
