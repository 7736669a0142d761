"""LSUN scenes (MindSpore's ``LSUNDataset``), from the image folders exported from LSUN's LMDB files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, usage_splits
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["LSUNDataset"]

CLASSES = ("bedroom", "bridge", "church_outdoor", "classroom", "conference_room", "dining_room", "kitchen",
           "living_room", "restaurant", "tower")
_SUFFIX = {"train": "_train", "valid": "_val"}


class LSUNDataset(Dataset):
    """LSUN scene categories (MindSpore's ``LSUNDataset``).

    As MindSpore, it reads images already exported from LSUN's LMDB databases into folders:
    ``dataset_dir/<class>_train/``, ``<class>_val/`` and ``test/``, any file in them being an image.

    Args:
        dataset_dir: the folder holding those folders.
        usage: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default: train and valid).
        classes: the scene classes to read (a name or a list from ``bedroom``, ``bridge``,
            ``church_outdoor``, ``classroom``, ``conference_room``, ``dining_room``, ``kitchen``,
            ``living_room``, ``restaurant``, ``tower``); default: all ten. Ignored for ``"test"``.
        decode: decode ``image`` to RGB HWC uint8 (default: the file's bytes).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns ``image`` uint8 and ``label`` uint32: the class's position among the classes found,
    sorted (``test`` images are all 0). A class keeps its label in both splits (MindSpore, with
    ``usage="all"``, numbers ``bedroom_train`` and ``bedroom_val`` as two classes).

    Examples:
        >>> import minddata as md
        >>> md.LSUNDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: LSUNDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        classes: str | Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "LSUNDataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = "all" if usage is None else usage
        if chosen != "test":
            usage_splits(where, chosen, ("train", "valid", "test"))
        splits = ["train", "valid"] if chosen == "all" else [chosen]
        wanted = [classes] if isinstance(classes, str) else list(CLASSES if classes is None else classes)
        unknown = [c for c in wanted if c not in CLASSES]
        if unknown or not wanted:
            raise ArgumentError(f"{where}: `classes` must be names from {list(CLASSES)}. Found: {classes!r}")

        def build() -> list[tuple]:
            if splits == ["test"]:
                folders = [("test", 0)]
            else:
                present = {e.name for e in os.scandir(folder) if e.is_dir()}
                found = sorted(c for c in wanted if any(c + _SUFFIX[s] in present for s in splits))
                folders = [(c + _SUFFIX[s], label) for label, c in enumerate(found) for s in splits
                           if c + _SUFFIX[s] in present]
            rows = []
            for name, label in folders:
                path = os.path.join(folder, name)
                if not os.path.isdir(path):
                    continue
                rows.extend((f, np.uint32(label)) for f in sorted(e.path for e in os.scandir(path) if e.is_file()))
            if not rows:
                expected = "test/" if splits == ["test"] else f"<class>{'/<class>'.join(_SUFFIX[s] for s in splits)}/"
                raise DataFormatError(
                    f"{where}: no images for usage={chosen!r} in {folder} (expected {expected} folders of images "
                    "exported from LSUN's LMDB files).",
                    path=folder,
                )
            return rows

        super().__init__(file_source(
            where, ["image", "label"], FileIndex(where, build), decode=decode, label_column=1, sampler=sampler,
            shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
