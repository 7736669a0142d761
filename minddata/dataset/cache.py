"""``DatasetCache``: keep a source's or a map's rows after the first epoch (``mindspore.dataset.DatasetCache``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minddata.dataset import _validate as v
from minddata.engine import ir
from minddata.errors import ArgumentError
from minddata.ops.base import record_init_arguments

__all__ = ["DatasetCache", "CacheStat", "with_cache"]

_LOCAL_HOSTS = (None, "127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class CacheStat:
    """What a session holds: rows in shared memory, rows spilled to disk, and their mean size in bytes."""

    num_mem_cached: int
    num_disk_cached: int
    avg_cache_sz: int


class DatasetCache:
    """A cache for the rows of a source or a map, passed as ``cache=``: the first epoch stores the rows
    the cached node produces, later epochs read them back and skip reading and decoding.

    Rows live in shared memory of this host (``/dev/shm``) and are shared by every pipeline and
    process of the host that uses the same ``session_id`` and the same cached node (source, its
    arguments and the ops up to the cache), so a second run reads what the first stored. Worker
    processes are safe: the cache is read and filled by the pipeline, not by its workers. Stored
    rows are not checked against the data again: after the files change, destroy the session.

    - ``size``: shared memory the session may use, in MB; 0 (the default) uses what the host has.
    - ``spilling``: rows past ``size`` (or past a full ``/dev/shm``) go to Arrow IPC files under the
      cache folder (``$MINDDATA_CACHE_DIR``, default ``~/.cache/minddata/dataset-cache``); without it
      they are not kept and later epochs read them from the source again.
    - Random ops must come after the cache: a cached map with a random op is refused (as in
      MindSpore). Random ops after it draw fresh numbers each epoch, the same as without a cache.
    - ``hostname``/``port``/``num_connections``/``prefetch_size`` are MindSpore's cache-server
      settings. There is no server here (the cache is files and shared memory managed by the
      pipelines), so they are checked and otherwise unused; a remote ``hostname`` is refused.

    A session needs no setup: it is created on first use. ``minddata cache list`` shows sessions,
    ``minddata cache destroy-session ID`` frees one (its memory and files), ``minddata cache stop``
    frees all; ``minddata cache create-session`` prints a fresh id.

    Examples:
        >>> import os, tempfile
        >>> import minddata as md
        >>> from minddata.engine import cache_store
        >>> folder = tempfile.TemporaryDirectory()
        >>> os.environ["MINDDATA_CACHE_DIR"] = folder.name  # where sessions live (a test's own folder)
        >>> cache = md.DatasetCache(session_id=cache_store.new_session_id(), size=16)
        >>> ds = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False)
        >>> ds = ds.map(lambda x: x * 10, input_columns="x", cache=cache)
        >>> [int(r["x"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
        [10, 20, 30]
        >>> cache.get_stat().num_mem_cached  # the next epochs (and pipelines) of the session read these
        3
        >>> cache.destroy()
        True
        >>> del os.environ["MINDDATA_CACHE_DIR"]; folder.cleanup()
    """

    def __init__(
        self,
        session_id: int,
        size: int = 0,
        spilling: bool = False,
        hostname: str | None = None,
        port: int | None = None,
        num_connections: int | None = None,
        prefetch_size: int | None = None,
    ):
        where = "DatasetCache"
        self.session_id = v.non_negative_int(where, "session_id", session_id)
        self.size = v.non_negative_int(where, "size", size)
        self.spilling = bool(v.bool_arg(where, "spilling", spilling))
        if hostname not in _LOCAL_HOSTS:
            raise ArgumentError(
                f"{where}: `hostname` must be this host (None, '127.0.0.1' or 'localhost'): the cache lives in "
                f"this host's shared memory. Found: {hostname!r}"
            )
        if port is not None and not (v.is_int(port) and 1 <= port <= 65535):
            raise ArgumentError(f"{where}: `port` must be an int from 1 to 65535. Found: {port!r}")
        self.hostname = hostname
        self.port = port
        self.num_connections = v.positive_int(where, "num_connections", num_connections, allow_none=True)
        self.prefetch_size = v.positive_int(where, "prefetch_size", prefetch_size, allow_none=True)

    def __repr__(self) -> str:
        return f"DatasetCache(session_id={self.session_id}, size={self.size}, spilling={self.spilling})"

    def get_stat(self) -> CacheStat:
        """Rows this session holds in memory and on disk, and their mean size."""
        from minddata.engine.cache_store import list_sessions

        for info in list_sessions():
            if info.session_id == self.session_id:
                rows = info.memory_rows + info.disk_rows
                size = (info.memory_bytes + info.disk_bytes) // rows if rows else 0
                return CacheStat(info.memory_rows, info.disk_rows, size)
        return CacheStat(0, 0, 0)

    def destroy(self) -> bool:
        """Free this session's memory and files (``minddata cache destroy-session``); ``False`` when
        it held nothing."""
        from minddata.engine.cache_store import destroy_session

        return destroy_session(self.session_id)



# minddata.serialize writes a cache as its constructor call.
record_init_arguments(DatasetCache)


def with_cache(where: str, node: ir.Node, cache: Any) -> ir.Node:
    """``node`` served through ``cache`` (a :class:`DatasetCache`), or ``node`` itself when ``cache`` is None."""
    if cache is None:
        return node
    if not isinstance(cache, DatasetCache):
        raise ArgumentError(f"{where}: `cache` must be a DatasetCache. Found: {cache!r}")
    from minddata.engine.cache_stage import CacheNode, source_of

    # A streamed file source without shuffle (mode None) reads its rows in the same order every epoch.
    source = source_of(node)
    fixed_order = isinstance(source, ir.IterableSourceNode) and getattr(source.open_iter, "mode", "") is None
    return CacheNode.over(node, cache.session_id, cache.size, cache.spilling, where, fixed_order=fixed_order)
