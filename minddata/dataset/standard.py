"""Standard data sets and generated sources, with MindSpore's names, columns and types.

``Cifar10Dataset`` / ``Cifar100Dataset`` (binary batches),
``CocoDataset`` (annotation JSON + images), ``FakeImageDataset``, ``RandomDataset`` and
``PaddedDataset``. All are random access: ``shuffle`` (on by default, as in MindSpore),
``num_samples``, ``sampler`` and ``num_shards``/``shard_id`` go through a sampler. Files are read
on first use, not when the dataset is built; a missing, truncated or malformed file is an error
naming the file and what is wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._loaders import Lazy, array_source, dataset_folder, source_sampler, usage_splits
from minddata.dataset._paths import PathEscapeError, check_trusted_roots, inside_root
from minddata.dataset.base import Dataset
from minddata.dataset.cache import with_cache
from minddata.dataset.schema import Schema, as_schema
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError, RowError
from minddata.ops.file_bytes import read_file

__all__ = [
    "Cifar10Dataset",
    "Cifar100Dataset",
    "CocoDataset",
    "FakeImageDataset",
    "RandomDataset",
    "PaddedDataset",
]


# -- CIFAR ----------------------------------------------------------------------------------------

_CIFAR_PIXELS = 32 * 32 * 3


def _cifar_files(where: str, folder: str, splits: list[str], names: dict[str, tuple[Callable[[str], bool], str]]) -> list[str]:
    files = []
    for split in splits:
        accept, pattern = names[split]
        found = sorted(e.path for e in os.scandir(folder) if e.is_file() and accept(e.name))
        if not found:
            raise DataFormatError(f"{where}: no {split} files in {folder} (expected {pattern}).", path=folder)
        files.extend(found)
    return files


def _read_cifar(where: str, files: list[str], label_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    record = label_bytes + _CIFAR_PIXELS
    images, labels = [], []
    for path in files:
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size % record:
            raise DataFormatError(
                f"{where}: {path} is truncated or not a CIFAR binary batch: {raw.size} bytes is not a whole number of "
                f"{record}-byte records ({raw.size // record} records and {raw.size % record} bytes left over).",
                path=path,
            )
        rows = raw.reshape(-1, record)
        labels.append(rows[:, :label_bytes].astype(np.uint32))
        images.append(rows[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return np.ascontiguousarray(np.concatenate(images)), np.concatenate(labels)


class Cifar10Dataset(Dataset):
    """CIFAR-10 from its binary batches (MindSpore's ``Cifar10Dataset``).

    ``dataset_dir`` holds ``data_batch_1.bin`` ... ``data_batch_5.bin`` (train) and ``test_batch.bin``
    (test); each record is a label byte and 3,072 pixel bytes (red, green, blue planes of 32x32).
    Columns ``image`` (32, 32, 3) uint8 (HWC) and ``label`` uint32. ``usage``: ``"train"``,
    ``"test"`` or ``"all"`` (default).

    Examples:
        >>> import minddata as md
        >>> md.Cifar10Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Cifar10Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    _label_bytes = 1
    _columns = ["image", "label"]
    _names: dict[str, tuple[Callable[[str], bool], str]] = {
        "train": (lambda n: n.startswith("data_batch") and n.endswith(".bin"), "data_batch_*.bin"),
        "test": (lambda n: n.startswith("test_batch") and n.endswith(".bin"), "test_batch.bin"),
    }

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
        where = type(self).__name__
        folder = dataset_folder(where, dataset_dir)
        splits = usage_splits(where, usage, ("train", "test"))
        label_bytes = self._label_bytes
        names = self._names

        def load() -> tuple[np.ndarray, ...]:
            images, labels = _read_cifar(where, _cifar_files(where, folder, splits, names), label_bytes)
            return (images, *[labels[:, i] for i in range(label_bytes)])

        super().__init__(array_source(
            # PKSampler groups by the last label column: CIFAR-10's label, CIFAR-100's fine label.
            where, self._columns, load, label_column=label_bytes, sampler=sampler, shuffle=shuffle,
            num_samples=num_samples, num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))


class Cifar100Dataset(Cifar10Dataset):
    """CIFAR-100 from its binary files ``train.bin`` and ``test.bin`` (MindSpore's
    ``Cifar100Dataset``): each record is a coarse label byte, a fine label byte and 3,072 pixel bytes.
    Columns ``image`` (32, 32, 3) uint8, ``coarse_label`` and ``fine_label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.Cifar100Dataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: Cifar100Dataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    _label_bytes = 2
    _columns = ["image", "coarse_label", "fine_label"]
    _names = {"train": (lambda n: n == "train.bin", "train.bin"), "test": (lambda n: n == "test.bin", "test.bin")}


# -- COCO -----------------------------------------------------------------------------------------

_COCO_COLUMNS = {
    "Detection": ["image", "bbox", "category_id", "iscrowd"],
    "Stuff": ["image", "segmentation", "iscrowd"],
    "Keypoint": ["image", "keypoints", "num_keypoints"],
    "Panoptic": ["image", "bbox", "category_id", "iscrowd", "area"],
    "Captioning": ["image", "captions"],
}


class CocoDataset(Dataset):
    """COCO annotations and their images (MindSpore's ``CocoDataset``).

    Args:
        dataset_dir: the image folder (``file_name`` of each image is relative to it).
        annotation_file: the annotation JSON.
        task: ``"Detection"`` (default), ``"Stuff"``, ``"Keypoint"``, ``"Panoptic"`` or
            ``"Captioning"``.
        decode: decode images to RGB HWC uint8 (default: the file's bytes, 1-D uint8).
        extra_metadata: add a ``_meta-filename`` column with each image's file name.
        trusted_roots: folders besides ``dataset_dir`` that ``file_name`` may point into (for
            annotation files written with absolute paths). Otherwise a ``file_name`` that leaves
            ``dataset_dir`` (``../x``, an absolute path, a symlink out) is refused.
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id: as elsewhere.

    Columns per task (one row per image, in the JSON's ``images`` order; N = its annotations):

    - Detection: ``image``, ``bbox`` float32 (N, 4) ``[x, y, w, h]``, ``category_id`` uint32 (N, 1),
      ``iscrowd`` uint32 (N, 1);
    - Stuff: ``image``, ``segmentation`` float32 (N, L) (each annotation's polygons concatenated,
      padded with -1 to the longest), ``iscrowd`` uint32 (N, 1);
    - Keypoint: ``image``, ``keypoints`` float32 (N, 51), ``num_keypoints`` uint32 (N, 1);
    - Panoptic: ``image``, ``bbox``, ``category_id``, ``iscrowd``, ``area`` uint32 (N, 1), from each
      annotation's ``segments_info``;
    - Captioning: ``image``, ``captions`` str (N,).

    An image without annotations gets N = 0 (empty arrays of those shapes).

    Examples:
        >>> import minddata as md
        >>> md.CocoDataset("no/such/folder", "annotations.json")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: CocoDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        annotation_file: str | os.PathLike,
        task: str = "Detection",
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        decode: bool = False,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        extra_metadata: bool = False,
        decrypt: Any = None,
        trusted_roots: Sequence[str | os.PathLike] | None = None,
    ):
        where = "CocoDataset"
        folder = dataset_folder(where, dataset_dir)
        trusted = check_trusted_roots(where, trusted_roots)
        if task not in _COCO_COLUMNS:
            raise ArgumentError(f"{where}: `task` must be one of {list(_COCO_COLUMNS)}. Found: {task!r}")
        if not isinstance(annotation_file, (str, os.PathLike)) or not os.path.isfile(annotation_file):
            raise ArgumentError(f"{where}: `annotation_file` must be an existing file. Found: {annotation_file!r}")
        v.bool_arg(where, "decode", decode)
        v.bool_arg(where, "extra_metadata", extra_metadata)
        self._coco = _Coco(folder, os.path.abspath(os.fspath(annotation_file)), task, trusted)
        columns = list(_COCO_COLUMNS[task]) + (["_meta-filename"] if extra_metadata else [])
        node: ir.Node = ir.RandomAccessSourceNode(
            where, columns, self._coco.count, source_sampler(where, sampler, shuffle, num_samples, num_shards, shard_id),
            _CocoFetch(self._coco, extra_metadata), origins=self._coco.paths_of,
            num_workers=v.workers(where, num_parallel_workers), chunk_rows=8,
        )
        if decode:
            from minddata.vision import Decode

            node = ir.MapNode(node, [Decode()], ["image"], None, node.num_workers, False)  # type: ignore[attr-defined]  # a random-access source node, which has num_workers
        super().__init__(with_cache(where, node, cache))

    def get_class_indexing(self) -> dict[str, int]:
        """Category name → category id (from the annotation file's ``categories``)."""
        return dict(self._coco.load()["classes"])


class _Coco:
    def __init__(self, folder: str, annotation_file: str, task: str, trusted_roots: tuple[str, ...] = ()):
        self.folder = folder
        self.annotation_file = annotation_file
        self.task = task
        self.trusted_roots = trusted_roots
        self._lazy = Lazy(self._parse)

    def load(self) -> dict[str, Any]:
        return self._lazy.get()

    def count(self) -> int:
        return len(self.load()["files"])

    def paths_of(self, ids: list[int]) -> list[str]:
        files = self.load()["files"]
        return [files[i] for i in ids]

    def _parse(self) -> dict[str, Any]:
        path = self.annotation_file
        try:
            with open(path, encoding="utf-8") as f:
                content = json.load(f)
        except (OSError, ValueError) as error:
            raise DataFormatError(f"CocoDataset: can't read annotation file {path}: {error}", path=path) from None

        def need(obj: Any, key: str, what: str) -> Any:
            if not isinstance(obj, dict) or key not in obj:
                raise DataFormatError(f"CocoDataset: annotation file {path}: {what} has no {key!r}.", path=path)
            return obj[key]

        images = need(content, "images", "the file")
        annotations = content.get("annotations", [])
        if not isinstance(images, list) or not isinstance(annotations, list):
            raise DataFormatError(f"CocoDataset: annotation file {path}: 'images' and 'annotations' must be lists.", path=path)
        order: dict[Any, int] = {}
        files = []
        for k, image in enumerate(images):
            image_id = need(image, "id", f"images[{k}]")
            order[image_id] = k
            name = need(image, "file_name", f"images[{k}]")
            try:
                # The text first (cheap, all rows now); symlinks are followed when each file is read.
                inside_root(self.folder, name, "CocoDataset", f"annotation file {path}: images[{k}].file_name",
                            self.trusted_roots, resolve=False)
            except PathEscapeError as error:
                raise DataFormatError(str(error), path=path) from None
            files.append(os.path.join(self.folder, name))
        per_image: list[list[dict[str, Any]]] = [[] for _ in images]
        for k, ann in enumerate(annotations):
            image_id = need(ann, "image_id", f"annotations[{k}]")
            if image_id not in order:
                raise DataFormatError(
                    f"CocoDataset: annotation file {path}: annotations[{k}] refers to image_id {image_id!r}, which "
                    "'images' does not list.",
                    path=path,
                )
            per_image[order[image_id]].append(ann)
        task = self.task
        rows = []
        for k, anns in enumerate(per_image):
            try:
                rows.append(_coco_columns(task, anns))
            except (KeyError, TypeError, ValueError) as error:
                raise DataFormatError(
                    f"CocoDataset: annotation file {path}: the annotations of images[{k}] ({files[k]}) are malformed "
                    f"for task {task}: {type(error).__name__}: {error}",
                    path=path,
                ) from None
        classes = {c["name"]: c["id"] for c in content.get("categories", []) if isinstance(c, dict) and "name" in c}
        return {"files": files, "rows": rows, "classes": classes}


def _n1(values: list[Any]) -> np.ndarray:
    return np.asarray(values, dtype=np.uint32).reshape(-1, 1)


def _coco_columns(task: str, anns: list[dict[str, Any]]) -> tuple:
    if task == "Detection":
        bbox = np.asarray([a["bbox"] for a in anns], dtype=np.float32).reshape(-1, 4)
        return bbox, _n1([a["category_id"] for a in anns]), _n1([a.get("iscrowd", 0) for a in anns])
    if task == "Stuff":
        polys = [np.asarray([x for poly in a["segmentation"] for x in poly], dtype=np.float32) for a in anns]
        width = max((len(p) for p in polys), default=0)
        seg = np.full((len(polys), width), -1, dtype=np.float32)
        for i, p in enumerate(polys):
            seg[i, : len(p)] = p
        return seg, _n1([a.get("iscrowd", 0) for a in anns])
    if task == "Keypoint":
        keypoints = np.asarray([a["keypoints"] for a in anns], dtype=np.float32).reshape(-1, 51)
        return keypoints, _n1([a["num_keypoints"] for a in anns])
    if task == "Panoptic":
        segments = [s for a in anns for s in a["segments_info"]]
        bbox = np.asarray([s["bbox"] for s in segments], dtype=np.float32).reshape(-1, 4)
        return (
            bbox,
            _n1([s["category_id"] for s in segments]),
            _n1([s.get("iscrowd", 0) for s in segments]),
            _n1([s["area"] for s in segments]),
        )
    captions = [str(a["caption"]) for a in anns]
    return (np.asarray(captions, dtype=str) if captions else np.zeros(0, dtype=str),)


class _CocoFetch:
    def __init__(self, coco: _Coco, extra: bool):
        self.coco = coco
        self.extra = extra

    def __call__(self, ids: list[int]) -> list[tuple]:
        loaded = self.coco.load()
        files, rows = loaded["files"], loaded["rows"]
        out = []
        coco = self.coco
        for i in ids:
            path = files[i]
            try:
                # Resolved again as it is read: a symlink inside the folder must not lead out of it.
                real = inside_root(coco.folder, os.path.relpath(path, coco.folder), "CocoDataset",
                                   f"row {i}, image {path}:", coco.trusted_roots)
                data = read_file(real)
            except PathEscapeError as error:
                raise RowError(str(error), op="CocoDataset", row=i, source=path) from None
            except OSError as error:
                raise RowError(
                    f"CocoDataset: can't read row {i}, image {path}: {error.strerror or error}",
                    op="CocoDataset", row=i, source=path,
                ) from None  # the message holds the OS's reason
            row = (data, *rows[i])
            out.append(row + (np.asarray(os.path.basename(path)),) if self.extra else row)
        return out


# -- generated sources ----------------------------------------------------------------------------


class FakeImageDataset(Dataset):
    """Random images and labels, the same for the same index and ``base_seed`` (MindSpore's
    ``FakeImageDataset``). Columns ``image`` (``image_size``) uint8 and ``label`` uint32 in
    ``[0, num_classes)``.

    Examples:
        >>> import minddata as md
        >>> ds = md.FakeImageDataset(num_images=4, image_size=(8, 8, 3), num_classes=3, shuffle=False)
        >>> [r["image"].shape for r in ds.create_dict_iterator(output_numpy=True)][0]
        (8, 8, 3)
    """

    def __init__(
        self,
        num_images: int = 1000,
        image_size: Sequence[int] = (224, 224, 3),
        num_classes: int = 10,
        base_seed: int = 0,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "FakeImageDataset"
        count = v.positive_int(where, "num_images", num_images)
        if isinstance(image_size, (str, bytes)) or not isinstance(image_size, (list, tuple)) or len(image_size) != 3 or not all(
            v.is_int(d) and d > 0 for d in image_size
        ):
            raise ArgumentError(f"{where}: `image_size` must be 3 ints > 0 (height, width, channels). Found: {image_size!r}")
        classes = v.positive_int(where, "num_classes", num_classes)
        if not v.is_int(base_seed) or base_seed < 0:
            raise ArgumentError(f"{where}: `base_seed` must be an int >= 0. Found: {base_seed!r}")
        shape = tuple(int(d) for d in image_size)
        seed = int(base_seed)

        def fetch(ids: list[int]) -> list[tuple]:
            out = []
            for i in ids:
                rng = np.random.default_rng([seed, i])
                label = np.uint32(rng.integers(classes))
                out.append((rng.integers(0, 256, size=shape, dtype=np.uint8), label))
            return out

        node = ir.RandomAccessSourceNode(
            where, ["image", "label"], lambda: count, source_sampler(where, sampler, shuffle, num_samples, num_shards, shard_id),  # type: ignore[arg-type, return-value]  # count is known once the files are read
            fetch, num_workers=v.workers(where, num_parallel_workers),
        )
        super().__init__(with_cache(where, node, cache))


_RANDOM_TYPES = ("uint8", "int32", "int64", "float32", "float64")


class RandomDataset(Dataset):
    """Random rows following a schema (MindSpore's ``RandomDataset``).

    Args:
        total_rows: rows per epoch (default: the schema's ``numRows``, else drawn in [1, 1024]).
        schema: a :class:`Schema`, a schema file or ``{name: {"type": T, "shape": [...]}}``; a -1 in
            a shape draws that size per row in [1, 8]. Without a schema, 1 to 4 numeric columns with
            random types and shapes are drawn.
        columns_list: keep these columns of the schema.
        base_seed: the seed of the schema and of every value; row ``i`` is the same whatever the
            sampler, worker count or shard (an extension: MindSpore draws from the global seed).

    Integers are uniform in [0, 256) (narrower types: their range), floats in [0, 1), strings are 8
    random lowercase letters.

    Examples:
        >>> import minddata as md
        >>> ds = md.RandomDataset(total_rows=3, schema={"x": {"type": "int32", "shape": [2]}}, shuffle=False)
        >>> [r["x"].shape for r in ds.create_dict_iterator(output_numpy=True)]
        [(2,), (2,), (2,)]
    """

    def __init__(
        self,
        total_rows: int | None = None,
        schema: Any = None,
        columns_list: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        cache: Any = None,
        shuffle: bool | None = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        base_seed: int = 0,
    ):
        where = "RandomDataset"
        if not v.is_int(base_seed) or base_seed < 0:
            raise ArgumentError(f"{where}: `base_seed` must be an int >= 0. Found: {base_seed!r}")
        seed = int(base_seed)
        spec = as_schema(where, schema)
        rng = np.random.default_rng([seed, 0x52414E44])
        if spec is None:
            spec = Schema()
            for k in range(int(rng.integers(1, 5))):
                rank = int(rng.integers(0, 4))
                spec.add_column(f"column_{k}", _RANDOM_TYPES[int(rng.integers(len(_RANDOM_TYPES)))],
                                [int(d) for d in rng.integers(1, 9, size=rank)])
        if total_rows is None:
            total_rows = spec.num_rows or int(rng.integers(1, 1025))
        rows = v.positive_int(where, "total_rows", total_rows)
        columns = spec.columns
        wanted = v.column_list(where, "columns_list", columns_list)
        if wanted is not None:
            names = [c["name"] for c in columns]
            unknown = [c for c in wanted if c not in names]
            if unknown:
                raise ArgumentError(f"{where}: columns_list names {unknown}, which the schema does not have: {names}")
            columns = [columns[names.index(c)] for c in wanted]
        if not columns:
            raise ArgumentError(f"{where}: the schema names no columns.")
        specs = [(c["type"], c["shape"]) for c in columns]

        def fetch(ids: list[int]) -> list[tuple]:
            out = []
            for i in ids:
                r = np.random.default_rng([seed, i, 1])
                out.append(tuple(_random_value(r, t, s) for t, s in specs))
            return out

        node = ir.RandomAccessSourceNode(
            where, [c["name"] for c in columns], lambda: rows,  # type: ignore[arg-type, return-value]  # rows is known once the file is read
            source_sampler(where, None, shuffle, num_samples, num_shards, shard_id), fetch,
            num_workers=v.workers(where, num_parallel_workers),
        )
        super().__init__(with_cache(where, node, cache))


def _random_value(rng: np.random.Generator, kind: str, shape: list[int] | None) -> np.ndarray:
    size = tuple(int(rng.integers(1, 9)) if d == -1 else d for d in (shape if shape is not None else [1]))
    if kind in ("string", "bytes"):
        letters = rng.integers(97, 123, size=8, dtype=np.uint8).tobytes()
        return np.asarray(letters.decode()) if kind == "string" else np.frombuffer(letters, np.uint8).copy()
    dtype = np.dtype(kind)
    if dtype.kind == "f":
        return rng.random(size).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=size).astype(bool)
    high = min(256, int(np.iinfo(dtype).max) + 1)
    return rng.integers(0, high, size=size).astype(dtype)


class PaddedDataset(Dataset):
    """Rows given as a list of dicts (MindSpore's ``PaddedDataset``), read in order; concatenated to
    a sharded dataset it pads the shards to equal size.

    Examples:
        >>> import minddata as md
        >>> ds = md.PaddedDataset([{"image": np.zeros(2, np.uint8), "label": np.array(-1)}])
        >>> [int(r["label"]) for r in ds.create_dict_iterator(output_numpy=True)]
        [-1]
    """

    def __init__(self, padded_samples: list[dict[str, Any]]):
        where = "PaddedDataset"
        if not isinstance(padded_samples, list) or not padded_samples or not all(isinstance(s, dict) for s in padded_samples):
            raise ArgumentError(f"{where}: `padded_samples` must be a non-empty list of dicts. Found: {padded_samples!r}")
        names = list(padded_samples[0])
        for k, sample in enumerate(padded_samples):
            if list(sample) != names:
                raise ArgumentError(f"{where}: padded_samples[{k}] has keys {list(sample)}; every sample needs {names}.")
        rows = [tuple(np.asarray(s[n]) for n in names) for s in padded_samples]
        node = ir.RandomAccessSourceNode(
            where, names, lambda: len(rows), source_sampler(where, None, False, None, None, None),
            lambda ids: [rows[i] for i in ids], inline=True,
        )
        super().__init__(node)
