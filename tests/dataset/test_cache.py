"""DatasetCache: later epochs read the cached node's rows from shared memory (or the Arrow spill) and
skip the source, with the same rows and random draws as an uncached run.

Every test uses its own session ids under a temporary cache folder (``MINDDATA_CACHE_DIR``), and
checks on the way out that destroying its sessions left no segment behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from test_resume import assert_resumes_exactly

import minddata as md
from minddata import vision
from minddata.cli import main
from minddata.engine import cache_store
from minddata.errors import ArgumentError, GraphError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def new_cache(tmp_path, monkeypatch):
    """``new_cache(**kwargs)`` makes a DatasetCache with a fresh session in a temporary cache folder."""
    monkeypatch.setenv("MINDDATA_CACHE_DIR", str(tmp_path / "cache"))
    made: list[int] = []

    def make(**kwargs):
        cache = md.DatasetCache(cache_store.new_session_id(), **kwargs)
        made.append(cache.session_id)
        return cache

    yield make
    for session_id in made:
        cache_store.destroy_session(session_id)
        assert cache_store.session_segments(session_id) == []


class CountingSource:
    """Random-access rows of 6x5x3 uint8; every read of a row appends its index to ``log`` (a file, so
    reads in worker processes count too)."""

    def __init__(self, log: Path, n: int = 20):
        self.log = str(log)
        self.n = n

    def __getitem__(self, i):
        with open(self.log, "a") as f:
            f.write(f"{i}\n")
        return (np.full((6, 5, 3), i, np.uint8) + np.arange(3, dtype=np.uint8), np.int64(i))

    def __len__(self):
        return self.n


def reads(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


def epochs(ds, count: int) -> list[list[tuple]]:
    it = ds.create_tuple_iterator(num_epochs=count, output_numpy=True)
    out = [[tuple(np.asarray(c).tobytes() for c in row) for row in it] for _ in range(count)]
    it.close()
    return out


def plus_one(x):
    return x + 1


def counted(log: Path, cache=None, workers: int = 2, processes: bool = False, n: int = 20):
    ds = md.GeneratorDataset(
        CountingSource(log, n), ["image", "label"], shuffle=True, num_parallel_workers=workers,
        python_multiprocessing=processes,
    )
    return ds.map(
        plus_one, input_columns="image", num_parallel_workers=workers, python_multiprocessing=processes, cache=cache
    )


def test_later_epochs_skip_the_source(tmp_path, new_cache):
    log = tmp_path / "reads"
    md.config.set_seed(3)
    cached = epochs(counted(log, new_cache()), 3)
    assert reads(log) == 20
    md.config.set_seed(3)
    assert cached == epochs(counted(tmp_path / "uncached"), 3)


def test_generator_function_is_not_called_again(tmp_path, new_cache):
    calls = []

    def rows():
        calls.append(1)
        for i in range(7):
            yield (np.arange(i + 1),)

    ds = md.GeneratorDataset(rows, ["x"]).map(plus_one, input_columns="x", cache=new_cache())
    got = epochs(ds, 3)
    assert len(calls) == 1
    assert got == epochs(md.GeneratorDataset(rows, ["x"]).map(plus_one, input_columns="x"), 3)


def test_cached_text_file_serves_epoch_two_without_the_file(tmp_path, new_cache):
    text = tmp_path / "lines.txt"
    text.write_text("alpha\nbeta\ngamma\n")
    ds = md.TextFileDataset(str(text), shuffle=False, cache=new_cache())
    it = ds.create_tuple_iterator(num_epochs=2, output_numpy=True)
    first = [str(row[0]) for row in it]
    text.unlink()
    second = [str(row[0]) for row in it]
    it.close()
    assert first == second == ["alpha", "beta", "gamma"]


def test_cache_over_a_shuffled_stream_is_refused(tmp_path, new_cache):
    text = tmp_path / "lines.txt"
    text.write_text("alpha\nbeta\n")
    with pytest.raises(GraphError, match="shuffle=False"):
        md.TextFileDataset(str(text), cache=new_cache())


@pytest.fixture
def jpegs(image_folder, tmp_path):
    """A copy of the image folder that a test may delete."""
    return Path(shutil.copytree(image_folder, tmp_path / "copy"))


def test_cached_source_serves_epoch_two_without_its_files(jpegs, new_cache):
    cache = new_cache()
    md.config.set_seed(5)
    ds = md.ImageFolderDataset(str(jpegs), decode=True, cache=cache)
    it = ds.create_tuple_iterator(num_epochs=2, output_numpy=True)
    first = sorted((int(label), image.tobytes()) for image, label in it)
    shutil.rmtree(jpegs)  # epoch 2 can only come from the cache
    second = sorted((int(label), image.tobytes()) for image, label in it)
    it.close()
    assert second == first and len(first) == 12


def test_random_op_after_cache_draws_fresh_per_epoch(jpegs, new_cache):
    def build(cache):
        md.config.set_seed(7)
        ds = md.ImageFolderDataset(str(jpegs), shuffle=True)
        ds = ds.map(vision.Decode(), input_columns="image", cache=cache).shuffle(4)
        return ds.map(vision.RandomCrop(8), input_columns="image")

    cached = epochs(build(new_cache()), 2)
    uncached = epochs(build(None), 2)
    assert cached[1] != cached[0]
    assert cached == uncached


def test_random_op_in_cached_map_is_refused(jpegs, new_cache):
    ds = md.ImageFolderDataset(str(jpegs))
    with pytest.raises(GraphError, match="cache is not supported above the random op RandomCrop"):
        ds.map([vision.Decode(), vision.RandomCrop(8)], input_columns="image", cache=new_cache())


def test_random_op_below_cached_map_is_refused(jpegs, new_cache):
    ds = md.ImageFolderDataset(str(jpegs)).map([vision.Decode(), vision.RandomHorizontalFlip()], input_columns="image")
    with pytest.raises(GraphError, match="RandomHorizontalFlip"):
        ds.map(vision.Resize(8), input_columns="image", cache=new_cache())


def test_cache_above_a_shuffle_buffer_is_refused(tmp_path, new_cache):
    ds = md.NumpySlicesDataset({"x": np.arange(5)}).shuffle(4)
    with pytest.raises(GraphError, match="Shuffle"):
        ds.map(plus_one, input_columns="x", cache=new_cache())


def test_spilling_writes_rows_past_size_to_arrow_files(tmp_path, new_cache):
    # 40 rows of 64 KiB: 2.5 MB, past a 1 MB cache.
    data = np.random.default_rng(0).integers(0, 255, (40, 256, 256), dtype=np.uint8)
    cache = new_cache(size=1, spilling=True)
    ds = md.NumpySlicesDataset({"x": data}, shuffle=False).map(plus_one, input_columns="x", cache=cache)
    first, second = epochs(ds, 2)
    stat = cache.get_stat()
    assert stat.num_mem_cached > 0 and stat.num_disk_cached > 0
    assert stat.num_mem_cached + stat.num_disk_cached == 40
    assert sum(os.path.getsize(p) for p in cache_store.session_segments(cache.session_id)) <= 1 << 20
    spills = list((tmp_path / "cache").rglob("spill-*.arrow"))
    assert spills and sum(pa.ipc.open_file(pa.memory_map(str(p))).num_record_batches for p in spills) > 0
    assert first == second == [(x.tobytes(),) for x in data + 1]


def test_size_bounds_memory_and_rows_past_it_are_read_again(tmp_path, new_cache):
    log = tmp_path / "reads"
    cache = new_cache(size=1)
    big = md.GeneratorDataset(BigRows(log), ["x"], shuffle=False).map(plus_one, input_columns="x", cache=cache)
    first, second = epochs(big, 2)
    stat = cache.get_stat()
    assert 0 < stat.num_mem_cached < 24 and stat.num_disk_cached == 0
    assert sum(os.path.getsize(p) for p in cache_store.session_segments(cache.session_id)) <= 1 << 20
    assert not list((tmp_path / "cache").rglob("*.arrow"))
    assert reads(log) == 24 + (24 - stat.num_mem_cached)
    assert first == second


class BigRows:
    """24 rows of 100 KB; reads are logged like :class:`CountingSource`'s."""

    def __init__(self, log: Path):
        self.log = str(log)

    def __getitem__(self, i):
        with open(self.log, "a") as f:
            f.write(f"{i}\n")
        return (np.full(100_000, i, np.uint8),)

    def __len__(self):
        return 24


