"""Rendered SST-2, sentences rendered as images (MindSpore's ``RenderedSST2Dataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["RenderedSST2Dataset"]

_SPLIT_FOLDERS = {"train": ["train"], "val": ["valid"], "test": ["test"], "all": ["test", "train", "valid"]}


class RenderedSST2Dataset(Dataset):
    """Rendered SST-2 (MindSpore's ``RenderedSST2Dataset``): ``dataset_dir/<train|valid|test>/<class>/*.png``,
    the classes being ``negative`` and ``positive``.

    ``usage``: ``"train"``, ``"val"``, ``"test"`` or ``"all"`` (default). Labels number the class
    folder names in sorted order (``negative`` 0, ``positive`` 1). Rows are in folder, then file
    name order. Columns ``image`` uint8 (the file's bytes; RGB HWC with ``decode=True``) and
    ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.RenderedSST2Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: RenderedSST2Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
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
        where = "RenderedSST2Dataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = "all" if usage is None else usage
        if chosen not in _SPLIT_FOLDERS:
            raise ArgumentError(f"{where}: `usage` must be one of {list(_SPLIT_FOLDERS)} or None. Found: {usage!r}")

        def build() -> list[tuple]:
            splits = [os.path.join(folder, s) for s in _SPLIT_FOLDERS[chosen] if os.path.isdir(os.path.join(folder, s))]
            classes = sorted({e.name for s in splits for e in os.scandir(s) if e.is_dir()})
            rows = []
            for split in splits:
                for label, name in enumerate(classes):
                    path = os.path.join(split, name)
                    if os.path.isdir(path):
                        rows.extend((f, np.uint32(label)) for f in sorted(
                            e.path for e in os.scandir(path) if e.is_file() and e.name.endswith(".png")))
            if not rows:
                raise DataFormatError(
                    f"{where}: no .png images for usage={chosen!r} in {folder} (expected "
                    f"{'/, '.join(_SPLIT_FOLDERS[chosen])}/ holding negative/ and positive/).",
                    path=folder,
                )
            return rows

        super().__init__(file_source(
            where, ["image", "label"], FileIndex(where, build), decode=decode, label_column=1, sampler=sampler,
            shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
