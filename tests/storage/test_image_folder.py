"""ImageFolderDataset over s3:// prefixes: the rows of the local folder, exactly, also under faults."""

from __future__ import annotations

import time

import numpy as np
import pytest
from s3kit import SECRET, options

import minddata as md
from minddata.errors import ArgumentError, GraphError, MinddataError


def rows(ds, **kw):
    return [(bytes(r["image"]), int(r["label"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True, **kw)]


def test_rows_equal_the_local_folder(s3_server, s3_images):
    remote = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options(s3_server))
    local = md.ImageFolderDataset(str(s3_images), shuffle=False)
    assert rows(remote) == rows(local)
    assert remote.get_class_indexing() == {"cat": 0, "dog": 1, "emu": 2}


def test_endpoint_from_the_environment(s3_server, s3_images, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{s3_server}")
    ds = md.ImageFolderDataset("s3://data/images", shuffle=False)
    assert ds.get_dataset_size() == 15


def test_shuffle_shard_and_resume_match_local(s3_server, s3_images):
    md.config.set_seed(7)
    kw = dict(shuffle=True, num_shards=2, shard_id=1, num_parallel_workers=2)
    remote = md.ImageFolderDataset("s3://data/images/", storage_options=options(s3_server), **kw)
    local = md.ImageFolderDataset(str(s3_images), **kw)
    assert rows(remote) == rows(local)
    it = remote.create_dict_iterator(num_epochs=1, output_numpy=True)
    first = [(bytes(next(it)["image"])) for _ in range(3)]
    state = it.get_state()
    it.close() if hasattr(it, "close") else None
    resumed = [bytes(r["image"]) for r in remote.create_dict_iterator(num_epochs=1, output_numpy=True, state=state)]
    assert first + resumed == [img for img, _ in rows(local)]


def test_rows_exact_under_503_drops_and_cuts(s3_images, faults):
    faults.set_rates({"503": 0.2, "drop": 0.1, "cut": 0.1, "delay": 0.05}, seed=3)
    remote = md.ImageFolderDataset("s3://data/images/", shuffle=False, num_parallel_workers=2,
                                   storage_options=options(faults.url))
    got = rows(remote)
    counts = dict(faults.counts)
    faults.set_rates({})
    local = md.ImageFolderDataset(str(s3_images), shuffle=False)
    assert got == rows(local)
    assert len({img for img, _ in got}) == 15
    assert counts.get("503", 0) + counts.get("drop", 0) + counts.get("cut", 0) > 0


def test_missing_bucket_fails_at_build_naming_url(s3_server, s3_client):
    with pytest.raises(MinddataError) as info:
        md.ImageFolderDataset("s3://no-such-bucket/train/", storage_options=options(s3_server))
    text = str(info.value)
    assert "s3://no-such-bucket/train/" in text and "does not exist" in text and "404" in text
    assert SECRET not in text


def test_empty_prefix_fails_at_build(s3_server, s3_client):
    with pytest.raises(GraphError, match="s3://data/nothing-here/"):
        md.ImageFolderDataset("s3://data/nothing-here/", storage_options=options(s3_server))


def test_denied_access_names_url_and_fix(s3_images, faults):
    faults.deny = ("/data/images", "prefix=images")
    with pytest.raises(MinddataError) as info:
        md.ImageFolderDataset("s3://data/images/", storage_options=options(faults.url))
    text = str(info.value)
    assert "s3://data/images/" in text and "403" in text and "access denied" in text
    assert "1 try, not retried" in text and SECRET not in text


def test_secret_never_shown(s3_server, s3_images):
    opts = options(s3_server, access_key_id="AKIDTESTING0000", secret_access_key=SECRET)
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=opts)
    assert SECRET not in repr(ds)
    assert SECRET not in ds.explain()
    assert SECRET not in str(md.serialize(ds))
    assert len(rows(ds)) == 15


def test_unknown_option_is_refused():
    with pytest.raises(ArgumentError, match="unknown key 'endpoint_urll'"):
        md.ImageFolderDataset("s3://data/images/", storage_options={"endpoint_urll": "http://127.0.0.1:1"})


def test_labels_dtype(s3_server, s3_images):
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options(s3_server))
    row = next(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert row["label"].dtype == np.int32 and row["image"].dtype == np.uint8


def test_gs_url_with_an_explicit_endpoint(s3_server, s3_images):
    ds = md.ImageFolderDataset("gs://data/images/", shuffle=False, storage_options=options(s3_server))
    assert rows(ds) == rows(md.ImageFolderDataset(str(s3_images), shuffle=False))


def test_object_gone_after_build_is_a_row_error_skipped_in_skip_mode(s3_server, s3_client, s3_images):
    for path in sorted(s3_images.glob("*/*.jpg"))[:4]:
        s3_client.put_object(Bucket="data", Key=f"gone/{path.parent.name}/{path.name}", Body=path.read_bytes())
    ds = md.ImageFolderDataset("s3://data/gone/", shuffle=False, storage_options=options(s3_server))
    s3_client.delete_object(Bucket="data", Key="gone/cat/01.jpg")
    md.config.set_error_samples_mode("skip")
    assert len(rows(ds)) == 3
    md.config.set_error_samples_mode("raise")
    with pytest.raises(MinddataError, match=r"s3://data/gone/cat/01.jpg.*404"):
        rows(ds)


def test_access_denied_at_the_row_names_the_url(s3_images, faults):
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=options(faults.url))
    faults.deny = ("/data/images/dog/",)
    with pytest.raises(MinddataError) as info:
        rows(ds)
    text = str(info.value)
    assert "s3://data/images/dog/00.jpg" in text and "access denied" in text and SECRET not in text


def test_reads_ahead_of_its_map_and_stops_with_the_iterator(s3_images, faults):
    import threading

    def image_gets() -> int:
        return sum(1 for method, target, _ in list(faults.requests) if method == "GET" and "/images/" in target)

    waited: list[bool] = []

    def wait_for_the_second_chunk(image):
        # One worker, chunks of 8: without reading ahead, no GET of the second chunk (images 9-15)
        # is sent before the first chunk's rows have gone through this map. The first row waits.
        deadline = time.monotonic() + (0 if waited else 20)
        waited.append(True)
        while image_gets() < 15 and time.monotonic() < deadline:
            time.sleep(0.01)
        return image

    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, num_parallel_workers=1,
                               storage_options=options(faults.url)).map([wait_for_the_second_chunk], ["image"],
                                                                        num_parallel_workers=1)
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    first = next(it)
    assert image_gets() == 15, "the second chunk was not read while the first one was computed"
    it.close()  # mid-pass: the reads ahead are finished or cancelled, their threads gone
    assert not [t.name for t in threading.enumerate() if t.name.startswith("minddata-readahead") and t.is_alive()]
    assert bytes(first["image"]) == bytes(rows(md.ImageFolderDataset(str(s3_images), shuffle=False))[0][0])
