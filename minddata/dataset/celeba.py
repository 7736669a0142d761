"""CelebA (MindSpore's ``CelebADataset``): face images with their 40 binary attributes."""

from __future__ import annotations

import os
from collections.abc import Sequence
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
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["CelebADataset"]

_PARTITION = {"train": 0, "valid": 1, "test": 2}


class CelebADataset(Dataset):
    """CelebA (MindSpore's ``CelebADataset``).

    ``dataset_dir`` holds ``list_attr_celeba.txt`` (a count line, a line of the 40 attribute names,
    then ``<file> <40 values of 1 or -1>`` per image), the images it names and, for ``usage`` other
    than ``"all"``, ``list_eval_partition.txt`` (``<file> <0 train | 1 valid | 2 test>``).

    Args:
        dataset_dir: the folder described above.
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default).
        decode: decode ``image`` to RGB HWC uint8 (default: the file's bytes).
        extensions: keep only images with these extensions (e.g. ``[".jpg"]``); default: all.
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns ``image`` uint8 and ``attr`` uint32 (40,): 1 where the attribute is present, else 0.

    Examples:
        >>> import minddata as md
        >>> md.CelebADataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: CelebADataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        usage: str = "all",
        sampler: Any = None,
        decode: bool = False,
        extensions: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        decrypt: Any = None,
    ):
        where = "CelebADataset"
        folder = dataset_folder(where, dataset_dir)
        splits = usage_splits(where, usage, tuple(_PARTITION))
        if extensions is not None and (
            isinstance(extensions, str) or not all(isinstance(e, str) and e for e in extensions)
        ):
            raise ArgumentError(f"{where}: `extensions` must be a list of extensions like ['.jpg']. Found: {extensions!r}")
        kept = None if not extensions else {e.lower() if e.startswith(".") else "." + e.lower() for e in extensions}
        wanted = None if len(splits) == len(_PARTITION) else {_PARTITION[s] for s in splits}
        self._index = FileIndex(where, lambda: _celeba_rows(folder, wanted, kept))
        super().__init__(file_source(
            where, ["image", "attr"], self._index, decode=decode, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))


def _celeba_rows(folder: str, partitions: set[int] | None, extensions: set[str] | None) -> list[tuple]:
    where = "CelebADataset"
    attr_file = os.path.join(folder, "list_attr_celeba.txt")
    lines = read_lines(where, attr_file, "CelebA's attribute list (list_attr_celeba.txt) must be in dataset_dir.")
    if len(lines) < 2:
        raise DataFormatError(f"{where}: {attr_file} needs a count line and an attribute-name line.", path=attr_file)
    try:
        declared = int(lines[0])
    except ValueError:
        raise DataFormatError(f"{where}: {attr_file}: the first line must be the image count. Found: {lines[0]!r}",
                              path=attr_file) from None
    names = lines[1].split()
    entries = lines[2:]
    if declared != len(entries):
        raise DataFormatError(
            f"{where}: {attr_file} declares {declared} images but lists {len(entries)}: the file is truncated or "
            "was edited without updating its first line.",
            path=attr_file,
        )
    split_of = None
    if partitions is not None:
        partition_file = os.path.join(folder, "list_eval_partition.txt")
        split_of = {}
        for number, line in enumerate(read_lines(where, partition_file, "usage other than 'all' needs CelebA's "
                                                 "list_eval_partition.txt in dataset_dir."), 1):
            parts = line.split()
            if len(parts) != 2 or parts[1] not in ("0", "1", "2"):
                raise DataFormatError(f"{where}: {partition_file} line {number} must be `<file> <0|1|2>`. Found: {line!r}",
                                      path=partition_file)
            split_of[parts[0]] = int(parts[1])
    rows = []
    for number, line in enumerate(entries, 3):
        parts = line.split()
        if len(parts) != len(names) + 1 or not all(p in ("1", "-1") for p in parts[1:]):
            raise DataFormatError(
                f"{where}: {attr_file} line {number} must be a file name and {len(names)} values of 1 or -1. "
                f"Found: {line[:80]!r}",
                path=attr_file,
            )
        name = parts[0]
        if extensions is not None and os.path.splitext(name)[1].lower() not in extensions:
            continue
        if split_of is not None:
            if name not in split_of:
                raise DataFormatError(f"{where}: {name} (in {attr_file}) is missing from list_eval_partition.txt.",
                                      path=os.path.join(folder, "list_eval_partition.txt"))
            if split_of[name] not in partitions:  # type: ignore[operator]  # split_of is read only when partitions is given
                continue
        attr = np.asarray([p == "1" for p in parts[1:]], dtype=np.uint32)
        rows.append((name_inside(where, folder, name, f"{attr_file} line {number}"), attr))
    return rows
