"""``minddata bench --plot``: throughput per pipeline and device (and peers), and queue occupancy over time.

Needs matplotlib (``pip install 'minddata[plot]'``); drawn off-screen (Agg), so it works without a display.

Example:
    >>> from minddata.bench.plot import plot
    >>> plot(results, "bench.png")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

__all__ = ["plot"]


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError("minddata bench --plot needs matplotlib: pip install 'minddata[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot(results: Sequence[Any], path: str | os.PathLike, peer_runs: Sequence[Any] = ()) -> None:
    """Write a PNG to ``path``: bars of images/s for each pipeline (minddata on its device, and each
    peer run), and below, each pipeline's queue occupancy (fraction of capacity) over the run."""
    plt = _pyplot()
    fig, (bars, queues) = plt.subplots(2, 1, figsize=(11, 8.5), gridspec_kw={"height_ratios": [1, 1.2]})

    pipelines = list(dict.fromkeys([r.pipeline for r in results] + [r.pipeline for r in peer_runs]))
    impls = list(dict.fromkeys([f"minddata ({r.device})" for r in results] + [r.impl for r in peer_runs]))
    rate: dict[tuple[str, str], float] = {(r.pipeline, f"minddata ({r.device})"): r.images_per_s for r in results}
    for r in peer_runs:
        rate[(r.pipeline, r.impl)] = r.images_per_s
    width = 0.8 / max(len(impls), 1)
    for j, impl in enumerate(impls):
        xs = [i + (j - (len(impls) - 1) / 2) * width for i in range(len(pipelines))]
        heights = [rate.get((p, impl), 0.0) for p in pipelines]
        drawn = bars.bar(xs, heights, width, label=impl)
        bars.bar_label(drawn, labels=[f"{h:,.0f}" if h else "" for h in heights], fontsize=8)
    bars.set_xticks(range(len(pipelines)), pipelines)
    bars.set_ylabel("images/s")
    bars.set_title("throughput per pipeline and device")
    bars.legend(fontsize=8)

    drew = False
    for r in results:
        trace = r.queues or {}
        t = trace.get("t", [])
        for name, series in trace.get("series", {}).items():
            if t and series:
                queues.plot(t[: len(series)], series, label=f"{r.pipeline}: {name}", linewidth=1)
                drew = True
    queues.set_xlabel("seconds from the start of the run")
    queues.set_ylabel("occupancy (fraction of capacity)")
    queues.set_ylim(-0.05, 1.05)
    queues.set_title("queue occupancy over time (a stage's ready results; the iterator's prefetch queue)")
    if drew:
        queues.legend(fontsize=7, loc="upper right")
    else:
        queues.text(0.5, 0.5, "no queue samples (runs were not profiled)", ha="center", transform=queues.transAxes)
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=100)
    plt.close(fig)
