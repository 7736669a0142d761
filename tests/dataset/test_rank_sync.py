"""sync_wait_for_dataset, MindSpore's OBSMindDataset rank barrier, over a folder every rank sees."""

from __future__ import annotations

import threading

import pytest

import minddata as md
from minddata.errors import ArgumentError


@pytest.fixture(autouse=True)
def _no_job_id(monkeypatch):
    monkeypatch.delenv("BATCH_JOB_ID", raising=False)


def test_every_rank_returns_once_all_are_ready_and_markers_follow_mindspore(tmp_path):
    returned = []
    ranks = [threading.Thread(target=lambda r=r: (md.sync_wait_for_dataset(r, 3, 2, str(tmp_path), poll_seconds=0.01,
                                                                           timeout=60), returned.append(r)))
             for r in range(3)]
    for t in ranks:
        t.start()
    for t in ranks:
        t.join(90)
    assert sorted(returned) == [0, 1, 2]
    assert sorted(p.name for p in (tmp_path / "unknown" / "2").iterdir()) == [
        "download_dataset_ready_0.txt", "download_dataset_ready_1.txt", "download_dataset_ready_2.txt"]


def test_the_job_id_separates_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv("BATCH_JOB_ID", "job-7")
    md.sync_wait_for_dataset(0, 1, 1, tmp_path)
    assert (tmp_path / "job-7" / "1" / "download_dataset_ready_0.txt").is_file()


def test_a_timeout_names_the_ranks_not_ready(tmp_path):
    with pytest.raises(TimeoutError, match=r"epoch 1: 1 of 3 ranks ready in .* waiting for ranks \[0, 2\]"):
        md.sync_wait_for_dataset(1, 3, 1, str(tmp_path), poll_seconds=0.01, timeout=0)


@pytest.mark.parametrize("args, message", [
    ((3, 3, 1), r"`rank_id` must be less than `rank_size` \(3\). Found: 3"),
    ((0, 0, 1), r"`rank_size` must be greater than 0. Found: 0"),
    ((0, 1, -1), r"`current_epoch` must be 0 or greater. Found: -1"),
])
def test_arguments_are_checked(tmp_path, args, message):
    with pytest.raises(ArgumentError, match=message):
        md.sync_wait_for_dataset(*args, str(tmp_path))


def test_obs_runtime_must_say_where_the_markers_go():
    with pytest.raises(ArgumentError, match=r"`obs_runtime` must be an OBSMindDataset or the synchronization folder"):
        md.sync_wait_for_dataset(0, 1, 1, None)
