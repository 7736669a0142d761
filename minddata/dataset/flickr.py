"""Flickr8k and Flickr30k captions (MindSpore's ``FlickrDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing, name_inside
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["FlickrDataset"]

# JPEG, PNG, GIF, BMP: the images MindSpore reads; other files listed are skipped.
_MAGIC = (b"\xff\xd8\xff", b"\x89PN", b"GIF", b"BM")


class FlickrDataset(Dataset):
    """Flickr8k / Flickr30k (MindSpore's ``FlickrDataset``): images and their captions.

    ``dataset_dir`` holds the images; ``annotation_file`` (``Flickr8k.token.txt``,
    ``results_20130124.token``) has one caption per line: ``<image>#<n>\\t<caption>``. One row per
    image, in file-name order: ``image`` uint8 (the file's bytes; RGB HWC with ``decode=True``) and
    ``annotation``, its captions as a 1-D string array. A listed file that is not a JPEG, PNG, GIF or
    BMP is skipped, as in MindSpore; a listed file that is absent is an error naming it.

    Examples:
        >>> import minddata as md
        >>> md.FlickrDataset("no/such/folder", "annotations.txt")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: FlickrDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        annotation_file: str | os.PathLike,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "FlickrDataset"
        folder = dataset_folder(where, dataset_dir)
        if not isinstance(annotation_file, (str, os.PathLike)) or not os.path.isfile(annotation_file):
            raise ArgumentError(f"{where}: `annotation_file` must be an existing file. Found: {annotation_file!r}")
        annotations = os.path.abspath(os.fspath(annotation_file))

        def build() -> list[tuple]:
            captions: dict[str, list[str]] = {}
            with open(annotations, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    line = line.rstrip("\r\n")
                    if not line.strip():
                        continue
                    key, tab, caption = line.partition("\t")
                    name = key.rpartition("#")[0]
                    if not tab or not name or not caption:
                        raise DataFormatError(f"{where}: {annotations} line {number} must be `<image>#<n>\\t<caption>`. "
                                              f"Found: {line[:80]!r}", path=annotations)
                    path = name_inside(where, folder, name, f"{annotations} line {number}")
                    captions.setdefault(path, []).append(caption)
            rows = []
            for path in sorted(captions):
                if not os.path.isfile(path):
                    raise missing(where, path, f"{annotations} lists it; dataset_dir must hold the images.")
                with open(path, "rb") as image:
                    head = image.read(3)
                if head.startswith(_MAGIC):
                    rows.append((path, np.asarray(captions[path])))
            if not rows:
                raise DataFormatError(f"{where}: none of the images {annotations} lists is a JPEG, PNG, GIF or BMP.",
                                      path=annotations)
            return rows

        super().__init__(file_source(
            where, ["image", "annotation"], FileIndex(where, build), decode=bool(decode), sampler=sampler,
            shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))
