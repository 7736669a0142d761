"""Source datasets: ``NumpySlicesDataset``, ``GeneratorDataset``, ``ImageFolderDataset``, ``OnlineDataset``."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from minddata.dataset import _storage
from minddata.dataset import _validate as v
from minddata.dataset.base import Dataset
from minddata.dataset.cache import with_cache
from minddata.engine import ir
from minddata.errors import ArgumentError, GraphError, RowError
from minddata.ops.file_bytes import read_file
from minddata.samplers import resolve_sampler, with_labels

__all__ = ["NumpySlicesDataset", "GeneratorDataset", "ImageFolderDataset", "OnlineDataset", "IMAGE_EXTENSIONS"]


def _to_value(value: Any) -> Any:
    return value if type(value) is np.ndarray else np.asarray(value)


class NumpySlicesDataset(Dataset):
    """Rows sliced along the first axis of in-memory data.

    ``data``: a dict (one column per key), a tuple (one column per element), or a list / array (one
    column). ``column_names`` names the columns (default ``column_0``, ``column_1``, ...; the keys for a
    dict). As in MindSpore, rows are shuffled unless ``shuffle=False`` or a sampler is given.

    Examples:
        >>> import minddata as md
        >>> ds = md.NumpySlicesDataset({"a": [1, 2], "b": [3, 4]}, shuffle=False)
        >>> [(int(r["a"]), int(r["b"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
        [(1, 3), (2, 4)]
    """

    def __init__(
        self,
        data: Any,
        column_names: str | Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
    ):
        where = "NumpySlicesDataset"
        names = v.column_list(where, "column_names", column_names)
        if isinstance(data, dict):
            keys = [str(k) for k in data]
            if names is not None and names != keys:
                raise ArgumentError(
                    f"{where}: for dict data the column names are the keys {keys}; `column_names` "
                    f"{names} differs. Drop `column_names` or rename the keys."
                )
            names, raw = keys, list(data.values())
        elif isinstance(data, tuple):
            raw = list(data)
        elif isinstance(data, (list, np.ndarray)):
            raw = [data]
        else:
            try:
                import pandas as pd  # optional: only to accept DataFrames

                if isinstance(data, pd.DataFrame):
                    names = names or [str(c) for c in data.columns]
                    raw = [data[c].to_numpy() for c in data.columns]
                else:
                    raise ImportError
            except ImportError:
                raise ArgumentError(
                    f"{where}: `data` must be a dict, tuple, list or numpy array. Found: {type(data).__name__}"
                ) from None
        if names is None:
            names = [f"column_{i}" for i in range(len(raw))]
        if len(names) != len(raw):
            raise ArgumentError(
                f"{where}: `column_names` names {len(names)} column(s) but `data` has {len(raw)}. Found: {names}"
            )
        arrays = []
        for name, column in zip(names, raw):
            try:
                array = np.asarray(column)
            except ValueError as error:
                array = _ragged_rows(where, name, column, error)
            if array.ndim == 0:
                raise ArgumentError(f"{where}: column {name!r} is a scalar; it needs at least one row. Found: {column!r}")
            arrays.append(array)
        lengths = {name: len(a) for name, a in zip(names, arrays)}
        if len(set(lengths.values())) > 1:
            raise ArgumentError(f"{where}: every column needs the same number of rows. Found: {lengths}")
        self._arrays = arrays
        num_rows = len(arrays[0])
        chosen = resolve_sampler(
            sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards,
            shard_id=shard_id, default_shuffle=True, where=where,
        )
        node = ir.RandomAccessSourceNode(
            where, names, lambda: num_rows, chosen, _SliceFetch(arrays), inline=True,
            num_workers=v.workers(where, num_parallel_workers),
        )
        super().__init__(node)


def _ragged_rows(where: str, name: str, column: Any, error: ValueError) -> np.ndarray:
    """A column whose rows have different shapes (a list of 1-D arrays of different lengths): one
    row per item, each its own array, as MindSpore gives; held as an object array of those rows."""
    if not isinstance(column, (list, tuple)):
        raise ArgumentError(f"{where}: column {name!r} can't be read as an array: {error}") from None
    rows = np.empty(len(column), dtype=object)
    for i, item in enumerate(column):
        try:
            rows[i] = np.asarray(item)
        except ValueError as inner:
            raise ArgumentError(
                f"{where}: row {i} of column {name!r} is ragged inside (its items have different shapes), "
                f"so it can't be one array: {inner}. Pad it to one shape or use GeneratorDataset."
            ) from None
    kinds = {r.dtype.kind for r in rows}
    if len(kinds) > 1:
        raise ArgumentError(
            f"{where}: the rows of column {name!r} have different kinds of values ({sorted(kinds)}); "
            "give every row the same type."
        )
    return rows


class _SliceFetch:
    """Reads rows by index with one fancy-index per column per chunk, not one per row."""

    def __init__(self, arrays: list[np.ndarray]):
        self.arrays = arrays

    def __call__(self, ids: list[int]) -> list[tuple]:
        index = np.asarray(ids, dtype=np.int64)
        if len(index) and index[-1] - index[0] == len(index) - 1 and np.all(np.diff(index) == 1):
            picked = [a[index[0] : index[-1] + 1] for a in self.arrays]
        else:
            picked = [a[index] for a in self.arrays]
        if len(picked) == 1:
            return [(x,) for x in picked[0]]
        return list(zip(*picked))


class GeneratorDataset(Dataset):
    """Rows from Python: a generator function, an iterable, or a random-access object.

    A random-access ``source`` (with ``__getitem__`` and ``__len__``) supports samplers, shuffling
    (on by default, as in MindSpore) and sharding, and its reads run on ``num_parallel_workers``
    workers. Unlike MindSpore, workers are threads unless ``python_multiprocessing=True``: threads need
    no pickling and suit sources that wait on I/O or release the GIL. Any other source is read front to
    back (a generator function is called again for each epoch).

    Each item is a tuple with one value per column (a single value for one column); values become
    NumPy arrays.

    Examples:
        >>> import minddata as md
        >>> def gen():
        ...     for i in range(3):
        ...         yield (i, i * i)
        >>> ds = md.GeneratorDataset(gen, column_names=["i", "sq"])
        >>> [int(r["sq"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
        [0, 1, 4]
    """

    def __init__(
        self,
        source: Any,
        column_names: str | Sequence[str] | None = None,
        column_types: Any = None,
        schema: Any = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        python_multiprocessing: bool = False,
        max_rowsize: Any = None,
    ):
        where = "GeneratorDataset"
        names = v.column_list(where, "column_names", column_names)
        types = None
        if schema is not None:
            from minddata.dataset.schema import as_schema

            parsed = as_schema(where, schema)
            if names is None:  # MindSpore: the schema names the columns
                names = [c["name"] for c in parsed.columns]  # type: ignore[union-attr]  # as_schema gives a Schema for a given schema
            types = [c["type"] for c in parsed.columns]  # type: ignore[union-attr]  # as_schema gives a Schema for a given schema
        elif column_types is not None:
            from minddata.dataset.schema import type_name

            types = [type_name(where, t) for t in column_types]
        if names is None:
            raise ArgumentError(
                f"{where}: `column_names` (or a `schema`) is required: name the column(s) each item holds."
            )
        if types is not None and len(types) != len(names):
            raise ArgumentError(f"{where}: {len(types)} column type(s) for {len(names)} column(s) {names}.")
        random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not random_access and not (callable(source) or hasattr(source, "__iter__")):
            raise ArgumentError(
                f"{where}: `source` must be a generator function, an iterable, or an object with __getitem__ "
                f"and __len__. Found: {type(source).__name__}"
            )
        to_row = _RowMaker(names, where, types)
        workers = v.workers(where, num_parallel_workers)
        if random_access:
            chosen = resolve_sampler(
                sampler=sampler, shuffle=shuffle, num_samples=num_samples, num_shards=num_shards,
                shard_id=shard_id, default_shuffle=True, where=where,
            )
            node: ir.Node = ir.RandomAccessSourceNode(
                where, names, lambda: len(source), chosen, _IndexFetch(source, to_row),
                num_workers=workers, python_multiprocessing=bool(python_multiprocessing),
            )
        else:
            for arg, value in (("sampler", sampler), ("num_shards", num_shards), ("shard_id", shard_id)):
                if value is not None:
                    raise ArgumentError(
                        f"{where}: `{arg}` needs a random-access source (with __getitem__ and __len__); this "
                        f"source is only iterable ({type(source).__name__}). Implement __getitem__/__len__, "
                        f"or shard inside the generator."
                    )
            if shuffle:
                raise ArgumentError(
                    f"{where}: `shuffle=True` needs a random-access source; this one is only iterable. "
                    "Use .shuffle(buffer_size) on the dataset instead."
                )
            limit = v.positive_int(where, "num_samples", num_samples, allow_none=True) if num_samples else None
            node = ir.IterableSourceNode(
                where, names, _Opener(source), to_row, limit,
                size=(lambda: len(source)) if hasattr(source, "__len__") else None,
            )
        super().__init__(node)


class _Opener:
    def __init__(self, source: Any):
        self.source = source

    def __call__(self, pass_index: int) -> Iterator[Any]:
        source = self.source
        if hasattr(source, "__iter__"):
            return iter(source)
        return iter(source())


class _RowMaker:
    def __init__(self, names: list[str], where: str, types: list[str] | None = None):
        self.names = names
        self.width = len(names)
        self.where = where
        # Numeric column types convert the values, as MindSpore's column_types/schema do.
        self.dtypes = None if types is None else [
            None if t in ("string", "bytes") else np.dtype(t) for t in types
        ]

    def __call__(self, item: Any, position: int) -> tuple:
        if type(item) is tuple or (type(item) is list and self.width > 1 and len(item) == self.width):
            values = item
        else:
            values = (item,)
        if len(values) != self.width:
            raise RowError(
                f"{self.where}: item {position} has {len(values)} value(s) but column_names names "
                f"{self.width}: {self.names}. Yield a tuple with one value per column.",
                op=self.where,
                row=position,
            )
        if self.dtypes is None:
            return tuple(_to_value(x) for x in values)
        return tuple(_to_value(x) if t is None else np.asarray(x, dtype=t) for x, t in zip(values, self.dtypes))


class _IndexFetch:
    def __init__(self, source: Any, to_row: _RowMaker):
        self.source = source
        self.to_row = to_row

    def __call__(self, ids: list[int]) -> list[tuple]:
        source, to_row = self.source, self.to_row
        rows = []
        for i in ids:
            try:
                item = source[i]
            except Exception as error:
                raise RowError(
                    f"GeneratorDataset: source[{i}] raised {type(error).__name__}: {error}",
                    op="GeneratorDataset",
                    row=i,
                ) from error
            rows.append(to_row(item, i))
        return rows


# Decoded images are large: smaller chunks keep the work spread evenly over workers and memory low.
IMAGE_CHUNK_ROWS = 8

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")


class ImageFolderDataset(Dataset):
    """Images in class sub-folders: ``dataset_dir/<class>/<image>``.

    Columns ``image`` (the file's bytes, 1-D uint8; decoded RGB HWC uint8 with ``decode=True``) and
    ``label`` (int32). Classes are the sorted sub-folder names unless ``class_indexing`` maps names to
    labels. ``extensions`` filters files by extension (case-insensitive); the default reads the common
    image formats (MindSpore reads every file by default; stray files such as ``.DS_Store`` then fail at
    decode). Rows are shuffled unless ``shuffle=False`` or a sampler is given, as in MindSpore.

    ``dataset_dir`` may be an ``s3://bucket/prefix/`` or ``gs://`` URL: the objects under the prefix
    are listed when the dataset is built, classes are the first level below it, and a chunk's images
    are read concurrently; ``storage_options`` and ``cache_dir`` as in :class:`WebDataset`.

    Examples:
        >>> import minddata as md, tempfile, os
        >>> root = tempfile.mkdtemp()
        >>> for cls in ("cat", "dog"):
        ...     os.makedirs(os.path.join(root, cls))
        ...     with open(os.path.join(root, cls, "a.jpg"), "wb") as f:
        ...         _ = f.write(b"bytes")
        >>> ds = md.ImageFolderDataset(root, shuffle=False)
        >>> [int(r["label"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
        [0, 1]
    """

    def __init__(
        self,
        dataset_dir: str | os.PathLike,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: bool | None = None,
        sampler: Any = None,
        extensions: Sequence[str] | None = None,
        class_indexing: dict[str, int] | None = None,
        decode: bool = False,
        num_shards: int | None = None,
        shard_id: int | None = None,
        cache: Any = None,
        decrypt: Any = None,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "ImageFolderDataset"
        options = _storage.StorageOptions(where, storage_options, cache_dir=cache_dir)
        if not isinstance(dataset_dir, (str, os.PathLike)):
            raise ArgumentError(f"{where}: `dataset_dir` must be a folder path or URL. Found: {dataset_dir!r}")
        location = _storage.split_url(dataset_dir)
        directory = location.url if isinstance(location, _storage.ObjectURL) else location
        if not isinstance(location, _storage.ObjectURL) and not os.path.isdir(directory):
            raise ArgumentError(f"{where}: `dataset_dir` must be an existing folder. Found: {directory!r}")
        if extensions is not None:
            if isinstance(extensions, str) or not all(isinstance(e, str) for e in extensions):
                raise ArgumentError(f"{where}: `extensions` must be a list of strings like ['.jpg']. Found: {extensions!r}")
            extensions = tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in extensions)
        if class_indexing is not None:
            if not isinstance(class_indexing, dict) or not all(
                isinstance(k, str) and v.is_int(x) and x >= 0 for k, x in class_indexing.items()
            ):
                raise ArgumentError(
                    f"{where}: `class_indexing` must map folder names to non-negative int labels. Found: {class_indexing!r}"
                )
        v.bool_arg(where, "decode", decode)
        if isinstance(location, _storage.ObjectURL):
            # Listed now: a missing bucket or prefix, or denied access, fails here, naming the URL.
            self._listing = _RemoteFolderListing(location, options, extensions or IMAGE_EXTENSIONS, class_indexing)
        else:
            self._listing = _FolderListing(directory, extensions or IMAGE_EXTENSIONS, class_indexing)
        chosen = resolve_sampler(
            sampler=with_labels(sampler, self._listing.labels), shuffle=shuffle, num_samples=num_samples, num_shards=num_shards,
            shard_id=shard_id, default_shuffle=True, where=where,
        )
        node: ir.Node = ir.RandomAccessSourceNode(
            where, ["image", "label"], self._listing.count, chosen, _FileFetch(self._listing),
            origins=self._listing.paths_of, num_workers=v.workers(where, num_parallel_workers),
            chunk_rows=IMAGE_CHUNK_ROWS,
            requests_in_flight=self._listing.store.requests_in_flight if isinstance(self._listing, _RemoteFolderListing) else None,
        )
        if decode:
            from minddata.vision import Decode

            node = ir.MapNode(node, [Decode()], ["image"], None, node.num_workers, False)  # type: ignore[attr-defined]  # a random-access source node, which has num_workers
        super().__init__(with_cache(where, node, cache))

    def get_class_indexing(self) -> dict[str, int]:
        """Folder name → label."""
        return dict(self._listing.classes())

    def num_classes(self) -> int:
        return len(set(self._listing.classes().values()))


class _FolderListing:
    """Lists the folder once, on first use: building the graph does no I/O beyond a check."""

    def __init__(self, directory: str, extensions: tuple[str, ...], class_indexing: dict[str, int] | None):
        self.directory = directory
        self.extensions = extensions
        self.class_indexing = class_indexing
        self._files: list[str] | None = None
        self._labels: np.ndarray | None = None
        self._classes: dict[str, int] | None = None

    def classes(self) -> dict[str, int]:
        if self._classes is None:
            if self.class_indexing is not None:
                self._classes = dict(self.class_indexing)
                missing = [c for c in self._classes if not os.path.isdir(os.path.join(self.directory, c))]
                if missing:
                    raise GraphError(
                        f"ImageFolderDataset: class_indexing names folder(s) {missing} that are not in "
                        f"{self.directory!r}. Fix class_indexing or add the folders."
                    )
            else:
                names = sorted(e.name for e in os.scandir(self.directory) if e.is_dir())
                self._classes = {name: i for i, name in enumerate(names)}
        return self._classes

    def _scan(self) -> None:
        files: list[str] = []
        labels: list[int] = []
        # Folders in name order, whatever their labels (MindSpore's order with class_indexing too).
        for name, label in sorted(self.classes().items()):
            folder = os.path.join(self.directory, name)
            entries = sorted(
                e.name for e in os.scandir(folder) if e.is_file() and e.name.lower().endswith(self.extensions)
            )
            files.extend(os.path.join(folder, e) for e in entries)
            labels.extend([label] * len(entries))
        if not files:
            raise GraphError(
                f"ImageFolderDataset: no image files with extensions {list(self.extensions)} in the class "
                f"sub-folders of {self.directory!r} (expected {self.directory}/<class>/<image>). Check the "
                "path, or pass `extensions`."
            )
        self._files = files
        self._labels = np.asarray(labels, dtype=np.int32)

    def count(self) -> int:
        if self._files is None:
            self._scan()
        return len(self._files)  # type: ignore[arg-type]  # _scan() sets it

    def labels(self) -> np.ndarray:
        if self._files is None:
            self._scan()
        return self._labels  # type: ignore[return-value]  # _scan() sets it

    def paths_of(self, ids: list[int]) -> list[str]:
        files = self._files
        return [files[i] for i in ids]  # type: ignore[index]  # scanned before any row is read

    def read(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        path = self._files[i]  # type: ignore[index]  # scanned before any row is read
        try:
            data = read_file(path)
        except OSError as error:
            raise RowError(
                f"ImageFolderDataset: can't read row {i}, file {path}: {error.strerror or error}",
                op="ImageFolderDataset", row=i, source=path,
            ) from None  # the message holds the OS's reason: the FileNotFoundError's traceback adds nothing
        return data, self._labels[i]  # type: ignore[index]  # scanned before any row is read

    def __getstate__(self) -> dict:
        if self._files is None:
            self._scan()
        return dict(self.__dict__)


class _RemoteFolderListing(_FolderListing):
    """``s3://bucket/prefix/<class>/<image>``: the objects under the prefix, listed once; classes are
    the first level below the prefix, as sub-folders are."""

    def __init__(self, location: _storage.ObjectURL, options: _storage.StorageOptions, extensions: tuple[str, ...],
                 class_indexing: dict[str, int] | None):
        if location.scheme not in ("s3", "gs"):
            raise ArgumentError(
                f"ImageFolderDataset: {location.url} is a single file; an image folder in object storage is an "
                "s3:// or gs:// prefix."
            )
        prefix = location.key if not location.key or location.key.endswith("/") else location.key + "/"
        self.location = location.child(prefix)
        super().__init__(self.location.url, extensions, class_indexing)
        self.options = options
        self.store = _storage.get_store(self.location, options)
        objects = self.store.list(self.location)
        self._objects = [(key[len(prefix):].split("/", 1), key) for key, _ in objects]
        if not objects:
            raise GraphError(
                f"ImageFolderDataset: no objects under {self.location.url} (expected {self.location.url}<class>/<image>). "
                "Check the bucket, the prefix and the endpoint (AWS_ENDPOINT_URL or storage_options['endpoint_url'])."
            )
        self.classes()
        self._scan()

    def classes(self) -> dict[str, int]:
        if self._classes is None:
            present = sorted({parts[0] for parts, _ in self._objects if len(parts) == 2})
            if self.class_indexing is not None:
                self._classes = dict(self.class_indexing)
                missing = [c for c in self._classes if c not in present]
                if missing:
                    raise GraphError(
                        f"ImageFolderDataset: class_indexing names folder(s) {missing} that are not under "
                        f"{self.directory!r}. Fix class_indexing or add the objects."
                    )
            else:
                self._classes = {name: i for i, name in enumerate(present)}
        return self._classes

    def _scan(self) -> None:
        classes = self.classes()
        rows = sorted(
            (parts[0], parts[1], key) for parts, key in self._objects
            if len(parts) == 2 and parts[0] in classes and "/" not in parts[1] and parts[1].lower().endswith(self.extensions)
        )
        if not rows:
            raise GraphError(
                f"ImageFolderDataset: no image objects with extensions {list(self.extensions)} in the class "
                f"prefixes of {self.directory} (expected {self.directory}<class>/<image>). Check the URL, or pass "
                "`extensions`."
            )
        self._keys = [key for _, _, key in rows]
        self._files = [self.location.child(key).url for key in self._keys]
        self._labels = np.asarray([classes[c] for c, _, _ in rows], dtype=np.int32)

    def read_rows(self, ids: list[int]) -> list[tuple]:
        try:
            blobs = self.store.read_many([(self.location.child(self._keys[i]), 0, None) for i in ids])
        except _storage.StorageError:
            blobs = None
        if blobs is None:  # name the row that failed
            blobs = []
            for i in ids:
                try:
                    blobs.append(self.store.read(self.location.child(self._keys[i])))
                except _storage.StorageError as error:
                    raise RowError(f"ImageFolderDataset: can't read row {i}: {error}", op="ImageFolderDataset", row=i,
                                   source=self._files[i]) from None
        return [(np.frombuffer(b, dtype=np.uint8), self._labels[i]) for i, b in zip(ids, blobs)]

    def read(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return self.read_rows([i])[0]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_objects"] = []
        return state


class _FileFetch:
    def __init__(self, listing: _FolderListing):
        self.listing = listing

    def __call__(self, ids: list[int]) -> list[tuple]:
        if isinstance(self.listing, _RemoteFolderListing):
            return self.listing.read_rows(ids)
        read = self.listing.read
        return [read(i) for i in ids]


class OnlineDataset(Dataset):
    """A source whose rows are pushed in while the pipeline runs (see :meth:`Dataset.serve`).

    Examples:
        >>> import minddata as md
        >>> pipe = md.OnlineDataset(["x"]).map(lambda x: x + 1, input_columns="x")
        >>> with pipe.serve() as session:
        ...     futures = [session.submit({"x": i}) for i in range(3)]
        ...     [int(f.result(timeout=10)["x"]) for f in futures]
        [1, 2, 3]
    """

    def __init__(self, column_names: str | Sequence[str]):
        names = v.column_list("OnlineDataset", "column_names", column_names, allow_none=False)
        super().__init__(ir.OnlineSourceNode(names))  # type: ignore[arg-type]  # allow_none=False gives a list
