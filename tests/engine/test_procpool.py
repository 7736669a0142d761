"""Tests of minddata.engine.procpool: process workers with shared-memory transport.

Spawning a process costs a few hundred milliseconds, so tests whose behaviour leaves the worker usable
share one module-scoped worker; only the ones that kill, grow or close a worker start their own.
"""

from __future__ import annotations

import gc
import glob
import mmap
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import psutil
import pytest

from minddata.engine.procpool import ProcessWorker, WorkerStopped, messages, shm, sweep_stale_segments
from minddata.errors import PipelineError, WorkerDiedError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="segments live in /dev/shm")

SHM = shm.shm_dir()
# Scripts run with -c from the checkout's root, so they import this checkout, not an installed copy.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _my_segments() -> set[str]:
    return set(glob.glob(os.path.join(SHM, f"minddata_{os.getpid()}_*")))


def _root(a: np.ndarray) -> object:
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def _event() -> threading.Event:
    return threading.Event()


@pytest.fixture(scope="module")
def shared():
    """One worker whose fn dispatches on ``(op, data)``; fn is a lambda over a closure.

    The exception classes are local too: cloudpickle sends them by value, and they must come back as
    the very same classes.
    """
    offset = 10  # captured by the closure: proves closures travel by value

    class LocalError(Exception):
        pass

    class Unrebuildable(Exception):
        # pickle rebuilds exceptions as cls(*args); this one needs two arguments but stores one.
        def __init__(self, a, b):
            super().__init__(f"{a}/{b}")

    def dispatch(msg):
        op, data = msg
        if op == "echo":
            return data
        if op == "add":
            return data + offset
        if op == "raise":
            raise ValueError(f"bad row {data}")
        if op == "raise_local":
            raise LocalError(data)
        if op == "raise_unrebuildable":
            raise Unrebuildable("x", "y")
        if op == "generator":
            return (i for i in range(3))
        if op == "sleep":
            time.sleep(data)
            return data
        raise KeyError(op)

    # spawn: the strict case, where fn and the exception classes travel by value.
    worker = ProcessWorker(lambda m: dispatch(m), name="Map[dispatch] worker 0", start_method="spawn")
    yield worker, LocalError
    worker.close()


def test_round_trip_dict_of_large_and_small_arrays(shared):
    worker, _ = shared
    rng = np.random.default_rng(0)
    big = rng.random((256, 256, 3), dtype=np.float32)  # 768 KiB: out-of-band
    ro = np.arange(100_000, dtype=np.int32)
    ro.flags.writeable = False
    data = {
        "img": big,
        "fortran": np.asfortranarray(rng.random((300, 200))),
        "strided": rng.random((400, 400))[::2, ::3],  # non-contiguous, still out-of-band
        "readonly": ro,
        "small": np.arange(10, dtype=np.uint8),  # in-band
        "label": np.int64(3),
        "raw": b"\x00\x01" * 10,
        "none": None,
        "nested": [(1, "a"), {"z": np.zeros((2, 2))}],
    }
    out = worker.call(("echo", data), _event())
    assert out.keys() == data.keys()
    for key in ("img", "fortran", "strided", "readonly", "small"):
        np.testing.assert_array_equal(out[key], data[key])
        assert out[key].dtype == data[key].dtype
        assert out[key].flags.writeable, key
        root = _root(out[key])
        assert not isinstance(root, mmap.mmap), key
        if key != "small":  # small ones come in-band, backed by a bytearray pickle made
            assert isinstance(root, np.ndarray) and root.flags.owndata, key
    assert out["fortran"].flags.f_contiguous
    assert out["label"] == 3 and out["raw"] == data["raw"] and out["none"] is None
    assert out["nested"][0] == (1, "a")
    np.testing.assert_array_equal(out["nested"][1]["z"], np.zeros((2, 2)))

    # The arena is reused by the next call; a result must not change under the caller's feet.
    kept = out["img"].copy()
    worker.call(("echo", {"img": np.zeros_like(big)}), _event())
    np.testing.assert_array_equal(out["img"], kept)


def test_lambda_over_closure_runs(shared):
    worker, _ = shared
    np.testing.assert_array_equal(worker.call(("add", np.arange(3)), _event()), [10, 11, 12])
    assert isinstance(worker.pid, int) and worker.pid != os.getpid()


