"""Object storage clients compared on the same objects of a local S3 API server (moto) on 127.0.0.1.

``python tests/storage/measure_clients.py``: whole reads of a 32 MiB object, 400 ranged 16 KiB reads
(wall time, and the CPU time of the calling thread: the server runs in other threads of this
process), what a new process that imported minddata spends to import a client, make it and read one range, and each
client's error (its own retries off) on a ranged read answered ``503 SlowDown`` by the fault proxy.
bench/RESULTS.md ("Object storage client") has the figures.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # tests/, for the test kit
os.environ.update(AWS_EC2_METADATA_DISABLED="true", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                  AWS_DEFAULT_REGION="us-east-1")

from moto.server import ThreadedMotoServer  # noqa: E402
from testkit import free_port  # noqa: E402

from minddata.bench.s3server import FaultProxy  # noqa: E402

SIZE = 32 << 20
RANGES = 400
PIECE = 16 << 10


def boto_client(endpoint):
    import botocore.session
    from botocore.config import Config
    return botocore.session.get_session().create_client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1}, max_pool_connections=16))


# A new process's way to its first ranged read, per client: imports, the client, one GET.
_FIRST_READ = {
    "minddata": "from minddata.dataset import _s3\n"
                "c = _s3.Client(E, 'us-east-1', lambda: _s3.Credentials('testing', 'testing'))\n"
                "c.get('bench', 'big', 0, 100).read()",
    "botocore": "import botocore.session\n"
                "c = botocore.session.get_session().create_client('s3', endpoint_url=E, region_name='us-east-1')\n"
                "c.get_object(Bucket='bench', Key='big', Range='bytes=0-99')['Body'].read()",
    "obstore": "import obstore\nfrom obstore.store import S3Store\n"
               "s = S3Store('bench', endpoint=E, region='us-east-1', access_key_id='testing', secret_access_key='testing', "
               "client_options={'allow_http': True})\n"
               "bytes(obstore.get_range(s, 'big', start=0, length=100))",
    "pyarrow.fs": "from pyarrow import fs\n"
                  "f = fs.S3FileSystem(endpoint_override=E, scheme='http', access_key='testing', secret_key='testing', "
                  "region='us-east-1')\n"
                  "f.open_input_file('bench/big').read_at(100, 0)",
}


def _first_read_cpu(name: str, endpoint: str) -> float:
    """CPU seconds (user + system, threads included) of a new process from before the client's imports
    to its first ranged read, minddata already imported (as in a pipeline's process): the median of 3."""
    script = ("import minddata.dataset\nimport time\nt = time.process_time()\n" + f"E = {endpoint!r}\n" + _FIRST_READ[name]
              + "\nprint(time.process_time() - t)")
    spent = sorted(float(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                        timeout=120).stdout) for _ in range(3))
    return spent[1]


def main() -> None:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    proxy = FaultProxy(port, {"503": 1.0}).start()
    try:
        s3 = boto_client(endpoint)
        s3.create_bucket(Bucket="bench")
        blob = os.urandom(SIZE)
        s3.put_object(Bucket="bench", Key="big", Body=blob)
        rng = random.Random(0)
        offsets = [rng.randrange(0, SIZE - PIECE) for _ in range(RANGES)]

        import obstore
        from obstore.store import S3Store
        from pyarrow import fs as pafs

        ob = S3Store("bench", endpoint=endpoint, region="us-east-1", access_key_id="testing", secret_access_key="testing",
                     client_options={"allow_http": True}, retry_config={"max_retries": 0, "retry_timeout": timedelta(seconds=1),
                                                                        "backoff": {"init_backoff": timedelta(milliseconds=10)}})
        pa = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key="testing", secret_key="testing",
                               region="us-east-1", retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1))

        from minddata.dataset import _s3

        own = _s3.Client(endpoint, "us-east-1", lambda: _s3.Credentials("testing", "testing"), max_connections=16)
        clients = {
            "minddata": (lambda: own.get("bench", "big").read(), lambda o: own.get("bench", "big", o, o + PIECE).read()),
            "botocore": (lambda: s3.get_object(Bucket="bench", Key="big")["Body"].read(),
                         lambda o: s3.get_object(Bucket="bench", Key="big", Range=f"bytes={o}-{o + PIECE - 1}")["Body"].read()),
            "obstore": (lambda: bytes(obstore.get(ob, "big").bytes()),
                        lambda o: bytes(obstore.get_range(ob, "big", start=o, length=PIECE))),
            "pyarrow.fs": (lambda: pa.open_input_file("bench/big").read(),
                           lambda o: pa.open_input_file("bench/big").read_at(PIECE, o)),
        }
        for name, (whole, ranged) in clients.items():
            assert whole() == blob
            t = time.perf_counter()
            for _ in range(3):
                whole()
            mbps = 3 * SIZE / (time.perf_counter() - t) / 2**20
            t, cpu = time.perf_counter(), time.thread_time()
            for o in offsets:
                assert ranged(o) == blob[o:o + PIECE]
            per = (time.perf_counter() - t) / RANGES * 1e3
            cpu_per = (time.thread_time() - cpu) / RANGES * 1e3
            print(f"{name:11s} whole {mbps:7.1f} MiB/s   ranged 16 KiB {per:6.2f} ms/read, client CPU {cpu_per:5.2f} ms/read   "
                  f"new process: {_first_read_cpu(name, endpoint) * 1e3:5.0f} ms CPU to its first ranged read")

        # 503 SlowDown (S3's XML body) on a ranged read, the client's own retries off
        s3p = boto_client(proxy.url)
        obp = S3Store("bench", endpoint=proxy.url, region="us-east-1", access_key_id="testing", secret_access_key="testing",
                      client_options={"allow_http": True}, retry_config={"max_retries": 0, "retry_timeout": timedelta(seconds=1),
                                                                         "backoff": {"init_backoff": timedelta(milliseconds=10)}})
        pap = pafs.S3FileSystem(endpoint_override=proxy.url, scheme="http", access_key="testing", secret_key="testing",
                                region="us-east-1", retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1))
        ownp = _s3.Client(proxy.url, "us-east-1", lambda: _s3.Credentials("testing", "testing"))
        for name, call in {
            "minddata": lambda: ownp.get("bench", "big", 0, 100).read(),
            "botocore": lambda: s3p.get_object(Bucket="bench", Key="big", Range="bytes=0-99")["Body"].read(),
            "obstore": lambda: obstore.get_range(obp, "big", start=0, length=100),
            "pyarrow.fs": lambda: pap.open_input_file("bench/big").read_at(100, 0),
        }.items():
            try:
                call()
                print(f"{name:11s} 503: no error?")
            except Exception as error:  # noqa: BLE001 - what each client raises is the measurement
                print(f"{name:11s} 503 -> {type(error).__module__}.{type(error).__name__}: {str(error)[:200]!r}")
    finally:
        proxy.stop()
        server.stop()


if __name__ == "__main__":
    main()
