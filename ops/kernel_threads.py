"""OpenCV's own thread pool while pipelines run: one thread, the pipeline's workers are the parallelism.

OpenCV splits a large ``cv2.resize`` (and other calls) across a pool of its own, one thread per core.
Under a pipeline whose workers already keep every core busy, that pool only adds work: its threads
spin (``sched_yield``) waiting for slices and compete with the workers for the cores. On the bench's
yolo416 pipeline (2 cores, 2 map workers, resize to 416x416) ``perf`` put 4.5% of the run's CPU samples
in those two pool threads; images/s did not move measurably there (878 vs 872, medians of eight
alternating runs), where the pool has only two threads. With N cores, N workers each call into a pool
of N threads: detectron2's and Albumentations' loaders set one thread in their workers for that reason.

While at least one pipeline holds it (:func:`hold`), ``cv2.setNumThreads(1)``; when the last one lets
go, the count it found comes back (unless something else changed it meanwhile). The environment
variable ``OPENCV_FOR_THREADS_NUM``, OpenCV's own way to choose the count, turns this off: that count is
the user's. Nothing here imports OpenCV: where it is not imported yet, the CPU kernels' package
applies the hold when it is (:func:`apply_if_held`).

    >>> from minddata.ops import kernel_threads
    >>> release = kernel_threads.hold()
    >>> release()
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["OpenCVThreads", "hold", "apply_if_held"]


def _opencv() -> Any:  # cv2 or None; OpenCV's stubs do not declare its thread calls
    if os.environ.get("OPENCV_FOR_THREADS_NUM"):
        return None  # the user chose OpenCV's count
    cv2 = sys.modules.get("cv2")
    return cv2 if hasattr(cv2, "setNumThreads") else None


class OpenCVThreads:
    """Counted holds on OpenCV's thread count (one shared instance: :func:`hold`)."""

    def __init__(self) -> None:
        # Reentrant: a dropped runtime's release runs from the garbage collector, which can run inside
        # hold() or release() in the same thread (a plain lock deadlocked there).
        self._lock = threading.RLock()
        self._holders = 0
        self._applied = False
        self._found: int | None = None  # OpenCV's count before the first hold changed it

    def _apply(self) -> None:
        cv2 = _opencv()
        if self._applied or cv2 is None:
            return
        found = cv2.getNumThreads()
        if found > 1:
            cv2.setNumThreads(1)
            self._found = found
        self._applied = True

    def apply_if_held(self) -> None:
        """Called once OpenCV is imported: apply a hold taken before it was."""
        with self._lock:
            if self._holders:
                self._apply()

    def hold(self) -> Callable[[], None]:
        """OpenCV at one thread until the returned function is called (idempotent; holds nest)."""
        with self._lock:
            self._holders += 1
            self._apply()
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                self._holders -= 1
                if self._holders:
                    return
                cv2 = _opencv()
                if self._found is not None and cv2 is not None and cv2.getNumThreads() == 1:
                    cv2.setNumThreads(self._found)
                self._applied, self._found = False, None

        return release


_SHARED = OpenCVThreads()
# A forked child has one thread: a lock another parent thread held at the fork would stay held for good.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: setattr(_SHARED, "_lock", threading.RLock()))
hold = _SHARED.hold
apply_if_held = _SHARED.apply_if_held
