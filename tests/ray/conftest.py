"""One real local Ray cluster for every test in this folder, bound to the loopback address only."""

from __future__ import annotations

import ipaddress
import os

import pytest
from ray_cluster import start_local_cluster, stop_local_cluster


@pytest.fixture(scope="session", autouse=True)
def ray_cluster():
    ray = start_local_cluster()
    yield ray
    stop_local_cluster(ray)


def _loopback(ip: str) -> bool:
    ip = ip.removeprefix("::ffff:")
    return ipaddress.ip_address(ip).is_loopback


@pytest.fixture
def ray_listening_addresses(ray_cluster) -> list[tuple[int, str]]:
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


@pytest.fixture
def is_loopback():
    return _loopback
