"""``serialize`` / ``deserialize`` / ``show`` / ``compare`` / ``Dataset.to_json`` (minddata/dataset/serialization.py).

Round trips go through a real JSON file or ``json.dumps``/``json.loads``, and the rebuilt pipeline must
give the same rows as the original under the same seed. Every op the contract test builds
(tests/ops/test_contract.py ``CASES``) that minddata.vision or minddata.transforms exports is round-tripped
and run, so a new op is covered as soon as it has a contract entry.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minddata as md
from minddata import transforms, vision
from minddata.dataset.serialization import _Reader, _Writer, op_from_dict, op_to_dict
from minddata.errors import ArgumentError, GraphError
from minddata.ops import KernelContext, Op, get_kernel

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def rows(dataset: md.Dataset) -> list[dict[str, np.ndarray]]:
    return list(dataset.create_dict_iterator(num_epochs=1, output_numpy=True))


def assert_same_rows(a: md.Dataset, b: md.Dataset) -> None:
    first, second = rows(a), rows(b)
    assert len(first) == len(second) > 0
    for x, y in zip(first, second):
        assert list(x) == list(y)
        for name in x:
            assert x[name].dtype == y[name].dtype, name
            np.testing.assert_array_equal(x[name], y[name])


def through_file(dataset: md.Dataset, tmp_path: Path) -> md.Dataset:
    path = tmp_path / "pipeline.json"
    md.serialize(dataset, json_filepath=str(path))
    return md.deserialize(json_filepath=str(path))


def through_json(dataset: md.Dataset) -> md.Dataset:
    return md.deserialize(input_dict=json.loads(json.dumps(md.serialize(dataset))))


# ------------------------------------------------------------------------------------ pipelines


def test_image_folder_train_pipeline_round_trips_through_a_file(image_folder, tmp_path):
    md.config.set_seed(11)
    ds = md.ImageFolderDataset(str(image_folder), shuffle=True, num_parallel_workers=2)
    ds = ds.map(
        [
            vision.Decode(),
            vision.RandomResizedCrop(12, scale=(0.3, 1.0)),
            vision.Normalize(MEAN, STD),
            vision.HWC2CHW(),
        ],
        input_columns="image",
        num_parallel_workers=2,
    )
    ds = ds.batch(4, drop_remainder=True)
    again = through_file(ds, tmp_path)
    assert_same_rows(ds, again)
    assert md.compare(ds, again)


def test_numpy_slices_map_shuffle_repeat_round_trips():
    md.config.set_seed(3)
    data = {"x": np.arange(24, dtype=np.float32).reshape(6, 4), "y": np.array(list("abcdef"))}
    ds = md.NumpySlicesDataset(data, shuffle=True)
    ds = ds.map([transforms.TypeCast(np.int16), transforms.Fill(np.int16(5))], input_columns="x")
    ds = ds.shuffle(4).repeat(3)
    assert_same_rows(ds, through_json(ds))


def test_zip_and_concat_round_trip():
    a = md.NumpySlicesDataset({"a": [1, 2, 3]}, shuffle=False)
    b = md.NumpySlicesDataset({"b": [10, 20, 30, 40]}, shuffle=False)
    zipped = md.zip([a, b]).rename(["a", "b"], ["p", "q"]).project(["q", "p"])
    joined = zipped.take(2) + zipped.skip(1)
    assert_same_rows(joined, through_json(joined))


def test_concat_use_sampler_round_trips():
    both = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False) + md.PaddedDataset([{"x": np.array(-1)}])
    both.use_sampler(md.DistributedSampler(num_shards=2, shard_id=1, shuffle=False))
    again = through_json(both)
    assert [int(r["x"]) for r in rows(again)] == [2, -1]


def _labelled(n: int = 12) -> dict[str, np.ndarray]:
    return {"x": np.arange(n, dtype=np.int32), "label": np.arange(n, dtype=np.int32) % 3}


@pytest.mark.parametrize(
    "make_sampler",
    [
        lambda: md.SequentialSampler(start_index=2, num_samples=5),
        lambda: md.RandomSampler(replacement=True, num_samples=7),
        lambda: md.DistributedSampler(num_shards=3, shard_id=1, shuffle=True, offset=1),
        lambda: md.SubsetSampler(np.array([5, 1, 9])),
        lambda: md.SubsetRandomSampler([0, 4, 8, 11]),
        lambda: md.WeightedRandomSampler([0.1, 0.5, 0.2, 0.9], num_samples=6),
    ],
    ids=["sequential", "random", "distributed", "subset", "subset_random", "weighted"],
)
def test_sampler_round_trips_with_its_rows(make_sampler):
    md.config.set_seed(5)
    ds = md.NumpySlicesDataset(_labelled(), sampler=make_sampler())
    assert_same_rows(ds, through_json(ds))


def test_pk_sampler_round_trips(image_folder):
    md.config.set_seed(5)
    ds = md.ImageFolderDataset(str(image_folder), sampler=md.PKSampler(2, shuffle=True))
    assert_same_rows(ds, through_json(ds))


def test_child_sampler_round_trips():
    md.config.set_seed(5)
    parent = md.RandomSampler(num_samples=3)
    parent.add_child(md.SubsetSampler([9, 7, 5, 3, 1]))
    ds = md.NumpySlicesDataset(_labelled(), sampler=parent)
    pipeline = md.serialize(ds)
    assert pipeline["sampler"]["child_sampler"][0]["sampler_name"] == "SubsetSampler"
    assert_same_rows(ds, through_json(ds))


def test_sharding_arguments_round_trip(image_folder):
    md.config.set_seed(2)
    ds = md.ImageFolderDataset(str(image_folder), num_shards=3, shard_id=2, decode=True)
    assert_same_rows(ds, through_json(ds))


def test_split_keeps_each_part_rows():
    md.config.set_seed(9)
    parts = md.NumpySlicesDataset({"x": list(range(10))}, shuffle=False).split([0.7, 0.3])
    for part in parts:
        assert_same_rows(part, through_json(part))


def test_source_use_sampler_round_trips():
    ds = md.NumpySlicesDataset({"x": list(range(6))}, shuffle=False)
    ds.use_sampler(md.SubsetSampler([4, 0, 2]))
    assert [int(r["x"]) for r in rows(through_json(ds))] == [4, 0, 2]


def _slices_of_pairs() -> md.Dataset:
    ds = md.NumpySlicesDataset({"v": np.arange(12).reshape(6, 2)}, shuffle=False)
    return ds.map(transforms.Slice(slice(0, 1)), input_columns="v")


def test_padded_batch_round_trips():
    padded = _slices_of_pairs().padded_batch(4, pad_info={"v": ([3], -1)})
    assert_same_rows(padded, through_json(padded))


def test_bucket_batch_round_trips():
    bucketed = _slices_of_pairs().bucket_batch_by_length("v", [2], [2, 3], pad_info={"v": ([None], 0)})
    assert_same_rows(bucketed, through_json(bucketed))


def test_sync_wait_without_callback_round_trips():
    ds = md.NumpySlicesDataset({"x": list(range(4))}, shuffle=False).sync_wait("gate", num_batch=1).batch(2)
    again = through_json(ds)
    out = []
    for batch in again.create_dict_iterator(num_epochs=1, output_numpy=True):
        out.append(batch["x"].tolist())
        again.sync_update("gate")
    assert out == [[0, 1], [2, 3]]


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("alpha\nbeta\ngamma\n")
    return str(path)


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("a,b\n1,x\n2,y\n3,z\n")
    return str(path)


def test_text_file_source_round_trips(text_file):
    ds = md.TextFileDataset(text_file, shuffle=False)
    assert_same_rows(ds, through_json(ds))


def test_csv_source_round_trips(csv_file):
    ds = md.CSVDataset(csv_file, column_names=["a", "b"], shuffle=False)
    assert_same_rows(ds, through_json(ds))


def test_generated_source_round_trips():
    md.config.set_seed(4)
    ds = md.FakeImageDataset(num_images=5, image_size=(6, 5, 3), num_classes=2, base_seed=3)
    assert_same_rows(ds, through_json(ds))


def test_mindrecord_source_round_trips(tmp_path):
    path = str(tmp_path / "data.mindrecord")
    md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).save(path)
    ds = md.MindDataset(path, shuffle=False)
    assert_same_rows(ds, through_json(ds))


def test_relative_dataset_dir_is_written_absolute(image_folder, monkeypatch):
    monkeypatch.chdir(image_folder.parent)
    ds = md.ImageFolderDataset("images", shuffle=False)
    assert md.serialize(ds)["dataset_dir"] == str(image_folder)


def test_autotune_workers_round_trip():
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).map(
        transforms.TypeCast("int8"), input_columns="x", num_parallel_workers=md.AUTOTUNE
    )
    assert md.serialize(through_json(ds)) == md.serialize(ds)


def test_op_placement_is_kept():
    ds = md.NumpySlicesDataset({"x": [[[[1, 2, 3]]]]}, shuffle=False)
    ds = ds.map([vision.HorizontalFlip().device("GPU"), vision.VerticalFlip()], input_columns="x")
    operations = md.serialize(through_json(ds))["operations"]
    assert operations[0]["device_target"] == "GPU"
    assert "device_target" not in operations[1]


# ------------------------------------------------------------------------------------ the JSON


def test_json_has_mindspore_node_shape(image_folder):
    ds = (
        md.ImageFolderDataset(str(image_folder), decode=True)
        .map(vision.Resize(8), input_columns="image")
        .batch(2)
    )
    pipeline = md.serialize(ds)
    source = pipeline["children"][0]["children"][0]
    assert pipeline["op_type"] == "Batch" and pipeline["batch_size"] == 2
    assert source["op_type"] == "ImageFolderDataset" and source["decode"] is True and source["children"] == []
    op = pipeline["children"][0]["operations"][0]
    assert (op["tensor_op_name"], op["tensor_op_params"]["size"]) == ("Resize", 8)
    for node in (pipeline, pipeline["children"][0], source):
        assert {"op_type", "num_parallel_workers", "children"} <= set(node)


def test_to_json_writes_the_file_it_returns(tmp_path):
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).batch(2)
    path = tmp_path / "p.json"
    returned = ds.to_json(str(path))
    assert returned["op_type"] == "Batch"
    assert json.loads(path.read_text()) == returned


def test_show_prints_the_serialized_pipeline(capsys):
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).take(1)
    md.show(ds, indentation=4)
    printed = capsys.readouterr().out
    assert json.loads(printed) == md.serialize(ds)
    assert '\n    "op_type"' in printed


def test_compare_tells_arguments_apart():
    def build(size: int) -> md.Dataset:
        return md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).map(vision.Resize(size), input_columns="x")

    assert md.compare(build(8), build(8))
    assert not md.compare(build(8), build(9))


# ---------------------------------------------------------------------- Python code and bad input


def test_lambda_in_map_is_named_and_deserialize_names_the_fix():
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).map(lambda x: x + 1, input_columns="x")
    pipeline = md.serialize(ds)
    assert pipeline["operations"][0] == {
        "tensor_op_name": "test_lambda_in_map_is_named_and_deserialize_names_the_fix.<locals>.<lambda>",
        "python_module": __name__,
        "is_python_front_end_op": True,
    }
    with pytest.raises(
        GraphError, match=r"Map \(at root\) argument `operations`\[0\].*Python callable.*Fix:"
    ):
        md.deserialize(input_dict=pipeline)


def test_generator_source_fails_at_deserialize_naming_the_source():
    def numbers():
        yield from range(3)

    ds = md.GeneratorDataset(numbers, column_names=["n"]).batch(2)
    with pytest.raises(
        GraphError, match=r"GeneratorDataset \(at root > children\[0\]\) argument `source`.*numbers"
    ):
        md.deserialize(input_dict=json.loads(json.dumps(md.serialize(ds))))


def test_filter_predicate_fails_at_deserialize():
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).filter(lambda x: x > 1, input_columns="x")
    with pytest.raises(GraphError, match=r"Filter \(at root\) argument `predicate`"):
        md.deserialize(input_dict=md.serialize(ds))


def test_user_sampler_fails_at_deserialize():
    class Backwards(md.Sampler):
        def __iter__(self):
            yield from range(self.dataset_size - 1, -1, -1)

    ds = md.NumpySlicesDataset({"x": [1, 2]}, sampler=Backwards())
    with pytest.raises(GraphError, match=r"sampler class .*Backwards.*outside minddata"):
        md.deserialize(input_dict=md.serialize(ds))


def test_flat_map_fails_at_deserialize():
    ds = md.NumpySlicesDataset({"x": [1]}, shuffle=False).flat_map(
        lambda x: md.NumpySlicesDataset({"y": [x]}, shuffle=False)
    )
    with pytest.raises(GraphError, match=r"FlatMap \(at root\): flat_map's `func` is Python code"):
        md.deserialize(input_dict=md.serialize(ds))


def test_classes_outside_minddata_are_not_imported():
    pipeline = md.serialize(md.NumpySlicesDataset({"x": [1]}, shuffle=False))
    pipeline["module"] = "os"
    with pytest.raises(GraphError, match="only classes of the minddata package"):
        md.deserialize(input_dict=pipeline)


def test_deserialize_needs_a_dict_or_a_file():
    with pytest.raises(ArgumentError, match="give `input_dict`"):
        md.deserialize()


def test_unknown_op_type_is_named():
    with pytest.raises(ArgumentError, match="unknown op_type 'Teleport'"):
        md.deserialize(input_dict={"op_type": "Teleport", "children": []})


# ----------------------------------------------------------------------------------------- values


VALUES = {
    "tuple": (1, (2.5, "a"), [None, True]),
    "uint8_array": np.arange(6, dtype=np.uint8).reshape(2, 3),
    "float_array_nan": np.array([1.5, np.nan, -np.inf], np.float32),
    "str_array": np.array(["ab", "c"]),
    "bytes_array": np.array([b"x\x00", b"yz"]),
    "object_array": np.array([1, "a", None], dtype=object),
    "empty_array": np.zeros((0, 3), np.int64),
    "bytes": b"\x00\xffabc",
    "numpy_scalar": np.int16(-7),
    "complex": 2 + 3j,
    "slice": slice(1, None, -2),
    "ellipsis": Ellipsis,
    "dtype": np.dtype("float16"),
    "unicode_dtype": np.dtype("<U3"),
    "numpy_type": np.float32,
    "builtin_type": int,
    "enum": vision.Inter.AREA,
    "str_enum": vision.Border.REFLECT,
    "tagged_key_dict": {"__tuple__": 1, 2: "two"},
}


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and all(_same(x, y) for x, y in zip(a.ravel(), b.ravel()))
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (float, np.floating)) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_argument_values_keep_their_types(name):
    value = VALUES[name]
    written = json.loads(json.dumps(_Writer().value(value)))
    assert _same(_Reader().value(written, "value"), value)


# ------------------------------------------------------------------------------ every op spec


def _contract_cases() -> dict[str, Any]:
    path = Path(__file__).resolve().parents[1] / "ops" / "test_contract.py"
    module = sys.modules.get("test_contract")
    if module is None or Path(getattr(module, "__file__", "")).resolve() != path:
        spec = importlib.util.spec_from_file_location("test_contract", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["test_contract"] = module
        if str(path.parent) not in sys.path:  # its helper modules (contract_text) sit beside it
            sys.path.append(str(path.parent))
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.CASES


CASES = _contract_cases()


def _exported(op: Op) -> bool:
    cls = type(op)
    return any(getattr(module, cls.__name__, None) is cls for module in (vision, transforms))


PUBLIC_CASES = sorted(name for name, case in CASES.items() if _exported(case.make()))


def test_contract_cases_hold_public_ops():
    assert {"Decode", "RandomResizedCrop", "Normalize", "HWC2CHW", "Compose", "Slice"} <= set(PUBLIC_CASES)


def _run(op: Op, inputs: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    out = get_kernel(op.name, "CPU")(op, KernelContext(seed=21, row_index=4, op_position=1), *inputs)
    return tuple(np.asarray(x) for x in out) if isinstance(out, (tuple, list)) else (np.asarray(out),)


@pytest.mark.parametrize("name", PUBLIC_CASES)
def test_every_public_op_round_trips_through_json(name):
    case = CASES[name]
    op = case.make()
    again = op_from_dict(json.loads(json.dumps(op_to_dict(op))))
    assert type(again) is type(op)
    assert again == op
    inputs = case.inputs()
    for a, b in zip(_run(op, inputs), _run(again, inputs)):
        np.testing.assert_array_equal(a, b)


def test_schema_argument_round_trips():
    schema = md.Schema()
    schema.add_column("image", de_type="uint8", shape=[4, 3])
    schema.add_column("label", de_type="int32", shape=[1])
    ds = md.RandomDataset(total_rows=4, schema=schema, base_seed=7, shuffle=False)
    assert_same_rows(ds, through_json(ds))


def test_map_callbacks_are_one_map_node_and_fail_at_deserialize():
    ds = md.NumpySlicesDataset({"x": [1, 2]}, shuffle=False)
    ds = ds.map(transforms.TypeCast("int8"), input_columns="x", callbacks=[md.DSCallback()])
    pipeline = md.serialize(ds)
    assert pipeline["op_type"] == "Map" and pipeline["children"][0]["op_type"] == "NumpySlicesDataset"
    with pytest.raises(GraphError, match=r"Map \(at root\) argument `callbacks`\[0\].*DSCallback"):
        md.deserialize(input_dict=pipeline)


def test_cached_map_and_cached_source_keep_their_cache(tmp_path, monkeypatch):
    from minddata.engine import cache_store
    from minddata.engine.cache_stage import CacheNode

    monkeypatch.setenv("MINDDATA_CACHE_DIR", str(tmp_path))
    cache = md.DatasetCache(session_id=cache_store.new_session_id(), size=16)
    try:
        mapped = md.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).map(
            transforms.TypeCast(np.float32), input_columns="x", cache=cache)
        source = md.FakeImageDataset(num_images=4, image_size=(8, 8, 3), num_classes=2, shuffle=False, cache=cache)
        for ds in (mapped, source):
            back = through_json(ds)
            assert isinstance(back._node, CacheNode) and back._node.session_id == cache.session_id
            assert_same_rows(ds, back)
    finally:
        cache.destroy()
