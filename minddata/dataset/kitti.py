"""KITTI object detection (MindSpore's ``KITTIDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["KITTIDataset"]

_TRAIN_COLUMNS = ["image", "label", "truncated", "occluded", "alpha", "bbox", "dimensions", "location", "rotation_y"]
_FIELDS = 15  # type, truncated, occluded, alpha, 4 box, 3 dimensions, 3 location, rotation_y


class KITTIDataset(Dataset):
    """KITTI 2D object detection (MindSpore's ``KITTIDataset``).

    ``dataset_dir`` holds ``data_object_image_2/<training|testing>/image_2/NNNNNN.png`` and, for
    training, ``data_object_label_2/training/label_2/NNNNNN.txt`` (one object per line: type,
    truncated, occluded, alpha, the 2D box, the 3D dimensions and location, rotation_y).

    ``usage``: ``"train"`` (default) or ``"test"``. ``decode``: decode ``image`` to RGB HWC uint8.
    Columns for ``"train"`` (N = objects in the image): ``image`` uint8, ``label`` uint32 (N, 1) (the
    object types found, sorted, numbered from 0), ``truncated`` float32 (N, 1), ``occluded`` uint32
    (N, 1), ``alpha`` float32 (N, 1), ``bbox`` float32 (N, 4) ``[xmin, ymin, xmax, ymax]``,
    ``dimensions`` float32 (N, 3), ``location`` float32 (N, 3), ``rotation_y`` float32 (N, 1). For
    ``"test"``: ``image`` only. Images are read in name order (MindSpore assumes their names are
    consecutive from 000000).

    Examples:
        >>> import minddata as md
        >>> md.KITTIDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: KITTIDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
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
        where = "KITTIDataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = "train" if usage is None else usage
        if chosen not in ("train", "test"):
            raise ArgumentError(f"{where}: `usage` must be 'train' or 'test'. Found: {usage!r}")
        images = os.path.join(folder, "data_object_image_2", "training" if chosen == "train" else "testing", "image_2")
        labels = os.path.join(folder, "data_object_label_2", "training", "label_2")
        self._classes: dict[str, int] = {}

        def build() -> list[tuple]:
            if not os.path.isdir(images):
                raise missing(where, images, "unzip data_object_image_2.zip into dataset_dir.")
            names = sorted(e.name[:-4] for e in os.scandir(images) if e.is_file() and e.name.endswith(".png"))
            if not names:
                raise DataFormatError(f"{where}: no .png images in {images}.", path=images)
            if chosen == "test":
                return [(os.path.join(images, n + ".png"),) for n in names]
            parsed = [_parse_labels(where, os.path.join(labels, n + ".txt")) for n in names]
            types = sorted({o[0] for objects in parsed for o in objects})
            self._classes.update({t: k for k, t in enumerate(types)})
            rows = []
            for name, objects in zip(names, parsed):
                values = np.asarray([o[1:] for o in objects], dtype=np.float32).reshape(-1, _FIELDS - 1)
                rows.append((
                    os.path.join(images, name + ".png"),
                    np.asarray([self._classes[o[0]] for o in objects], dtype=np.uint32).reshape(-1, 1),
                    values[:, 0:1].copy(), values[:, 1:2].astype(np.int64).astype(np.uint32), values[:, 2:3].copy(),
                    values[:, 3:7].copy(), values[:, 7:10].copy(), values[:, 10:13].copy(), values[:, 13:14].copy(),
                ))
            return rows

        super().__init__(file_source(
            where, _TRAIN_COLUMNS if chosen == "train" else ["image"], FileIndex(where, build), decode=decode,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))

    def get_class_indexing(self) -> dict[str, int]:
        """Object type → label, for the types found in the training labels."""
        self.get_dataset_size()
        return dict(self._classes)


def _parse_labels(where: str, path: str) -> list[tuple]:
    if not os.path.isfile(path):
        raise missing(where, path, "usage='train' needs data_object_label_2/training/label_2/<id>.txt for every image.")
    objects = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                if len(parts) != _FIELDS:
                    raise ValueError(f"{len(parts)} fields, expected {_FIELDS}")
                objects.append((parts[0], *(float(p) for p in parts[1:])))
            except ValueError as error:
                raise DataFormatError(f"{where}: {path} line {number} is not a KITTI object line: {error}",
                                      path=path) from None
    return objects
