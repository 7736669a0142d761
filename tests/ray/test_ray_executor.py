"""The Ray executor (engine/ray_executor/) on a real local Ray cluster: same rows as the local executor."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from ray_cluster import is_loopback, listening_addresses, ray_cluster  # noqa: F401 - the session's cluster
from testkit import exact_rows

import minddata as md
from minddata import vision
from minddata.engine.ray_executor import RayPlan
from minddata.engine.ray_executor.actors import needs_actor
from minddata.errors import DataFormatError, GraphError, RowError
from minddata.ops import KernelContext, get_kernel

# Ray Data copies its context, touching its own deprecated fields: not this project's warnings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")

ROWS = 3  # per dataset: random ops must differ between rows, and the runs must stay small


def _same_rows(dataset, epochs=1):
    local = exact_rows(dataset, "local", epochs)
    on_ray = exact_rows(dataset, "ray", epochs)
    assert len(on_ray) == len(local)
    assert on_ray == local


def _contract_cases():
    path = Path(__file__).parents[1] / "ops" / "test_contract.py"
    spec = importlib.util.spec_from_file_location("minddata_contract_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    # It imports its sibling helper module (contract_text) as pytest's rootdir-relative import does when
    # tests/ops is collected; run alone, this test must put that folder on the path itself.
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module.CASES


def test_every_contract_op_gives_the_local_rows_bit_for_bit():
    # One pipeline with a column group per op of the contract test's list: one Ray run for all.
    md.config.set_seed(11)
    columns: dict[str, list] = {}
    maps = []
    for name, case in _contract_cases().items():
        op = case.make()
        inputs = case.inputs()
        result = get_kernel(op.name, "CPU")(op, KernelContext(0, 0, 0, 0), *inputs)
        n_out = len(result) if op.num_outputs != 1 else 1
        ins = [f"{name}.in{k}" for k in range(len(inputs))]
        outs = [f"{name}.out{k}" for k in range(n_out)] if n_out != len(inputs) else ins
        for column, value in zip(ins, inputs):
            columns[column] = [value] * ROWS
        maps.append((op, ins, outs))
    ds = md.NumpySlicesDataset(columns, shuffle=False)
    for op, ins, outs in maps:
        ds = ds.map(op, input_columns=ins, output_columns=outs)
    _same_rows(ds)


def _images(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (12 + i % 3, 16, 3), dtype=np.uint8) for i in range(n)]


class _Rows:
    """Random-access rows of images of two sizes (ragged, so batch and padding have work to do)."""

    def __init__(self):
        self.images = _images()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], np.int64(i)


def _source(shuffle=True, **kwargs):
    return md.GeneratorDataset(_Rows(), ["image", "label"], shuffle=shuffle, **kwargs)


def _augment(ds):
    return ds.map([vision.RandomCrop(8), vision.RandomHorizontalFlip()], input_columns="image")


PIPELINES = {
    "shuffled source + random map": lambda: _augment(_source()),
    "shards and num_samples": lambda: _augment(_source(num_shards=3, shard_id=1, num_samples=3)),
    "filter": lambda: _augment(_source()).filter(lambda label: label % 3 != 0, input_columns="label"),
    "project + rename": lambda: _augment(_source()).project(["label", "image"]).rename(["label"], ["y"]),
    "take + skip": lambda: _augment(_source()).skip(2).take(7),
    "concat": lambda: _augment(_source()) + _augment(_source(shuffle=False)),
    "zip": lambda: md.zip((_augment(_source()), _source(shuffle=False).rename(["image", "label"], ["i2", "l2"]))),
    "batch": lambda: _augment(_source()).batch(5),
    "batch with per_batch_map": lambda: _augment(_source()).batch(
        4, per_batch_map=lambda images, labels, info: (images, [x * info.get_batch_num() for x in labels]),
        input_columns=["image", "label"]),
    "padded batch": lambda: _source().padded_batch(4, pad_info={"image": ([15, 16, 3], 0)}),
    "bucket batch": lambda: _source().map(lambda x: x[: 1 + x.shape[0] % 4, 0, 0], input_columns="image")
    .bucket_batch_by_length(["image"], [2, 4], [3, 3, 3], pad_info={"image": ([None], 0)}),
    "repeat": lambda: _augment(_source()).repeat(2),
    "shuffle buffer over the source": lambda: _augment(_source(shuffle=False).shuffle(4)),
    "shuffle buffer after the maps": lambda: _augment(_source(shuffle=False)).shuffle(5),
}


@pytest.mark.parametrize("name", PIPELINES)
def test_dataset_op_gives_the_local_rows(name):
    md.config.set_seed(3)
    _same_rows(PIPELINES[name]())


def test_epochs_reshuffle_as_locally():
    md.config.set_seed(5)
    _same_rows(_augment(_source()), epochs=2)


def test_unseeded_shuffle_gives_the_same_multiset_of_rows():
    # Without a seed each run draws its own order: the rows are the same, as a multiset.
    ds = _source()
    local = Counter(int(r[1]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    on_ray = Counter(int(r[1]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray"))
    assert on_ray == local == Counter(range(12))


def test_image_folder_with_fused_decode_crop_matches_local(image_folder):
    md.config.set_seed(9)
    ds = md.ImageFolderDataset(str(image_folder), shuffle=True)
    ds = ds.map([vision.Decode(), vision.RandomResizedCrop((8, 8))], input_columns="image")
    _same_rows(ds)


def test_parquet_source_split_into_read_tasks_matches_local(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    for f in range(2):
        pq.write_table(pa.table({"x": np.arange(f * 50, f * 50 + 50), "y": np.arange(50) * 0.5}),
                       tmp_path / f"part{f}.parquet", row_group_size=16)
    md.config.set_seed(2)
    ds = md.ParquetDataset(sorted(str(p) for p in tmp_path.glob("*.parquet")), shuffle=False)
    _same_rows(ds.map(lambda x: x * 3, input_columns="x"))


def _tfrecord_helpers():
    path = Path(__file__).parents[1] / "dataset" / "test_formats.py"
    spec = importlib.util.spec_from_file_location("minddata_tfrecord_helpers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tfrecord_files(tmp_path, compress=None):
    helpers = _tfrecord_helpers()
    paths = []
    for f in range(3):
        paths.append(str(tmp_path / f"part{f}.tfrecord"))
        helpers._tfrecord(tmp_path / f"part{f}.tfrecord", helpers._records(5 + 2 * f, start=10 * f), compress)
    return paths


@pytest.mark.parametrize("shuffle", [False, md.Shuffle.FILES, md.Shuffle.GLOBAL])
def test_tfrecord_files_split_into_read_tasks_match_local(tmp_path, shuffle):
    md.config.set_seed(5)
    ds = md.TFRecordDataset(_tfrecord_files(tmp_path), shuffle=shuffle, num_parallel_workers=2)
    _same_rows(_augment_labels(ds), epochs=2)


def test_sharded_tfrecord_rows_match_local(tmp_path):
    md.config.set_seed(5)
    files = _tfrecord_files(tmp_path)
    for equal_rows in (False, True):
        ds = md.TFRecordDataset(files, num_shards=2, shard_id=1, shard_equal_rows=equal_rows, num_samples=6)
        _same_rows(_augment_labels(ds))


def test_a_corrupted_tfrecord_record_names_the_file_and_record(tmp_path):
    files = _tfrecord_files(tmp_path)
    data = bytearray(Path(files[1]).read_bytes())
    data[20] ^= 0xFF  # inside the first record's data: its headers still check out
    Path(files[1]).write_bytes(bytes(data))
    ds = md.TFRecordDataset(files, shuffle=False)
    with pytest.raises(DataFormatError, match=r"part1\.tfrecord is corrupted: record 0 at byte 0 fails its data CRC"):
        exact_rows(ds, "ray")


def _augment_labels(ds):
    return ds.map(lambda label: label * 2, input_columns="label")


def test_compressed_tfrecord_fails_at_build_naming_the_source(tmp_path):
    ds = md.TFRecordDataset(_tfrecord_files(tmp_path, "GZIP"), compression_type="GZIP", shuffle=False)
    with pytest.raises(GraphError, match="TFRecordDataset.*front to back"):
        RayPlan(ds._node)


def test_map_after_batch_fails_at_build_naming_the_op():
    ds = _source().batch(2).map(lambda x: x, input_columns="image")
    with pytest.raises(GraphError, match=r"Map\[<lambda>\].*after Batch\(2\)"):
        ds.create_tuple_iterator(num_epochs=1, executor="ray")


def test_random_map_after_filter_fails_at_build():
    ds = _augment(_source().filter(lambda label: label > 2, input_columns="label"))
    with pytest.raises(GraphError, match=r"RandomCrop.*after Filter"):
        ds.create_tuple_iterator(num_epochs=1, executor="ray")


def test_front_to_back_source_fails_at_build():
    ds = md.GeneratorDataset(lambda: iter([(1,), (2,)]), ["x"])
    with pytest.raises(GraphError, match="front to back"):
        ds.create_tuple_iterator(num_epochs=1, executor="ray")


def test_op_error_names_the_op_and_row():
    def fail_on_seven(x):
        if x == 7:
            raise ValueError("seven")
        return x

    ds = _source(shuffle=False).map(fail_on_seven, input_columns="label")
    with pytest.raises(RowError, match=r"fail_on_seven failed on row 7.*seven"):
        list(ds.create_tuple_iterator(num_epochs=1, executor="ray"))


def _arrays(dataset):
    return [a for row in dataset.create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray")
            for a in row]


def test_rows_from_ray_are_writable_arrays_of_their_own():
    arrays = _arrays(_augment(_source()))
    assert arrays and all(a.flags.writeable for a in arrays)
    arrays[0][...] = 0  # the consumer may write into what it got


def test_batches_from_ray_are_writable_and_hold_the_local_values():
    md.config.set_seed(4)
    ds = _augment(_source(shuffle=False)).batch(5)
    batches = _arrays(ds)
    assert batches and all(b.flags.writeable for b in batches)
    local = [a for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True) for a in row]
    assert all(np.array_equal(g, w) for g, w in zip(batches, local, strict=True))


def test_per_batch_map_gets_rows_it_may_write_into():
    def zero_first(images, labels, info):
        for image in images:
            image[0] = 0  # in place, as user code may
        return images, labels

    ds = _augment(_source(shuffle=False)).batch(4, per_batch_map=zero_first, input_columns=["image", "label"])
    images = _arrays(ds)[0::2]
    assert all(not image[:, 0].any() for image in images)


def test_to_ray_gives_rows_with_the_pipeline_columns():
    md.config.set_seed(4)
    ds = _augment(_source())
    rows = ds.to_ray().take_all()
    local = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [sorted(r) for r in rows] == [["image", "label"]] * 12
    assert all(np.array_equal(r["image"], w["image"]) and r["label"] == w["label"] for r, w in zip(rows, local))


def test_to_ray_ending_in_batch_gives_the_local_batches():
    md.config.set_seed(4)
    ds = _augment(_source()).batch(5)
    batches = ds.to_ray().take_all()
    local = list(ds.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert len(batches) == len(local) == 3
    for got, want in zip(batches, local):
        assert np.array_equal(got["image"], want["image"])
        assert np.array_equal(got["label"], want["label"])


def test_to_ray_with_a_consumer_op_fails_naming_it():
    with pytest.raises(GraphError, match=r"to_ray\(\): Repeat\(2\)"):
        _source().repeat(2).to_ray()


def test_streaming_split_gives_each_trainer_an_equal_share_of_every_row():
    shards = _source(shuffle=False).to_ray().streaming_split(2, equal=True)
    # The trainers read at the same time (one shard alone would wait for the other to take its part).
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(lambda s: [int(row["label"]) for row in s.iter_rows()], shard) for shard in shards]
        seen = [f.result(timeout=120) for f in futures]
    assert len(seen[0]) == len(seen[1]) == 6
    assert sorted(seen[0] + seen[1]) == list(range(12))


class KillOnce:
    """A stateful callable (so it runs in an actor pool) that kills its own actor process at row 5,
    once: the marker file tells the restarted actor it already happened."""

    def __init__(self, marker: str):
        self.marker = marker

    def __call__(self, label):
        if int(label) == 5 and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return label


def test_killed_actor_still_delivers_every_row_exactly_once(tmp_path):
    marker = tmp_path / "killed"
    ds = _source(shuffle=False).map(KillOnce(str(marker)), input_columns="label")
    labels = [int(r[1]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray")]
    assert marker.exists(), "the actor was never killed"
    assert int(marker.read_text()) != os.getpid()
    assert Counter(labels) == Counter(range(12))


def test_ray_processes_listen_on_loopback_only():
    found = listening_addresses()
    assert found, "found none of the Ray processes' sockets"
    assert [(pid, ip) for pid, ip in found if not is_loopback(ip)] == []


def test_local_cluster_collects_no_usage_statistics():
    # The cluster sends nothing elsewhere, and Ray Data's usage actor and metrics poller cost CPU.
    from ray._common.usage.usage_lib import usage_stats_enabled
    from ray.data._internal.usage import collector

    assert not usage_stats_enabled()
    assert collector.usage_collection_disabled()


def test_missing_ray_names_the_install_command(monkeypatch):
    from minddata.engine.ray_executor import require_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'minddata\[ray\]'"):
        require_ray()


def slow_identity(label):
    time.sleep(0.02)
    return label


def test_profile_stage_table_comes_from_ray_stats_with_the_local_verdict():
    ds = md.NumpySlicesDataset({"label": np.arange(24)}, shuffle=False).map(slow_identity, input_columns="label")
    verdicts = {}
    for executor in ("local", "ray"):
        with md.Profiler() as prof:
            for _ in ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor=executor):
                pass
        summary = prof.summary()
        verdicts[executor] = summary.bottleneck.stage
    ray_stage = next(s for s in summary.stages if s.node_type == "RayOperator")
    assert ray_stage.rows_out == 24 and ray_stage.seconds >= 24 * 0.02 * 0.9
    assert verdicts["local"] == "Map[slow_identity]"
    assert verdicts["ray"] == ray_stage.name and "Map[slow_identity]" in verdicts["ray"]


def test_resumed_ray_iterator_continues_with_the_same_rows():
    md.config.set_seed(8)
    ds = _augment(_source()).batch(3)
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray")
    next(it)
    state = it.get_state()
    rest = [b[0].tobytes() for b in it]
    resumed = ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray", state=state)
    assert [b[0].tobytes() for b in resumed] == rest and len(rest) == 3


def test_gpu_map_runs_in_an_actor_pool_with_the_local_rows():
    from minddata.ops.probe import dali_status

    ok, why = dali_status()
    if not ok:
        pytest.skip(f"GPU maps are DALI translations and nvidia.dali is not importable: {why}")
    md.config.set_gpu_emulation(True)  # the driver's setting travels to the Ray actors
    md.config.set_seed(6)
    ds = _source(shuffle=False).map([vision.HorizontalFlip(), vision.Rescale(0.5, 1.0)], input_columns="image",
                                    device="GPU")
    (segment,) = RayPlan(ds._node).segments.values()
    assert needs_actor(segment.steps[-1])
    _same_rows(ds)


def fail_on_odd(label):
    if label % 2:
        raise ValueError(f"odd label {label}")
    return label


def test_skip_mode_drops_failed_rows_and_counts_them_as_locally():
    md.config.set_error_samples_mode("skip")
    ds = _source(shuffle=False).map(fail_on_odd, input_columns="label")
    counts = {}
    for executor in ("local", "ray"):
        it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True, executor=executor)
        labels = [int(r[1]) for r in it]
        counts[executor] = (labels, it.skipped_rows, len(it.error_stats.samples))
    assert counts["ray"] == counts["local"] == ([0, 2, 4, 6, 8, 10], 6, 5)


def test_record_files_sharded_and_shuffled_match_local(image_folder, tmp_path):
    from minddata.record.convert import convert_image_folder

    convert_image_folder(image_folder, tmp_path / "set.mindrecord", shard_num=2)
    md.config.set_seed(12)
    ds = md.MindDataset(str(tmp_path / "set.mindrecord0"), shuffle=True, num_shards=2, shard_id=1)
    _same_rows(ds.map([vision.Decode(), vision.RandomResizedCrop((8, 8))], input_columns="image"))
