"""Caltech 101 and Caltech 256 (MindSpore's ``Caltech101Dataset`` and ``Caltech256Dataset``)."""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing
from minddata.dataset._matlab import load_mat
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError, RowError

__all__ = ["Caltech101Dataset", "Caltech256Dataset"]

_TARGETS = {
    "category": ["image", "category"],
    "annotation": ["image", "annotation"],
    "all": ["image", "category", "annotation"],
}
# Four classes are named differently in Annotations/ than in 101_ObjectCategories/.
_ANNOTATION_NAMES = {"Faces": "Faces_2", "Faces_easy": "Faces_3", "Motorbikes": "Motorbikes_16",
                     "airplanes": "Airplanes_Side_2"}
_IMAGE_NAME = re.compile(r"image_(\d{4})\.jpg$")


class Caltech101Dataset(Dataset):
    """Caltech 101 (MindSpore's ``Caltech101Dataset``).

    ``dataset_dir`` holds ``101_ObjectCategories/<class>/image_NNNN.jpg`` and, for the contours,
    ``Annotations/<class>/annotation_NNNN.mat`` (MATLAB v5, read with scipy: ``pip install
    'minddata[datasets]'``). Classes are the sorted folder names without ``BACKGROUND_Google``.

    ``target_type``: ``"category"`` (default), ``"annotation"`` or ``"all"``. Columns: ``image``
    uint8 (the file's bytes; RGB HWC with ``decode=True``), ``category`` uint32 (the class index) and
    ``annotation`` float64 (2, K): the object's contour points from ``obj_contour``.

    Examples:
        >>> import minddata as md
        >>> md.Caltech101Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Caltech101Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        target_type: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = 1,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
    ):
        where = "Caltech101Dataset"
        folder = dataset_folder(where, dataset_dir)
        target = "category" if target_type is None else target_type
        if target not in _TARGETS:
            raise ArgumentError(f"{where}: `target_type` must be one of {list(_TARGETS)} or None. Found: {target_type!r}")
        image_root = os.path.join(folder, "101_ObjectCategories")
        if not os.path.isdir(image_root):
            raise missing(where, image_root, "dataset_dir must be the folder that holds 101_ObjectCategories/ (and Annotations/).")
        self._image_root = image_root
        contour_at = len(_TARGETS[target]) - 1
        self._index = FileIndex(where, lambda: _caltech101_rows(folder, target),
                                readers={contour_at: _read_contour} if target != "category" else None)
        super().__init__(file_source(
            where, _TARGETS[target], self._index, decode=decode,
            label_column=1 if target != "annotation" else None, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers,
        ))

    def get_class_indexing(self) -> dict[str, int]:
        """Class folder name → category, the sorted folders of ``101_ObjectCategories`` without
        ``BACKGROUND_Google`` (``{'Faces': 0, 'Faces_easy': 1, ...}`` for the real data, as MindSpore's)."""
        return {name: k for k, name in enumerate(_classes(self._image_root))}


def _classes(image_root: str) -> list[str]:
    return sorted(e.name for e in os.scandir(image_root) if e.is_dir() and e.name != "BACKGROUND_Google")


def _caltech101_rows(folder: str, target: str) -> list[tuple]:
    where = "Caltech101Dataset"
    image_root = os.path.join(folder, "101_ObjectCategories")
    classes = _classes(image_root)
    if not classes:
        raise DataFormatError(f"{where}: {image_root} has no class folders.", path=image_root)
    rows: list[tuple] = []
    for label, name in enumerate(classes):
        numbered = sorted(
            (m.group(1), e.path) for e in os.scandir(os.path.join(image_root, name))
            if e.is_file() and (m := _IMAGE_NAME.match(e.name))
        )
        for number, path in numbered:
            row: list[Any] = [path]
            if target != "annotation":
                row.append(np.uint32(label))
            if target != "category":
                row.append(os.path.join(folder, "Annotations", _ANNOTATION_NAMES.get(name, name),
                                        f"annotation_{number}.mat"))
            rows.append(tuple(row))
    return rows


def _read_contour(path: str, row: int) -> np.ndarray:
    where = "Caltech101Dataset"
    if not os.path.isfile(path):
        raise RowError(f"{where}: row {row}: its annotation {path} is missing (target_type 'annotation' and 'all' "
                       "need Annotations/<class>/annotation_NNNN.mat).", op=where, row=row, source=path)
    try:
        contour = load_mat(where, path, "", needs=("obj_contour",))["obj_contour"]
    except DataFormatError as error:
        raise RowError(f"{where}: row {row}: {str(error).removeprefix(where + ': ')}", op=where, row=row,
                       source=path) from None
    return np.asarray(contour, dtype=np.float64)


class Caltech256Dataset(Dataset):
    """Caltech 256 (MindSpore's ``Caltech256Dataset``): ``dataset_dir`` is ``256_ObjectCategories``,
    with one folder per class (``001.ak47`` ... ``257.clutter``) of ``.jpg`` images. Labels are the
    sorted folders' positions. Columns ``image`` uint8 (the file's bytes; RGB HWC with
    ``decode=True``) and ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.Caltech256Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Caltech256Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
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
        where = "Caltech256Dataset"
        folder = dataset_folder(where, dataset_dir)

        def build() -> list[tuple]:
            classes = sorted(e.name for e in os.scandir(folder) if e.is_dir())
            rows = []
            for label, name in enumerate(classes):
                files = sorted(e.path for e in os.scandir(os.path.join(folder, name))
                               if e.is_file() and e.name.lower().endswith((".jpg", ".jpeg")))
                rows.extend((path, np.uint32(label)) for path in files)
            if not rows:
                raise DataFormatError(
                    f"{where}: no .jpg images in the class folders of {folder} (dataset_dir must be "
                    "256_ObjectCategories, holding 001.ak47/ ... 257.clutter/).",
                    path=folder,
                )
            return rows

        self._index = FileIndex(where, build)
        super().__init__(file_source(
            where, ["image", "label"], self._index, decode=decode, label_column=1, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))
