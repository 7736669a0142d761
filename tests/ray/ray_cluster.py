"""The Ray tests' local cluster: one per test session, on 127.0.0.1 only.

Test modules here import the fixtures (``from ray_cluster import ray_cluster``): a conftest.py in this
folder would shadow the tests' root conftest module, which other tests import by name.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

import pytest

# The AWS settings of the Ray processes: no metadata service (169.254.169.254), no credential files.
RAY_WORKER_AWS_ENV = {
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def start_local_cluster() -> Any:
    """``ray.init(num_cpus=2)`` on 127.0.0.1 only, or skip the Ray tests when Ray is not installed."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as error:
        pytest.skip(f"Ray Data is not installed ({error}); pip install 'minddata[ray]' to run the Ray tests")
    from minddata.bench.ray_cluster import init_local_cluster

    if ray.is_initialized():
        return ray
    here = Path(__file__).parent
    # The Ray workers unpickle the tests' helper classes by module name: they need this folder and the
    # test kit's. They never look for cloud credentials or a metadata service either: object storage
    # tests give the local server's endpoint and dummy credentials in storage_options.
    python_path = os.pathsep.join(p for p in (str(here), str(here.parent), os.environ.get("PYTHONPATH")) if p)
    return init_local_cluster(2, env={"PYTHONPATH": python_path, **RAY_WORKER_AWS_ENV},
                              object_store_memory=256 * 1024 * 1024)


@pytest.fixture(scope="session", autouse=True)
def ray_cluster() -> Any:
    """The session's cluster (shared by every Ray test module; shut down at the end of the session)."""
    ray = start_local_cluster()
    yield ray
    if ray.is_initialized():
        ray.shutdown()


def is_loopback(ip: str) -> bool:
    return ipaddress.ip_address(ip.removeprefix("::ffff:")).is_loopback


def listening_addresses() -> list[tuple[int, str]]:
    """(pid, address) of every listening socket of this process and its children (the Ray processes)."""
    psutil = pytest.importorskip("psutil", reason="psutil (the dev extra) lists the Ray processes' sockets")
    me = psutil.Process(os.getpid())
    found = []
    for proc in [me, *me.children(recursive=True)]:
        try:
            for conn in proc.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN:
                    found.append((proc.pid, conn.laddr.ip))
        except psutil.Error:
            continue  # a worker that just exited
    return found
