"""The local object cache (storage_options cache_dir): later epochs read from disk, bounded, shared."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

from s3kit import options

import minddata as md
from minddata.dataset import _storage as st


def rows(ds):
    return [(bytes(r["image"]), int(r["label"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


def test_second_epoch_reads_from_disk(s3_images, faults, tmp_path):
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False,
                               storage_options=options(faults.url, cache_dir=str(tmp_path / "cache")))
    first = rows(ds)
    before = faults.counts["requests"]
    assert rows(ds) == first == rows(md.ImageFolderDataset(str(s3_images), shuffle=False))
    assert faults.counts["requests"] == before


def test_ranged_reads_hit_blocks_in_later_epochs(s3_shards, faults, tmp_path):
    md.config.set_seed(1)
    ds = md.WebDataset("s3://data/shards/train-*.tar", shuffle=True,
                       storage_options=options(faults.url, cache_dir=str(tmp_path / "cache")))
    keys = [str(r["__key__"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    before = faults.counts["requests"]
    again = [str(r["__key__"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]
    assert sorted(again) == sorted(keys) and len(keys) == 18
    assert faults.counts["requests"] == before


def test_cache_stays_within_its_bound(s3_server, s3_images, tmp_path):
    bound = 6000
    opts = options(s3_server, cache_dir=str(tmp_path / "cache"), cache_max_bytes=bound)
    ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options=opts)
    assert rows(ds) == rows(md.ImageFolderDataset(str(s3_images), shuffle=False))
    cache = st.ObjectCache(str(tmp_path / "cache"), bound)
    assert 0 < cache.total_bytes() <= bound * 1.1


def test_two_processes_share_one_cache(s3_server, s3_images, tmp_path):
    script = textwrap.dedent(f"""
        import hashlib, minddata as md
        ds = md.ImageFolderDataset("s3://data/images/", shuffle=False, storage_options={{
            "endpoint_url": "http://127.0.0.1:{s3_server}", "cache_dir": {str(tmp_path / "cache")!r},
            "cache_max_bytes": 8000}})
        for _ in range(3):
            h = hashlib.sha256()
            for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True):
                h.update(r["image"].tobytes())
            print(h.hexdigest())
    """)
    root = Path(__file__).resolve().parents[2]  # the checkout, as the tests import it
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=root) for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    want = hashlib.sha256(b"".join(img for img, _ in rows(md.ImageFolderDataset(str(s3_images), shuffle=False))))
    for out, err in outs:
        assert out.split() == [want.hexdigest()] * 3, err[-2000:]
