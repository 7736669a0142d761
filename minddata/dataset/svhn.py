"""SVHN, the Street View House Numbers (MindSpore's ``SVHNDataset``), from its MATLAB files."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import array_source, dataset_folder, usage_splits
from minddata.dataset._matlab import load_mat
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError

__all__ = ["SVHNDataset"]

_SPLITS = ("train", "test", "extra")


def _load_mat(where: str, path: str) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (32, 32, 3, N) uint8 and ``y`` (N, 1) from one cropped-digits file (MATLAB v5)."""
    content = load_mat(where, path, f"{where} reads <train|test|extra>_32x32.mat (the cropped digits) from dataset_dir.",
                       needs=("X", "y"))
    x, y = np.asarray(content["X"]), np.asarray(content["y"]).reshape(-1)
    if x.ndim != 4 or x.shape[:3] != (32, 32, 3) or x.shape[3] != len(y):
        raise DataFormatError(
            f"{where}: {path}: 'X' must be (32, 32, 3, N) with N = len(y) = {len(y)}. Found: {x.shape}", path=path
        )
    images = np.ascontiguousarray(np.transpose(x, (3, 0, 1, 2)).astype(np.uint8))
    labels = y.astype(np.uint32)
    labels[labels == 10] = 0  # the files label the digit 0 as 10
    return images, labels


class SVHNDataset(Dataset):
    """SVHN's cropped digits (MindSpore's ``SVHNDataset``) from ``train_32x32.mat``,
    ``test_32x32.mat`` and ``extra_32x32.mat`` (MATLAB v5, read with scipy: ``pip install
    'minddata[datasets]'``).

    ``usage``: ``"train"``, ``"test"``, ``"extra"`` or ``"all"`` (default, in that order). Columns
    ``image`` (32, 32, 3) uint8 and ``label`` uint32 in [0, 9] (the files' 10 for the digit 0 becomes 0).

    Examples:
        >>> import minddata as md
        >>> md.SVHNDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: SVHNDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
    ):
        where = "SVHNDataset"
        folder = dataset_folder(where, dataset_dir)
        files = [os.path.join(folder, f"{s}_32x32.mat") for s in usage_splits(where, usage, _SPLITS)]

        def load() -> tuple[np.ndarray, np.ndarray]:
            parts = [_load_mat(where, f) for f in files]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

        super().__init__(array_source(
            where, ["image", "label"], load, label_column=1, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers,
        ))
