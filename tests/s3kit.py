"""Object storage fixtures for any test folder (tests/storage's conftest and the Ray tests import them):
a real S3 API server (moto's) in a subprocess on 127.0.0.1, a fault
proxy in front of it, and buckets holding real JPEGs, tar shards and record files.

Nothing here talks to any other address: every client gets the endpoint explicitly, the credentials
are dummies, and ``AWS_EC2_METADATA_DISABLED=true`` keeps botocore's chain off 169.254.169.254. The
environment's default endpoints point at a closed port of 127.0.0.1 (:data:`NOWHERE`), so a read that
ignored its endpoint option fails here instead of reaching a public cloud.
"""

from __future__ import annotations

import os

import pytest

from minddata.bench.s3server import FaultProxy, MotoServer

pytest.importorskip("botocore", reason="the object storage tests need the storage extra (botocore)")
pytest.importorskip("moto", reason="the object storage tests need moto[server]")

SECRET = "S3CR3T-never-shown-0123456789"
KEY_ID = "AKIDTESTING0000"
BUCKET = "data"
# Port 9 (discard) on loopback: nothing listens there, so a connection is refused at once.
NOWHERE = "http://127.0.0.1:9"


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """The port of a moto S3 server in a subprocess on 127.0.0.1 (stopped at the end)."""
    log = tmp_path_factory.mktemp("moto") / "server.log"
    with MotoServer(max_lifetime_s=3600, log_path=str(log)) as server:
        yield server.port


