"""Cityscapes (MindSpore's ``CityscapesDataset``)."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError, RowError

__all__ = ["CityscapesDataset"]

_USAGES = {"fine": ("train", "test", "val"), "coarse": ("train", "train_extra", "val")}
_TASK_SUFFIX = {"instance": "instanceIds.png", "semantic": "labelIds.png", "color": "color.png",
                "polygon": "polygons.json"}


def _read_polygons(path: str, row: int) -> np.ndarray:
    """A polygon file as one JSON string, keys sorted and compact, as MindSpore gives it."""
    where = "CityscapesDataset"
    try:
        with open(path, encoding="utf-8") as f:
            content = json.load(f)
    except (OSError, ValueError) as error:
        raise RowError(f"{where}: row {row}: can't read polygon file {path}: {error}", op=where, row=row,
                       source=path) from None
    return np.asarray(json.dumps(content, separators=(",", ":"), sort_keys=True, ensure_ascii=False))


class CityscapesDataset(Dataset):
    """Cityscapes (MindSpore's ``CityscapesDataset``).

    ``dataset_dir`` holds ``leftImg8bit/<split>/<city>/<name>_leftImg8bit.png`` and the annotations
    ``gtFine/<split>/<city>/<name>_gtFine_<suffix>`` (``gtCoarse`` for ``quality_mode="coarse"``).

    Args:
        usage: ``"train"`` (default), ``"test"``, ``"val"`` or ``"all"`` for fine annotations;
            ``"train"``, ``"train_extra"``, ``"val"`` or ``"all"`` for coarse ones.
        quality_mode: ``"fine"`` (default) or ``"coarse"``.
        task: ``"instance"`` (default, ``instanceIds.png``), ``"semantic"`` (``labelIds.png``),
            ``"color"`` (``color.png``) or ``"polygon"`` (``polygons.json``).
        decode: decode ``image`` (and a PNG ``task``) to RGB HWC uint8 (default: the files' bytes).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns ``image`` uint8 and ``task``: uint8 for the PNG tasks, for ``"polygon"`` the JSON as a
    string (compact, keys sorted, as MindSpore re-serialises it). Rows are in image path order per
    split.

    Examples:
        >>> import minddata as md
        >>> md.CityscapesDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: CityscapesDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str = "train",
        quality_mode: str = "fine",
        task: str = "instance",
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "CityscapesDataset"
        folder = dataset_folder(where, dataset_dir)
        if quality_mode not in _USAGES:
            raise ArgumentError(f"{where}: `quality_mode` must be 'fine' or 'coarse'. Found: {quality_mode!r}")
        if task not in _TASK_SUFFIX:
            raise ArgumentError(f"{where}: `task` must be one of {list(_TASK_SUFFIX)}. Found: {task!r}")
        allowed = _USAGES[quality_mode]
        if usage != "all" and usage not in allowed:
            raise ArgumentError(f"{where}: `usage` must be one of {[*allowed, 'all']} with quality_mode="
                                f"{quality_mode!r}. Found: {usage!r}")
        splits = list(allowed) if usage == "all" else [usage]
        gt = "gtFine" if quality_mode == "fine" else "gtCoarse"
        suffix = f"_{gt}_{_TASK_SUFFIX[task]}"

        def build() -> list[tuple]:
            rows = []
            for split in splits:
                images, labels = os.path.join(folder, "leftImg8bit", split), os.path.join(folder, gt, split)
                for path in (images, labels):
                    if not os.path.isdir(path):
                        raise missing(where, path, f"usage={usage!r}, quality_mode={quality_mode!r} reads from it "
                                      "(leftImg8bit/ and gtFine/ or gtCoarse/ unzipped into dataset_dir).")
                pairs = []
                for city in (e for e in os.scandir(images) if e.is_dir()):
                    for image in (e for e in os.scandir(city.path) if e.is_file() and e.name.endswith(".png")):
                        stem = image.name.split("_leftImg8bit")[0]
                        target = os.path.join(labels, city.name, stem + suffix)
                        if not os.path.isfile(target):
                            raise DataFormatError(f"{where}: {target}, the {task} annotation of {image.path}, is "
                                                  "missing.", path=target)
                        pairs.append((image.path, target))
                rows.extend(sorted(pairs))
            if not rows:
                raise DataFormatError(f"{where}: no .png images under {folder}/leftImg8bit/{{{','.join(splits)}}}.",
                                      path=folder)
            return rows

        polygons = task == "polygon"
        index = FileIndex(where, build, file_columns=1 if polygons else 2,
                          readers={1: _read_polygons} if polygons else None)
        super().__init__(file_source(
            where, ["image", "task"], index, decode=decode, decode_columns=("image",) if polygons else ("image", "task"),
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
