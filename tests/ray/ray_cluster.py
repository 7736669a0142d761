"""Starting and stopping the tests' local Ray cluster (imported by tests/ray/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

# Ray resolves 127.0.0.1 to the machine's reachable address and binds its servers to every interface
# unless it runs as a single-machine cluster: this setting (read when ray is imported, in this process
# and in every Ray process it starts) keeps every address and socket on loopback.
SINGLE_MACHINE = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def start_local_cluster() -> Any:
    """``ray.init(num_cpus=2)`` on 127.0.0.1, or skip the Ray tests when Ray is not installed."""
    saved = dict(os.environ)
    os.environ.update(SINGLE_MACHINE)
    # The Ray workers unpickle the tests' helper classes by module name: they need this folder.
    here = str(Path(__file__).parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, saved.get("PYTHONPATH")) if p)
    try:
        try:
            import ray
            import ray._private.ray_constants as ray_constants
            import ray.data
        except ImportError as error:
            pytest.skip(f"Ray Data is not installed ({error}); pip install 'minddata[ray]' to run the Ray tests")
        # In case ray was imported before this ran.
        ray_constants.ENABLE_RAY_CLUSTER = False
        if not ray.is_initialized():
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                log_to_driver=False,
                configure_logging=False,
                object_store_memory=256 * 1024 * 1024,
            )
    finally:
        # The Ray processes have their environment now; other tests' subprocesses get the usual one.
        os.environ.clear()
        os.environ.update(saved)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return ray


def stop_local_cluster(ray: Any) -> None:
    ray.shutdown()
