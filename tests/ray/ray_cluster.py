"""Starting and stopping the tests' local Ray cluster (imported by tests/ray/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


def start_local_cluster() -> Any:
    """``ray.init(num_cpus=2)`` on 127.0.0.1 only, or skip the Ray tests when Ray is not installed."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as error:
        pytest.skip(f"Ray Data is not installed ({error}); pip install 'minddata[ray]' to run the Ray tests")
    from minddata.engine.ray_executor import init_local_cluster

    if ray.is_initialized():
        return ray
    # The Ray workers unpickle the tests' helper classes by module name: they need this folder.
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).parent), saved) if p)
    try:
        return init_local_cluster(2, object_store_memory=256 * 1024 * 1024)
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved


def stop_local_cluster(ray: Any) -> None:
    ray.shutdown()
