"""Manifest files, ModelArts' JSON-lines image lists (MindSpore's ``ManifestDataset``)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import FileIndex, file_source, missing
from minddata.dataset._paths import PathEscapeError, check_trusted_roots, inside_root
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["ManifestDataset"]

# JPEG, PNG, GIF, BMP: the images MindSpore reads; entries naming other files are skipped.
_MAGIC = (b"\xff\xd8\xff", b"\x89PN", b"GIF", b"BM")


class ManifestDataset(Dataset):
    """A manifest file (MindSpore's ``ManifestDataset``): one JSON object per line,
    ``{"source": <image path>, "usage": "train", "annotation": [{"name": <class>, ...}, ...]}``.

    Args:
        dataset_file: the manifest file.
        usage: the entries to read: ``"train"`` (default), ``"eval"`` or ``"inference"``
            (compared without case with each entry's ``usage``).
        class_indexing: class name → label; annotations of other classes are left out (an entry
            left with none is skipped). Default: the names found, sorted, numbered from 0.
        decode: decode ``image`` to RGB HWC uint8 (default: the file's bytes).
        trusted_roots: folders that ``source`` paths may point into besides the manifest's own
            folder (a relative ``source`` is relative to it). Manifests usually hold absolute paths:
            pass their image folder here. Other paths are refused, so a manifest cannot make a
            pipeline read arbitrary files.
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns ``image`` uint8 and ``label`` int32 (as MindSpore 2.10; ``TypeCast(np.int64)`` for
    torch losses): a scalar for an entry with one annotation, else
    one label per annotation (1-D). Entries whose file is not a JPEG, PNG, GIF or BMP are skipped,
    as in MindSpore.

    Examples:
        >>> import minddata as md
        >>> md.ManifestDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: ManifestDataset: `dataset_file` must be an existing file. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_file: str | os.PathLike,
        usage: str = "train",
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        class_indexing: dict[str, int] | None = None,
        decode: bool = False,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        trusted_roots: Sequence[str | os.PathLike] | None = None,
    ):
        where = "ManifestDataset"
        if not isinstance(dataset_file, (str, os.PathLike)) or not os.path.isfile(dataset_file):
            raise ArgumentError(f"{where}: `dataset_file` must be an existing file. Found: {dataset_file!r}")
        if usage not in ("train", "eval", "inference"):
            raise ArgumentError(f"{where}: `usage` must be 'train', 'eval' or 'inference'. Found: {usage!r}")
        if class_indexing is not None and (not isinstance(class_indexing, dict) or not all(
                isinstance(k, str) and v.is_int(x) and x >= 0 for k, x in class_indexing.items())):
            raise ArgumentError(f"{where}: `class_indexing` must map class names to int labels >= 0. "
                                f"Found: {class_indexing!r}")
        manifest = os.path.abspath(os.fspath(dataset_file))
        trusted = check_trusted_roots(where, trusted_roots)
        self._classes: dict[str, int] = {}

        def build() -> list[tuple]:
            root = os.path.dirname(manifest)
            entries = []
            with open(manifest, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        entry = json.loads(line)
                        source = entry["source"]
                        names = [a["name"] for a in entry["annotation"]]
                        if not all(isinstance(n, str) and n for n in names):
                            raise ValueError("every annotation needs a non-empty 'name'")
                    except (ValueError, KeyError, TypeError) as error:
                        raise DataFormatError(f"{where}: {manifest} line {number} is not a manifest entry "
                                              f"({type(error).__name__}: {error}).", path=manifest) from None
                    try:
                        path = inside_root(root, source, where, f"{manifest} line {number}: source", trusted,
                                           resolve=False)
                    except PathEscapeError as error:
                        raise DataFormatError(str(error), path=manifest) from None
                    if not os.path.isfile(path):
                        raise missing(where, path, f"{manifest} line {number} names it.")
                    with open(path, "rb") as image:
                        if not image.read(3).startswith(_MAGIC):
                            continue
                    if str(entry.get("usage", "")).lower() != usage:
                        continue
                    kept = [n for n in names if class_indexing is None or n in class_indexing]
                    if kept:
                        entries.append((path, kept))
            found = sorted({n for _, names in entries for n in names})
            self._classes.update({n: int(class_indexing[n]) for n in found} if class_indexing is not None
                                 else {n: k for k, n in enumerate(found)})
            if not entries:
                raise DataFormatError(f"{where}: {manifest} has no image entry with usage {usage!r}"
                                      + (" and a class of class_indexing" if class_indexing else "") + ".",
                                      path=manifest)
            rows = []
            for path, names in entries:
                labels = np.asarray([self._classes[n] for n in names], dtype=np.int32)
                rows.append((path, labels[0] if len(labels) == 1 else labels))
            return rows

        self._index = FileIndex(where, build)
        super().__init__(file_source(
            where, ["image", "label"], self._index, decode=decode, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))

    def get_class_indexing(self) -> dict[str, int]:
        """Class name → label, for the classes found in the entries read."""
        self._index.rows()
        return dict(self._classes)

    def num_classes(self) -> int:
        """Number of classes (of ``class_indexing`` when given), as MindSpore's."""
        return len(self.get_class_indexing())
