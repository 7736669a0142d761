"""STL-10 (MindSpore's ``STL10Dataset``) from its binary files."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import array_source, dataset_folder, missing
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["STL10Dataset"]

_SIDE = 96
_PIXELS = 3 * _SIDE * _SIDE
_USAGES = {
    "train": ["train"],
    "test": ["test"],
    "unlabeled": ["unlabeled"],
    "train+unlabeled": ["train", "unlabeled"],
    "all": ["train", "test", "unlabeled"],
}
_FIX = "STL10Dataset reads train_X.bin/train_y.bin, test_X.bin/test_y.bin and unlabeled_X.bin (stl10_binary/) from dataset_dir."


def _read_split(where: str, folder: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    image_file = os.path.join(folder, f"{split}_X.bin")
    if not os.path.isfile(image_file):
        raise missing(where, image_file, _FIX)
    raw = np.fromfile(image_file, dtype=np.uint8)
    if raw.size % _PIXELS:
        raise DataFormatError(
            f"{where}: {image_file} is truncated or not an STL-10 image file: {raw.size} bytes is not a whole number "
            f"of {_PIXELS}-byte images.",
            path=image_file,
        )
    # Each image is stored channel by channel, each channel column by column: (C, W, H).
    images = np.ascontiguousarray(raw.reshape(-1, 3, _SIDE, _SIDE).transpose(0, 3, 2, 1))
    if split == "unlabeled":
        return images, np.full(len(images), -1, dtype=np.int32)
    label_file = os.path.join(folder, f"{split}_y.bin")
    if not os.path.isfile(label_file):
        raise missing(where, label_file, _FIX)
    labels = np.fromfile(label_file, dtype=np.uint8).astype(np.int32) - 1  # the files count classes from 1
    if len(labels) != len(images):
        raise DataFormatError(f"{where}: {image_file} has {len(images)} images but {label_file} has {len(labels)} labels.",
                              path=label_file)
    if len(labels) and not (0 <= labels.min() and labels.max() <= 9):
        raise DataFormatError(f"{where}: {label_file} holds labels outside 1..10.", path=label_file)
    return images, labels


class STL10Dataset(Dataset):
    """STL-10 (MindSpore's ``STL10Dataset``) from the binary files of ``stl10_binary``:
    ``train_X.bin``/``train_y.bin`` (5,000), ``test_X.bin``/``test_y.bin`` (8,000) and
    ``unlabeled_X.bin`` (100,000).

    ``usage``: ``"train"``, ``"test"``, ``"unlabeled"``, ``"train+unlabeled"`` or ``"all"`` (default:
    train, test, unlabeled). Columns ``image`` (96, 96, 3) uint8 (HWC) and ``label`` int32 in [0, 9],
    -1 for unlabeled images.

    Examples:
        >>> import minddata as md
        >>> md.STL10Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: STL10Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "STL10Dataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = "all" if usage is None else usage
        if chosen not in _USAGES:
            raise ArgumentError(f"{where}: `usage` must be one of {list(_USAGES)} or None. Found: {usage!r}")
        splits = _USAGES[chosen]

        def load() -> tuple[np.ndarray, np.ndarray]:
            parts = [_read_split(where, folder, s) for s in splits]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

        super().__init__(array_source(
            where, ["image", "label"], load, label_column=1, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))
