"""Process workers for ``map(..., python_multiprocessing=True)``.

A map stage that runs Python code which holds the GIL gets N dispatcher threads in the parent;
dispatcher thread *i* owns :class:`ProcessWorker` *i* and calls it synchronously, one chunk at a time.
The worker runs the user's callable in a process started with the configured method
(``config.set_multiprocessing_start_method``: fork on Linux, else spawn; forkserver on request).
Arguments and results are pickled with protocol 5: large buffers (NumPy arrays of at least ``OOB_THRESHOLD`` bytes) travel out-of-band
through two shared-memory arenas per worker (parent→child and child→parent), and only the small pickle
payload plus ``(offset, length)`` pairs cross the pipe.

Ownership: the parent creates and owns both arenas (so it can unlink them even when the child is
killed); the child only attaches. Segments are plain files under ``/dev/shm`` (Linux) or the temp
directory elsewhere, named ``minddata_<parentpid>_<token>_<req|resp><generation>.flock``. We do not use
``multiprocessing.shared_memory``: on Python 3.11 every attach registers the segment with the resource
tracker, which then unlinks it under the owner's feet or warns about "leaked shared_memory objects".

Start methods: a forked worker inherits ``fn`` as it is (nothing is pickled, ``__main__`` is not run
again); the engine forks a map's workers while compiling the plan, before the pipeline starts its
threads. The child then runs only :func:`worker.child_main`: it never touches the engine's threads, queues,
locks or device state it inherited. When torch has initialized CUDA here, forking would hand the
children a CUDA context they cannot use (JAX's started runtime likewise), so such workers are spawned
instead. A spawned (or forkserver) worker first re-imports the main script; a child that dies before
its first message ("ready") is reported as failing there, with the fix, since that is by far the
likeliest cause.

Lifetime: :meth:`ProcessWorker.close` is idempotent and also runs from a ``weakref.finalize`` (on
garbage collection and at interpreter exit). SIGTERM, whose default kills the process without either,
first removes the segments when the process has no SIGTERM handler of its own
(:func:`.shm.install_sigterm_cleanup`, set when a worker is made or started on the main thread), then
kills it as the default would. Segments left behind by a parent killed otherwise (SIGKILL, the OOM
killer) are removed by :func:`sweep_stale_segments`, which runs once per process when the first worker
starts.
The owner holds an ``flock`` on each segment for as long as it lives (the kernel drops it when the
owner dies, however it dies), and the sweep removes only segments nobody holds: the PID in the name
says nothing about another PID namespace sharing ``/dev/shm``, where that PID may be alive and
unrelated, or dead while its pipeline runs under another number.

Modules, one concern each:

- :mod:`.shm`: the shared-memory arenas and the sweep of segments left by killed parents;
- :mod:`.messages`: the messages on the pipe and the pickling of arguments and results;
- :mod:`.worker`: the child's entry point and call loop;
- :mod:`.parent`: :class:`ProcessWorker`, the parent's side, and the start method.
"""

from __future__ import annotations

from minddata.engine.procpool.messages import WorkerStopped
from minddata.engine.procpool.parent import ProcessWorker, effective_start_method
from minddata.engine.procpool.shm import sweep_stale_segments

__all__ = ["ProcessWorker", "WorkerStopped", "sweep_stale_segments", "effective_start_method"]
