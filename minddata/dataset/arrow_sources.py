"""Arrow-backed sources: ``MindDataset`` (record files, see :mod:`minddata.record`) and ``ParquetDataset``.

Both are random access: a sampler (global shuffle, sharding, ``num_samples``) picks row indices and
a chunk's rows are read with one lookup per record batch or row group, not per row.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from minddata.dataset import _storage
from minddata.dataset import _validate as v
from minddata.dataset._arrow import ColumnView
from minddata.dataset._files import block_sampler, expand_files, shuffle_mode
from minddata.dataset.base import Dataset
from minddata.dataset.cache import with_cache
from minddata.engine import ir
from minddata.errors import ArgumentError, DataFormatError

__all__ = ["MindDataset", "OBSMindDataset", "ParquetDataset"]

# Rows per chunk when rows carry encoded images: as ImageFolderDataset (sources.IMAGE_CHUNK_ROWS).
_BLOB_CHUNK_ROWS = 8


def _is_parquet(path: str) -> bool:
    if path.lower().endswith((".parquet", ".parq")):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


class MindDataset(Dataset):
    """Rows of record files: MindSpore MindRecord files (as ``mindspore.mindrecord.FileWriter``,
    :class:`minddata.mindrecord.FileWriter` and ``Dataset.save`` write them) or minddata's Arrow record
    files (:class:`minddata.record.ArrowRecordWriter`, ``Dataset.save(file_type="arrow")``); the format
    is told by content.

    Args:
        dataset_files: one file of a record set (every shard of the set is read, as in MindSpore;
            its metadata must name shards in the file's own folder: paths that leave it, absolute
            paths and symlinks out of it are refused), or a list of record files (exactly those,
            wherever they are). Parquet files are read as by :class:`ParquetDataset`.
        columns_list: the columns to read, in this order (default: the schema's; for MindRecord
            files sorted by name, as MindSpore).
        num_parallel_workers: reader workers (the default from ``config``).
        shuffle: True or ``Shuffle.GLOBAL`` (default): a new permutation of all rows every epoch;
            ``Shuffle.FILES``: files in a random order, rows in order; ``Shuffle.INFILE``: files in
            order, rows shuffled within each; False: file order.
        num_shards, shard_id: read one shard of the rows (every row in exactly one shard per epoch;
            shards are padded to equal length); all shards draw the same permutation from the seed.
        sampler: a sampler instead of ``shuffle``/sharding.
        padded_sample, num_padded: append ``num_padded`` copies of the row ``padded_sample`` (a dict
            with a value per column) so the rows divide evenly into ``num_shards`` (MindSpore).
        num_samples: read at most this many rows per epoch (per shard when sharding).
        storage_options: object storage settings (docs/data.md, "Object storage"). MindRecord
            files (with their ``.db``) are read from ``s3://``, ``gs://`` and ``http(s)://`` URLs: the
            header and index once, then each row's raw and blob entries as ranged GETs; one URL reads
            the set its header names from the same prefix. minddata's Arrow record files likewise:
            their ``.meta.json`` objects once, the Arrow footer once, then each record batch as one
            ranged GET (see :mod:`minddata.record.remote`).
        cache_dir: a local folder caching what is read from object storage (size-bounded, least
            recently used first out, shared by processes), so later epochs read from disk.

    MindRecord files are read as MindSpore reads them: shard by shard in write order with
    ``shuffle=False``, a bytes field as a shape-(1,) bytes array, strings as 0-d str arrays, numbers
    as NumPy scalars of the schema's type (see :mod:`minddata.record.mindrecord_format`).

    Arrow record files: bytes fields are 1-D uint8 arrays and numeric tensors arrays of their shape, copied out of
    the memory-mapped file after a check of its size (a file that shrinks while read gives an error
    naming it, not SIGBUS); strings are 0-d str arrays; scalars NumPy scalars. A damaged file is
    reported with its name and what is wrong when it is first read (see :mod:`minddata.record.reader`).

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "d.mindrecord")
        >>> md.NumpySlicesDataset({"v": [[1, 2], [3, 4], [5, 6]]}, shuffle=False).save(path)
        >>> ds = md.MindDataset(path, shuffle=False, num_shards=2, shard_id=1)
        >>> [r["v"].tolist() for r in ds.create_dict_iterator(output_numpy=True)]
        [[3, 4], [1, 2]]
    """

    def __init__(
        self,
        dataset_files: str | os.PathLike | Sequence[str],
        columns_list: Sequence[str] | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        sampler: Any = None,
        padded_sample: dict[str, Any] | None = None,
        num_padded: int | None = None,
        num_samples: int | None = None,
        cache: Any = None,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "MindDataset"
        options = _storage.StorageOptions(where, storage_options, cache_dir=cache_dir)
        if isinstance(dataset_files, (str, os.PathLike)) and _storage.is_remote(dataset_files):
            dataset_files = _storage.RemotePath(_remote_url(where, dataset_files), options)
        elif isinstance(dataset_files, (list, tuple)) and any(_storage.is_remote(f) for f in dataset_files):
            if not all(isinstance(f, (str, os.PathLike)) and _storage.is_remote(f) for f in dataset_files):
                raise ArgumentError(f"{where}: `dataset_files` mixes URLs and local paths; read the files from one place.")
            dataset_files = [_storage.RemotePath(_remote_url(where, f), options) for f in dataset_files]
        else:
            dataset_files = _storage.local_paths(dataset_files)
        columns = v.column_list(where, "columns_list", columns_list)
        candidates = [dataset_files] if isinstance(dataset_files, (str, os.PathLike)) else dataset_files
        if (
            isinstance(candidates, (list, tuple))
            and candidates
            and all(isinstance(f, (str, os.PathLike)) and not _storage.is_remote(f) and os.path.isfile(f)
                    and _is_parquet(os.fspath(f)) for f in candidates)
        ):
            if padded_sample is not None or num_padded:
                raise ArgumentError(f"{where}: padded_sample/num_padded apply to record files, not Parquet files.")
            part = ParquetDataset(
                dataset_files, columns_list=columns, num_samples=num_samples, num_parallel_workers=num_parallel_workers,
                shuffle=shuffle, num_shards=num_shards, shard_id=shard_id, sampler=sampler,
            )
            super().__init__(with_cache(where, part._node, cache))
            return

        records = _open_records(where, dataset_files, columns)
        self._records = records
        names = records.columns
        padded = None
        extra = 0
        if (padded_sample is None) != (num_padded is None or num_padded == 0):
            raise ArgumentError(
                f"{where}: `padded_sample` and `num_padded` go together (a row to pad with, and how many copies). "
                f"Found: padded_sample={'given' if padded_sample is not None else None}, num_padded={num_padded!r}"
            )
        if padded_sample is not None:
            extra = v.positive_int(where, "num_padded", num_padded)  # type: ignore[assignment]  # positive_int gives None only with allow_none
            if not isinstance(padded_sample, dict) or not set(names) <= set(padded_sample):
                missing = [c for c in names if not isinstance(padded_sample, dict) or c not in padded_sample]
                raise ArgumentError(f"{where}: `padded_sample` must be a dict with a value for every column read; missing {missing}.")
            mindrecord = type(records).__name__ == "MindRecordSet"
            padded = tuple(_padded_value(padded_sample[c], mindrecord) for c in names)
            if num_shards is not None and isinstance(num_shards, int) and num_shards > 0 and (records.num_rows + extra) % num_shards:
                raise ArgumentError(
                    f"{where}: the rows ({records.num_rows}) plus num_padded ({extra}) must divide evenly into "
                    f"num_shards={num_shards}. Use num_padded={(-records.num_rows) % num_shards}."
                )
        total = records.num_rows + extra

        def blocks() -> list[tuple[int, int]]:
            out = records.file_rows()
            return out + [(records.num_rows, extra)] if extra else out

        chosen = block_sampler(
            where, shuffle=shuffle, blocks=blocks, sampler=sampler, num_samples=num_samples,
            num_shards=num_shards, shard_id=shard_id,
        )
        has_blobs = any(records.fields[c].type == "bytes" for c in names)
        node = ir.RandomAccessSourceNode(
            where, names, lambda: total, chosen, _RecordFetch(records, padded),
            origins=records.paths_of, num_workers=v.workers(where, num_parallel_workers),
            chunk_rows=_BLOB_CHUNK_ROWS if has_blobs else None, requests_in_flight=_network_requests(records),
        )
        super().__init__(with_cache(where, node, cache))

    def schema(self) -> dict[str, dict[str, Any]]:
        """The record schema of the columns read, as given to ``FileWriter.add_schema``."""
        records = getattr(self, "_records", None)
        if records is None:
            raise ArgumentError("MindDataset.schema: these are Parquet files; they have an Arrow schema, not a record schema.")
        return {c: records.fields[c].to_json() for c in records.columns}


def _network_requests(records: Any) -> Callable[[], int] | None:
    """For a record set with files in object storage: the requests in flight of its reads, for the
    engine's read-ahead (engine/readahead.py); None for local files."""
    remote = next((shard.path for shard in getattr(records, "shards", ()) if _storage.is_remote(shard.path)), None)
    return None if remote is None else _storage.store_of(remote)[0].requests_in_flight


