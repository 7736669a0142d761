"""Record files and Parquet under attack and accident: killed commits, shrinking files, paths that leave
the set, damaged metadata, full disks, leaked temporary files, float overflow, mutation fuzzing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from record_helpers import ROOT, run_python
from testkit import column

import minddata as md
from minddata.errors import ArgumentError, DataFormatError
from minddata.record import ArrowRecordWriter, FileReader

SCHEMA = {"label": {"type": "int32"}, "blob": {"type": "bytes"}}


def _write(path, labels, shard_num=1, overwrite=False, blob=300):
    writer = ArrowRecordWriter(str(path), shard_num=shard_num, overwrite=overwrite)
    writer.add_schema(SCHEMA)
    writer.write_raw_data([{"label": i, "blob": bytes(blob)} for i in labels])
    writer.commit()
    return writer.paths


def _labels(path):
    return sorted(column(md.MindDataset(str(path), shuffle=False), "label"))


def _leftovers(folder):
    return sorted(n for n in os.listdir(folder) if ".tmp-" in n or n.endswith(".commit-journal.json"))


# -- overwrite is atomic: SIGKILL at every step of commit -------------------------------------

# Kills the writer (SIGKILL) just before the k-th file-system call that commit makes (rename,
# remove, fsync): every step of any commit protocol, without a hook in the writer.
_KILL_AT_EVERY_STEP = """
import json, os, signal
from minddata.record import ArrowRecordWriter
steps = {{"on": False, "count": 0, "kill_at": 0}}

def counted(call):
    def wrapper(*args, **kwargs):
        if steps["on"]:
            steps["count"] += 1
            if steps["count"] == steps["kill_at"]:
                os.kill(os.getpid(), signal.SIGKILL)
        return call(*args, **kwargs)
    return wrapper

for name in ("replace", "rename", "remove", "unlink", "fsync"):
    setattr(os, name, counted(getattr(os, name)))
warm = ArrowRecordWriter(os.path.join({warm!r}, "w.mindrecord"))  # imports what writing needs once, before the forks
warm.add_schema({schema!r})
warm.write_raw_data([{{"label": 1, "blob": b""}}])
warm.commit()
codes = []
for step, folder in enumerate({folders!r}, start=1):
    pid = os.fork()
    if pid == 0:
        writer = ArrowRecordWriter(os.path.join(folder, "s.mindrecord"), shard_num=2, overwrite=True)
        writer.add_schema({schema!r})
        writer.write_raw_data([{{"label": i, "blob": bytes(300)}} for i in range(100, 125)])
        steps.update(on=True, kill_at=step)
        writer.commit()
        os._exit(0)
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
print(json.dumps(codes))
"""


def test_overwrite_survives_sigkill_at_every_commit_step(tmp_path):
    old, new = list(range(10)), list(range(100, 125))
    folders = []
    for step in range(1, 18):
        folder = tmp_path / f"step{step}"
        folder.mkdir()
        _write(folder / "s.mindrecord", old, shard_num=2)
        folders.append(str(folder))
    # One interpreter forks a writer per step: each kills itself (SIGKILL) at its step of commit.
    proc = run_python(_KILL_AT_EVERY_STEP.format(folders=folders, schema=SCHEMA, warm=str(tmp_path)), tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    codes = json.loads(proc.stdout)
    killed = codes.index(0) if 0 in codes else len(codes)
    assert killed >= 8 and codes[:killed] == [-9] * killed and set(codes[killed:]) == {0}, codes
    seen = []
    for step, folder in enumerate(folders, start=1):
        for shard in ("s.mindrecord0", "s.mindrecord1"):
            # Each shard's name reads one complete set, old or new, never a mix or nothing.
            labels = _labels(os.path.join(folder, shard))
            assert labels in (old, new), (step, shard, labels)
            seen.append((step, labels == new))
        assert _leftovers(folder) == [], (step, os.listdir(folder))
    outcomes = [is_new for step, is_new in seen if step <= killed]
    assert False in outcomes and True in outcomes  # killed before and after the commit point


def test_old_set_stays_readable_while_a_writer_is_open(tmp_path):
    path = tmp_path / "s.mindrecord"
    _write(path, range(10))
    writer = ArrowRecordWriter(str(path), overwrite=True)
    writer.add_schema(SCHEMA)
    writer.write_raw_data([{"label": 50 + i, "blob": b""} for i in range(3000)])  # flushed to its temp file
    assert _labels(path) == list(range(10))
    writer.commit()
    assert _labels(path) == list(range(50, 3050))


_OVERWRITE_LOOP = """
from minddata.record import ArrowRecordWriter
for k in range(1, {writes} + 1):
    writer = ArrowRecordWriter({path!r}, shard_num=2, overwrite=True)
    writer.add_schema({schema!r})
    writer.write_raw_data([{{"label": 100 * k + i, "blob": bytes(100)}} for i in range(20)])
    writer.commit()
