"""sync_wait_for_dataset with its markers in object storage (moto's S3 server), given a URL or an
OBSMindDataset."""

from __future__ import annotations

import pytest
from s3kit import BUCKET, options

import minddata as md


def test_an_obs_mind_dataset_puts_its_marker_under_its_sync_obs_path(s3_server, s3_client, s3_mindrecord, monkeypatch):
    monkeypatch.setenv("BATCH_JOB_ID", "job-1")
    ds = md.OBSMindDataset(["obs://data/mr/train.mindrecord0"], f"http://127.0.0.1:{s3_server}", "AKIDOBS",
                           "OBS-SECRET-KEY-123", "obs://data/sync-a/", shuffle=False)
    md.sync_wait_for_dataset(0, 1, 3, ds)
    listed = s3_client.list_objects_v2(Bucket=BUCKET, Prefix="sync-a/")
    assert [o["Key"] for o in listed["Contents"]] == ["sync-a/job-1/3/download_dataset_ready_0.txt"]


def test_a_url_waits_for_the_markers_of_the_other_ranks(s3_server, s3_client, monkeypatch):
    monkeypatch.delenv("BATCH_JOB_ID", raising=False)
    with pytest.raises(TimeoutError, match=r"1 of 2 ranks ready in s3://data/sync-b/unknown/1/.*waiting for ranks \[1\]"):
        md.sync_wait_for_dataset(0, 2, 1, "s3://data/sync-b", storage_options=options(s3_server), timeout=0)
    s3_client.put_object(Bucket=BUCKET, Key="sync-b/unknown/1/download_dataset_ready_1.txt", Body=b"ready\n")
    md.sync_wait_for_dataset(0, 2, 1, "s3://data/sync-b", storage_options=options(s3_server), timeout=30)