class OBSMindDataset(MindDataset):
    """MindRecord files in Huawei OBS (or any S3-compatible store), with MindSpore's signature.

    Args:
        dataset_files: the shard files, ``s3://bucket/key`` (``obs://`` is read as ``s3://``); a list
            reads exactly those files, one URL the set its header names.
        server: the OBS endpoint, e.g. ``"https://obs.cn-north-4.myhuaweicloud.com"`` (``https://`` is
            added when no scheme is given).
        ak, sk: the access key and secret key (never shown, logged or serialized).
        sync_obs_path: MindSpore's folder for synchronizing ranks' downloads; checked and unused:
            minddata reads rows by ranged GETs on every rank and downloads no files.
        columns_list, shuffle, num_shards, shard_id: as in :class:`MindDataset`.
        shard_equal_rows: accepted; shards always get equal rows (rows are dealt, not files).

    Examples:
        >>> import minddata as md
        >>> md.OBSMindDataset.__mro__[1].__name__
        'MindDataset'
    """

    _reads_object_storage = True

    def __init__(
        self,
        dataset_files: Any,
        server: str,
        ak: str,
        sk: str,
        sync_obs_path: str,
        columns_list: Sequence[str] | None = None,
        shuffle: Any = True,
        num_shards: int | None = None,
        shard_id: int | None = None,
        shard_equal_rows: bool = True,
    ):
        where = "OBSMindDataset"
        for name, value in (("server", server), ("ak", ak), ("sk", sk), ("sync_obs_path", sync_obs_path)):
            if not isinstance(value, str) or not value:
                shown = "<redacted>" if name == "sk" else repr(value)
                raise ArgumentError(f"{where}: `{name}` must be a non-empty str. Found: {shown}")
        v.bool_arg(where, "shard_equal_rows", shard_equal_rows)
        files = [dataset_files] if isinstance(dataset_files, (str, os.PathLike)) else dataset_files
        if not isinstance(files, (list, tuple)) or not files or not all(isinstance(f, (str, os.PathLike)) for f in files):
            raise ArgumentError(f"{where}: `dataset_files` must be a list of s3:// URLs. Found: {dataset_files!r}")
        urls = []
        for f in files:
            text = os.fspath(f)
            if text.lower().startswith("obs://"):
                text = "s3://" + text[len("obs://"):]
            if not text.lower().startswith("s3://"):
                raise ArgumentError(f"{where}: `dataset_files` holds OBS URLs like 's3://bucket/key'. Found: {text!r}")
            urls.append(text)
        endpoint = server if "://" in server else "https://" + server
        super().__init__(
            urls[0] if isinstance(dataset_files, (str, os.PathLike)) else urls, columns_list=columns_list,
            shuffle=shuffle, num_shards=num_shards, shard_id=shard_id,
            storage_options={"endpoint_url": endpoint, "access_key_id": ak, "secret_access_key": sk},
        )