"""


def test_readers_during_overwrites_see_one_complete_set(tmp_path):
    path = tmp_path / "s.mindrecord"
    _write(path, [100 * 0 + i for i in range(20)], shard_num=2)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    script = _OVERWRITE_LOOP.format(writes=8, path=str(path), schema=SCHEMA)
    child = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    complete = replaced = 0
    try:
        while child.poll() is None and complete + replaced < 2000:
            try:
                labels = sorted(int(r["label"]) for r in FileReader(str(path) + "0").get_next())
            except DataFormatError as error:
                # Metadata is read as one snapshot; a data file swapped after that is named, not mixed in.
                assert re.search(r"does not belong to its metadata file|is (truncated|longer than written)", str(error)), error
                replaced += 1
                continue
            k = labels[0] // 100
            assert labels == [100 * k + i for i in range(20)], labels
            complete += 1
            time.sleep(0.002)  # leave the writer some of a busy machine
        assert child.wait(timeout=120) == 0, child.stderr.read()
    finally:
        child.kill()
        child.wait(timeout=10)
    assert complete > 0
    assert sorted(int(r["label"]) for r in FileReader(str(path) + "1").get_next()) == [800 + i for i in range(20)]
    assert _leftovers(tmp_path) == []


# -- float overflow ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, shape, value, shown",
    [
        ("float16", None, 1e6, r"value overflows float16 .* Found: 1000000\.0"),
        ("float32", None, 1e40, r"value overflows float32 .* Found: 1e\+40"),
        ("float16", None, 70000, r"value overflows float16 .* Found: 70000"),
        ("float32", [3], np.asarray([1.0, 2.0, 1e40]), r"value at index \[2\] overflows float32 .* Found: 1e\+40"),
    ],
)
def test_float_overflow_is_refused_naming_column_row_and_value(tmp_path, kind, shape, value, shown):
    writer = ArrowRecordWriter(str(tmp_path / "f.mindrecord"))
    writer.add_schema({"x": {"type": kind, **({"shape": shape} if shape else {})}})
    rows = [{"x": np.zeros(shape or ()) + 1}, {"x": value}]
    with pytest.raises(ArgumentError, match=rf"row 1, field 'x' \({kind}.*\): {shown}"):
        writer.write_raw_data(rows)


def test_infinity_itself_is_stored(tmp_path):
    path = tmp_path / "f.mindrecord"
    with ArrowRecordWriter(str(path)) as writer:
        writer.add_schema({"x": {"type": "float16"}})
        writer.write_raw_data([{"x": float("inf")}, {"x": 1.5}])
    assert column(md.MindDataset(str(path), shuffle=False)) == [float("inf"), 1.5]


# -- a file that shrinks under a reader -------------------------------------------------------

_TRUNCATE = """
import json, os
import numpy as np
import minddata as md
from minddata.errors import DataFormatError
kind, folder = {kind!r}, {folder!r}

def make(name):
    path = os.path.join(folder, name)
    if kind == "record":
        from minddata.record import ArrowRecordWriter
        with ArrowRecordWriter(path) as writer:
            writer.add_schema({{"label": {{"type": "int32"}}, "blob": {{"type": "bytes"}}}})
            writer.write_raw_data([{{"label": i, "blob": bytes([i % 256]) * 4000}} for i in range(3000)])
        return path, md.MindDataset(path, shuffle=False, num_parallel_workers=1)
    import pyarrow as pa, pyarrow.parquet as pq
    table = pa.table({{"label": np.arange(2000), "blob": [bytes([i % 256]) * 2000 for i in range(2000)]}})
    pq.write_table(table, path, row_group_size=50, compression="none")
    return path, md.ParquetDataset(path, shuffle=False, num_parallel_workers=1)

