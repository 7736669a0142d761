"""What reading without a map costs: record files and Parquet, A/B in one run.

A memory map of a file that shrinks under the reader faults (SIGBUS). So record files are now read
with ``pread``: each record batch once, in one read of its bytes, for its CRC check and its small
columns; each row's payload then with one ``pread`` into an array of its own. Parquet is read
through the file (``memory_map=False``). This script reads the same data both ways, alternating runs:

- ``guarded``: minddata as it is;
- ``unguarded``: the former fast path, patched in for the run: the file memory-mapped, each batch
  checked once through the map, rows handed out as zero-copy views of the map (record files);
  ``memory_map=True`` (Parquet).

For each source and shuffle mode it prints rows/s (median of ``--repeats``) and the ratio
``guarded / unguarded`` (1.0 = free). Every run checks its output (row count, byte total).

Usage:
    python -m minddata.bench.record_truncation_cost [--rows 4000] [--row-bytes 100000] [--repeats 5]
                                                    [--workers 1 2] [--json out.json]
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minddata.bench._args import OneLineParser, positive_int

__all__ = ["main", "unguarded", "make_data"]


class _MappedBatch:
    """The former read path's view of one record batch: NumPy views of the memory-mapped columns."""

    def __init__(self, batch: Any, fields: list[Any]) -> None:
        from minddata.record._schema import SHAPE_PREFIX

        self.columns: list[Any] = []
        for field in fields:
            column = batch.column(field.name)
            if field.type == "bytes":
                _, offsets, data = column.buffers()
                off = np.frombuffer(offsets, dtype=np.int64)[column.offset : column.offset + len(column) + 1]
                self.columns.append(("bytes", off, np.frombuffer(data, dtype=np.uint8)))
            elif field.type == "string" or field.shape is None:
                self.columns.append(("values", column.to_numpy(zero_copy_only=False)))
            elif not field.variable:
                flat = column.values.to_numpy(zero_copy_only=False)
                self.columns.append(("values", flat.reshape(len(column), *field.shape)))
            else:
                shapes = batch.column(SHAPE_PREFIX + field.name).values.to_numpy().reshape(len(column), len(field.shape))
                self.columns.append(("ragged", column.offsets.to_numpy(), column.values.to_numpy(zero_copy_only=False), shapes))

    def put(self, c: int, rows: np.ndarray, positions: Sequence[int], out: list[Any], read: Any) -> None:
        """Rows as zero-copy views of the map, as the former reader handed them out."""
        col = self.columns[c]
        if col[0] == "values":
            picked = col[1][rows]
            for p, value in zip(positions, picked):
                out[p] = np.asarray(value) if picked.dtype == object else value
        elif col[0] == "bytes":
            off, data = col[1], col[2]
            for p, a, b in zip(positions, off[rows].tolist(), off[rows + 1].tolist()):
                out[p] = data[a:b]
        else:
            off, flat, shapes = col[1], col[2], col[3]
            for p, a, b, shape in zip(positions, off[rows].tolist(), off[rows + 1].tolist(), shapes[rows].tolist()):
                out[p] = flat[a:b].reshape(shape)


