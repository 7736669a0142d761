"""``IMDBDataset``: the Large Movie Review Dataset, one review per text file.

Random access like MindSpore's: ``shuffle`` (on by default), ``num_samples``, ``sampler`` and
``num_shards``/``shard_id`` go through a sampler, so resume and sharding follow the sampler's rules.
The folders are listed when the dataset is built; the reviews are read when their rows are.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset.base import Dataset
from minddata.dataset.corpora_common import check_dir, check_usage
from minddata.engine import ir
from minddata.errors import DataFormatError
from minddata.samplers import resolve_sampler

__all__ = ["IMDBDataset"]

# Folder -> label, in MindSpore's reading order (positive reviews first).
_LABELS = (("pos", 1), ("neg", 0))


class _ReviewFetch:
    """Rows ``(text, label)`` by index from the listed review files."""

    def __init__(self, files: list[str], labels: np.ndarray):
        self.files = files
        self.labels = labels

    def __call__(self, ids: list[int]) -> list[tuple]:
        rows = []
        for i in ids:
            path = self.files[i]
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError) as error:
                raise DataFormatError(
                    f"IMDBDataset: can't read {path} as UTF-8 text: {error}", path=path
                ) from None
            rows.append((np.asarray(text), np.asarray(self.labels[i])))
        return rows

    def origins(self, ids: list[int]) -> list[str]:
        return [self.files[i] for i in ids]


class IMDBDataset(Dataset):
    """IMDb movie reviews (MindSpore's ``IMDBDataset``).

    ``dataset_dir`` holds ``train/`` and ``test/``, each with ``pos/`` and ``neg/`` folders of
    ``<id>_<rating>.txt`` files (``unsup/`` and the other files of the archive are ignored). Columns:
    ``text`` (the file's text, a string) and ``label`` (int32, as MindSpore 2.10: 1 positive, 0 negative). Without
    shuffling the order is train then test, and within each, ``pos`` then ``neg``, files in sorted
    name order.

    Args:
        dataset_dir: the root folder.
        usage: ``"train"``, ``"test"`` or ``"all"`` (default: all).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        num_parallel_workers: reader workers.
        shuffle: shuffle the rows (default True unless a ``sampler`` is given).
        sampler: a sampler choosing the rows (not with ``shuffle`` or sharding).
        num_shards, shard_id: this shard's rows, as :class:`~minddata.DistributedSampler` deals them.
        cache: accepted for MindSpore's signature.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> root = tempfile.mkdtemp()
        >>> for label, text in (("pos", "Loved it."), ("neg", "Dull.")):
        ...     os.makedirs(os.path.join(root, "test", label))
        ...     _ = open(os.path.join(root, "test", label, "0_9.txt"), "w").write(text)
        >>> ds = md.IMDBDataset(root, usage="test", shuffle=False)
        >>> [(str(r["text"]), int(r["label"])) for r in ds.create_dict_iterator(output_numpy=True)]
        [('Loved it.', 1), ('Dull.', 0)]
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "IMDBDataset"
        root = check_dir(where, dataset_dir)
        split = check_usage(where, usage, ("train", "test", "all"))
        files: list[str] = []
        labels: list[int] = []
        for part in ("train", "test"):
            if split not in (part, "all"):
                continue
            for folder, label in _LABELS:
                path = os.path.join(root, part, folder)
                if not os.path.isdir(path):
                    raise DataFormatError(
                        f"{where}: {path} is missing: usage={split!r} reads the reviews in {part}/pos and {part}/neg.",
                        path=path,
                    )
                names = sorted(n for n in os.listdir(path) if n.endswith(".txt"))
                files.extend(os.path.join(path, n) for n in names)
                labels.extend([label] * len(names))
        fetch = _ReviewFetch(files, np.asarray(labels, dtype=np.int32))
        count = len(files)
        node = ir.RandomAccessSourceNode(
            where,
            ["text", "label"],
            lambda: count,
            resolve_sampler(
                sampler=sampler,
                shuffle=shuffle,
                num_samples=num_samples,
                num_shards=num_shards,
                shard_id=shard_id,
                default_shuffle=True,
                where=where,
            ),
            fetch,
            origins=fetch.origins,
            num_workers=v.workers(where, num_parallel_workers),
        )
        super().__init__(node)