md.config.set_prefetch_size(1)
for when in ("before_open", "between_rows", "to_zero"):
    path, ds = make(when + ".data")
    size = os.path.getsize(path)
    if when == "before_open":
        os.truncate(path, size // 2)
    rows = 0
    # The pipeline reads ahead in its workers, so reads are in flight when the file shrinks.
    rows_source = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    try:
        for row in rows_source:
            assert row["blob"].tobytes() == bytes([rows % 256]) * len(row["blob"])
            rows += 1
            if rows == 5 and when != "before_open":
                os.truncate(path, 0 if when == "to_zero" else size // 2)
            np.asarray(row["blob"]).sum()  # touch every byte handed out
        outcome = "no error after %d rows" % rows
    except DataFormatError as error:
        outcome = str(error)
    print(json.dumps([when, path, outcome]), flush=True)
"""


@pytest.mark.parametrize("kind", ["record", "parquet"])
def test_file_truncated_while_reading_gives_an_error_naming_it(tmp_path, kind):
    # In a child process: a SIGBUS there is a failed test, not a dead pytest.
    proc = run_python(_TRUNCATE.format(kind=kind, folder=str(tmp_path)), tmp_path, timeout=120)
    assert proc.returncode == 0, f"child ended with {proc.returncode}: {proc.stderr[-2000:]}"
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r[0] for r in results] == ["before_open", "between_rows", "to_zero"]
    for when, path, outcome in results:
        assert path in outcome, (when, outcome)


_TRUNCATE_RACING = """
import json, os, shutil, threading
import minddata as md
from minddata.errors import DataFormatError
from minddata.record import ArrowRecordWriter

path = os.path.join({folder!r}, "racing.mindrecord")
with ArrowRecordWriter(path, shard_num=1) as writer:
    writer.add_schema({{"label": {{"type": "int32"}}, "blob": {{"type": "bytes"}}, "t": {{"type": "float32", "shape": [64]}}}})
    writer.write_raw_data([{{"label": i, "blob": bytes([i % 256]) * 8000, "t": [float(i)] * 64}} for i in range(4000)])
size = os.path.getsize(path)
shutil.copyfile(path, path + ".whole")
outcomes = []
for delay in (0.0, 0.002, 0.01, 0.05):
    ds = md.MindDataset(path, shuffle=True, num_parallel_workers=2).map(lambda x: x, input_columns="blob", num_parallel_workers=2)
    shrink = threading.Timer(delay, os.truncate, (path, size // 3))
    rows = 0
    try:
        for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True):
            if rows == 0:
                shrink.start()
            assert row["blob"].tobytes() == bytes([int(row["label"]) % 256]) * 8000
            rows += 1
        outcomes.append("no error after %d rows" % rows)
    except DataFormatError as error:
        outcomes.append(str(error))
    if shrink.is_alive() or rows:
        shrink.join()
    shutil.copyfile(path + ".whole", path)  # whole again for the next round
print(json.dumps([path, outcomes]), flush=True)
"""


def test_file_truncated_under_read_ahead_workers_never_crashes(tmp_path):
    # Workers read ahead in threads while a timer shrinks the file: every read sees either whole rows or a
    # short read reported as an error naming the file; none can fault, since nothing is mapped.
    proc = run_python(_TRUNCATE_RACING.format(folder=str(tmp_path)), tmp_path, timeout=180)
    assert proc.returncode == 0, f"child ended with {proc.returncode}: {proc.stderr[-2000:]}"
    path, outcomes = json.loads(proc.stdout.splitlines()[-1])
    for outcome in outcomes:
        assert path in outcome or outcome.startswith("no error"), outcome


# -- paths inside metadata stay inside the set's folder ---------------------------------------


def _other_set(tmp_path):
    (tmp_path / "other").mkdir()
    _write(tmp_path / "other" / "private.mindrecord", range(5))


def _set_listing(tmp_path, shards):
    """``ds/a.mindrecord``, whose metadata lists ``shards``; ``other/private.mindrecord`` beside it."""
    _other_set(tmp_path)
    (tmp_path / "ds").mkdir()
    path = tmp_path / "ds" / "a.mindrecord"
    _write(path, range(3))
    meta_path = tmp_path / "ds" / "a.mindrecord.meta.json"
    meta = json.loads(meta_path.read_text())
    meta.update(shards=shards, shard_num=len(shards))
    meta_path.write_text(json.dumps(meta))
    return path


@pytest.mark.parametrize(
    "shard",
    ["../other/private.mindrecord", "../other/missing.mindrecord", "{root}/other/private.mindrecord",
     "/etc/hostname", "/nonexistent/x.mindrecord", "link.mindrecord", "sub/../../other/private.mindrecord"],
)
def test_shards_outside_the_folder_are_refused_alike(tmp_path, shard):
    shard = shard.format(root=tmp_path)
    path = _set_listing(tmp_path, ["a.mindrecord", shard])
    os.symlink(tmp_path / "other" / "private.mindrecord", tmp_path / "ds" / "link.mindrecord")
    with pytest.raises(DataFormatError) as info:
        md.MindDataset(str(path))
    message = str(info.value)
    # The same words whether or not the outside path exists, and nothing read from it.
    assert message.replace(repr(shard), "<shard>") == (
        f"record file {path}: its metadata lists shard <shard>, which is not a file in the set's folder "
        f"{path.parent} (shards are file names there; paths that leave the folder, absolute paths and symlinks out of "
        "it are refused). To read files elsewhere, pass them as a list: MindDataset([file, ...])."
    )
    with open("/etc/hostname") as f:
        assert f.read().strip() not in message.replace(str(tmp_path), "")


def test_files_listed_explicitly_are_trusted(tmp_path):
    _other_set(tmp_path)
    (tmp_path / "ds").mkdir()
    for suffix in ("", ".meta.json"):
        os.symlink(tmp_path / "other" / f"private.mindrecord{suffix}", tmp_path / "ds" / f"link.mindrecord{suffix}")
    assert sorted(column(md.MindDataset([str(tmp_path / "ds" / "link.mindrecord")], shuffle=False))) == list(range(5))


def test_shard_from_another_write_is_refused(tmp_path):
    _write(tmp_path / "a.mindrecord", range(10), shard_num=2)
    _write(tmp_path / "b.mindrecord", range(100, 110), shard_num=2)
    for suffix in ("", ".meta.json"):
        os.replace(tmp_path / f"b.mindrecord1{suffix}", tmp_path / f"a.mindrecord1{suffix}")
    with pytest.raises(DataFormatError, match=r"a.mindrecord1 is not of the same write as .*a.mindrecord0"):
        md.MindDataset(str(tmp_path / "a.mindrecord0"))


# -- metadata checked against the format's rules ----------------------------------------------


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("num_rows", "10", r"field 'num_rows': must be an int >= 0\. Found: '10' \(str\)"),
        ("shards", 5, r"field 'shards': must be a list of non-empty strings\. Found: 5 \(int\)"),
        ("batches", None, r"field 'batches': must be a list of .* Found: None \(NoneType\)"),
        ("data_bytes", None, r"field 'data_bytes': must be an int >= 0\. Found: None"),
        ("version", True, r"field 'version': must be an int in \[1, 1\]\. Found: True \(bool\)"),
        ("shard_id", 7, r"field 'shard_id': must be an int in \[0, 0\]\. Found: 7"),
        ("set_id", 12, r"field 'set_id': must be 32 hex digits\. Found: 12"),
        ("schema", [], r"field 'schema': must be a dict"),
        ("schema.label", {"type": "int32", "shape": [10**30]}, r"field 'schema': .*holds more than 2147483647 values"),
        ("index_fields", "label", r"field 'index_fields': must be a list of non-empty strings"),
        ("batches.0.rows", "x", r"field 'batches\[0\].rows': must be an int >= 0\. Found: 'x'"),
        ("batches.0.crc32", {"label": 1}, r"field 'batches\[0\].crc32': must map each column \['blob', 'label'\]"),
        ("batches.0.crc32.label", -1, r"field 'batches\[0\].crc32.label': must be an int in \[0, 4294967295\]"),
    ],
)
def test_bad_metadata_values_name_the_file_field_and_rule(tmp_path, field, value, message):
    path = tmp_path / "a.mindrecord"
    _write(path, range(4))
    meta_path = tmp_path / "a.mindrecord.meta.json"
    meta = json.loads(meta_path.read_text())
    *parents, last = [int(k) if k.isdigit() else k for k in field.split(".")]
    node = meta
    for key in parents:
        node = node[key]
    node[last] = value
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DataFormatError, match=rf"record file {re.escape(str(path))}: metadata a.mindrecord.meta.json, {message}"):
        FileReader(str(path))


def test_tensor_shape_changed_in_metadata_is_caught(tmp_path):
    path = tmp_path / "t.mindrecord"
    with ArrowRecordWriter(str(path)) as writer:
        writer.add_schema({"v": {"type": "float32", "shape": [2, 3]}})
        writer.write_raw_data([{"v": np.ones((2, 3))}])
    meta_path = tmp_path / "t.mindrecord.meta.json"
    meta = json.loads(meta_path.read_text())
    meta["schema"]["v"]["shape"] = [3, 2]  # same Arrow type: only the stored schema tells
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DataFormatError, match="schema in its metadata file differs from the one stored in the data file"):
        column(md.MindDataset(str(path)))


# -- temporary files: removed on error, swept when their writer is gone -----------------------


def test_failed_write_removes_temporary_files_at_once(tmp_path):
    writer = ArrowRecordWriter(str(tmp_path / "a.mindrecord"))
    writer.add_schema(SCHEMA)
    writer.write_raw_data([{"label": i, "blob": b"x"} for i in range(3000)])  # flushed: a temp file exists
    assert _leftovers(tmp_path)
    with pytest.raises(ArgumentError, match="row 0, field 'label'"):
        writer.write_raw_data([{"label": "nope", "blob": b""}])
    assert os.listdir(tmp_path) == []  # while `writer` is still referenced
    with pytest.raises(ArgumentError, match="the writer is aborted"):
        writer.write_raw_data([{"label": 1, "blob": b""}])


_KILLED_WRITER = """
import os, signal
from minddata.record import ArrowRecordWriter
writer = ArrowRecordWriter({path!r}, shard_num=2)
writer.add_schema({{"x": {{"type": "bytes"}}}})
writer.write_raw_data([{{"x": b"a" * 5000}}] * 3000)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_dead_writers_temporary_files_are_swept_on_next_open(tmp_path):
    proc = run_python(_KILLED_WRITER.format(path=str(tmp_path / "k.mindrecord")), tmp_path)
    assert proc.returncode == -9
    assert len(_leftovers(tmp_path)) == 2
    ArrowRecordWriter(str(tmp_path / "other.mindrecord")).abort()  # any open of the folder sweeps it
    assert os.listdir(tmp_path) == []


_LIVE_WRITER = """
import sys
from minddata.record import ArrowRecordWriter
writer = ArrowRecordWriter({path!r})
writer.add_schema({{"x": {{"type": "int64"}}}})
writer.write_raw_data([{{"x": i}} for i in range(3000)])
print("ready", flush=True)
sys.stdin.readline()
writer.commit()
"""


def test_live_writers_temporary_files_are_kept(tmp_path):
    # Another process (as in another PID namespace: no PID is looked at) holds its temp files' locks.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-c", _LIVE_WRITER.format(path=str(tmp_path / "live.mindrecord"))],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        assert child.stdout.readline().strip() == "ready"
        temps = _leftovers(tmp_path)
        assert temps
        _write(tmp_path / "b.mindrecord", range(3))  # opens the folder: sweeps
        assert _labels(tmp_path / "b.mindrecord") == [0, 1, 2]
        assert set(temps) <= set(os.listdir(tmp_path))
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait(timeout=10)
    assert column(md.MindDataset(str(tmp_path / "live.mindrecord"), shuffle=False)) == list(range(3000))
    assert _leftovers(tmp_path) == []


# -- disk full --------------------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (needs the right to mount, e.g. root in a container that allows it)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"can't mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_disk_full_names_the_file(tiny_disk):
    path = tiny_disk / "full.mindrecord"
    writer = ArrowRecordWriter(str(path))
    writer.add_schema(SCHEMA)
    writer.write_raw_data([{"label": i, "blob": bytes(1000)} for i in range(200)])
    with pytest.raises(OSError, match=rf"can't write record file {re.escape(str(path))} .*No space left on device") as info:
        writer.commit()
    assert info.value.errno == 28 and info.value.filename == str(path)
    assert os.listdir(tiny_disk) == []


_FILE_SIZE_LIMIT = """
import resource, signal
from minddata.record import ArrowRecordWriter
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))
writer = ArrowRecordWriter({path!r})
writer.add_schema({{"blob": {{"type": "bytes"}}}})
writer.write_raw_data([{{"blob": bytes(1000)}}] * 100)
try:
    writer.commit()
except OSError as error:
    print(error.errno, error.filename, error, sep="|")
"""


def test_write_error_names_the_file_and_removes_temporary_files(tmp_path):
    # The same path as a full disk, where mounting a small filesystem isn't allowed: a file size limit.
    path = tmp_path / "big.mindrecord"
    proc = run_python(_FILE_SIZE_LIMIT.format(path=str(path)), tmp_path)
    assert proc.returncode == 0, proc.stderr
    code, filename, message = proc.stdout.strip().split("|", 2)
    assert int(code) == 27 and filename == str(path)  # EFBIG
    assert f"can't write record file {path}" in message and "File too large" in message
    assert os.listdir(tmp_path) == []


# -- dependencies -----------------------------------------------------------------------------


def test_pyarrow_requirement_excludes_cve_2023_47248():
    pins = re.findall(r'^\s*"(pyarrow[^"]*)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert pins == ["pyarrow>=14.0.1"]


# -- mutation fuzzing -------------------------------------------------------------------------

_FUZZ = """
import json
from minddata.bench.fuzz_record import run
print(json.dumps({{name: dict(counts) for name, counts in run({inputs}, seed=7).items()}}))
"""


def test_mutated_metadata_and_data_give_rows_or_an_error_naming_the_file(tmp_path):
    proc = run_python(_FUZZ.format(inputs=150), tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    for name, counts in results.items():
        crashes = {kind: n for kind, n in counts.items() if kind not in ("rows", "error")}
        assert crashes == {}, (name, crashes)
        assert counts.get("error", 0) > 0 and sum(counts.values()) == 150
    assert results["record_data"].get("rows", 0) > 0  # some mutations hit padding: still correct rows



def test_file_in_a_missing_folder_is_reported_by_name(tmp_path):
    missing = tmp_path / "no-such-folder" / "x.mindrecord"
    with pytest.raises(DataFormatError, match=rf"record file {re.escape(str(missing))} does not exist"):
        md.MindDataset(str(missing))


@pytest.mark.parametrize("fmt", ["arrow", "mindrecord"])
def test_a_set_name_without_its_shard_number_suggests_the_shard_file(tmp_path, fmt):
    from minddata.mindrecord import FileWriter as MindRecordWriter

    path = tmp_path / "x.mindrecord"
    writer = (ArrowRecordWriter if fmt == "arrow" else MindRecordWriter)(str(path), shard_num=2)
    writer.add_schema({"label": {"type": "int32"}})
    writer.write_raw_data([{"label": i} for i in range(4)])
    writer.commit()
    with pytest.raises(DataFormatError) as caught:
        md.MindDataset(str(path))
    text = str(caught.value)
    assert text.startswith(f"MindDataset: record file {path} does not exist")
    assert "x.mindrecord0, x.mindrecord1" in text
    assert f"pass the path of one of them, e.g. {path}0" in text
    assert _labels(f"{path}0") == [0, 1, 2, 3]  # the suggestion reads the whole set


def test_a_missing_shard_of_a_set_is_named_as_the_sets(tmp_path):
    first, second = _write(tmp_path / "x.mindrecord", range(4), shard_num=2)
    os.remove(second)
    with pytest.raises(DataFormatError, match=rf"record file {re.escape(second)} does not exist, but "
                                              r"x.mindrecord0's set names it as one of its shards"):
        md.MindDataset(first)
