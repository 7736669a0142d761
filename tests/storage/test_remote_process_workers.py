"""Remote sources in pipelines with process workers (``python_multiprocessing=True``), forked and
spawned: rows equal the local pipeline's, an error names the URL and hides the secret, nothing is
left behind, and a forked process never uses its parent's client (botocore clients are not
fork-safe): it makes its own."""

from __future__ import annotations

import multiprocessing
import tempfile
import threading

import pytest
from s3kit import KEY_ID, SECRET, options

import minddata as md
from minddata import vision
from minddata.dataset import _storage
from minddata.errors import MinddataError


def images(ds):
    return [(r["image"].tobytes(), int(r["label"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def pipeline(source):
    return source.map([vision.Decode(), vision.Resize((12, 10))], input_columns="image", python_multiprocessing=True,
                      num_parallel_workers=2)


def secret_options(endpoint):
    return options(endpoint, access_key_id=KEY_ID, secret_access_key=SECRET)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_rows_equal_local_with_process_workers(method, s3_server, s3_images, tmp_path, monkeypatch):
    md.config.set_multiprocessing_start_method(method)
    temp = tmp_path / "temp"  # this process's and its workers' temporary files: none must be left
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    threads = set(threading.enumerate())
    remote = pipeline(md.ImageFolderDataset("s3://data/images/", shuffle=False,
                                            storage_options=secret_options(f"http://127.0.0.1:{s3_server}")))
    got = images(remote)
    assert got == images(pipeline(md.ImageFolderDataset(str(s3_images), shuffle=False))) and len(got) == 15
    assert multiprocessing.active_children() == []
    assert {t for t in threading.enumerate() if t.is_alive()} <= threads
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_record_files_with_process_workers(method, s3_server, s3_records):
    md.config.set_multiprocessing_start_method(method)
    remote = md.MindDataset("s3://data/rec/train.rec0", columns_list=["label", "name"], shuffle=False,
                            storage_options=options(s3_server))
    labels = remote.map(lambda label: label * 2, input_columns="label", python_multiprocessing=True,
                        num_parallel_workers=2)
    got = [int(r["label"]) for r in labels.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert sorted(got) == [2 * i for i in range(2100)]
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_an_error_in_a_worker_names_the_url_not_the_secret(method, s3_images, faults):
    md.config.set_multiprocessing_start_method(method)
    remote = pipeline(md.ImageFolderDataset("s3://data/images/", shuffle=False,
                                            storage_options=secret_options(faults.url)))
    faults.deny = ("/data/images/emu/",)
    with pytest.raises(MinddataError) as info:
        images(remote)
    text = str(info.value)
    assert "s3://data/images/emu/00.jpg" in text and "access denied" in text and SECRET not in text
    assert multiprocessing.active_children() == []


def _client_after_fork(store: _storage.ObjectStore, queue) -> None:
    import os

    inherited = store._client
    made = store.client()
    queue.put((made is not inherited, store._pid == os.getpid()))


def test_a_forked_process_makes_its_own_client(s3_server):
    store = _storage.get_store(_storage.split_url("s3://data/x"), _storage.StorageOptions("test", options(s3_server)))
    parent_client = store.client()
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_client_after_fork, args=(store, queue))
    child.start()
    fresh, own = queue.get(timeout=30)
    child.join(30)
    assert fresh and own and store.client() is parent_client
