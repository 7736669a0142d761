"""Latency hiding: ImageFolderDataset over s3:// through the fault proxy adding 50 ms to every
request, with 1, 2, 8 and 16 requests in flight (one reader worker).

``python tests/storage/measure_latency.py`` from the repository root; bench/RESULTS.md ("Object
storage client") has the figures.
"""

from __future__ import annotations

import os
import sys
import time

sys.path[:0] = [os.path.dirname(__file__), os.path.join(os.path.dirname(__file__), ".."), "."]
os.environ.update(AWS_EC2_METADATA_DISABLED="true", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")

IMAGES = 64


def main() -> None:
    from testkit import make_jpeg

    import minddata as md
    from minddata.bench.s3server import FaultProxy, MotoServer

    with MotoServer(max_lifetime_s=1800) as server:
        client = server.client()
        client.create_bucket(Bucket="data")
        for k in range(IMAGES):
            client.put_object(Bucket="data", Key=f"img/c{k % 4}/{k:03d}.jpg", Body=make_jpeg(64, 48, seed=k))
        proxy = FaultProxy(server.port, {"delay": 1.0}, delay_s=0.05).start()
        try:
            for n in (1, 2, 8, 16):
                ds = md.ImageFolderDataset("s3://data/img/", shuffle=False, num_parallel_workers=1,
                                           storage_options={"endpoint_url": proxy.url, "requests_in_flight": n})
                times = []
                for _ in range(3):
                    began = time.perf_counter()
                    assert sum(1 for _ in ds.create_dict_iterator(num_epochs=1)) == IMAGES
                    times.append(time.perf_counter() - began)
                print(f"requests_in_flight={n:2d}: {min(times):.2f} s for {IMAGES} images (best of 3), "
                      f"{IMAGES / min(times):.0f} images/s")
        finally:
            proxy.stop()


if __name__ == "__main__":
    main()