def _open_records(where: str, dataset_files: Any, columns: list[str] | None) -> Any:
    """A MindSpore MindRecord set or a minddata (Arrow) record set, told apart by the first file's
    content (not its name). A set neither reader can open, which MindSpore encrypted, is named as such
    (checked only then: reading a good set costs no extra request)."""
    from minddata.record.mindrecord_format import refuse_mindspore_encrypted

    try:
        return _open_record_set(where, dataset_files, columns)
    except DataFormatError:
        first = dataset_files if isinstance(dataset_files, (str, os.PathLike)) else (dataset_files or [None])[0]
        if isinstance(first, (str, os.PathLike)):
            refuse_mindspore_encrypted(where, first)
        raise


def _open_record_set(where: str, dataset_files: Any, columns: list[str] | None) -> Any:
    from minddata.record.mindrecord_format import MindRecordSet, read_as_mindrecord

    first = dataset_files if isinstance(dataset_files, (str, os.PathLike)) else (dataset_files or [None])[0]
    if isinstance(first, (str, os.PathLike)) and read_as_mindrecord(first):
        return MindRecordSet(where, dataset_files, columns)
    if _storage.is_remote(first):
        _storage.file_size(first)  # a missing object or denied access: an error naming the URL and the fix
        if str(first).lower().endswith((".parquet", ".parq")):
            raise ArgumentError(f"{where}: {first} is a Parquet file; read Parquet in object storage with ParquetDataset.")
        from minddata.record.remote import RemoteRecordSet, open_remote_set

        return RemoteRecordSet(where, open_remote_set(where, dataset_files), columns)
    from minddata.record.reader import RecordSet, open_set

    return RecordSet(where, open_set(where, dataset_files), columns)