def test_second_pipeline_of_the_session_reads_what_the_first_stored(tmp_path, new_cache):
    log = tmp_path / "reads"
    cache = new_cache()
    md.config.set_seed(1)
    first = epochs(counted(log, cache), 1)
    md.config.set_seed(1)
    again = epochs(counted(log, md.DatasetCache(cache.session_id)), 1)
    assert reads(log) == 20
    assert again == first


def test_other_data_in_the_same_session_keeps_its_own_rows(new_cache):
    cache = new_cache()
    a = md.NumpySlicesDataset({"x": np.arange(6)}, shuffle=False).map(plus_one, input_columns="x", cache=cache)
    b = md.NumpySlicesDataset({"x": np.arange(6) * 10}, shuffle=False).map(plus_one, input_columns="x", cache=cache)
    assert epochs(a, 1) == [[(np.int64(i + 1).tobytes(),) for i in range(6)]]
    assert epochs(b, 1) == [[(np.int64(10 * i + 1).tobytes(),) for i in range(6)]]


def test_another_process_reads_what_this_one_stored(tmp_path, new_cache):
    log = tmp_path / "reads"
    cache = new_cache()
    md.config.set_seed(1)
    mine = epochs(counted(log, cache), 1)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "tests")!r}, {str(Path(__file__).parent)!r}]
        import numpy as np, minddata as md
        from pathlib import Path
        from test_cache import counted, epochs
        md.config.set_seed(1)
        rows = epochs(counted(Path({str(log)!r}), md.DatasetCache({cache.session_id})), 1)
        print(repr([[tuple(c.hex() for c in r) for r in e] for e in rows]))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    theirs = [[tuple(bytes.fromhex(c) for c in r) for r in e] for e in eval(out.stdout)]  # noqa: S307
    assert theirs == mine
    assert reads(log) == 20