def test_exception_keeps_type_and_remote_traceback(shared):
    worker, local_error = shared
    with pytest.raises(ValueError, match="bad row 7") as info:
        worker.call(("raise", 7), _event())
    cause = info.value.__cause__
    assert isinstance(cause, messages.RemoteTraceback)
    assert "in dispatch" in str(cause) and "bad row 7" in str(cause)
    if sys.version_info >= (3, 11):
        assert any("Map[dispatch] worker 0" in n for n in info.value.__notes__)

    with pytest.raises(local_error, match="local boom") as info:
        worker.call(("raise_local", "local boom"), _event())
    assert type(info.value) is local_error

    # Cannot be rebuilt by pickle in the parent: PipelineError naming the original type.
    with pytest.raises(PipelineError, match="Unrebuildable: x/y") as info:
        worker.call(("raise_unrebuildable", None), _event())
    assert "Unrebuildable" in str(info.value.__cause__)

    # A result that cannot be pickled is fn's failure too, reported with its own type.
    with pytest.raises(TypeError, match="generator"):
        worker.call(("generator", None), _event())

    # The worker survives errors.
    assert worker.call(("echo", 5), _event()) == 5


def test_stop_event_already_set_returns_at_once(shared):
    worker, _ = shared
    stop = threading.Event()
    stop.set()
    t0 = time.monotonic()
    with pytest.raises(WorkerStopped):
        worker.call(("sleep", 5.0), stop)
    assert time.monotonic() - t0 < 4.0  # the call itself takes 5 s; any machine load fits in the rest


def test_stop_returns_before_the_call_would_finish(shared):
    worker, _ = shared
    stop = threading.Event()
    set_at: list[float] = []

    def trigger():
        time.sleep(0.2)
        set_at.append(time.monotonic())
        stop.set()

    t = threading.Thread(target=trigger)
    t.start()
    with pytest.raises(WorkerStopped):
        worker.call(("sleep", 3.0), stop)
    latency = time.monotonic() - set_at[0]
    t.join()
    # Not a speed bar: the call had 2.8 s left when stopped, so returning well before proves the stop.
    assert latency < 2.0
    assert worker.call(("echo", 1), _event()) == 1  # drains the sleeping call, then works


def test_arena_grows_both_directions():
    before = _my_segments()
    worker = ProcessWorker(lambda x: np.concatenate([x, x, x]), name="Map[triple] worker 2", shm_size=1 << 20)
    try:
        x = np.arange(3 << 20, dtype=np.uint8)  # 3 MiB in, 9 MiB out: both arenas must grow
        out = worker.call(x, _event())
        np.testing.assert_array_equal(out, np.concatenate([x, x, x]))
        assert out.flags.writeable
        # Superseded segments are unlinked at once: still exactly one per direction.
        assert len(_my_segments() - before) == 2
        y = np.full(4 << 20, 3, dtype=np.uint8)  # grows again
        out = worker.call(y, _event())
        assert out.shape == (12 << 20,) and int(out[-1]) == 3
        assert len(_my_segments() - before) == 2
    finally:
        worker.close()
    assert _my_segments() == before


def test_killed_worker_raises_worker_died():
    before = _my_segments()
    worker = ProcessWorker(lambda s: time.sleep(s), name="Map[slow] worker 3")
    try:
        worker.start()
        pid = worker.pid
        killer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
        killer.start()
        with pytest.raises(WorkerDiedError, match=r"Map\[slow\] worker 3.*SIGKILL") as info:
            worker.call(5.0, _event())
        killer.join()
        assert "out of memory" in str(info.value)
        assert info.value.exitcode == -signal.SIGKILL
        with pytest.raises(WorkerDiedError):  # stays dead
            worker.call(0, _event())
    finally:
        worker.close()
    assert _my_segments() == before


def test_close_unlinks_segments_reaps_process_and_is_idempotent():
    before = _my_segments()
    worker = ProcessWorker(lambda x: x, name="Map[id] worker 4")
    assert worker.call(np.ones(1 << 18), _event()).sum() == 1 << 18
    pid = worker.pid
    assert len(_my_segments() - before) == 2
    assert pid in {p.pid for p in multiprocessing.active_children()}

    worker.close()
    worker.close()  # idempotent
    assert worker.pid == pid
    assert _my_segments() == before
    assert pid not in {p.pid for p in multiprocessing.active_children()}
    assert not psutil.pid_exists(pid)
    with pytest.raises(WorkerStopped):
        worker.call(1, _event())


