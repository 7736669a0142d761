"""``minddata bench --plot``: throughput per pipeline and device (and peers), and queue occupancy over time.

Needs matplotlib (``pip install 'minddata[plot]'``); drawn off-screen (Agg), so it works without a display.

Examples:
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


def smooth(t: Sequence[float], values: Sequence[float], window_s: float = 0.1) -> list[float]:
    """Rolling mean of ``values`` over the trailing ``window_s`` seconds of sample times ``t``.

    Examples:
        >>> smooth([0.0, 0.05, 0.1, 0.2], [0.0, 1.0, 1.0, 0.0], window_s=0.1)
        [0.0, 0.5, 0.6666666666666666, 0.5]
    """
    out: list[float] = []
    start = 0
    total = 0.0
    for i, (ti, v) in enumerate(zip(t, values)):
        total += v
        while t[start] < ti - window_s - 1e-12:
            total -= values[start]
            start += 1
        out.append(total / (i - start + 1))
    return out


def plot(results: Sequence[Any], path: str | os.PathLike, peer_runs: Sequence[Any] = (),
         smooth_s: float = 0.1) -> None:
    """Write a PNG to ``path``: bars of images/s for each pipeline (minddata on its device, and each
    peer run), and below, one small panel per pipeline with its queues' occupancy (fraction of
    capacity) over the run, smoothed by a rolling mean over ``smooth_s`` seconds, legend beside it."""
    plt = _pyplot()
    traced = [r for r in results if (r.queues or {}).get("t")]
    panels = max(1, len(traced))
    fig = plt.figure(figsize=(11, 4.2 + 2.1 * panels))
    grid = fig.add_gridspec(1 + panels, 1, height_ratios=[2.2] + [1] * panels)
    bars = fig.add_subplot(grid[0])

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
    bars.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)

    if not traced:
        ax = fig.add_subplot(grid[1])
        ax.text(0.5, 0.5, "no queue samples (runs were not profiled)", ha="center", transform=ax.transAxes)
        ax.set_axis_off()
    for k, r in enumerate(traced):
        ax = fig.add_subplot(grid[1 + k])
        t = r.queues["t"]
        for name, series in r.queues.get("series", {}).items():
            if series:
                n = min(len(t), len(series))
                ax.plot(t[:n], smooth(t[:n], series[:n], smooth_s), label=name, linewidth=1.2)
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("occupancy")
        ax.set_title(f"{r.pipeline}: queue occupancy (fraction of capacity, {smooth_s * 1e3:.0f} ms rolling mean)",
                     fontsize=9, loc="left")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        if k == len(traced) - 1:
            ax.set_xlabel("seconds from the start of the run")
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=100, bbox_inches="tight")
    plt.close(fig)