def _remote_url(where: str, path: Any) -> str:
    url = _storage.split_url(path)
    if not isinstance(url, _storage.ObjectURL) or not url.key or url.key.endswith("/") or any(c in url.key for c in "*?["):
        raise ArgumentError(f"{where}: {os.fspath(path)} must name one record file (no prefix or pattern).")
    return url.url


def _padded_value(value: Any, mindrecord: bool = False) -> Any:
    if isinstance(value, (bytes, bytearray)):
        # As the files' own bytes values: MindRecord's shape-(1,) bytes array, Arrow's uint8 array.
        return np.array([bytes(value)]) if mindrecord else np.frombuffer(bytes(value), dtype=np.uint8)
    return value if isinstance(value, np.ndarray) else np.asarray(value)


class _RecordFetch:
    def __init__(self, records: Any, padded: tuple | None):
        self.records = records
        self.padded = padded
        self.num_rows = records.num_rows

    def __call__(self, ids: list[int]) -> list[tuple]:
        if self.padded is None or max(ids, default=-1) < self.num_rows:
            return self.records.fetch(ids)
        real = [i for i in ids if i < self.num_rows]
        rows = iter(self.records.fetch(real))
        return [next(rows) if i < self.num_rows else self.padded for i in ids]


# -- Parquet ------------------------------------------------------------------------------------


