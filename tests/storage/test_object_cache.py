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


class _Store:
    """What ObjectCache asks of a store: objects of a dict, their versions, the GETs counted."""

    def __init__(self, objects):
        self.objects, self.versions, self.gets = objects, dict.fromkeys(objects, "v1"), 0

    def endpoint(self):
        return "fake"

    def version(self, url):
        return self.versions[url.url]

    def _sizes(self, url):
        return len(self.objects[url.url])

    def _fetch(self, url, start=0, end=None):
        self.gets += 1
        return self.objects[url.url][start:end]


def _url(name):
    return st.split_url(f"s3://data/{name}")


def test_the_bound_holds_after_each_read_even_over_a_full_folder(tmp_path):
    store = _Store({_url(f"o{i}").url: bytes([i]) * 100 for i in range(100)})
    for _ in range(2):  # the second process finds the folder filled by the first
        cache = st.ObjectCache(str(tmp_path / "cache"), 5000)
        for i in range(100):
            assert cache.read(store, _url(f"o{i}"), 0, None) == bytes([i]) * 100
            assert cache.total_bytes() <= 5000


def test_the_least_recently_used_entries_go_first(tmp_path):
    import os

    store = _Store({_url(f"o{i}").url: bytes([i]) * 1000 for i in range(5)})
    cache = st.ObjectCache(str(tmp_path / "cache"), 3500)
    paths = []
    for i in range(3):
        before = set((tmp_path / "cache" / "objects").rglob("*"))
        cache.read(store, _url(f"o{i}"), 0, None)
        (path,) = [p for p in set((tmp_path / "cache" / "objects").rglob("*")) - before if p.is_file()]
        paths.append(path)
    for age, path in zip((300, 200, 100), paths):  # o0 the oldest
        os.utime(path, (os.path.getmtime(path) - age,) * 2)
    cache.read(store, _url("o0"), 0, None)  # a hit: o0 is now the most recently used
    cache.read(store, _url("o3"), 0, None)  # past the bound: the least recently used, o1, goes
    assert [os.path.exists(p) for p in paths] == [True, False, True]
    assert cache.total_bytes() == 3000


def test_a_changed_object_is_read_anew(tmp_path):
    store = _Store({_url("o").url: b"old" * 100})
    for start, end in ((0, None), (5, 50)):
        store.objects[_url("o").url], store.versions[_url("o").url] = b"old" * 100, "v1"
        assert st.ObjectCache(str(tmp_path / "cache"), 1 << 20).read(store, _url("o"), start, end) == (b"old" * 100)[start:end]
        store.objects[_url("o").url], store.versions[_url("o").url] = b"new" * 100, "v2"  # a new ETag
        assert st.ObjectCache(str(tmp_path / "cache"), 1 << 20).read(store, _url("o"), start, end) == (b"new" * 100)[start:end]


def test_a_changed_object_in_the_bucket_is_not_served_stale(s3_server, s3_client, tmp_path):
    opts = options(s3_server, cache_dir=str(tmp_path / "cache"))
    for body in (b"first version", b"second, longer version"):
        s3_client.put_object(Bucket="data", Key="mutable/a/x.bin", Body=body)
        ds = md.ImageFolderDataset("s3://data/mutable/", extensions=[".bin"], shuffle=False, storage_options=opts)
        assert [bytes(r["image"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)] == [body]


def test_a_writer_killed_mid_write_leaves_nothing_a_reader_takes(tmp_path):
    # The child writes a cache entry and is killed before it renames it into place.
    script = textwrap.dedent(f"""
        import os, sys, time
        sys.path[:0] = [{str(Path(__file__).resolve().parent)!r}, {str(Path(__file__).resolve().parents[1])!r}]
        from test_object_cache import _Store, _url
        from minddata.dataset import _storage as st
        store = _Store({{_url("o").url: b"x" * 100000}})
        def hang(*args):
            print("written", flush=True)
            time.sleep(600)
        os.replace = hang
        st.ObjectCache({str(tmp_path / "cache")!r}, 1 << 20).read(store, _url("o"), 0, None)
    """)
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=root)
    try:
        assert child.stdout.readline() == "written\n"
    finally:
        child.kill()
        child.wait(timeout=30)
    assert list((tmp_path / "cache").rglob("*.tmp-*")), "the killed writer left no temporary file"
    store = _Store({_url("o").url: b"y" * 100000})  # what the bucket holds: the cache must not answer x's
    cache = st.ObjectCache(str(tmp_path / "cache"), 1 << 20)
    assert cache.read(store, _url("o"), 0, None) == b"y" * 100000 and store.gets == 1
    assert cache.read(store, _url("o"), 0, None) == b"y" * 100000 and store.gets == 1