def test_concurrent_pipelines_fill_once_and_agree(tmp_path, new_cache):
    cache = new_cache()
    results: dict[int, list] = {}

    def run(k: int) -> None:
        ds = md.NumpySlicesDataset({"x": np.arange(300)}, shuffle=False).map(plus_one, input_columns="x", cache=cache)
        results[k] = epochs(ds, 2)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = [(np.int64(i + 1).tobytes(),) for i in range(300)]
    assert results[0] == results[1] == [expected, expected]
    assert cache.get_stat().num_mem_cached == 300


def test_process_workers(tmp_path, new_cache):
    log = tmp_path / "reads"
    md.config.set_seed(2)
    cached = epochs(counted(log, new_cache(), workers=2, processes=True), 2)
    assert reads(log) == 20
    md.config.set_seed(2)
    assert cached == epochs(counted(tmp_path / "plain", workers=2, processes=True), 2)


def test_destroy_session_frees_every_segment_and_file(tmp_path, new_cache, capsys):
    cache = new_cache(size=1, spilling=True)
    data = np.zeros((30, 64 << 10), np.uint8)
    epochs(md.NumpySlicesDataset({"x": data}, shuffle=False).map(plus_one, input_columns="x", cache=cache), 1)
    assert cache_store.session_segments(cache.session_id)
    assert main(["cache", "list"]) == 0
    assert str(cache.session_id) in capsys.readouterr().out
    assert main(["cache", "destroy-session", str(cache.session_id)]) == 0
    assert cache_store.session_segments(cache.session_id) == []
    assert not (tmp_path / "cache" / str(cache.session_id)).exists()


def test_stop_frees_every_session(tmp_path, new_cache, capsys):
    caches = [new_cache(), new_cache()]
    for cache in caches:
        epochs(md.NumpySlicesDataset({"x": np.arange(4)}).map(plus_one, input_columns="x", cache=cache), 1)
        assert cache_store.session_segments(cache.session_id)
    assert main(["cache", "stop"]) == 0
    assert "destroyed 2 session(s)" in capsys.readouterr().out
    assert all(cache_store.session_segments(c.session_id) == [] for c in caches)
    assert cache_store.list_sessions() == []


def test_create_session_prints_a_new_id(tmp_path, new_cache, capsys):
    new_cache()  # the cache folder of this test, cleaned up with it
    assert main(["cache", "create-session"]) == 0
    session_id = int(capsys.readouterr().out.split()[-1])
    try:
        assert [s.session_id for s in cache_store.list_sessions()] == [session_id]
    finally:
        cache_store.destroy_session(session_id)