def test_forgotten_worker_is_closed_by_its_finalizer():
    before = _my_segments()
    worker = ProcessWorker(lambda x: x, name="Map[id] worker 6")
    assert worker.call(7, _event()) == 7
    pid = worker.pid
    del worker
    gc.collect()
    assert _my_segments() == before
    assert not psutil.pid_exists(pid)


def test_close_while_call_in_flight_stops_both():
    worker = ProcessWorker(lambda s: time.sleep(s), name="Map[slow] worker 5")
    worker.start()
    errors: list[BaseException] = []

    def run():
        try:
            worker.call(60.0, _event())
        except BaseException as e:  # noqa: BLE001 - recorded for the assertion
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    worker.close()
    t.join(30.0)
    assert not t.is_alive()
    # The call sleeps 60 s: returning well before that means close interrupted it, on any machine load.
    assert time.monotonic() - t0 < 30.0
    assert len(errors) == 1 and isinstance(errors[0], WorkerStopped)


_HOLDER_SCRIPT = """
import sys, time
from minddata.engine.procpool.shm import Arena
arena = Arena.create(sys.argv[1], 4096)
print("ready", flush=True)
time.sleep(60)
"""


def _holder(tmp_path, path: str) -> subprocess.Popen:
    """A process that owns (creates and locks) the segment ``path``, as a pipeline's parent does."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER_SCRIPT, path], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_sweep_keeps_a_live_owners_segment_whatever_pid_its_name_holds(tmp_path):
    # As seen from another PID namespace sharing /dev/shm: the PID in the name is dead here, but
    # the pipeline that owns the segment is alive (it holds the lock).
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = str(tmp_path / f"minddata_{dead.pid}_othernamespace_req1.flock")
    owner = _holder(tmp_path, path)
    try:
        assert sweep_stale_segments(str(tmp_path)) == []
        assert os.path.exists(path)
    finally:
        owner.kill()
        owner.wait(10)
    # Its owner killed (SIGKILL: no cleanup ran), the kernel dropped the lock: now it is stale.
    assert sweep_stale_segments(str(tmp_path)) == [path]
    assert not os.path.exists(path)


def test_sweep_removes_an_unheld_segment_even_if_its_pid_is_alive(tmp_path):
    # A live PID proves nothing either (another namespace's PID, or a reused one).
    path = tmp_path / f"minddata_{os.getppid()}_reused_req1.flock"
    path.write_bytes(b"x")
    assert sweep_stale_segments(str(tmp_path)) == [str(path)]


def test_sweep_leaves_segments_that_never_locked(tmp_path):
    # An older minddata's segment (no lock, no .flock suffix) can't be proven abandoned.
    path = tmp_path / "minddata_1_legacy_req1"
    path.write_bytes(b"x")
    assert sweep_stale_segments(str(tmp_path)) == []
    assert path.exists()


def test_a_workers_segments_are_locked_while_it_lives():
    import fcntl

    with ProcessWorker(lambda x: x, name="locktest") as w:
        w.call(1, None)
        (path, *_) = sorted(_my_segments())
        assert path.endswith(".flock")
        fd = os.open(path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)


_FULL_SHM_SCRIPT = """
import resource, signal
import numpy as np
import minddata as md
# The shared-memory folder "fills up": writes past 2 MB fail (EFBIG) as they would on a full tmpfs.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, 2 << 20))
md.config.set_worker_shm_size(1 << 20)
ds = md.NumpySlicesDataset({"x": [0, 1]}, shuffle=False)
ds = ds.map(lambda x: np.ones(4 << 20, np.uint8), input_columns="x", num_parallel_workers=1,
            python_multiprocessing=True)
try:
    list(ds.create_tuple_iterator(num_epochs=1))
except Exception as e:
    print(type(e).__name__, "|", e)
"""


def test_full_shared_memory_names_the_map_stage_and_the_fix(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _FULL_SHM_SCRIPT], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    kind, _, message = proc.stdout.strip().partition(" | ")
    assert kind in ("RowError", "PipelineError"), proc.stdout
    assert message.startswith("Map[<lambda>] worker 0: "), message
    assert "shared memory" in message and "set_worker_shm_size" in message and "--shm-size" in message, message


_ORPHAN_SCRIPT = """
import os, sys, threading
from minddata.engine.procpool import ProcessWorker
if __name__ == "__main__":
    w = ProcessWorker(lambda s: __import__("time").sleep(s), name="orphan")
    w.start()
    print(os.getpid(), w.pid, flush=True)
    threading.Thread(target=w.call, args=(30.0, threading.Event()), daemon=True).start()
    __import__("time").sleep(0.3)
    os._exit(0)  # no close(), no atexit: like a parent killed by SIGKILL