@pytest.fixture(autouse=True)
def _s3_env(monkeypatch, tmp_path):
    """Per test: no metadata service, dummy credentials, no credential files of the user's, and default
    endpoints that lead nowhere (a test that means to use them sets its own), and a cache folder of its
    own (shard indexes kept by an earlier test, or by the user's runs, would spare this test's reads)."""
    monkeypatch.setenv("MINDDATA_CACHE", str(tmp_path / "minddata-cache"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    for name in ("AWS_ENDPOINT_URL", "GCS_ENDPOINT_URL"):
        monkeypatch.setenv(name, NOWHERE)
    # (AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true would set the endpoints above aside: AWS's public one)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def s3_client(s3_server):
    import botocore.session

    session = botocore.session.get_session()
    client = session.create_client("s3", endpoint_url=f"http://127.0.0.1:{s3_server}", region_name="us-east-1",
                                   aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)
    client.create_bucket(Bucket=BUCKET)
    yield client
    client.close()


@pytest.fixture(scope="session")
def proxy(s3_server):
    """The fault proxy in front of the server, with no faults until a test sets them (and resets)."""
    p = FaultProxy(s3_server).start()
    yield p
    p.stop()


@pytest.fixture
def faults(proxy):
    proxy.set_rates({})
    proxy.deny = ()
    yield proxy
    proxy.set_rates({})
    proxy.deny = ()


def options(port_or_url, **extra):
    """storage_options for the server (port) or the proxy (url), fast retries for tests."""
    endpoint = port_or_url if isinstance(port_or_url, str) else f"http://127.0.0.1:{port_or_url}"
    return {"endpoint_url": endpoint, "retry_base_s": 0.005, "retry_max_delay_s": 0.05, "max_attempts": 12,
            "retry_time_s": 20, **extra}


def upload_tree(client, root, prefix: str) -> None:
    """Every file under ``root`` to ``s3://data/<prefix>/<relative path>``."""
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            key = f"{prefix}/{os.path.relpath(path, root)}"
            with open(path, "rb") as f:
                client.put_object(Bucket=BUCKET, Key=key, Body=f.read())


@pytest.fixture(scope="session")
def s3_images(s3_client, tmp_path_factory):
    """``s3://data/images/{cat,dog,emu}/NN.jpg`` (real JPEGs, 3 classes x 5) and the same local folder."""
    from testkit import make_jpeg

    root = tmp_path_factory.mktemp("images")
    for c, name in enumerate(["cat", "dog", "emu"]):
        (root / name).mkdir()
        for i in range(5):
            (root / name / f"{i:02d}.jpg").write_bytes(make_jpeg(24 + 4 * i, 16 + 2 * c, seed=10 * c + i))
    (root / "README.txt").write_text("not an image folder entry")
    upload_tree(s3_client, root, "images")
    return root


@pytest.fixture(scope="session")
def s3_shards(s3_client, tmp_path_factory):
    """``s3://data/shards/train-00000{0..2}.tar``: WebDataset shards of 6 samples (jpg, cls, txt), and
    the same files locally."""
    import io
    import tarfile

    from testkit import make_jpeg

    root = tmp_path_factory.mktemp("shards")
    for s in range(3):
        with tarfile.open(root / f"train-{s:06d}.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(6):
                key = f"s{s}/{i:03d}"
                for ext, data in (("jpg", make_jpeg(20 + i, 18, seed=100 * s + i)), ("cls", str(i % 3).encode()),
                                  ("txt", f"sample {s}-{i}".encode())):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    upload_tree(s3_client, root, "shards")
    return root


@pytest.fixture(scope="session")
def s3_files(s3_client, tmp_path_factory):
    """``s3://data/files/``: 3 TFRecord files (an image and a label per record), 2 CSV, 2 text and 2
    Parquet files, and the same files locally."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from testkit import make_jpeg

    from minddata.bench.corpus import tf_example, tf_feature, tfrecord_bytes

    root = tmp_path_factory.mktemp("files")
    for f in range(3):
        records = [tf_example({"image": tf_feature("bytes", [make_jpeg(16 + i, 12, seed=50 * f + i)]),
                               "label": tf_feature("int64", [10 * f + i])}) for i in range(7)]
        (root / f"part-{f}.tfrecord").write_bytes(tfrecord_bytes(records))
    for f in range(2):
        lines = ["name,age", *(f"p{f}-{i},{20 + i}" for i in range(9))]
        (root / f"people-{f}.csv").write_text("\n".join(lines) + "\n")
        (root / f"lines-{f}.txt").write_text("".join(f"line {f}.{i}\n" for i in range(11)))
        table = pa.table({"x": list(range(100 * f, 100 * f + 40)), "s": [f"r{100 * f + i}" for i in range(40)]})
        pq.write_table(table, root / f"table-{f}.parquet", row_group_size=8)
    upload_tree(s3_client, root, "files")
    return root


@pytest.fixture(scope="session")
def s3_mindrecord(s3_client, tmp_path_factory):
    """``s3://data/mr/train.mindrecord{0,1}`` with their ``.db`` indexes (MindSpore's format: a JPEG
    blob, a label, an int array per row), and the same set locally."""
    from testkit import make_jpeg

    from minddata.mindrecord import FileWriter

    root = tmp_path_factory.mktemp("mr")
    writer = FileWriter(str(root / "train.mindrecord"), shard_num=2)
    writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"},
                       "box": {"type": "int64", "shape": [-1]}}, "test")
    writer.write_raw_data([{"image": make_jpeg(16 + i % 5, 14, seed=i), "label": i,
                            "box": list(range(i % 4 + 1))} for i in range(20)])
    writer.commit()
    upload_tree(s3_client, root, "mr")
    return root


@pytest.fixture(scope="session")
def s3_records(s3_client, tmp_path_factory):
    """``s3://data/rec/train.rec{0,1}`` with their ``.meta.json`` (minddata's Arrow record files, written
    by ``Dataset.save``: a JPEG, a label, a fixed-shape and a ragged tensor, a string per row; 2,100
    rows, so each shard holds two record batches), and the same set locally."""
    import numpy as np
    from testkit import make_jpeg

    import minddata as md

    root = tmp_path_factory.mktemp("rec")
    jpegs = [np.frombuffer(make_jpeg(16 + i, 12, seed=i), np.uint8) for i in range(7)]

    def rows():
        for i in range(2100):
            yield (jpegs[i % 7], np.int32(i), np.full((2, 3), i / 4, np.float32), np.arange(i % 5 + 1, dtype=np.int64),
                   np.array(f"row {i}"))

    source = md.GeneratorDataset(rows, ["image", "label", "grid", "box", "name"], shuffle=False)
    source.save(str(root / "train.rec"), num_files=2, file_type="arrow")
    upload_tree(s3_client, root, "rec")
    return root
