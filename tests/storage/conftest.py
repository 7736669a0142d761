"""The object storage fixtures of tests/s3kit.py for every test in this folder."""

from s3kit import (  # noqa: F401 - fixtures, found by pytest under these names
    _s3_env,
    faults,
    proxy,
    s3_client,
    s3_files,
    s3_images,
    s3_mindrecord,
    s3_records,
    s3_server,
    s3_shards,
)
