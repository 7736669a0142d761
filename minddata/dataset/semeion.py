"""Semeion handwritten digits (MindSpore's ``SemeionDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import array_source, dataset_folder, missing
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError

__all__ = ["SemeionDataset"]

_PIXELS = 16 * 16


def _read(where: str, path: str) -> tuple[np.ndarray, np.ndarray]:
    if not os.path.isfile(path):
        raise missing(where, path, f"{where} reads semeion.data from dataset_dir.")
    images, labels = [], []
    with open(path, encoding="ascii", errors="replace") as f:
        for number, line in enumerate(f, 1):
            items = line.split()
            if not items:
                continue
            try:
                if len(items) != _PIXELS + 10:
                    raise ValueError(f"{len(items)} values, expected {_PIXELS} pixels and 10 label digits")
                values = [int(float(x)) for x in items]
                hot = values[_PIXELS:]
                if hot.count(1) != 1 or any(x not in (0, 1) for x in hot):
                    raise ValueError("the last 10 values must hold a single 1")
            except ValueError as error:
                raise DataFormatError(f"{where}: {path} line {number}: {error}", path=path) from None
            images.append(values[:_PIXELS])
            labels.append(hot.index(1))
    if not images:
        raise DataFormatError(f"{where}: {path} holds no rows.", path=path)
    return np.asarray(images, dtype=np.uint8).reshape(-1, 16, 16), np.asarray(labels, dtype=np.uint32)


class SemeionDataset(Dataset):
    """Semeion handwritten digits (MindSpore's ``SemeionDataset``) from ``semeion.data`` in
    ``dataset_dir``: per line, 256 pixel values (0 or 1, written ``0.0000``/``1.0000``) and 10
    one-hot label digits.

    Columns, as MindSpore's: ``image`` uint8 (16, 16) holding 0 or 1 (scale it with a map to view
    it) and ``label`` uint32 in [0, 9].

    Examples:
        >>> import minddata as md
        >>> md.SemeionDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: SemeionDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "SemeionDataset"
        path = os.path.join(dataset_folder(where, dataset_dir), "semeion.data")
        super().__init__(array_source(
            where, ["image", "label"], lambda: _read(where, path), label_column=1, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))
