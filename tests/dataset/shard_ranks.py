"""One data-parallel rank per process, for the unseeded sharding property test.

Each rank runs in its own spawned process that never calls ``config.set_seed``, as the ranks of a
real job do, and reports the rows its shard read in each epoch. ``spec`` (plain data, so it pickles)
names the source, the files the parent wrote, how to shard and how many epochs to read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minddata as md


class _Rows:
    """A random-access GeneratorDataset source: row i is i."""

    def __init__(self, n: int):
        self.n = n

    def __getitem__(self, i: int) -> np.ndarray:
        return np.array(i, dtype=np.int64)

    def __len__(self) -> int:
        return self.n


def _sharding(spec: dict[str, Any], shard_id: int) -> dict[str, Any]:
    shards, shuffle = spec["shards"], spec["shuffle"]
    how = spec["sampler"]
    if how == "args":
        return {"num_shards": shards, "shard_id": shard_id, "shuffle": shuffle}
    sampler = md.DistributedSampler(shards, shard_id, shuffle=shuffle)
    if how == "distributed_over_random":
        sampler = md.DistributedSampler(shards, shard_id, shuffle=False)
        sampler.add_child(md.RandomSampler())
    return {"sampler": sampler}


def _dataset(spec: dict[str, Any], shard_id: int) -> md.Dataset:
    source, n = spec["source"], spec["rows"]
    if source in ("text", "csv"):
        files = spec["files"]
        cls = md.TextFileDataset if source == "text" else md.CSVDataset
        return cls(files, shuffle=spec["shuffle"], num_shards=spec["shards"], shard_id=shard_id)
    sharding = _sharding(spec, shard_id)
    if source == "numpy":
        return md.NumpySlicesDataset({"x": np.arange(n)}, **sharding)
    if source == "generator":
        return md.GeneratorDataset(_Rows(n), ["x"], **sharding)
    if source == "image_folder":
        return md.ImageFolderDataset(spec["folder"], **sharding)
    if source == "mindrecord":
        return md.MindDataset(spec["files"][0], **sharding)
    if source == "webdataset":
        return md.WebDataset(spec["files"], columns_list=["cls"], **sharding)
    raise ValueError(f"unknown source {source!r}")


def _as_int(value: np.ndarray) -> int:
    if value.dtype == np.uint8:  # ImageFolderDataset: the file's bytes hold the row number
        return int(value.tobytes().decode())
    return int(str(value))


def rank_rows(spec: dict[str, Any], shard_id: int) -> tuple[int, list[list[int]]]:
    """``(config.get_seed(), rows read per epoch)`` of rank ``shard_id``, with no seed set."""
    md.config.load_defaults()
    iterator = _dataset(spec, shard_id).create_tuple_iterator(num_epochs=spec["epochs"], output_numpy=True)
    try:
        epochs = [[_as_int(row[0]) for row in iterator] for _ in range(spec["epochs"])]
    finally:
        iterator.close()
    return md.config.get_seed(), epochs
