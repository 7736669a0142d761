"""WIDER FACE (MindSpore's ``WIDERFaceDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import (
    FileIndex,
    dataset_folder,
    file_source,
    missing,
    read_lines,
)
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["WIDERFaceDataset"]

_COLUMNS = ["image", "bbox", "blur", "expression", "illumination", "occlusion", "pose", "invalid"]
_BASE = {"train": "WIDER_train", "valid": "WIDER_val", "test": "WIDER_test"}
_ANNOTATIONS = {"train": "wider_face_train_bbx_gt.txt", "valid": "wider_face_val_bbx_gt.txt"}
# The ground-truth files' attribute order, after x1 y1 w h.
_FILE_ORDER = ("blur", "expression", "illumination", "invalid", "occlusion", "pose")


class WIDERFaceDataset(Dataset):
    """WIDER FACE (MindSpore's ``WIDERFaceDataset``).

    ``dataset_dir`` holds ``WIDER_<train|val|test>/images/<event>/<image>.jpg`` and
    ``wider_face_split/wider_face_<train|val>_bbx_gt.txt`` (per image: its path, the face count,
    then one line per face: ``x1 y1 w h blur expression illumination invalid occlusion pose``).

    ``usage``: ``"train"``, ``"valid"``, ``"test"`` or ``"all"`` (default: train and valid).
    Columns: ``image`` uint8 (the file's bytes; RGB HWC with ``decode=True``) and, except for
    ``"test"`` (image only), ``bbox`` uint32 (N, 4) ``[x1, y1, w, h]`` and ``blur``,
    ``expression``, ``illumination``, ``occlusion``, ``pose``, ``invalid`` uint32 (N,).

    Two differences from MindSpore, which are fixes: each attribute comes from its own field of the
    file (MindSpore reads ``invalid`` into ``occlusion``, ``occlusion`` into ``pose`` and ``pose``
    into ``invalid``), and an image with no face has N = 0 (MindSpore turns the file's placeholder
    line of zeros into one face).

    Examples:
        >>> import minddata as md
        >>> md.WIDERFaceDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: WIDERFaceDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
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
        where = "WIDERFaceDataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = "all" if usage is None else usage
        if chosen not in ("train", "valid", "test", "all"):
            raise ArgumentError(f"{where}: `usage` must be one of ['train', 'valid', 'test', 'all'] or None. "
                                f"Found: {usage!r}")
        splits = ["train", "valid"] if chosen == "all" else [chosen]

        def build() -> list[tuple]:
            rows = []
            for split in splits:
                images = os.path.join(folder, _BASE[split], "images")
                if not os.path.isdir(images):
                    raise missing(where, images, f"usage={chosen!r} reads from it; unzip {_BASE[split]}.zip into "
                                  "dataset_dir.")
                files = sorted(
                    (event.name, e.name) for event in os.scandir(images) if event.is_dir()
                    for e in os.scandir(event.path) if e.is_file() and e.name.endswith(".jpg")
                )
                if split == "test":
                    rows.extend((os.path.join(images, *f),) for f in files)
                    continue
                faces = _read_ground_truth(where, os.path.join(folder, "wider_face_split", _ANNOTATIONS[split]))
                empty = np.zeros((0, 10), dtype=np.uint32)
                for event, name in files:
                    boxes = faces.get(f"{event}/{name}", empty)
                    rows.append((os.path.join(images, event, name), boxes[:, :4].copy(),
                                 *(boxes[:, 4 + _FILE_ORDER.index(c)].copy() for c in _COLUMNS[2:])))
            if not rows:
                raise DataFormatError(f"{where}: no .jpg images for usage={chosen!r} under {folder}.", path=folder)
            return rows

        super().__init__(file_source(
            where, ["image"] if chosen == "test" else _COLUMNS, FileIndex(where, build), decode=decode,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


def _read_ground_truth(where: str, path: str) -> dict[str, np.ndarray]:
    """image path (``<event>/<name>.jpg``) → its faces, uint32 (N, 10)."""
    lines = read_lines(where, path, "the ground truth ships in wider_face_split.zip; unzip it into dataset_dir.")
    faces: dict[str, np.ndarray] = {}
    k = 0
    try:
        while k < len(lines):
            name, count = lines[k], int(lines[k + 1])
            # An image without faces still has one placeholder line of zeros.
            body = lines[k + 2 : k + 2 + max(count, 1)]
            values = np.asarray([[int(x) for x in line.split()] for line in body[:count]], dtype=np.int64)
            if count and values.shape != (count, 10):
                raise ValueError(f"the {count} face line(s) after {name!r} must hold 10 integers each")
            faces[name] = values.reshape(-1, 10).astype(np.uint32)
            k += 2 + max(count, 1)
    except (ValueError, IndexError) as error:
        raise DataFormatError(f"{where}: {path} near line {k + 1} is not WIDER FACE ground truth: {error}",
                              path=path) from None
    return faces
