"""``python_multiprocessing=True``: Python ops in worker processes, arrays through shared memory."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from testkit import column, shm_segments

import minddata as md
from minddata.errors import RowError


def big_rows():
    return md.NumpySlicesDataset({"img": np.arange(8 * 200_000, dtype=np.uint8).reshape(8, 200_000)}, shuffle=False)


def test_process_workers_compute_the_same_as_threads():
    by_threads = column(big_rows().map(lambda x: x[::-1] + 1, num_parallel_workers=2))
    by_processes = column(big_rows().map(lambda x: x[::-1] + 1, num_parallel_workers=2, python_multiprocessing=True))
    assert by_threads == by_processes


def test_ops_run_in_other_processes():
    ds = md.NumpySlicesDataset([0, 1, 2, 3], column_names=["x"], shuffle=False)
    pids = set(column(ds.map(lambda x: np.int64(os.getpid()), num_parallel_workers=2, python_multiprocessing=True)))
    assert os.getpid() not in pids


def test_error_in_a_process_keeps_op_row_and_remote_traceback():
    def explode(x):
        if int(x) == 2:
            raise ValueError("bad two")
        return x

    ds = md.NumpySlicesDataset([0, 1, 2, 3], column_names=["x"], shuffle=False)
    with pytest.raises(RowError, match="failed on row 2.*bad two") as info:
        column(ds.map(explode, python_multiprocessing=True, num_parallel_workers=2))
    assert isinstance(info.value.__cause__, ValueError)
    assert "explode" in str(info.value.__cause__.__cause__)


def test_break_leaves_no_process_or_shared_memory():
    before = shm_segments()

    def slow(x):
        time.sleep(0.01)
        return x

    it = big_rows().repeat(50).map(slow, num_parallel_workers=2, python_multiprocessing=True).create_tuple_iterator()
    next(it)
    assert multiprocessing.active_children()
    it.close()
    deadline = time.monotonic() + 15.0  # an upper bound for a loaded machine, not a speed check
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children()
    assert shm_segments() <= before


def test_random_access_generator_in_processes():
    class Source:
        def __getitem__(self, i):
            return (np.full(100_000, i, dtype=np.int32),)

        def __len__(self):
            return 6

    ds = md.GeneratorDataset(Source(), column_names=["v"], shuffle=False, num_parallel_workers=2,
                             python_multiprocessing=True)
    assert [int(v[0]) for v in column(ds)] == list(range(6))


# -- start methods: fork by default on Linux, spawn and forkserver on request ----------------------

ROOT = Path(__file__).resolve().parents[2]

# A script as users write them: no `if __name__ == "__main__":` guard.
UNGUARDED_SCRIPT = """
import numpy as np
import minddata as md
{setup}
ds = md.NumpySlicesDataset({{"x": np.arange(6)}}, shuffle=False)
ds = ds.map(lambda x: x * 10, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)
print("rows", [int(r["x"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)])
"""


def run_script(tmp_path: Path, setup: str = "", text: str | None = None) -> subprocess.CompletedProcess:
    script = tmp_path / "train.py"
    script.write_text(UNGUARDED_SCRIPT.format(setup=setup) if text is None else text)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is the default on Linux only")
def test_script_without_main_guard_runs_with_default_fork(tmp_path):
    out = run_script(tmp_path)
    assert out.returncode == 0, out.stderr
    assert "rows [0, 10, 20, 30, 40, 50]" in out.stdout


def test_spawned_worker_failing_on_main_import_says_so_first_with_the_fix(tmp_path):
    out = run_script(tmp_path, setup='md.config.set_multiprocessing_start_method("spawn")')
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "while starting" in last and "re-imports the main script" in last and "train.py" in last
    assert 'if __name__ == "__main__":' in last and 'set_multiprocessing_start_method("fork")' in last
    assert last.index("main script") < last.index("memory") if "memory" in last else True


UNPICKLABLE_CALLABLE = """
import threading
import minddata as md
md.config.set_multiprocessing_start_method({method!r})
lock = threading.Lock()  # unpicklable: a spawned worker could not receive a closure over it

def guarded(x):
    with lock:
        return x + 1

ds = md.NumpySlicesDataset({{"x": [1, 2, 3]}}, shuffle=False)
try:
    ds = ds.map(guarded, num_parallel_workers=2, python_multiprocessing=True)
    print("rows", [int(r["x"]) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)])
