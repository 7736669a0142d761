"""config.set_storage_requests_in_flight bounds the object-storage requests a worker keeps in flight,
counted where they arrive: a proxy in front of the real S3 server (moto's) that holds the image GETs
until as many as the bound should allow are in flight together. A source's own ``storage_options["requests_in_flight"]``
wins over the setting, and the iterator keeps the value it was created with."""

from __future__ import annotations

import threading
import time

import pytest
from s3kit import options

import minddata as md
from minddata.bench.s3server import FaultProxy
from minddata.dataset import _storage

IMAGES = 15  # s3://data/images/: 3 classes x 5 (conftest's s3_images), read by one worker
EXTRA_S = 0.1  # a full wave is held this much longer: more requests than the bound would show up
PARTIAL_S = 0.5  # a wave that can't fill (a chunk's last requests) goes on once none arrived for this long


class CountingProxy(FaultProxy):
    """Forwards every request and counts the image GETs in flight together (every request, so that a
    connection kept for several would be counted right too). Image GETs are held
    until ``wave`` of them are in flight (then ``EXTRA_S`` more), or none arrived for ``PARTIAL_S``
    (the last requests of a chunk): a client bounded at ``wave`` reaches exactly ``wave`` whatever the
    timing, and ``most`` is the most the client had in flight at once."""

    def __init__(self, upstream_port: int, wave: int):
        super().__init__(upstream_port)
        self.wave = wave
        self.in_flight = 0
        self.most = 0
        self._last = 0.0
        self._cond = threading.Condition()

    def _handle_one(self, h, conn) -> bool:
        try:
            line = h.rfile.peek(256)[:256].split(b"\r\n", 1)[0]  # the next request's first line, left in place
        except OSError:
            return False
        if not (line.startswith(b"GET ") and b"/images/" in line and b".jpg" in line):
            return super()._handle_one(h, conn)  # listing the bucket, when the dataset is built
        with self._cond:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self._last = time.monotonic()
            self._cond.notify_all()
            while (wait := self._last + (EXTRA_S if self.in_flight >= self.wave else PARTIAL_S) - time.monotonic()) > 0:
                self._cond.wait(wait)
        answered = threading.Event()

        def answer() -> None:
            # Out of flight once its answer starts: the client may send its next request as soon as
            # the answer is complete, before this thread would get back here.
            if not answered.is_set():
                answered.set()
                with self._cond:
                    self.in_flight -= 1

        raw = h.wfile
        h.wfile = _FirstWrite(raw, answer)
        try:
            return super()._handle_one(h, conn)
        finally:
            answer()
            h.wfile = raw


class _FirstWrite:
    """A handler's output stream that calls ``before()`` ahead of the first write."""

    def __init__(self, raw, before) -> None:
        self._raw, self._before = raw, before

    def write(self, data):
        self._before()
        return self._raw.write(data)

    def __getattr__(self, name):
        return getattr(self._raw, name)


@pytest.fixture
def counting(s3_server):
    proxies: list[CountingProxy] = []

    def start(wave: int) -> CountingProxy:
        proxies.append(CountingProxy(s3_server, wave).start())
        return proxies[-1]

    yield start
    for proxy in proxies:
        proxy.stop()


def _read_all(ds: md.Dataset) -> int:
    return sum(1 for _ in ds.create_tuple_iterator(num_epochs=1, output_numpy=True))


def _images(proxy: CountingProxy, **storage) -> md.Dataset:
    return md.ImageFolderDataset("s3://data/images/", shuffle=False, num_parallel_workers=1,
                                 storage_options=options(proxy.url, **storage))


def test_the_setting_bounds_the_requests_in_flight(s3_images, counting):
    md.config.set_storage_requests_in_flight(3)
    proxy = counting(wave=3)
    assert _read_all(_images(proxy)) == IMAGES
    assert proxy.most == 3


def test_a_sources_storage_options_win_over_the_setting(s3_images, counting):
    md.config.set_storage_requests_in_flight(3)
    proxy = counting(wave=5)
    assert _read_all(_images(proxy, requests_in_flight=5)) == IMAGES
    assert proxy.most == 5


def test_the_iterator_keeps_the_value_it_was_created_with(s3_images, counting):
    md.config.set_storage_requests_in_flight(5)
    proxy = counting(wave=5)
    it = _images(proxy).create_tuple_iterator(num_epochs=1, output_numpy=True)
    md.config.set_storage_requests_in_flight(3)  # after the iterator was created: not its setting
    assert sum(1 for _ in it) == IMAGES
    assert proxy.most == 5


def test_without_the_setting_eight_are_in_flight(s3_images, counting):
    proxy = counting(wave=8)
    assert _read_all(_images(proxy)) == IMAGES  # read in chunks of 8 rows (IMAGE_CHUNK_ROWS): up to 8 GETs each
    assert proxy.most == 8


def test_the_default_is_eight_and_is_the_settings():
    assert md.config.get_storage_requests_in_flight() == 8
    assert _storage.StorageOptions("test").get("requests_in_flight") == 8
    md.config.set_storage_requests_in_flight(2)
    assert _storage.StorageOptions("test").get("requests_in_flight") == 2
    assert _storage.StorageOptions("test", {"requests_in_flight": 6}).get("requests_in_flight") == 6
    with pytest.raises(ValueError, match="set_storage_requests_in_flight: the value must be greater than 0"):
        md.config.set_storage_requests_in_flight(0)


def test_a_changed_setting_gets_a_client_whose_pool_holds_that_many(s3_server):
    url = _storage.split_url("s3://data/x")
    given = _storage.StorageOptions("test", options(s3_server))
    md.config.set_storage_requests_in_flight(3)
    small = _storage.get_store(url, given)
    assert small.client().max_connections == 10
    md.config.set_storage_requests_in_flight(40)
    large = _storage.get_store(url, given)
    assert large is not small and _storage.get_store(url, given) is large
    assert large.client().max_connections == 80
