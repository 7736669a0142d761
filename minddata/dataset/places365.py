"""Places365 (MindSpore's ``Places365Dataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, name_inside, read_lines
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["Places365Dataset"]

_LISTS = {"train-standard": "places365_train_standard.txt", "train-challenge": "places365_train_challenge.txt",
          "val": "places365_val.txt"}
_FOLDERS = {("train-standard", False): "data_large_standard", ("train-challenge", False): "data_large_challenge",
            ("val", False): "val_large", ("train-standard", True): "data_256_standard",
            ("train-challenge", True): "data_256_challenge", ("val", True): "val_256"}


class Places365Dataset(Dataset):
    """Places365 (MindSpore's ``Places365Dataset``).

    ``dataset_dir`` holds ``categories_places365.txt`` (``/a/airfield 0`` per class), the list of the
    chosen split (``places365_train_standard.txt``, ``places365_train_challenge.txt`` or
    ``places365_val.txt``: ``<path> <label>`` per image) and the image folder it refers to:
    ``data_256_standard``/``data_large_standard``, ``data_256_challenge``/``data_large_challenge``
    or ``val_256``/``val_large`` (``small`` picks the 256x256 ones, the default).

    ``usage``: ``"train-standard"`` (default), ``"train-challenge"`` or ``"val"``. Columns ``image``
    uint8 (the file's bytes; RGB HWC with ``decode=True``) and ``label`` uint32.
    :meth:`get_class_indexing` maps category names to labels.

    Examples:
        >>> import minddata as md
        >>> md.Places365Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Places365Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        small: bool = True,
        decode: bool = False,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "Places365Dataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = "train-standard" if usage is None else usage
        if chosen not in _LISTS:
            raise ArgumentError(f"{where}: `usage` must be one of {list(_LISTS)} or None. Found: {usage!r}")
        small = bool(v.bool_arg(where, "small", small))
        self._folder = folder
        images = os.path.join(folder, _FOLDERS[(chosen, small)])
        list_file = os.path.join(folder, _LISTS[chosen])

        def build() -> list[tuple]:
            rows = []
            for number, line in enumerate(read_lines(where, list_file, f"usage={chosen!r} reads its image list from "
                                                     "it; it must be in dataset_dir."), 1):
                path, label = _path_and_label(where, list_file, number, line)
                rows.append((name_inside(where, images, path.lstrip("/"), f"{list_file} line {number}"), np.uint32(label)))
            return rows

        super().__init__(file_source(
            where, ["image", "label"], FileIndex(where, build), decode=decode, label_column=1, sampler=sampler,
            shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))

    def get_class_indexing(self) -> dict[str, int]:
        """Category (e.g. ``/a/airfield``) → label, from ``categories_places365.txt``."""
        where = "Places365Dataset"
        path = os.path.join(self._folder, "categories_places365.txt")
        lines = read_lines(where, path, "Places365's category list must be in dataset_dir.")
        return dict(_path_and_label(where, path, number, line) for number, line in enumerate(lines, 1))


def _path_and_label(where: str, path: str, number: int, line: str) -> tuple[str, int]:
    parts = line.split()
    if len(parts) != 2 or not parts[1].isdigit():
        raise DataFormatError(f"{where}: {path} line {number} must be `<name> <label>`. Found: {line!r}", path=path)
    return parts[0], int(parts[1])
