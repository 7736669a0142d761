"""Omniglot (MindSpore's ``OmniglotDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import FileIndex, dataset_folder, file_source
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError

__all__ = ["OmniglotDataset"]


class OmniglotDataset(Dataset):
    """Omniglot (MindSpore's ``OmniglotDataset``): ``dataset_dir/images_background/<alphabet>/<character>/*.png``
    (``background=True``, the default, or None) or ``images_evaluation/...`` (``background=False``).

    Each character folder is a class; labels number the ``<alphabet>/<character>`` folders in sorted
    order. Columns ``image`` uint8 (the file's bytes; decoded with ``decode=True``) and ``label`` int32.

    Examples:
        >>> import minddata as md
        >>> md.OmniglotDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: OmniglotDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        background: bool | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "OmniglotDataset"
        folder = dataset_folder(where, dataset_dir)
        background = True if background is None else v.bool_arg(where, "background", background)
        part = "images_background" if background else "images_evaluation"
        root = os.path.join(folder, part)

        def build() -> list[tuple]:
            if not os.path.isdir(root):
                raise DataFormatError(
                    f"{where}: {root} is missing: dataset_dir must hold images_background/ and images_evaluation/ "
                    "(unzipped).",
                    path=root,
                )
            characters = sorted(
                os.path.join(a.name, c.name)
                for a in os.scandir(root) if a.is_dir()
                for c in os.scandir(a.path) if c.is_dir()
            )
            rows = []
            for label, character in enumerate(characters):
                files = sorted(e.path for e in os.scandir(os.path.join(root, character)) if e.is_file())
                rows.extend((f, np.int32(label)) for f in files)
            if not rows:
                raise DataFormatError(f"{where}: no images in {root}/<alphabet>/<character>/.", path=root)
            return rows

        super().__init__(file_source(
            where, ["image", "label"], FileIndex(where, build), decode=decode, label_column=1, sampler=sampler,
            shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
