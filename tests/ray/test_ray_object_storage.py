"""The Ray executor over object storage: the driver lists and plans, and each read task reads its own
objects inside its Ray worker, so no object passes through the driver.

The real local S3 server of the storage tests (moto, on 127.0.0.1) serves the objects through a proxy
that records, for every request, the process that sent it (request_log.py).
"""

from __future__ import annotations

import os

import pytest
import request_log
import s3kit
from ray_cluster import ray_cluster  # noqa: F401 - the session's cluster
from testkit import exact_rows

import minddata as md
from minddata import vision

# The proxy recording which process sent each request (tests/ray/request_log.py).
recording_proxy = request_log.recording_proxy
# Ray Data copies its context, touching its own deprecated fields: not this project's warnings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
# The object storage fixtures this module uses (tests/s3kit.py).
_s3_env, s3_client, s3_images, s3_server = s3kit._s3_env, s3kit.s3_client, s3kit.s3_images, s3kit.s3_server


IMAGES = "/data/images/"


def _remote_images(proxy: request_log.RecordingProxy) -> md.ImageFolderDataset:
    # The Ray workers have no AWS environment of their own: endpoint and (dummy) credentials travel
    # with the dataset.
    options = s3kit.options(proxy.url, access_key_id=s3kit.KEY_ID, secret_access_key=s3kit.SECRET)
    return md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options)


@pytest.mark.parametrize("map_after", [False, True], ids=["read tasks", "read by the first map"])
def test_read_tasks_read_their_own_objects(s3_images, recording_proxy, map_after):
    ds = _remote_images(recording_proxy)
    local = md.ImageFolderDataset(str(s3_images), shuffle=False)
    if map_after:  # a task map fuses the read into its own task
        ds = ds.map([vision.Decode()], input_columns="image")
        local = local.map([vision.Decode()], input_columns="image")
    assert exact_rows(ds, "ray") == exact_rows(local, "local")

    driver = os.getpid()
    log = list(recording_proxy.log)
    listings = [r.pid for r in log if r.method == "GET" and "list-type" in r.query]
    bodies = [(r.pid, r.path) for r in log
              if r.method == "GET" and r.path.startswith(IMAGES) and r.path.endswith(".jpg")]
    # The driver listed the prefix (and so is seen by the proxy), and read no object.
    assert driver in listings
    assert sorted({path for _, path in bodies}) == sorted(
        f"{IMAGES}{p.parent.name}/{p.name}" for p in s3_images.glob("*/*.jpg")
    )
    readers = {pid for pid, _ in bodies}
    assert driver not in readers
    assert None not in readers