class ParquetDataset(Dataset):
    """Rows of Parquet files, with random access (global shuffle, sharding, samplers).

    Args:
        dataset_files: a file, a glob pattern, or a list of them (sorted, as MindSpore sorts files);
            local paths or ``s3://``/``gs://`` URLs (prefixes and globs listed) and ``http(s)://`` URLs,
            read through ranged GETs (the footer, then the row groups' column chunks).
        columns_list: the columns to read, in this order (default: all).
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, sampler: as in
            :class:`MindDataset`.
        storage_options: object storage settings over the environment's (docs/data.md, "Object
            storage"); secrets in it are never shown or serialized.
        cache_dir: a local folder caching what is read from object storage (size-bounded, least
            recently used first out, shared by processes), so later epochs read from disk.
        cache_bytes: decoded row groups kept in memory (default 512 MiB, least recently used
            evicted).

    Parquet stores rows compressed in row groups, so reading one row decodes its row group; decoded
    groups are cached. A global shuffle over files much larger than ``cache_bytes`` decodes groups
    over and over: use ``shuffle=Shuffle.INFILE`` (each file's rows shuffled, one group set at a
    time), or convert the data to record files (``Dataset.save``), which read rows without decoding.
    Value types follow :mod:`minddata.dataset._arrow` (numbers, str, uint8 bytes, N-D arrays from
    lists); a null is an error naming the file, the row and the column.

    Examples:
        >>> import os, tempfile
        >>> import pyarrow as pa, pyarrow.parquet as pq
        >>> import minddata as md
        >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
        >>> pq.write_table(pa.table({"x": [1, 2, 3], "s": ["a", "b", "c"]}), path)
        >>> [str(r["s"]) for r in md.ParquetDataset(path, shuffle=False).create_dict_iterator(output_numpy=True)]
        ['a', 'b', 'c']
    """

    def __init__(
        self,
        dataset_files: Any,
        columns_list: Sequence[str] | None = None,
        num_samples: int | None = None,
        num_parallel_workers: int | None = None,
        shuffle: Any = None,
        num_shards: int | None = None,
        shard_id: int | None = None,
        sampler: Any = None,
        cache_bytes: int = 512 << 20,
        storage_options: dict[str, Any] | None = None,
        cache_dir: str | os.PathLike | None = None,
    ):
        where = "ParquetDataset"
        files = expand_files(where, dataset_files, storage_options=_storage.StorageOptions(where, storage_options, cache_dir=cache_dir))
        columns = v.column_list(where, "columns_list", columns_list)
        shuffle_mode(where, shuffle)
        table = _ParquetFiles(where, files, columns, v.positive_int(where, "cache_bytes", cache_bytes))  # type: ignore[arg-type]  # positive_int gives None only with allow_none
        chosen = block_sampler(
            where, shuffle=shuffle, blocks=table.file_rows, sampler=sampler, num_samples=num_samples,
            num_shards=num_shards, shard_id=shard_id,
        )
        node = ir.RandomAccessSourceNode(
            where, table.columns, table.count, chosen, table.fetch, origins=table.paths_of,
            num_workers=v.workers(where, num_parallel_workers),
        )
        super().__init__(node)


