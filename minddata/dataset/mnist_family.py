"""The MNIST family, with MindSpore's names, columns and types: ``MnistDataset``,
``FashionMnistDataset``, ``KMnistDataset``, ``EMnistDataset``, ``QMnistDataset`` (IDX files, one
reader) and ``USPSDataset`` (libsvm text).

Every one is an in-memory array source: the files are read once, on first use, and rows are
indexed through a sampler (``shuffle`` on by default, ``num_samples``, ``sampler``,
``num_shards``/``shard_id``). A missing, truncated or malformed file is an error naming the file,
what is wrong and what the folder should hold.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from minddata.dataset import _validate as v
from minddata.dataset._files import Shuffle
from minddata.dataset._loaders import array_source, dataset_folder, missing, usage_splits
from minddata.dataset.base import Dataset
from minddata.errors import ArgumentError, DataFormatError

__all__ = [
    "MnistDataset",
    "FashionMnistDataset",
    "KMnistDataset",
    "EMnistDataset",
    "QMnistDataset",
    "USPSDataset",
    "read_idx",
]

# IDX element types: the third byte of the magic number.
_IDX_TYPES = {0x08: np.dtype(np.uint8), 0x09: np.dtype(np.int8), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(where: str, path: str, dims: int, type_code: int = 0x08, fix: str = "") -> np.ndarray:
    """An IDX file: big-endian magic ``0x0000TTDD`` (T: element type, D: number of dimensions), the
    dimensions as big-endian uint32, then the data. Returns it in native byte order.

    Examples:
        >>> import struct, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "labels")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(struct.pack(">II", 0x801, 3) + bytes([7, 1, 4]))
        >>> read_idx("MnistDataset", path, 1).tolist()
        [7, 1, 4]
    """
    if not os.path.isfile(path):
        raise missing(where, path, fix or f"{where} needs {os.path.basename(path)} (uncompressed) in dataset_dir.")
    raw = np.fromfile(path, dtype=np.uint8)
    magic = int.from_bytes(raw[:4].tobytes(), "big") if raw.size >= 4 else None
    expected = type_code << 8 | dims
    if magic is not None and magic != expected:
        raise DataFormatError(
            f"{where}: {path} is not an IDX file of {_IDX_TYPES[type_code].name} with {dims} dimension(s): magic "
            f"number {magic:#010x}, expected {expected:#010x}. (A .gz file must be uncompressed first.)",
            path=path,
        )
    if raw.size < 4 + 4 * dims:
        raise DataFormatError(f"{where}: {path} is truncated: {raw.size} bytes, shorter than its header.", path=path)
    shape = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i].tobytes(), "big") for i in range(dims)]
    start = 4 + 4 * dims
    dtype = _IDX_TYPES[type_code]
    need = int(np.prod(shape)) * dtype.itemsize
    if raw.size - start != need:
        what = "truncated" if raw.size - start < need else "longer than its header says"
        raise DataFormatError(
            f"{where}: {path} is {what}: its header gives shape {shape} ({need} bytes of data), the file has "
            f"{raw.size - start}.",
            path=path,
        )
    return raw[start:].view(dtype).reshape(shape).astype(dtype.newbyteorder("="))


def _load_pairs(where: str, pairs: list[tuple[str, str]], label_dims: int = 1, label_type: int = 0x08,
                fix: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Images (N, 28, 28, 1) uint8 and labels (N, ...) uint32 from (image file, label file) pairs."""
    images, labels = [], []
    for image_file, label_file in pairs:
        x = read_idx(where, image_file, 3, 0x08, fix)
        y = read_idx(where, label_file, label_dims, label_type, fix)
        if len(x) != len(y):
            raise DataFormatError(
                f"{where}: {image_file} has {len(x)} images but {label_file} has {len(y)} labels.", path=label_file
            )
        images.append(x[..., None])
        labels.append(y.astype(np.uint32))
    return np.concatenate(images), np.concatenate(labels)


