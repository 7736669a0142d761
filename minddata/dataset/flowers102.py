"""Oxford 102 Flowers (MindSpore's ``Flowers102Dataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, usage_splits
from minddata.dataset._matlab import load_mat
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["Flowers102Dataset"]

_SET_IDS = {"train": "trnid", "valid": "valid", "test": "tstid"}
_COLUMNS = {"Classification": ["image", "label"], "Segmentation": ["image", "segmentation", "label"]}


class Flowers102Dataset(Dataset):
    """Oxford 102 Flowers (MindSpore's ``Flowers102Dataset``).

    ``dataset_dir`` holds ``jpg/image_NNNNN.jpg``, ``imagelabels.mat`` (``labels``: the class, 1 to
    102, of every image), ``setid.mat`` (``trnid``, ``valid``, ``tstid``: the image numbers of each
    split) and, for segmentation, ``segmim/segmim_NNNNN.jpg``. The ``.mat`` files are MATLAB v5, read
    with scipy (``pip install 'minddata[datasets]'``).

    ``task``: ``"Classification"`` (default; columns ``image``, ``label``) or ``"Segmentation"``
    (``image``, ``segmentation``, ``label``). ``usage``: ``"train"``, ``"valid"``, ``"test"`` or
    ``"all"`` (default, in that order). ``image`` and ``segmentation`` are uint8 (the files' bytes;
    RGB HWC with ``decode=True``), ``label`` uint32 in [0, 101].

    Examples:
        >>> import minddata as md
        >>> md.Flowers102Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Flowers102Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        task: str = "Classification",
        usage: str = "all",
        num_samples: int | None = None,
        num_parallel_workers: int | None = 1,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
    ):
        where = "Flowers102Dataset"
        folder = dataset_folder(where, dataset_dir)
        if task not in _COLUMNS:
            raise ArgumentError(f"{where}: `task` must be 'Classification' or 'Segmentation'. Found: {task!r}")
        splits = usage_splits(where, usage, tuple(_SET_IDS))
        segmentation = task == "Segmentation"

        def build() -> list[tuple]:
            fix = f"{where} needs jpg/, imagelabels.mat and setid.mat in dataset_dir (segmim/ for segmentation)."
            labels_file = os.path.join(folder, "imagelabels.mat")
            labels = np.asarray(load_mat(where, labels_file, fix, ("labels",))["labels"]).reshape(-1).astype(np.int64)
            set_ids = load_mat(where, os.path.join(folder, "setid.mat"), fix, tuple(_SET_IDS[s] for s in splits))
            rows = []
            for split in splits:
                for number in np.asarray(set_ids[_SET_IDS[split]]).reshape(-1).astype(np.int64):
                    if not 1 <= number <= len(labels) or not 1 <= labels[number - 1] <= 102:
                        raise DataFormatError(
                            f"{where}: setid.mat's {_SET_IDS[split]} names image {number}, which imagelabels.mat "
                            f"({len(labels)} labels) has no class in 1..102 for.",
                            path=labels_file,
                        )
                    image = os.path.join(folder, "jpg", f"image_{number:05d}.jpg")
                    mask = (os.path.join(folder, "segmim", f"segmim_{number:05d}.jpg"),) if segmentation else ()
                    rows.append((image, *mask, np.uint32(labels[number - 1] - 1)))
            return rows

        index = FileIndex(where, build, file_columns=2 if segmentation else 1)
        super().__init__(file_source(
            where, _COLUMNS[task], index, decode=decode,
            decode_columns=("image", "segmentation") if segmentation else ("image",),
            label_column=len(_COLUMNS[task]) - 1, sampler=sampler, shuffle=shuffle, num_samples=num_samples,
            num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers,
        ))
