"""SBU Captioned Photos (MindSpore's ``SBUDataset``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset._loaders import FileIndex, dataset_folder, file_source, missing
from minddata.dataset.base import Dataset
from minddata.errors import DataFormatError

__all__ = ["SBUDataset", "image_name"]

_URLS = "SBU_captioned_photo_dataset_urls.txt"
_CAPTIONS = "SBU_captioned_photo_dataset_captions.txt"
# MindSpore names each downloaded photo after its URL from this offset on, with "/" made "_":
# http://static.flickr.com/2723/4385058960_b0f291553e.jpg -> m_2723_4385058960_b0f291553e.jpg
_NAME_OFFSET = 23


def image_name(url: str) -> str:
    """The file name under ``sbu_images/`` of the photo at ``url``.

    Examples:
        >>> image_name("http://static.flickr.com/2723/4385058960_b0f291553e.jpg")
        'm_2723_4385058960_b0f291553e.jpg'
    """
    return url[_NAME_OFFSET:].replace("/", "_")


class SBUDataset(Dataset):
    """SBU Captioned Photos (MindSpore's ``SBUDataset``).

    ``dataset_dir`` holds ``SBU_captioned_photo_dataset_urls.txt`` and
    ``SBU_captioned_photo_dataset_captions.txt`` (line *i* of one goes with line *i* of the other) and
    ``sbu_images/``, the photos downloaded so far, each named by :func:`image_name` of its URL. As in
    MindSpore, a photo not in ``sbu_images/`` (many have left Flickr) is skipped. Columns ``image``
    uint8 (the file's bytes; RGB HWC with ``decode=True``) and ``caption``, a string (trailing spaces
    removed).

    Examples:
        >>> import minddata as md
        >>> md.SBUDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: SBUDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
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
        where = "SBUDataset"
        folder = dataset_folder(where, dataset_dir)

        def build() -> list[tuple]:
            fix = f"{where} needs {_URLS}, {_CAPTIONS} and sbu_images/ in dataset_dir."
            images = os.path.join(folder, "sbu_images")
            if not os.path.isdir(images):
                raise missing(where, images, fix)
            url_file, caption_file = os.path.join(folder, _URLS), os.path.join(folder, _CAPTIONS)
            for path in (url_file, caption_file):
                if not os.path.isfile(path):
                    raise missing(where, path, fix)
            with open(url_file, encoding="utf-8") as u, open(caption_file, encoding="utf-8") as c:
                urls, captions = u.read().splitlines(), c.read().splitlines()
            if len([x for x in urls if x.strip()]) != len([x for x in captions if x.strip()]):
                raise DataFormatError(
                    f"{where}: {url_file} and {caption_file} must have one line per photo each; they have "
                    f"{len(urls)} and {len(captions)} lines.",
                    path=caption_file,
                )
            present = {e.name for e in os.scandir(images) if e.is_file()}
            rows = []
            for url, caption in zip(urls, captions):
                name = image_name(url.strip())
                if url.strip() and name in present:
                    rows.append((os.path.join(images, name), np.asarray(caption.rstrip(" "))))
            if not rows:
                raise DataFormatError(f"{where}: none of the photos listed in {url_file} is in {images}.", path=images)
            return rows

        super().__init__(file_source(
            where, ["image", "caption"], FileIndex(where, build), decode=decode, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))


