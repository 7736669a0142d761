"""Multi-view Stereo Correspondence patches, "PhotoTour" (MindSpore's ``PhotoTourDataset``)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import Lazy, dataset_folder, missing, source_sampler
from minddata.dataset.base import Dataset
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError, RowError

__all__ = ["PhotoTourDataset"]

NAMES = ("notredame", "yosemite", "liberty", "notredame_harris", "yosemite_harris", "liberty_harris")
_PATCH = 64
_PER_SIDE = 16  # each bitmap is 16 x 16 patches of 64 x 64
_PER_BITMAP = _PER_SIDE * _PER_SIDE
_MATCHES = "m50_100000_100000_0.txt"
_CACHED_BITMAPS = 32  # decoded 1024 x 1024 bitmaps kept per reader (1 MiB each)


def _numbers(where: str, path: str, width: int) -> np.ndarray:
    """A whitespace-separated table of ints with ``width`` columns."""
    if not os.path.isfile(path):
        raise missing(where, path, "the folder of `name` must hold the patches*.bmp, info.txt and "
                      f"{_MATCHES} of that scene.")
    try:
        values = np.loadtxt(path, dtype=np.int64, ndmin=2)
    except ValueError as error:
        raise DataFormatError(f"{where}: {path} is not a table of integers: {error}", path=path) from None
    if values.size and values.shape[1] != width:
        raise DataFormatError(f"{where}: {path} must have {width} columns per line. Found: {values.shape[1]}", path=path)
    return values.reshape(-1, width)


class _Patches:
    """Cuts 64 x 64 patches out of the scene's bitmaps, decoding each bitmap once (a small LRU)."""

    def __init__(self, where: str, folder: str, train: bool):
        self.where = where
        self.folder = folder
        self.train = train
        self.index = Lazy(self._load)
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _load(self) -> tuple[list[str], np.ndarray]:
        if not os.path.isdir(self.folder):
            raise missing(self.where, self.folder, "dataset_dir must hold one folder per scene, named as `name`.")
        bitmaps = sorted(e.path for e in os.scandir(self.folder) if e.is_file() and e.name.endswith(".bmp"))
        patches = len(_numbers(self.where, os.path.join(self.folder, "info.txt"), 2))
        if self.train:
            rows = np.arange(patches, dtype=np.int64)[:, None]
        else:
            m = _numbers(self.where, os.path.join(self.folder, _MATCHES), 7)
            rows = np.stack([m[:, 0], m[:, 3], (m[:, 1] == m[:, 4]).astype(np.int64)], axis=1)
        top = int(rows[:, :2 if not self.train else 1].max(initial=-1))
        if top >= len(bitmaps) * _PER_BITMAP:
            raise DataFormatError(
                f"{self.where}: patch {top} is listed but {self.folder} has {len(bitmaps)} bitmap(s) of "
                f"{_PER_BITMAP} patches.",
                path=self.folder,
            )
        return bitmaps, rows

    def count(self) -> int:
        return len(self.index.get()[1])

    def patch(self, number: int, row: int) -> np.ndarray:
        bitmaps = self.index.get()[0]
        which, place = divmod(int(number), _PER_BITMAP)
        with self._lock:
            image = self._cache.get(which)
            if image is not None:
                self._cache.move_to_end(which)
        if image is None:
            import cv2

            image = cv2.imread(bitmaps[which], cv2.IMREAD_GRAYSCALE)
            if image is None or image.shape != (_PATCH * _PER_SIDE, _PATCH * _PER_SIDE):
                raise RowError(f"{self.where}: row {row}: {bitmaps[which]} is not a readable 1024 x 1024 bitmap.",
                               op=self.where, row=row, source=bitmaps[which])
            with self._lock:
                self._cache[which] = image
                while len(self._cache) > _CACHED_BITMAPS:
                    self._cache.popitem(last=False)
        y, x = divmod(place, _PER_SIDE)
        return np.ascontiguousarray(image[y * _PATCH : (y + 1) * _PATCH, x * _PATCH : (x + 1) * _PATCH, None])

    def __call__(self, ids: list[int]) -> list[tuple]:
        rows = self.index.get()[1]
        if self.train:
            return [(self.patch(rows[i, 0], i),) for i in ids]
        return [(self.patch(rows[i, 0], i), self.patch(rows[i, 1], i), np.uint32(rows[i, 2])) for i in ids]

    def __getstate__(self) -> dict[str, Any]:
        self.index.get()
        return {"where": self.where, "folder": self.folder, "train": self.train, "index": self.index}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache = OrderedDict()
        self._lock = threading.Lock()


class PhotoTourDataset(Dataset):
    """The Multi-view Stereo Correspondence patches, "Photo Tourism" (MindSpore's ``PhotoTourDataset``).

    ``dataset_dir/<name>/`` holds the scene's ``patches*.bmp`` (1024 x 1024 grey bitmaps of 16 x 16
    patches of 64 x 64, numbered row by row, bitmap by bitmap), ``info.txt`` (one line per patch:
    its 3D point id and an unused value) and ``m50_100000_100000_0.txt`` (matching pairs: patch,
    3D point, unused, patch, 3D point, unused, unused).

    Args:
        name: ``"notredame"``, ``"yosemite"``, ``"liberty"``, ``"notredame_harris"``,
            ``"yosemite_harris"`` or ``"liberty_harris"``.
        usage: ``"train"`` (default): every patch, column ``image`` uint8 (64, 64, 1); ``"test"``: the
            pairs, columns ``image1``, ``image2`` uint8 (64, 64, 1) and ``matches`` uint32 (1 when both
            patches show the same 3D point, else 0).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Examples:
        >>> import minddata as md
        >>> md.PhotoTourDataset("no/such/folder", "notredame")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: PhotoTourDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        name: str,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "PhotoTourDataset"
        folder = dataset_folder(where, dataset_dir)
        if name not in NAMES:
            raise ArgumentError(f"{where}: `name` must be one of {list(NAMES)}. Found: {name!r}")
        chosen = "train" if usage is None else usage
        if chosen not in ("train", "test"):
            raise ArgumentError(f"{where}: `usage` must be 'train' or 'test'. Found: {usage!r}")
        patches = _Patches(where, os.path.join(folder, name), chosen == "train")
        columns = ["image"] if chosen == "train" else ["image1", "image2", "matches"]
        super().__init__(ir.RandomAccessSourceNode(
            where, columns, patches.count,
            source_sampler(where, sampler, shuffle, num_samples, num_shards, shard_id),
            patches, num_workers=v.workers(where, num_parallel_workers),
        ))
