"""The Ray executor over object storage: the driver lists and plans, and each read task reads its own
objects inside its Ray worker, so no object passes through the driver.

The real local S3 server of the storage tests (moto, on 127.0.0.1) serves the objects through a proxy
that records, for every request, the process that sent it: the process owning the client end of the
connection, looked up while the request is being served (not by timing).
"""

from __future__ import annotations

import os
import threading
import urllib.parse

import psutil
import pytest
import s3kit
from ray_cluster import ray_cluster  # noqa: F401 - the session's cluster

import minddata as md
from minddata import vision
from minddata.bench.s3server import FaultProxy

# Ray Data copies its context, touching its own deprecated fields: not this project's warnings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
# The object storage fixtures this module uses (tests/s3kit.py).
_s3_env, s3_client, s3_images, s3_server = s3kit._s3_env, s3kit.s3_client, s3kit.s3_images, s3kit.s3_server


IMAGES = "/data/images/"


class _Replay:
    """A request stream whose first line was already read."""

    def __init__(self, line: bytes, rest):
        self.line, self.rest = line, rest

    def readline(self, limit: int = -1) -> bytes:
        if self.line is not None:
            line, self.line = self.line, None
            return line
        return self.rest.readline(limit)

    def read(self, size: int = -1) -> bytes:
        return self.rest.read(size)


class RecordingProxy(FaultProxy):
    """A fault proxy (with no faults) that logs ``(pid, method, path, query)`` of every request: pid is
    the process holding the client end of the request's connection."""

    def __init__(self, upstream_port: int):
        super().__init__(upstream_port)
        self.log: list[tuple[int | None, str, str, str]] = []
        self._log_lock = threading.Lock()

    def _sender(self, client_port: int) -> int | None:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.raddr and conn.laddr.port == client_port and conn.raddr.port == self.port:
                return conn.pid
        return None

    def _handle(self, h) -> None:
        line = h.rfile.readline(65537)
        if not line:
            return
        pid = self._sender(h.client_address[1])
        method, target, _ = line.decode("latin-1").split(" ", 2)
        parts = urllib.parse.urlsplit(target)
        with self._log_lock:
            self.log.append((pid, method, urllib.parse.unquote(parts.path), parts.query))
        h.rfile = _Replay(line, h.rfile)
        super()._handle(h)


@pytest.fixture
def recording_proxy(s3_server):
    proxy = RecordingProxy(s3_server).start()
    yield proxy
    proxy.stop()


def _remote_images(proxy: RecordingProxy) -> md.ImageFolderDataset:
    # The Ray workers have no AWS environment of their own: endpoint and (dummy) credentials travel
    # with the dataset.
    options = s3kit.options(proxy.url, access_key_id=s3kit.KEY_ID, secret_access_key=s3kit.SECRET)
    return md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options)


def _rows(ds: md.Dataset, executor: str) -> list[tuple[bytes, int]]:
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor=executor)
    return [(row[0].tobytes(), int(row[1])) for row in it]


@pytest.mark.parametrize("map_after", [False, True], ids=["read tasks", "read by the first map"])
def test_read_tasks_read_their_own_objects(s3_images, recording_proxy, map_after):
    ds = _remote_images(recording_proxy)
    local = md.ImageFolderDataset(str(s3_images), shuffle=False)
    if map_after:  # a task map fuses the read into its own task
        ds = ds.map([vision.Decode()], input_columns="image")
        local = local.map([vision.Decode()], input_columns="image")
    assert _rows(ds, "ray") == _rows(local, "local")

    driver = os.getpid()
    log = list(recording_proxy.log)
    listings = [pid for pid, method, path, query in log if method == "GET" and "list-type" in query]
    bodies = [(pid, path) for pid, method, path, query in log
              if method == "GET" and path.startswith(IMAGES) and path.endswith(".jpg")]
    # The driver listed the prefix (and so is seen by the proxy), and read no object.
    assert driver in listings
    assert sorted({path for _, path in bodies}) == sorted(
        f"{IMAGES}{p.parent.name}/{p.name}" for p in s3_images.glob("*/*.jpg")
    )
    readers = {pid for pid, _ in bodies}
    assert driver not in readers
    assert None not in readers