except Exception as e:
    print("error", type(e).__name__, e)
"""


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")
def test_forked_workers_take_callables_that_cannot_be_pickled(tmp_path):
    # In a fresh interpreter: once this process has started JAX (other tests do), fork becomes spawn.
    assert "rows [2, 3, 4]" in run_script(tmp_path, text=UNPICKLABLE_CALLABLE.format(method="fork")).stdout
    spawned = run_script(tmp_path, text=UNPICKLABLE_CALLABLE.format(method="spawn")).stdout
    assert "error ArgumentError" in spawned and "cannot be sent to a worker process started by spawn" in spawned


@pytest.mark.parametrize("method", [m for m in ("fork", "spawn", "forkserver") if m in multiprocessing.get_all_start_methods()])
def test_every_start_method_gives_the_same_rows_and_cleans_up(method):
    md.config.set_multiprocessing_start_method(method)
    before = shm_segments()
    it = big_rows().map(lambda x: x[::-1] + 1, num_parallel_workers=2, python_multiprocessing=True) \
        .create_tuple_iterator(num_epochs=1, output_numpy=True)
    rows = [row[0][:3].tolist() for row in it]
    pids = [p.pid for p in multiprocessing.active_children() if p.name.startswith("Map[<lambda>]")]
    it.close()
    assert 1 <= len(pids) <= 2  # spawn starts a worker on its first chunk; fork starts both up front
    assert rows == column(big_rows().map(lambda x: (x[::-1] + 1)[:3]))
    deadline = time.monotonic() + 3.0
    while any(_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_exists(pid) for pid in pids)
    assert shm_segments() <= before


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_start_method_setting_is_checked():
    with pytest.raises(ValueError, match="one of"):
        md.config.set_multiprocessing_start_method("thread")
    md.config.set_multiprocessing_start_method("SPAWN")
    assert md.config.get_multiprocessing_start_method() == "spawn"
    md.config.load_defaults()
    expected = "fork" if sys.platform.startswith("linux") else "spawn"
    assert md.config.get_multiprocessing_start_method() == expected


def test_fork_becomes_spawn_once_jax_runs_here(tmp_path):
    # JAX's runtime is multithreaded: a forked child could deadlock in it. A fresh interpreter, so
    # that this test's JAX start does not change the start method of the tests after it.
    pytest.importorskip("jax")
    code = (
        "import jax.numpy as jnp; jnp.ones(1)\n"
        "from minddata.engine.procpool import effective_start_method\n"
        "print(effective_start_method('fork'), effective_start_method('forkserver'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["spawn", "forkserver"]
    assert "JAX has started its runtime" in out.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is the default on Linux only")
def test_fork_happens_when_the_iterator_is_created_before_pipeline_threads(tmp_path):
    # In a fresh interpreter (this one may have started JAX, which turns fork into spawn).
    code = """
import threading, multiprocessing
import numpy as np
import minddata as md
ds = md.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False)
ds = ds.map(lambda x: x + 1, num_parallel_workers=2, python_multiprocessing=True)
it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
workers = [p for p in multiprocessing.active_children() if p.name.startswith("Map[")]
threads = [t.name for t in threading.enumerate() if t.name.startswith("minddata-")]
print("forked", len(workers), sorted({type(p).__name__ for p in workers}), "threads", threads)
print("rows", [int(r[0]) for r in it])
"""
    out = run_script(tmp_path, text=code)
    assert out.returncode == 0, out.stderr
    assert "forked 2 ['ForkProcess'] threads []" in out.stdout
    assert "rows [1, 2, 3, 4]" in out.stdout


def test_fork_becomes_spawn_once_torch_has_started_cuda(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device here")
    code = (
        "import torch; torch.zeros(1, device='cuda')\n"
        "from minddata.engine.procpool import effective_start_method\n"
        "print(effective_start_method('fork'))\n"
    )
    out = run_script(tmp_path, text=code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["spawn"] and "torch has initialized CUDA" in out.stderr
