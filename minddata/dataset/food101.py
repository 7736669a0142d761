"""Food-101 (MindSpore's ``Food101Dataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import (
    FileIndex,
    dataset_folder,
    file_source,
    name_inside,
    read_lines,
    usage_splits,
)
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError

__all__ = ["Food101Dataset"]


class Food101Dataset(Dataset):
    """Food-101 (MindSpore's ``Food101Dataset``).

    ``dataset_dir`` (``food-101/``) holds ``images/<class>/<id>.jpg`` and ``meta/train.txt`` and
    ``meta/test.txt``, one ``<class>/<id>`` per line. ``usage``: ``"train"``, ``"test"`` or ``"all"``
    (default: train then test). Columns ``image`` uint8 (the file's bytes; RGB HWC with
    ``decode=True``) and ``label``, the class name as a string. The class is the entry's folder
    (MindSpore takes the first class name contained anywhere in the entry, which can pick a shorter
    class whose name is part of another's).

    Examples:
        >>> import minddata as md
        >>> md.Food101Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Food101Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "Food101Dataset"
        folder = dataset_folder(where, dataset_dir)
        splits = usage_splits(where, usage, ("train", "test"))

        def build() -> list[tuple]:
            images = os.path.join(folder, "images")
            rows = []
            for split in splits:
                list_file = os.path.join(folder, "meta", f"{split}.txt")
                for number, entry in enumerate(read_lines(where, list_file, f"{where} reads the {split} split's "
                                                          "image list from meta/ in dataset_dir (food-101/)."), 1):
                    label, slash, _ = entry.partition("/")
                    if not slash or not label:
                        raise DataFormatError(f"{where}: {list_file} line {number} must be `<class>/<id>`. Found: "
                                              f"{entry!r}", path=list_file)
                    path = name_inside(where, images, entry + ".jpg", f"{list_file} line {number}")
                    rows.append((path, np.asarray(label)))
            return rows

        super().__init__(file_source(
            where, ["image", "label"], FileIndex(where, build), decode=decode, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))