@contextlib.contextmanager
def unguarded() -> Iterator[None]:
    """The read path before reads without a map: batches and rows as views of a memory map, Parquet mapped."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from minddata.record import reader

    def mapped_view(self: Any, b: int, fields: tuple[str, ...]) -> Any:
        key = ("mapped", b, fields)
        view = self._views.get(key)
        if view is None:
            with self._lock:
                if self._schema is None:
                    self._schema = self._open()
                mapped = self.__dict__.get("_mapped")
                if mapped is None:
                    mapped = self.__dict__["_mapped"] = pa.ipc.open_file(pa.memory_map(self.path, "r"))
                batch = mapped.get_batch(b)
                self._verify(b, batch, fields)
                view = self._views[key] = _MappedBatch(batch, [self.fields[f] for f in fields])
        return view

    original_file = pq.ParquetFile

    def mapped_parquet(path: Any, memory_map: bool = False, **kwargs: Any) -> Any:
        return original_file(path, memory_map=True, **kwargs)

    saved = (reader.ShardFile.check_size, reader.ShardFile.view, reader.ShardFile.reader_for)
    reader.ShardFile.check_size = lambda self: None  # type: ignore[method-assign]
    reader.ShardFile.view = mapped_view  # type: ignore[method-assign]
    reader.ShardFile.reader_for = lambda self, b: None  # type: ignore[method-assign]  # views need no reads
    pq.ParquetFile = mapped_parquet  # type: ignore[misc]
    try:
        yield
    finally:
        reader.ShardFile.check_size, reader.ShardFile.view, reader.ShardFile.reader_for = saved  # type: ignore[method-assign]
        pq.ParquetFile = original_file  # type: ignore[misc]


def make_data(folder: str, rows: int, row_bytes: int) -> dict[str, str]:
    """A record file and a Parquet file of the same rows: ``label`` and ``blob`` (random bytes)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from minddata.record import ArrowRecordWriter

    rng = np.random.default_rng(0)
    blobs = [rng.integers(0, 256, row_bytes, dtype=np.uint8).tobytes() for _ in range(min(rows, 64))]
    record = os.path.join(folder, "rows.mindrecord")
    with ArrowRecordWriter(record) as writer:
        writer.add_schema({"label": {"type": "int32"}, "blob": {"type": "bytes"}})
        for start in range(0, rows, 256):
            writer.write_raw_data([{"label": i, "blob": blobs[i % len(blobs)]} for i in range(start, min(rows, start + 256))])
    parquet = os.path.join(folder, "rows.parquet")
    table = pa.table({"label": np.arange(rows, dtype=np.int32),
                      "blob": pa.array([blobs[i % len(blobs)] for i in range(rows)], pa.binary())})
    pq.write_table(table, parquet, row_group_size=max(1, (4 << 20) // max(row_bytes, 1)), compression="none")
    return {"record": record, "parquet": parquet}


def _once(source: str, path: str, shuffle: bool, workers: int) -> tuple[float, int, int]:
    import minddata as md

    md.config.set_seed(1)
    start = time.perf_counter()
    cls = md.MindDataset if source == "record" else md.ParquetDataset
    ds = cls(path, shuffle=shuffle, num_parallel_workers=workers)
    rows = total = 0
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    try:
        for row in it:
            blob = row[1]
            rows += 1
            total += int(blob[0]) + int(blob[-1]) + len(blob)  # touch the row as a consumer would
    finally:
        it.close()
    return time.perf_counter() - start, rows, total


def run(paths: dict[str, str], repeats: int, workers_list: Sequence[int], log: Any = print) -> list[dict[str, Any]]:
    results = []
    for source, path in paths.items():
        for shuffle in (False, True):
            for workers in workers_list:
                times: dict[str, list[float]] = {"guarded": [], "unguarded": []}
                expected = None
                for k in range(repeats + 1):  # the first round warms the page cache and imports
                    for mode in ("guarded", "unguarded"):
                        with unguarded() if mode == "unguarded" else contextlib.nullcontext():
                            seconds, rows, total = _once(source, path, shuffle, workers)
                        if expected is None:
                            expected = (rows, total)
                        elif (rows, total) != expected:
                            raise RuntimeError(f"{source} {mode}: read {rows} rows ({total}), expected {expected}")
                        if k:
                            times[mode].append(seconds)
                rate = {m: expected[0] / statistics.median(t) for m, t in times.items()}  # type: ignore[index]
                result = {"source": source, "shuffle": shuffle, "workers": workers, "rows": expected[0],  # type: ignore[index]
                          "guarded_rows_per_s": rate["guarded"], "unguarded_rows_per_s": rate["unguarded"],
                          "ratio": rate["guarded"] / rate["unguarded"], "seconds": times}
                results.append(result)
                log(f"{source:<8} shuffle={str(shuffle):<5} W={workers}: guarded {rate['guarded']:>9,.0f} rows/s, "
                    f"unguarded {rate['unguarded']:>9,.0f} rows/s, ratio {result['ratio']:.2f}")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m minddata.bench.record_truncation_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=positive_int, default=4000, help="rows per file (default 4000)")
    parser.add_argument("--row-bytes", type=positive_int, default=100_000, help="bytes per row (default 100000)")
    parser.add_argument("--repeats", type=positive_int, default=5, help="timed runs per mode; the median is kept")
    parser.add_argument("--workers", type=positive_int, nargs="+", default=[1, 2], help="reader workers (default 1 2)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="minddata-truncation-cost-") as folder:
        paths = make_data(folder, args.rows, args.row_bytes)
        print(f"{args.rows} rows of {args.row_bytes} bytes; {os.cpu_count()} cores; median of {args.repeats} runs", flush=True)
        results = run(paths, args.repeats, args.workers)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
