"""DIV2K super-resolution pairs (MindSpore's ``DIV2KDataset``)."""

from __future__ import annotations

import os
from typing import Any

from minddata.dataset import _validate as v
from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing, usage_splits
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["DIV2KDataset"]

# (downgrade, scale) -> the low-resolution folder's name after "DIV2K_<split>_"
_LR_FOLDERS = {
    **{(d, s): f"LR_{d}/X{s}" for d in ("bicubic", "unknown") for s in (2, 3, 4)},
    ("bicubic", 8): "LR_x8",
    **{(d, 4): f"LR_{d}" for d in ("mild", "difficult", "wild")},
}
# NTIRE 2018's degraded tracks end their file names with a letter: 0001x4m.png
_SUFFIX = {"mild": "m", "difficult": "d", "wild": "w"}


class DIV2KDataset(Dataset):
    """DIV2K (MindSpore's ``DIV2KDataset``): pairs of a high-resolution PNG and its low-resolution
    version.

    ``dataset_dir`` holds ``DIV2K_<train|valid>_HR/NNNN.png`` and the low-resolution folders of the
    chosen track: ``DIV2K_<split>_LR_<bicubic|unknown>/X<2|3|4>/NNNNx<s>.png``,
    ``DIV2K_<split>_LR_x8/NNNNx8.png`` or ``DIV2K_<split>_LR_<mild|difficult|wild>/NNNNx4<m|d|w>.png``.

    Args:
        usage: ``"train"`` (default), ``"valid"`` or ``"all"``.
        downgrade: ``"bicubic"`` (default), ``"unknown"``, ``"mild"``, ``"difficult"`` or ``"wild"``.
        scale: 2 (default), 3, 4 or 8; ``bicubic`` has 2, 3, 4 and 8, ``unknown`` 2, 3 and 4, the
            others only 4.
        decode: decode both images to RGB HWC uint8 (default: the files' bytes).
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns ``hr_image`` and ``lr_image``, uint8; one row per HR image, in name order per split.

    Examples:
        >>> import minddata as md
        >>> md.DIV2KDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: DIV2KDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str = "train",
        downgrade: str = "bicubic",
        scale: int = 2,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "DIV2KDataset"
        folder = dataset_folder(where, dataset_dir)
        splits = usage_splits(where, usage, ("train", "valid"))
        if downgrade not in {d for d, _ in _LR_FOLDERS}:
            raise ArgumentError(f"{where}: `downgrade` must be one of ['bicubic', 'unknown', 'mild', 'difficult', "
                                f"'wild']. Found: {downgrade!r}")
        if not v.is_int(scale) or (downgrade, int(scale)) not in _LR_FOLDERS:
            scales = sorted(s for d, s in _LR_FOLDERS if d == downgrade)
            raise ArgumentError(f"{where}: `scale` must be one of {scales} for downgrade={downgrade!r}. Found: {scale!r}")
        scale = int(scale)

        def build() -> list[tuple]:
            rows = []
            for split in splits:
                hr = os.path.join(folder, f"DIV2K_{split}_HR")
                lr = os.path.join(folder, f"DIV2K_{split}_{_LR_FOLDERS[(downgrade, scale)]}")
                for path in (hr, lr):
                    if not os.path.isdir(path):
                        raise missing(where, path, f"usage={usage!r}, downgrade={downgrade!r}, scale={scale} reads "
                                      "from it; unzip that track into dataset_dir.")
                names = sorted(e.name for e in os.scandir(hr) if e.is_file() and e.name.endswith(".png"))
                for name in names:
                    low = os.path.join(lr, f"{name[:-4]}x{scale}{_SUFFIX.get(downgrade, '')}.png")
                    if not os.path.isfile(low):
                        raise DataFormatError(f"{where}: {low}, the low-resolution version of {os.path.join(hr, name)}, "
                                              "is missing.", path=low)
                    rows.append((os.path.join(hr, name), low))
            if not rows:
                raise DataFormatError(f"{where}: no .png images in the HR folder(s) under {folder}.", path=folder)
            return rows

        super().__init__(file_source(
            where, ["hr_image", "lr_image"], FileIndex(where, build, file_columns=2), decode=decode,
            decode_columns=("hr_image", "lr_image"), sampler=sampler, shuffle=shuffle, num_samples=num_samples,
            num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))
