"""Labeled Faces in the Wild (MindSpore's ``LFWDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, name_inside, read_lines
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["LFWDataset"]

_IMAGE_SETS = {"original": "lfw", "funneled": "lfw_funneled", "deepfunneled": "lfw-deepfunneled"}
_LISTS = {"10fold": [""], "train": ["DevTrain"], "test": ["DevTest"], "all": ["DevTrain", "DevTest"]}


class LFWDataset(Dataset):
    """Labeled Faces in the Wild (MindSpore's ``LFWDataset``).

    ``dataset_dir`` holds the image folder of the chosen ``image_set`` (``lfw/``, ``lfw_funneled/``
    or ``lfw-deepfunneled/``, each ``<name>/<name>_NNNN.jpg``), ``lfw-names.txt`` (``<name>
    <count>`` per person; a person's label is its line number from 0) and the view files:
    ``people.txt``, ``peopleDevTrain.txt``, ``peopleDevTest.txt``, ``pairs.txt``,
    ``pairsDevTrain.txt``, ``pairsDevTest.txt``.

    Args:
        task: ``"people"`` (default; columns ``image`` uint8, ``label`` uint32) or ``"pairs"``
            (``image1``, ``image2`` uint8 and ``label`` uint32: 1 for two photos of one person).
        usage: ``"train"`` (``*DevTrain.txt``), ``"test"`` (``*DevTest.txt``), ``"10fold"``
            (``people.txt``/``pairs.txt``, all ten folds) or ``"all"`` (default: train then test).
        image_set: ``"original"``, ``"funneled"`` (default) or ``"deepfunneled"``.
        decode: decode the images to RGB HWC uint8 (default: the files' bytes).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Examples:
        >>> import minddata as md
        >>> md.LFWDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: LFWDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        task: str | None = None,
        usage: str | None = None,
        image_set: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "LFWDataset"
        folder = dataset_folder(where, dataset_dir)
        task = "people" if task is None else task
        usage = "all" if usage is None else usage
        image_set = "funneled" if image_set is None else image_set
        if task not in ("people", "pairs"):
            raise ArgumentError(f"{where}: `task` must be 'people' or 'pairs'. Found: {task!r}")
        if usage not in _LISTS:
            raise ArgumentError(f"{where}: `usage` must be one of {list(_LISTS)}. Found: {usage!r}")
        if image_set not in _IMAGE_SETS:
            raise ArgumentError(f"{where}: `image_set` must be one of {list(_IMAGE_SETS)}. Found: {image_set!r}")
        images = os.path.join(folder, _IMAGE_SETS[image_set])
        ten_fold = usage == "10fold"

        def photo(name: str, number: str, entry: str) -> str:
            if not number.isdigit():
                raise ValueError(f"{number!r} is not an image number")
            return name_inside(where, images, f"{name}/{name}_{int(number):04d}.jpg", entry)

        def build() -> list[tuple]:
            labels = {}
            names_file = os.path.join(folder, "lfw-names.txt")
            for k, line in enumerate(read_lines(where, names_file, "LFW's list of people must be in dataset_dir.")):
                labels[line.split()[0]] = k
            rows = []
            for suffix in _LISTS[usage]:
                path = os.path.join(folder, f"{task}{suffix}.txt")
                lines = [line.split() for line in read_lines(where, path, f"task={task!r}, usage={usage!r} reads it; "
                                                             "it must be in dataset_dir.")]
                try:
                    rows.extend(_people(lines, ten_fold, photo, labels, path) if task == "people"
                                else _pairs(lines, ten_fold, photo, path))
                except (ValueError, IndexError, KeyError) as error:
                    raise DataFormatError(f"{where}: {path} is not an LFW {task} file: {type(error).__name__}: "
                                          f"{error}", path=path) from None
            return rows

        columns = ["image", "label"] if task == "people" else ["image1", "image2", "label"]
        files = 1 if task == "people" else 2
        super().__init__(file_source(
            where, columns, FileIndex(where, build, file_columns=files), decode=decode,
            decode_columns=tuple(columns[:files]), label_column=files, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))


def _people(lines: list[list[str]], ten_fold: bool, photo: Any, labels: dict[str, int], path: str) -> list[tuple]:
    """``[folds]``, then per fold a count and that many ``<name> <photos>`` lines."""
    folds, at = (int(lines[0][0]), 1) if ten_fold else (1, 0)
    rows = []
    for _ in range(folds):
        count = int(lines[at][0])
        for k, (name, photos) in enumerate((line[0], int(line[1])) for line in lines[at + 1 : at + 1 + count]):
            entry = f"{path} line {at + 2 + k}"
            rows.extend((photo(name, str(n), entry), np.uint32(labels[name])) for n in range(1, photos + 1))
        at += count + 1
    return rows


def _pairs(lines: list[list[str]], ten_fold: bool, photo: Any, path: str) -> list[tuple]:
    """``[folds] <pairs>``, then per fold that many matched (``name i j``) and mismatched
    (``name1 i name2 j``) lines."""
    folds, count = (int(lines[0][0]), int(lines[0][1])) if ten_fold else (1, int(lines[0][0]))
    rows, at = [], 1
    for _ in range(folds):
        for k, line in enumerate(lines[at : at + count]):
            entry = f"{path} line {at + 1 + k}"
            rows.append((photo(line[0], line[1], entry), photo(line[0], line[2], entry), np.uint32(1)))
        for k, line in enumerate(lines[at + count : at + 2 * count]):
            entry = f"{path} line {at + count + 1 + k}"
            rows.append((photo(line[0], line[1], entry), photo(line[2], line[3], entry), np.uint32(0)))
        at += 2 * count
    if at != len(lines):
        raise ValueError(f"its header announces {folds} fold(s) of {count} + {count} pairs, but it has {len(lines) - 1} "
                         "pair lines")
    return rows
