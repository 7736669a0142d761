"""config.set_storage_requests_in_flight bounds the object-storage requests a worker keeps in flight,
counted where they arrive: a proxy in front of the real S3 server (moto's) that holds the image GETs
until all that the client lets be in flight at once have arrived. A source's own ``storage_options["requests_in_flight"]``
wins over the setting, and the iterator keeps the value it was created with."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import options

import minddata as md
from minddata.bench.s3server import FaultProxy
from minddata.dataset import _storage

IMAGES = 15  # s3://data/images/: 3 classes x 5 (conftest's s3_images), read by one worker
QUIET_S = 0.2  # held image GETs go on once no other one has arrived for this long


class CountingProxy(FaultProxy):
    """Forwards every request (one per connection) and counts the image GETs in flight together. Each
    image GET is held until no other has arrived for ``QUIET_S``: every request the client lets be in
    flight at once is then in flight, so ``most`` is exactly the client's bound (the time only paces
    the test; the count does not depend on it)."""

    def __init__(self, upstream_port: int):
        super().__init__(upstream_port)
        self.in_flight = 0
        self.most = 0
        self._last = 0.0
        self._cond = threading.Condition()

    def _handle(self, h) -> None:
        line = h.rfile.peek(256)[:256].split(b"\r\n", 1)[0]
        if not (line.startswith(b"GET ") and b"/images/" in line and b".jpg" in line):
            super()._handle(h)  # listing the bucket, when the dataset is built
            return
        with self._cond:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self._last = time.monotonic()
            self._cond.notify_all()
            while (wait := self._last + QUIET_S - time.monotonic()) > 0:
                self._cond.wait(wait)
        try:
            super()._handle(h)
        finally:
            with self._cond:
                self.in_flight -= 1


@pytest.fixture
def counting(s3_server):
    proxies: list[CountingProxy] = []

    def start() -> CountingProxy:
        proxies.append(CountingProxy(s3_server).start())
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
    proxy = counting()
    assert _read_all(_images(proxy)) == IMAGES
    assert proxy.most == 3


def test_a_sources_storage_options_win_over_the_setting(s3_images, counting):
    md.config.set_storage_requests_in_flight(3)
    proxy = counting()
    assert _read_all(_images(proxy, requests_in_flight=5)) == IMAGES
    assert proxy.most == 5


def test_the_iterator_keeps_the_value_it_was_created_with(s3_images, counting):
    md.config.set_storage_requests_in_flight(5)
    proxy = counting()
    it = _images(proxy).create_tuple_iterator(num_epochs=1, output_numpy=True)
    md.config.set_storage_requests_in_flight(3)  # after the iterator was created: not its setting
    assert sum(1 for _ in it) == IMAGES
    assert proxy.most == 5


def test_without_the_setting_eight_are_in_flight(s3_images, counting):
    proxy = counting()
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
