"""A single-machine Ray cluster for benchmarks and tests: on 127.0.0.1 only, reporting nothing.

Examples:
    >>> from minddata.bench.ray_cluster import init_local_cluster
    >>> ray = init_local_cluster(2)  # doctest: +SKIP
    >>> ray.shutdown()  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from minddata.engine.ray_executor import require_ray

__all__ = ["SINGLE_MACHINE_ENV", "NO_USAGE_STATS_ENV", "init_local_cluster", "quiet_data_context"]

# Ray resolves 127.0.0.1 to the machine's reachable address and binds its servers to every interface
# unless it runs as a single-machine cluster; this setting (read when ray is imported, here and in every
# Ray process started from here) keeps every address and listening socket on loopback.
SINGLE_MACHINE_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
# A cluster that sends nothing elsewhere reports no usage statistics either: Ray's usage reporting
# and Ray Data's usage actor and metrics poller (about 3% of a 2-CPU machine in a benchmark epoch) are
# off, in the Ray processes and in this one (the poller runs in the driver).
NO_USAGE_STATS_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DATA_USAGE_DISABLED": "1"}


def init_local_cluster(num_cpus: int, env: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """Start a single-machine Ray cluster of ``num_cpus`` CPUs bound to 127.0.0.1 only (for tests and
    benchmarks on a machine that must send nothing elsewhere); returns ``ray``. ``env``: more
    environment for the Ray processes; ``kwargs`` go to ``ray.init``. Environment set here for the Ray
    processes is restored in this one afterwards, except the usage-statistics opt-out
    (:data:`NO_USAGE_STATS_ENV`, unless this process set its own)."""
    saved = dict(os.environ)
    os.environ.update(SINGLE_MACHINE_ENV)
    os.environ.update(NO_USAGE_STATS_ENV)
    os.environ.update(env or {})
    try:
        ray = require_ray()
        import ray._private.ray_constants as ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False  # in case ray was imported before the setting
        options = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False, **kwargs}
        ray.init(num_cpus=num_cpus, _node_ip_address="127.0.0.1", **options)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        for name, value in NO_USAGE_STATS_ENV.items():
            os.environ.setdefault(name, value)
    quiet_data_context(ray)
    return ray


def quiet_data_context(ray: Any) -> None:
    """No progress bars or execution banners from Ray Data in this process (a benchmark's output)."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