"""


def test_worker_exits_when_parent_dies_and_sweep_reclaims(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _ORPHAN_SCRIPT], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    parent, child = map(int, proc.stdout.split())
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            if psutil.Process(child).status() == psutil.STATUS_ZOMBIE:
                break
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the worker outlived its parent by 5 s")
    # The parent never closed: its segments are left behind until the sweep.
    leftovers = glob.glob(os.path.join(SHM, f"minddata_{parent}_*"))
    assert len(leftovers) == 2
    removed = sweep_stale_segments()
    assert set(leftovers) <= set(removed)
    assert not glob.glob(os.path.join(SHM, f"minddata_{parent}_*"))


# A pipeline with two process workers (fork, the default here) holds its segments, prints "running",
# then waits to be sent SIGTERM. With argv[1] == "own" the script installs a SIGTERM handler first,
# which exits cleanly.
_SIGTERM_SCRIPT = """
import signal, sys, time
import minddata as md
if __name__ == "__main__":
    if sys.argv[1] == "own":
        def own(signum, frame):
            print("own handler ran", flush=True)
            sys.exit(3)
        signal.signal(signal.SIGTERM, own)
    ds = md.NumpySlicesDataset({"x": list(range(8))}, shuffle=False)
    ds = ds.map(lambda x: x + 1, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    next(it)
    print("running", flush=True)
    time.sleep(300)
"""


def _terminated(handler: str) -> tuple[subprocess.Popen, str, list[str], list[str]]:
    """Run the script, send it SIGTERM once its workers run: (process, its stdout, its segments
    before the signal, its segments left after it exited)."""
    proc = subprocess.Popen([sys.executable, "-c", _SIGTERM_SCRIPT, handler], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pattern = os.path.join(SHM, f"minddata_{proc.pid}_*")
    try:
        first = proc.stdout.readline()
        assert first == "running\n", first + proc.stderr.read()
        before = glob.glob(pattern)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        return proc, first + out, before, glob.glob(pattern)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for path in glob.glob(pattern):  # whatever the outcome, leave nothing of this test behind
            shm.unlink(path)


def test_sigterm_removes_the_segments_and_still_kills_the_process():
    proc, _, before, after = _terminated("default")
    assert before, "the workers' segments were not created: the test proves nothing"
    assert proc.returncode == -signal.SIGTERM
    assert after == []


def test_an_applications_own_sigterm_handler_is_kept_and_the_segments_still_go():
    proc, out, before, after = _terminated("own")
    assert before
    assert "own handler ran" in out and proc.returncode == 3
    assert after == []


# Both scripts: the application installs a SIGTERM handler that exits cleanly, then the worker gets a
# SIGTERM ({kill}); it must die of it (exit code -15) without running the application's handler, which
# is the parent's. The first sends it from an at-fork hook, while the new child still runs Python's
# at-fork code: the window in which `terminate()` can reach a worker being started, where the
# handler's SystemExit is ignored and the child would live on (a join() without timeout, as
# multiprocessing's at exit, would wait forever).
_SIGTERM_TO_WORKER_SCRIPT = """
import os, signal, sys
from minddata.engine.procpool import ProcessWorker
if __name__ == "__main__":
    def own(signum, frame):
        print("own handler ran in", os.getpid(), flush=True)
        sys.exit(3)
    signal.signal(signal.SIGTERM, own)
    if sys.argv[1] == "while forking":
        os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGTERM))
    w = ProcessWorker(lambda x: x, name="terminated", start_method=sys.argv[2])
    try:
        assert w.call(1, None) == 1
    except Exception as e:
        print("call:", type(e).__name__, flush=True)
    if sys.argv[1] == "while serving":
        os.kill(w.pid, signal.SIGTERM)
    w._s.proc.join(20)
    print("worker exit code", w._s.proc.exitcode, flush=True)
    w.close()
"""


@pytest.mark.parametrize("when, start_method", [("while forking", "fork"), ("while serving", "fork"),
                                                ("while serving", "spawn")])
def test_a_worker_sent_sigterm_dies_of_it_and_skips_the_apps_handler(when, start_method):
    proc = subprocess.run([sys.executable, "-c", _SIGTERM_TO_WORKER_SCRIPT, when, start_method], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert f"worker exit code {-signal.SIGTERM}" in proc.stdout, proc.stdout + proc.stderr
    assert "own handler ran" not in proc.stdout, proc.stdout
