"""The rank barrier of MindSpore's ``OBSMindDataset``: :func:`sync_wait_for_dataset`.

MindSpore's ``OBSMindDataset`` downloads its shard files on each rank, puts a marker object
``download_dataset_ready_<rank>.txt`` under ``<sync_obs_path>/<BATCH_JOB_ID>/<epoch>/`` when its files
are there, and ``sync_wait_for_dataset`` then waits until every rank's marker is there. minddata's
``OBSMindDataset`` reads rows by ranged GETs and downloads nothing, so it never needs the barrier
itself; the function keeps MindSpore's names and layout for scripts (and launchers) that use it to hold
all ranks at the start of an epoch.
"""

from __future__ import annotations

import inspect
import os
import time
from typing import Any

from minddata.dataset import _storage
from minddata.dataset import _validate as v
from minddata.errors import ArgumentError

__all__ = ["sync_wait_for_dataset"]

WHERE = "sync_wait_for_dataset"
# MindSpore's OBS settings: the seconds between two looks at the markers (RETRY_DELTA_TIME).
POLL_SECONDS = 10.0


def _marker_name(rank_id: int) -> str:
    return f"download_dataset_ready_{rank_id}.txt"


def _sync_place(obs_runtime: Any, storage_options: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
    """``(sync folder, storage options)`` from an OBSMindDataset or a folder/URL."""
    from minddata.dataset.arrow_sources import OBSMindDataset
    from minddata.ops.base import init_arguments

    if isinstance(obs_runtime, OBSMindDataset):
        call = init_arguments(obs_runtime)
        if call is None:
            raise ArgumentError(f"{WHERE}: this OBSMindDataset does not say how it was made; pass its "
                                "sync_obs_path (and storage_options) instead")
        bound = inspect.signature(OBSMindDataset.__init__).bind(obs_runtime, *call[0], **call[1]).arguments
        server = bound["server"]
        endpoint = server if "://" in server else "https://" + server
        return bound["sync_obs_path"], {"endpoint_url": endpoint, "access_key_id": bound["ak"],
                                        "secret_access_key": bound["sk"], **(storage_options or {})}
    if isinstance(obs_runtime, (str, os.PathLike)) and os.fspath(obs_runtime):
        return os.fspath(obs_runtime), storage_options
    raise ArgumentError(f"{WHERE}: `obs_runtime` must be an OBSMindDataset or the synchronization folder "
                        f"(an s3:// or obs:// URL, or a folder every rank sees). Found: {obs_runtime!r}")


class _LocalFolder:
    """Markers as files in a folder every rank sees (a shared file system)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.shown = folder

    def mark(self, name: str) -> None:
        os.makedirs(self.folder, exist_ok=True)
        _storage.write_file(os.path.join(self.folder, name), b"ready\n")  # other ranks never see a half-written marker

    def markers(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.folder) if n.endswith(".txt") and not n.startswith("."))
        except FileNotFoundError:
            return []


class _ObjectFolder:
    """Markers as objects under a prefix of an S3-compatible store (``obs://`` read as ``s3://``)."""

    def __init__(self, url: str, storage_options: dict[str, Any] | None):
        parsed = _storage.split_url(url)
        assert isinstance(parsed, _storage.ObjectURL)
        if parsed.scheme != "s3":
            raise ArgumentError(f"{WHERE}: the synchronization folder must be s3:// or obs:// (or a local folder). "
                                f"Found: {url!r}")
        self.url = parsed
        self.store = _storage.get_store(parsed, _storage.StorageOptions(WHERE, storage_options))
        self.shown = parsed.url

    def mark(self, name: str) -> None:
        target = self.url.child(self.url.key + name)
        self.store.write(target, b"ready\n")

    def markers(self) -> list[str]:
        return [key[len(self.url.key):] for key, _ in self.store.list(self.url) if key.endswith(".txt")]


def sync_wait_for_dataset(rank_id: int, rank_size: int, current_epoch: int, obs_runtime: Any, *,
                          storage_options: dict[str, Any] | None = None, poll_seconds: float = POLL_SECONDS,
                          timeout: float | None = None) -> None:
    """Mark rank ``rank_id`` ready for epoch ``current_epoch``, then wait until all ``rank_size`` ranks are.

    As MindSpore's: the markers are ``download_dataset_ready_<rank>.txt`` under
    ``<sync_obs_path>/<BATCH_JOB_ID or "unknown">/<current_epoch>/`` and the wait ends when that folder
    holds ``rank_size`` of them. MindSpore's ``OBSMindDataset`` writes a rank's marker itself before
    calling it; here the call writes it (nothing else would).

    Args:
        rank_id: this rank, ``0 <= rank_id < rank_size``.
        rank_size: the number of ranks.
        current_epoch: the epoch (MindSpore counts from 1).
        obs_runtime: where the markers go: an :class:`~minddata.OBSMindDataset` (its ``sync_obs_path``,
            endpoint and keys) or the folder itself, an ``s3://``/``obs://`` URL or a folder every rank
            sees.
        storage_options: for a URL, the object storage settings (endpoint, keys...), as for sources.
        poll_seconds: the pause between two looks at the markers (MindSpore's: 10).
        timeout: seconds to wait at most (None: as long as it takes, as MindSpore); past it, a
            ``TimeoutError`` names the ranks not ready.

    Examples:
        >>> import tempfile
        >>> import minddata as md
        >>> folder = tempfile.mkdtemp()
        >>> md.sync_wait_for_dataset(0, 1, 1, folder)  # a single rank: ready at once
    """
    rank_size = v.positive_int(WHERE, "rank_size", rank_size)  # type: ignore[assignment]  # positive_int gives None only with allow_none
    rank_id = v.non_negative_int(WHERE, "rank_id", rank_id)
    if rank_id >= rank_size:
        raise ArgumentError(f"{WHERE}: `rank_id` must be less than `rank_size` ({rank_size}). Found: {rank_id}")
    current_epoch = v.non_negative_int(WHERE, "current_epoch", current_epoch)
    if isinstance(poll_seconds, bool) or not isinstance(poll_seconds, (int, float)) or poll_seconds <= 0:
        raise ArgumentError(f"{WHERE}: `poll_seconds` must be a number greater than 0. Found: {poll_seconds!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0):
        raise ArgumentError(f"{WHERE}: `timeout` must be None or a number of seconds (0 or more). Found: {timeout!r}")
    where, options = _sync_place(obs_runtime, storage_options)
    if where.lower().startswith("obs://"):
        where = "s3://" + where[len("obs://"):]
    job = os.environ.get("BATCH_JOB_ID", "unknown")
    folder: _LocalFolder | _ObjectFolder
    if _storage.is_remote(where):
        folder = _ObjectFolder(f"{where.rstrip('/')}/{job}/{current_epoch}/", options)
    else:
        folder = _LocalFolder(os.path.join(_storage.local_path(where), job, str(current_epoch)))
    folder.mark(_marker_name(rank_id))
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        ready = folder.markers()
        if len(ready) >= rank_size:
            return
        if deadline is not None and time.monotonic() >= deadline:
            waiting = sorted(set(range(rank_size)) - {int(n[len("download_dataset_ready_"):-4]) for n in ready
                                                       if n[len("download_dataset_ready_"):-4].isdigit()})
            raise TimeoutError(f"{WHERE}: epoch {current_epoch}: {len(ready)} of {rank_size} ranks ready in "
                               f"{folder.shown} after {timeout:g} s; waiting for ranks {waiting}. Check that "
                               "every rank calls it with the same rank_size, epoch and BATCH_JOB_ID, or raise "
                               "`timeout`.")
        time.sleep(poll_seconds if deadline is None else max(0.0, min(poll_seconds, deadline - time.monotonic())))
