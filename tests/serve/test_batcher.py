"""The batcher and service in-process (no HTTP): batch formation, one model call per batch, several
batches in flight, and nothing left running after a drain. The HTTP protocol is tested against a real
server process in the other modules."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest
from serve_testing import make_jpeg

from minddata.bench.pipelines import make_ops
from minddata.serve import ServePipeline
from minddata.serve.model import ServedModel
from minddata.serve.server import ServeSettings, Service


class CountingModel(ServedModel):
    """Channel means; records each call's batch size. With ``together=n`` a call waits (up to 10 s)
    until n calls are inside at once, which only happens when n batches are in flight."""

    def __init__(self, together: int = 1):
        self.sizes: list[int] = []
        self.barrier = threading.Barrier(together, timeout=10) if together > 1 else None
        self.lock = threading.Lock()

    def predict(self, batch):
        (images,) = batch.values()
        with self.lock:
            self.sizes.append(len(images))
        if self.barrier is not None and len(self.sizes) > 2:  # not during the start-up probe (2 calls)
            self.barrier.wait()
        return {"means": images.mean(axis=(2, 3))}


def run_service(model, images, **settings):
    """Start a service on a fresh loop, submit every image at once as its own request, drain."""

    async def main():
        service = Service(ServePipeline("infer224", make_ops("infer224")), model,
                          ServeSettings(name="t", workers=2, **settings))
        service.start()
        try:
            return await asyncio.gather(*(service.batcher.submit([b], timeout_s=60) for b in images))
        finally:
            await service.drain()

    return asyncio.run(main())


IMAGES = [make_jpeg(48 + i, 40, seed=i) for i in range(8)]


def test_model_runs_once_per_batch_of_at_most_max_batch():
    model = CountingModel()
    results = run_service(model, IMAGES, max_batch=4, max_delay_ms=1000)
    assert model.sizes[2:] == [4, 4]  # after the two start-up probe calls
    offline = ServePipeline("infer224", make_ops("infer224")).run_offline(IMAGES)["image"].mean(axis=(2, 3))
    np.testing.assert_allclose(np.concatenate([r["means"] for r in results]), offline, rtol=1e-6)


def test_several_batches_are_in_flight_at_once():
    model = CountingModel(together=2)  # each call waits for a second one: needs two batches at once
    results = run_service(model, IMAGES[:4], max_batch=2, max_delay_ms=1, max_inflight=2)
    assert [len(r["means"]) for r in results] == [1, 1, 1, 1]
    assert sum(model.sizes[2:]) == 4


def test_drain_leaves_no_threads():
    before = set(threading.enumerate())
    run_service(CountingModel(), IMAGES[:2], max_batch=2, max_delay_ms=1)
    deadline = time.monotonic() + 10
    while leftover := [t.name for t in threading.enumerate() if t not in before and t.is_alive()]:
        assert time.monotonic() < deadline, f"threads still running after the drain: {leftover}"
        time.sleep(0.05)


class WidthSensitiveModel(ServedModel):
    """Fails on images 22 pixels wide (after the pipeline), as a model with a fixed input size would."""

    def predict(self, batch):
        (images,) = batch.values()
        if images.shape[2] == 22:
            raise ValueError("this model takes no image 22 pixels wide")
        return {"width": np.full(len(images), images.shape[2])}


def _submit_each(model, images):
    """Every image as its own request, in one batch; the results or the errors, in order."""
    from minddata import vision

    async def main():
        service = Service(ServePipeline("aspect", [vision.Decode(), vision.Resize(16)]), model,
                          ServeSettings(name="t", workers=2, max_batch=len(images), max_delay_ms=1000))
        service.start()
        try:
            return await asyncio.gather(*(service.batcher.submit([b], timeout_s=60) for b in images),
                                        return_exceptions=True)
        finally:
            await service.drain()

    return asyncio.run(main())


# Resize(16) keeps the aspect: these 40-pixel-high JPEGs come out 19, 20 and 22 pixels wide.
MIXED = [make_jpeg(48, 40, seed=0), make_jpeg(50, 40, seed=1), make_jpeg(55, 40, seed=2)]


def test_rows_of_different_shapes_run_the_model_per_request_and_fail_only_their_own(caplog):
    with caplog.at_level("ERROR", logger="minddata.serve"):
        results = _submit_each(WidthSensitiveModel(), MIXED)
    assert [r["width"].tolist() for r in results[:2]] == [[19], [20]]
    # The client gets the short reason; the model's own error is for the server's log.
    assert results[2].status == 500 and results[2].message == "the model failed on this request"
    assert "takes no image 22 pixels wide" in caplog.text


def test_without_a_model_each_request_gets_its_own_rows():
    from minddata.serve.model import NoModel

    results = _submit_each(NoModel(), MIXED)
    assert [r["image"].shape for r in results] == [(1, 16, 19, 3), (1, 16, 20, 3), (1, 16, 22, 3)]


def test_an_empty_request_is_refused():
    from minddata.serve.batcher import Rejected
    from minddata.serve.model import NoModel

    async def main():
        service = Service(ServePipeline("infer224", make_ops("infer224")), NoModel(), ServeSettings(name="t", workers=2))
        service.start()
        try:
            await service.batcher.submit([], timeout_s=10)
        finally:
            await service.drain()

    with pytest.raises(Rejected, match="at least one image") as refused:
        asyncio.run(main())
    assert refused.value.status == 400


def test_the_services_pixel_limit_is_its_own_and_leaves_the_process_setting_alone():
    from minddata import config
    from minddata.serve.model import NoModel

    config.set_max_image_pixels(50_000_000)
    try:
        async def main():
            service = Service(ServePipeline("infer224", make_ops("infer224")), NoModel(),
                              ServeSettings(name="t", workers=2, max_image_pixels=100_000))
            service.start()
            try:
                assert config.get_max_image_pixels() == 50_000_000
                small = await service.batcher.submit([make_jpeg(300, 200, seed=1)], timeout_s=60)
                return small, await asyncio.gather(service.batcher.submit([make_jpeg(400, 300, seed=2)], timeout_s=60),
                                                   return_exceptions=True)
            finally:
                await service.drain()

        small, (large,) = asyncio.run(main())
        assert small["image"].shape[0] == 1
        from minddata.serve.batcher import Rejected

        assert isinstance(large, Rejected) and large.status == 422 and "400x300" in large.message, large
        assert config.get_max_image_pixels() == 50_000_000
    finally:
        config.load_defaults()


def _with_service(fn, **settings):
    """``fn(service)`` (a coroutine function) on a started service, drained after."""
    from minddata.serve.model import NoModel

    async def main():
        service = Service(ServePipeline("infer224", make_ops("infer224")), NoModel(),
                          ServeSettings(name="t", workers=2, **settings))
        service.start()
        try:
            return await fn(service)
        finally:
            await service.drain()

    return asyncio.run(main())


def test_held_places_fill_the_queue_for_everyone_but_their_holders():
    async def check(service):
        batcher = service.batcher
        places = [batcher.hold() for _ in range(3)]  # three requests whose bodies are in
        assert batcher.refusal() is not None  # a fourth is refused: 3 held + 1 > max_queue 3
        assert "3 of 3 places" in batcher.refusal().message
        assert batcher.refusal(place=places[0]) is None  # a holder is not refused for its own place
        places[0].release()
        places[0].release()  # once only: a second release gives back nothing more
        assert batcher.refusal() is None and batcher.refusal(images=2) is not None
        for place in places[1:]:
            place.release()
        assert batcher.refusal(images=3) is None

    _with_service(check, max_queue=3)


def test_submit_gives_up_its_place_whether_it_is_queued_or_refused():
    async def check(service):
        batcher = service.batcher
        accepted, refused = batcher.hold(), batcher.hold()
        blocker = batcher.hold()
        answer = await batcher.submit([IMAGES[0]], timeout_s=60, place=accepted)
        assert answer["image"].shape[0] == 1 and not accepted.held
        with pytest.raises(Exception, match="at most 3 images"):  # 413 for a request over the queue
            await batcher.submit(IMAGES[:4], timeout_s=60, place=refused)
        assert not refused.held and blocker.held
        blocker.release()
        assert service.metrics.places_held._value.get() == 0

    _with_service(check, max_queue=3)
