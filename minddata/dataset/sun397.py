"""SUN397 scenes (MindSpore's ``SUN397Dataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing, name_inside, read_lines
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError

__all__ = ["SUN397Dataset"]


class SUN397Dataset(Dataset):
    """SUN397 (MindSpore's ``SUN397Dataset``).

    ``dataset_dir`` (``SUN397/``) holds ``ClassName.txt`` (one category per line, e.g.
    ``/a/abbey``; its line number from 0 is the label) and a folder per category
    (``a/abbey/sun_*.jpg``). Only ``.jpg`` files whose names start with ``sun_`` are read, in name
    order per category. Columns ``image`` uint8 (the file's bytes; RGB HWC with ``decode=True``) and
    ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.SUN397Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: SUN397Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "SUN397Dataset"
        folder = dataset_folder(where, dataset_dir)

        def build() -> list[tuple]:
            names_file = os.path.join(folder, "ClassName.txt")
            categories = read_lines(where, names_file, "SUN397's category list must be in dataset_dir.")
            rows = []
            for category, label in sorted((c, k) for k, c in enumerate(categories)):
                path = name_inside(where, folder, category.lstrip("/"), f"{names_file}: category")
                if not os.path.isdir(path):
                    raise missing(where, path, f"{names_file} lists category {category!r}; its folder must exist.")
                files = sorted(e.path for e in os.scandir(path)
                               if e.is_file() and e.name.startswith("sun_") and e.name.endswith(".jpg"))
                rows.extend((f, np.uint32(label)) for f in files)
            if not rows:
                raise DataFormatError(f"{where}: no sun_*.jpg images in the category folders of {folder}.", path=folder)
            return rows

        super().__init__(file_source(
            where, ["image", "label"], FileIndex(where, build), decode=decode, label_column=1, sampler=sampler,
            shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