class _ParquetFiles:
    """Parquet files as one row space: footers read at construction, row groups decoded on demand."""

    def __init__(self, where: str, files: list[str], columns: list[str] | None, cache_bytes: int):
        import pyarrow.parquet as pq

        self.where = where
        self.files = files
        self.cache_bytes = cache_bytes
        counts: list[list[int]] = []
        schema = None
        for path in files:
            try:
                if _storage.is_remote(path):  # the footer through ranged reads
                    with _storage.open_file(path, "rb", block=1 << 20) as f:
                        meta = pq.read_metadata(f)
                        arrow_schema = meta.schema.to_arrow_schema()
                else:
                    meta = pq.read_metadata(path)
                    arrow_schema = pq.read_schema(path)
            except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for a bad file
                raise DataFormatError(
                    f"{where}: {path} is not a readable Parquet file: {error}", path=path
                ) from None
            if schema is None:
                schema, first = arrow_schema, path
            elif arrow_schema.names != schema.names or arrow_schema.types != schema.types:
                diff = [
                    f"{n}: {schema.field(n).type if n in schema.names else 'absent'} vs "
                    f"{arrow_schema.field(n).type if n in arrow_schema.names else 'absent'}"
                    for n in dict.fromkeys([*schema.names, *arrow_schema.names])
                    if n not in schema.names or n not in arrow_schema.names or schema.field(n).type != arrow_schema.field(n).type
                ]
                raise DataFormatError(
                    f"{where}: {path} has a different schema from {first} ({'; '.join(diff)}); files read together "
                    "must share one schema.",
                    path=path,
                )
            counts.append([meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
        names = list(schema.names)  # type: ignore[union-attr]  # set by the first file (there is one)
        if columns is not None:
            unknown = [c for c in columns if c not in names]
            if unknown:
                raise DataFormatError(
                    f"{where}: columns_list names {unknown}, which {files[0]} does not have. Its columns: {names}.",
                    path=files[0],
                )
            names = columns
        self.columns = names
        self.file_counts = [sum(c) for c in counts]
        self.starts = np.concatenate([[0], np.cumsum(self.file_counts, dtype=np.int64)])
        self.group_starts = [np.concatenate([[0], np.cumsum(c, dtype=np.int64)]) for c in counts]
        self._cache: collections.OrderedDict[tuple[int, int], tuple[list[ColumnView], int]] = collections.OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()
        self._handles: dict[tuple[int, int], Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(_cache=collections.OrderedDict(), _cached_bytes=0, _lock=None, _handles={})
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def count(self) -> int:
        return int(self.starts[-1])

    def file_rows(self) -> list[tuple[int, int]]:
        return [(int(self.starts[i]), n) for i, n in enumerate(self.file_counts)]

    def paths_of(self, ids: Sequence[int]) -> list[str]:
        files = np.searchsorted(self.starts, np.asarray(ids, dtype=np.int64), side="right") - 1
        return [self.files[f] for f in files.tolist()]

    def _group(self, f: int, g: int) -> list[ColumnView]:
        key = (f, g)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit[0]
            # One reader per file and thread: pyarrow's ParquetFile is not safe to read from two threads
            # at once (two workers reading row groups of one file through one reader can deadlock).
            handle = self._handles.get((f, threading.get_ident()))
        path = self.files[f]
        try:
            if handle is None:
                import pyarrow.parquet as pq

                # Read through the file, not a memory map: a map of a file that shrinks under the
                # reader faults (SIGBUS) instead of failing a read. Row groups are decoded into
                # new memory either way, so the map saved nothing but one copy of compressed pages.
                handle = pq.ParquetFile(_storage.open_file(path, "rb") if _storage.is_remote(path) else path, memory_map=False)
            # use_threads=False: the engine's workers already read row groups in parallel; pyarrow's
            # own pool under them only adds waits on a shared pool.
            table = handle.read_row_group(g, columns=self.columns, use_threads=False)
        except Exception as error:  # a damaged page or footer
            raise DataFormatError(
                f"{self.where}: {path}: can't read row group {g} (rows {int(self.group_starts[f][g])} to "
                f"{int(self.group_starts[f][g + 1]) - 1} of the file): {error}",
                path=path,
            ) from None
        views = [ColumnView(table.column(c), c) for c in self.columns]
        size = table.nbytes
        with self._lock:
            self._handles[(f, threading.get_ident())] = handle
            if key not in self._cache:
                self._cache[key] = (views, size)
                self._cached_bytes += size
                while self._cached_bytes > self.cache_bytes and len(self._cache) > 1:
                    _, (_, freed) = self._cache.popitem(last=False)
                    self._cached_bytes -= freed
        return views

    def fetch(self, ids: list[int]) -> list[tuple]:
        index = np.asarray(ids, dtype=np.int64)
        n = index.size
        if n == 0:
            return []
        from minddata.record.reader import locate_rows

        out: list[list[Any]] = [[None] * n for _ in self.columns]
        for f, where, rows in locate_rows(self.starts, index):
            path = self.files[f]
            for g, within, in_group in locate_rows(self.group_starts[f], rows):
                positions = where[within].tolist()
                base = int(self.group_starts[f][g])

                def name(r: int, base: int = base, path: str = path) -> str:
                    return f"{self.where}: {path}, row {base + r}"

                for c, view in enumerate(self._group(f, g)):
                    view.put(in_group, positions, out[c], name)
        return list(zip(*out))