@pytest.mark.parametrize("warm", [False, True])
def test_resume_is_exact(tmp_path, new_cache, jpegs, warm):
    cache = new_cache()

    def build(workers):
        ds = md.ImageFolderDataset(str(jpegs), shuffle=True, num_parallel_workers=workers)
        ds = ds.map(vision.Decode(), input_columns="image", num_parallel_workers=workers, cache=cache)
        ds = ds.map([vision.RandomResizedCrop(8), vision.RandomHorizontalFlip()], input_columns="image")
        return ds.batch(5)

    if warm:
        epochs(build(2), 1)
    assert_resumes_exactly(build, epochs=3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"session_id": -1}, "`session_id` must be 0 or greater"),
        ({"session_id": 1, "size": -5}, "`size` must be 0 or greater"),
        ({"session_id": 1, "spilling": "yes"}, "`spilling` must be True or False"),
        ({"session_id": 1, "hostname": "10.0.0.2"}, "`hostname` must be this host"),
        ({"session_id": 1, "port": 70000}, "`port` must be an int from 1 to 65535"),
    ],
)
def test_bad_arguments_name_the_rule(kwargs, message):
    with pytest.raises(ArgumentError, match=message):
        md.DatasetCache(**kwargs)


def test_cache_must_be_a_dataset_cache():
    with pytest.raises(ArgumentError, match="`cache` must be a DatasetCache"):
        md.NumpySlicesDataset({"x": [1]}).map(plus_one, input_columns="x", cache="yes")


def fails_on_three(x):
    if int(x) == 3:
        raise ValueError("row three is bad")
    return x + 1


def test_skipped_rows_stay_skipped_in_later_epochs(new_cache):
    def build(cache):
        md.config.set_error_samples_mode("skip")
        return md.NumpySlicesDataset({"x": np.arange(8)}, shuffle=False).map(
            fails_on_three, input_columns="x", cache=cache
        )

    cached = epochs(build(new_cache()), 2)
    assert cached == epochs(build(None), 2)
    assert [int(np.frombuffer(row[0], np.int64)[0]) for row in cached[1]] == [1, 2, 3, 5, 6, 7, 8]


def test_start_prepares_the_cache_folder(tmp_path, new_cache, capsys):
    new_cache()  # points the cache folder at this test's
    assert main(["cache", "start"]) == 0
    assert (tmp_path / "cache").is_dir()
    assert str(tmp_path / "cache") in capsys.readouterr().out


def test_cache_command_needs_an_action(capsys):
    assert main(["cache"]) == 2
    assert "ACTION" in capsys.readouterr().err


def test_sampling_with_replacement_repeats_rows_from_the_cache(tmp_path, new_cache):
    def build(log, cache):
        md.config.set_seed(4)
        sampler = md.RandomSampler(replacement=True)
        ds = md.GeneratorDataset(CountingSource(log, 30), ["image", "label"], sampler=sampler)
        return ds.map(plus_one, input_columns="image", cache=cache)

    cached = epochs(build(tmp_path / "reads", new_cache()), 2)
    assert cached == epochs(build(tmp_path / "plain", None), 2)
    first, second = ({row[1] for row in epoch} for epoch in cached)
    assert len(first) < 30
    # Epoch 2 reads only the rows of ids epoch 1 did not draw (each time one is drawn).
    assert reads(tmp_path / "reads") == 30 + sum(row[1] not in first for row in cached[1])


def test_files_of_a_fill_killed_before_its_commit_are_removed_by_the_next_fill(new_cache):
    cache = new_cache(size=1, spilling=True)
    store = cache_store.CacheStore(cache.session_id, "feedc0de", 1 << 20, True)
    crashed = store.begin_fill()
    for i in range(40):
        crashed.put(i, (np.full(64 << 10, i, np.uint8),), None)
    crashed._flush_spill()
    os.close(crashed.lock_fd)  # what the kernel does when the filling process dies
    left = cache_store.session_segments(cache.session_id) + list(Path(store.folder).glob("spill-*.arrow"))
    assert len(left) == 2
    again = store.begin_fill()
    assert cache_store.session_segments(cache.session_id) == []
    assert not list(Path(store.folder).glob("spill-*.arrow"))
    again.commit()
    store.close()
    crashed.spill_writer.close()  # the dead process's handles, here still open
    os.close(crashed.segment_fd)
