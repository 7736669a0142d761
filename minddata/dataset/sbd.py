"""The Semantic Boundaries Dataset (MindSpore's ``SBDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, name_inside, read_lines
from minddata.dataset._matlab import load_mat
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError, RowError

__all__ = ["SBDataset"]

_CATEGORIES = 20
_USAGES = ("train", "val", "train_noval", "all")


def _reader(task: str) -> Any:
    def read(path: str, row: int) -> np.ndarray:
        where = "SBDataset"
        try:
            gt = load_mat(where, path, "every listed id needs cls/<id>.mat.", needs=("GTcls",))["GTcls"][0]
            if task == "Segmentation":
                return np.asarray(gt["Segmentation"][0], dtype=np.uint8)
            cells = gt["Boundaries"][0]
            maps = [cells[i][0] for i in range(_CATEGORIES)]
            return np.stack([np.asarray(m.toarray() if hasattr(m, "toarray") else m, dtype=np.uint8) for m in maps])
        except DataFormatError as error:
            raise RowError(f"{where}: row {row}: {str(error).removeprefix(where + ': ')}", op=where, row=row,
                           source=path) from None
        except (KeyError, IndexError, ValueError, TypeError) as error:
            raise RowError(f"{where}: row {row}: {path}: GTcls has no {task} of {_CATEGORIES} categories "
                           f"({type(error).__name__}: {error}).", op=where, row=row, source=path) from None
    return read


class SBDataset(Dataset):
    """The Semantic Boundaries Dataset (MindSpore's ``SBDataset``), from ``benchmark_RELEASE/dataset``.

    ``dataset_dir`` holds ``img/<id>.jpg``, ``cls/<id>.mat`` (MATLAB v5, read with scipy: ``pip
    install 'minddata[datasets]'``; its ``GTcls`` struct holds ``Boundaries``, 20 sparse maps, and
    ``Segmentation``) and the lists ``train.txt``, ``val.txt`` and ``train_noval.txt``.

    ``task``: ``"Boundaries"`` (default; ``task`` column uint8 (20, H, W), one boundary map per
    category) or ``"Segmentation"`` (uint8 (H, W), the category of each pixel). ``usage``:
    ``"train"``, ``"val"``, ``"train_noval"`` or ``"all"`` (default: train then val). Column
    ``image`` is uint8: the file's bytes, or RGB HWC with ``decode=True``.

    Examples:
        >>> import minddata as md
        >>> md.SBDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: SBDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        task: str = "Boundaries",
        usage: str = "all",
        num_samples: int | None = None,
        num_parallel_workers: int | None = 1,
        shuffle: bool | None = None,
        decode: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
    ):
        where = "SBDataset"
        folder = dataset_folder(where, dataset_dir)
        if task not in ("Boundaries", "Segmentation"):
            raise ArgumentError(f"{where}: `task` must be 'Boundaries' or 'Segmentation'. Found: {task!r}")
        if usage not in _USAGES:
            raise ArgumentError(f"{where}: `usage` must be one of {list(_USAGES)}. Found: {usage!r}")
        lists = ["train", "val"] if usage == "all" else [usage]

        def build() -> list[tuple]:
            rows = []
            for name in lists:
                list_file = os.path.join(folder, f"{name}.txt")
                for number, image_id in enumerate(read_lines(where, list_file, f"usage={usage!r} reads the image ids "
                                                             "from it; it must be in dataset_dir."), 1):
                    entry = f"{list_file} line {number}"
                    rows.append((name_inside(where, folder, f"img/{image_id}.jpg", entry),
                                 name_inside(where, folder, f"cls/{image_id}.mat", entry)))
            return rows

        index = FileIndex(where, build, readers={1: _reader(task)})
        super().__init__(file_source(
            where, ["image", "task"], index, decode=bool(decode), sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers,
        ))