class _MnistLayout(Dataset):
    """MNIST's four IDX files (``train-``/``t10k-`` ``images-idx3-ubyte``/``labels-idx1-ubyte``),
    which Fashion-MNIST and KMNIST share."""

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
        prefix = {"train": "train", "test": "t10k"}
        pairs = [
            (os.path.join(folder, f"{prefix[s]}-images-idx3-ubyte"), os.path.join(folder, f"{prefix[s]}-labels-idx1-ubyte"))
            for s in usage_splits(where, usage, ("train", "test"))
        ]
        fix = f"{where} needs train-/t10k-images-idx3-ubyte and -labels-idx1-ubyte in dataset_dir (gunzip the .gz files)."
        super().__init__(array_source(
            where, ["image", "label"], lambda: _load_pairs(where, pairs, fix=fix), label_column=1,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


class MnistDataset(_MnistLayout):
    """MNIST from its IDX files (MindSpore's ``MnistDataset``).

    ``dataset_dir`` holds ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (uncompressed). ``usage``: ``"train"``,
    ``"test"`` or ``"all"`` (default: train then test). Columns ``image`` (28, 28, 1) uint8 and
    ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.MnistDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: MnistDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """


class FashionMnistDataset(_MnistLayout):
    """Fashion-MNIST (MindSpore's ``FashionMnistDataset``): MNIST's file names and layout, ten classes
    of clothing. ``usage``: ``"train"``, ``"test"`` or ``"all"`` (default). Columns ``image``
    (28, 28, 1) uint8 and ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.FashionMnistDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: FashionMnistDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """


class KMnistDataset(_MnistLayout):
    """Kuzushiji-MNIST (MindSpore's ``KMnistDataset``): MNIST's file names and layout, ten classes of
    cursive Japanese characters. ``usage``: ``"train"``, ``"test"`` or ``"all"`` (default). Columns
    ``image`` (28, 28, 1) uint8 and ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.KMnistDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: KMnistDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """


_EMNIST_NAMES = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")


class EMnistDataset(Dataset):
    """EMNIST (MindSpore's ``EMnistDataset``) from its IDX files
    ``emnist-<name>-<train|test>-images-idx3-ubyte`` and ``...-labels-idx1-ubyte``.

    ``name``: the split family, ``"byclass"``, ``"bymerge"``, ``"balanced"``, ``"letters"``,
    ``"digits"`` or ``"mnist"``. ``usage``: ``"train"``, ``"test"`` or ``"all"`` (default). Columns
    ``image`` (28, 28, 1) uint8, as stored (EMNIST's images are transposed relative to MNIST's; so
    are MindSpore's) and ``label`` uint32.

    Examples:
        >>> import minddata as md
        >>> md.EMnistDataset("no/such/folder", "mnist")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: EMnistDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        name: str,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "EMnistDataset"
        folder = dataset_folder(where, dataset_dir)
        if name not in _EMNIST_NAMES:
            raise ArgumentError(f"{where}: `name` must be one of {list(_EMNIST_NAMES)}. Found: {name!r}")
        pairs = [
            (os.path.join(folder, f"emnist-{name}-{s}-images-idx3-ubyte"),
             os.path.join(folder, f"emnist-{name}-{s}-labels-idx1-ubyte"))
            for s in usage_splits(where, usage, ("train", "test"))
        ]
        fix = f"{where} needs emnist-{name}-<train|test>-images-idx3-ubyte and -labels-idx1-ubyte (uncompressed)."
        super().__init__(array_source(
            where, ["image", "label"], lambda: _load_pairs(where, pairs, fix=fix), label_column=1,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


_QMNIST_FILES = {"train": "qmnist-train", "test": "qmnist-test", "nist": "xnist"}
_QMNIST_TEST_HEAD = 10000  # test10k: the first 10,000 rows of the test files; test50k: the rest


class QMnistDataset(Dataset):
    """QMNIST (MindSpore's ``QMnistDataset``) from ``qmnist-train-*``, ``qmnist-test-*`` and
    ``xnist-*`` files: ``images-idx3-ubyte`` and ``labels-idx2-int`` (8 big-endian int32 per image).

    ``usage``: ``"train"``, ``"test"``, ``"test10k"`` (the first 10,000 test rows), ``"test50k"``
    (the rest), ``"nist"`` or ``"all"`` (default: train, test, nist). ``compat=True`` (default):
    ``label`` is the class, a uint32 scalar; ``compat=False``: all 8 QMNIST values (class, NIST
    series, writer id, digit index, NIST class, global index, duplicate, unused), uint32 (8,).
    Column ``image`` (28, 28, 1) uint8 keeps the file's grey levels (MindSpore turns every non-zero
    pixel into 255, losing the anti-aliasing).

    Examples:
        >>> import minddata as md
        >>> md.QMnistDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: QMnistDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        compat: bool = True,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "QMnistDataset"
        folder = dataset_folder(where, dataset_dir)
        chosen = (["train", "test", "nist"] if usage in (None, "all")
                  else usage_splits(where, usage, ("train", "test", "test10k", "test50k", "nist")))
        compat = bool(v.bool_arg(where, "compat", compat))
        fix = f"{where} needs <qmnist-train|qmnist-test|xnist>-images-idx3-ubyte and -labels-idx2-int (uncompressed)."

        def load() -> tuple[np.ndarray, np.ndarray]:
            images, labels = [], []
            for split in chosen:
                stem = os.path.join(folder, _QMNIST_FILES.get(split, "qmnist-test"))
                x, y = _load_pairs(where, [(f"{stem}-images-idx3-ubyte", f"{stem}-labels-idx2-int")], 2, 0x0C, fix)
                if y.shape[1] != 8:
                    raise DataFormatError(
                        f"{where}: {stem}-labels-idx2-int has {y.shape[1]} values per image; QMNIST has 8.",
                        path=f"{stem}-labels-idx2-int",
                    )
                rows = {"test10k": slice(0, _QMNIST_TEST_HEAD), "test50k": slice(_QMNIST_TEST_HEAD, None)}.get(split)
                if rows is not None:
                    x, y = x[rows], y[rows]
                images.append(x)
                labels.append(y[:, 0] if compat else y)
            return np.concatenate(images), np.concatenate(labels)

        super().__init__(array_source(
            where, ["image", "label"], load, label_column=1 if compat else None,
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards, shard_id=shard_id,
            num_parallel_workers=num_parallel_workers, cache=cache,
        ))


_USPS_FILES = {"train": "usps", "test": "usps.t"}
_USPS_PIXELS = 16 * 16


def _read_usps(where: str, path: str) -> tuple[np.ndarray, np.ndarray]:
    """One libsvm file: per line, a label in 1..10 then ``k:v`` for k = 1..256, v in [-1, 1]."""
    if not os.path.isfile(path):
        raise missing(where, path, f"{where} needs `usps` (train) and `usps.t` (test), bunzip2-ed, in dataset_dir.")
    images, labels = [], []
    with open(path, encoding="ascii", errors="replace") as f:
        for number, line in enumerate(f, 1):
            items = line.split()
            if not items:
                continue
            try:
                label = int(items[0]) - 1
                keys = [int(k) for k, _, _ in (item.partition(":") for item in items[1:])]
                values = np.asarray([float(item.partition(":")[2]) for item in items[1:]], dtype=np.float32)
            except ValueError as error:
                raise DataFormatError(f"{where}: {path} line {number} is not `label k:v ...`: {error}", path=path) from None
            if keys != list(range(1, _USPS_PIXELS + 1)) or not 0 <= label < 10:
                raise DataFormatError(
                    f"{where}: {path} line {number} must hold a label in 1..10 and the pixels 1:..256: in order; found "
                    f"label {label + 1} and {len(keys)} pixel(s).",
                    path=path,
                )
            images.append(values)
            labels.append(label)
    if not images:
        raise DataFormatError(f"{where}: {path} holds no rows.", path=path)
    # As MindSpore: [-1, 1] → [0, 255], truncated toward zero.
    pixels = ((np.stack(images).astype(np.float64) + 1.0) / 2.0 * 255.0).astype(np.uint8)
    return pixels.reshape(-1, 16, 16, 1), np.asarray(labels, dtype=np.uint32)


class USPSDataset(Dataset):
    """USPS handwritten digits (MindSpore's ``USPSDataset``) from the libsvm files ``usps`` (train,
    7,291 rows) and ``usps.t`` (test, 2,007 rows), uncompressed, in ``dataset_dir``.

    ``usage``: ``"train"``, ``"test"`` or ``"all"`` (default). Columns ``image`` (16, 16, 1) uint8
    (the file's [-1, 1] values scaled to [0, 255]) and ``label`` uint32 in [0, 9]. ``shuffle``:
    ``Shuffle.GLOBAL`` or True (default), or False; rows are read by index, so ``Shuffle.FILES``
    (the order of two files) is refused rather than approximated.

    Examples:
        >>> import minddata as md
        >>> md.USPSDataset("no/such/folder")  # the files are read when iterating; a wrong path fails here
        Traceback (most recent call last):
            ...
        minddata.errors.ArgumentError: USPSDataset: `dataset_dir` must be an existing folder. Found: 'no/such/folder'
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        usage: str | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = Shuffle.GLOBAL,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
    ):
        where = "USPSDataset"
        folder = dataset_folder(where, dataset_dir)
        files = [os.path.join(folder, _USPS_FILES[s]) for s in usage_splits(where, usage, ("train", "test"))]
        if shuffle is Shuffle.GLOBAL or shuffle is None:
            shuffle = True
        elif not isinstance(shuffle, (bool, np.bool_)):
            raise ArgumentError(f"{where}: `shuffle` must be True, False or Shuffle.GLOBAL. Found: {shuffle!r}")

        def load() -> tuple[np.ndarray, np.ndarray]:
            parts = [_read_usps(where, path) for path in files]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

        super().__init__(array_source(
            where, ["image", "label"], load, label_column=1, shuffle=bool(shuffle), num_samples=num_samples,
            num_shards=num_shards, shard_id=shard_id, num_parallel_workers=num_parallel_workers, cache=cache,
        ))
