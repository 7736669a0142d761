"""Operation semantics, checked against MindSpore 2.10's behaviour on the same pipelines."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit import column

import minddata as md
from minddata.errors import ArgumentError, EpochsExhaustedError, GraphError


def five():
    return md.NumpySlicesDataset(list(range(5)), column_names=["x"], shuffle=False)


def test_take_then_repeat_takes_per_pass():
    assert column(five().take(1).repeat(2)) == [0, 0]


def test_repeat_then_skip_skips_once():
    assert column(five().repeat(2).skip(3)) == [3, 4, 0, 1, 2, 3, 4]


def test_batch_keeps_the_remainder():
    ds = md.NumpySlicesDataset([0, 1, 2], column_names=["x"], shuffle=False).batch(2)
    assert [len(b) for b in column(ds)] == [2, 1]


def test_batch_drop_remainder():
    ds = md.NumpySlicesDataset([0, 1, 2], column_names=["x"], shuffle=False).batch(2, drop_remainder=True)
    assert column(ds) == [[0, 1]]
    assert ds.get_dataset_size() == 1


def test_project_orders_columns_as_given():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2], "c": [3]}, shuffle=False).project(["c", "a"])
    assert ds.get_col_names() == ["c", "a"]
    assert [r.tolist() for r in next(iter(ds))] == [3, 1]


def test_split_consecutive_ranges():
    train, test = md.NumpySlicesDataset(np.arange(10), shuffle=False).split([0.8, 0.2], randomize=False)
    assert (train.get_dataset_size(), test.get_dataset_size()) == (8, 2)
    assert column(test) == [8, 9]


def test_split_randomized_partitions_the_rows():
    md.config.set_seed(3)
    parts = md.NumpySlicesDataset(np.arange(10), shuffle=False).split([6, 4])
    rows = [sorted(column(p)) for p in parts]
    assert len(rows[0]) == 6 and len(rows[1]) == 4
    assert sorted(rows[0] + rows[1]) == list(range(10))


def test_split_sizes_must_cover_the_dataset():
    with pytest.raises(ArgumentError, match="add up to the dataset size 5"):
        five().split([2, 2])


def test_reading_past_num_epochs_raises_a_clear_error():
    it = five().create_dict_iterator(num_epochs=2, output_numpy=True)
    assert len(list(it)) == 5
    assert len(list(it)) == 5
    with pytest.raises(EpochsExhaustedError, match="num_epochs=2"):
        next(it)


def test_each_for_loop_reads_one_epoch():
    it = five().create_tuple_iterator(num_epochs=3, output_numpy=True)
    epochs = [[int(r[0]) for r in it] for _ in range(3)]
    assert epochs == [[0, 1, 2, 3, 4]] * 3


def test_endless_epochs():
    it = five().create_tuple_iterator(num_epochs=-1, output_numpy=True)
    for _ in range(4):
        assert len(list(it)) == 5
    it.close()


def test_repeat_counts_in_dataset_size():
    assert five().repeat(3).get_dataset_size() == 15


@pytest.mark.parametrize(
    ("build", "size"),
    [
        # MindSpore 2.10's answers for the same pipelines.
        (lambda: five().repeat(-1), 5),
        (lambda: five().repeat(), 5),
        (lambda: five().repeat(-1).batch(2), 3),
        (lambda: five().repeat(-1).skip(2), 3),
        (lambda: five().repeat(2).repeat(-1), 10),
        (lambda: five().filter(lambda x: x > 1).repeat(-1), 3),
    ],
)
def test_endless_repeat_counts_one_pass_in_dataset_size(build, size):
    assert build().get_dataset_size() == size


def test_zip_stops_at_shortest_and_joins_columns():
    a = five()
    b = md.NumpySlicesDataset({"y": [10, 11, 12]}, shuffle=False)
    z = md.zip((a, b))
    assert z.get_col_names() == ["x", "y"]
    assert [(int(r["x"]), int(r["y"])) for r in z.create_dict_iterator(num_epochs=1, output_numpy=True)] == [
        (0, 10), (1, 11), (2, 12)
    ]
    assert z.get_dataset_size() == 3


def test_zip_of_one_node_with_itself_runs_independently():
    a = five()
    z = a.zip(a.skip(1).rename("x", "x1"))
    assert [(int(r["x"]), int(r["x1"])) for r in z.create_dict_iterator(num_epochs=1, output_numpy=True)] == [
        (0, 1), (1, 2), (2, 3), (3, 4)
    ]


def test_zip_column_clash_names_the_columns():
    with pytest.raises(GraphError, match=r"\['x'\]"):
        md.zip((five(), five()))


def test_concat_and_plus():
    assert column(five() + five().take(2)) == [0, 1, 2, 3, 4, 0, 1]
    assert column(five().concat([five().take(1), five().take(1)])) == [0, 1, 2, 3, 4, 0, 0]


def test_concat_schema_mismatch_names_both_schemas():
    other = md.NumpySlicesDataset({"y": [1]}, shuffle=False)
    with pytest.raises(GraphError, match=r"columns \['y'\].*\['x'\]"):
        five().concat(other)


def test_rename():
    ds = five().rename("x", "z")
    assert ds.get_col_names() == ["z"]
    assert column(ds) == [0, 1, 2, 3, 4]


def test_filter():
    assert column(five().filter(lambda x: x % 2 == 0, input_columns="x")) == [0, 2, 4]


def test_filter_with_workers_keeps_order():
    ds = md.NumpySlicesDataset(np.arange(1000), column_names=["x"], shuffle=False)
    assert column(ds.filter(lambda x: x % 3 == 0, num_parallel_workers=3)) == list(range(0, 1000, 3))


def test_map_one_to_many_columns_puts_outputs_first():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2], "c": [3]}, shuffle=False)
    out = ds.map(lambda a, b: (a, b, a + b), input_columns=["a", "b"], output_columns=["x", "y", "z"])
    assert out.get_col_names() == ["x", "y", "z", "c"]
    assert [int(v) for v in next(iter(out))] == [1, 2, 3, 3]


def test_map_same_count_replaces_in_place():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2], "c": [3]}, shuffle=False)
    out = ds.map(lambda c, b: (c, b), input_columns=["c", "b"], output_columns=["p", "q"])
    assert out.get_col_names() == ["a", "q", "p"]
    assert [int(v) for v in next(iter(out))] == [1, 2, 3]


def test_map_many_to_one():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2], "c": [3]}, shuffle=False)
    out = ds.map(lambda b, c: b + c, input_columns=["b", "c"], output_columns=["s"])
    assert out.get_col_names() == ["s", "a"]
    assert [int(v) for v in next(iter(out))] == [5, 1]


def test_map_of_non_adjacent_columns_to_fewer_outputs_leaves_no_stale_column():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2], "c": [3]}, shuffle=False)
    out = ds.map(lambda a, c: a + c, input_columns=["a", "c"], output_columns=["s"])
    assert out.get_col_names() == ["s", "b"]
    assert [int(v) for v in next(iter(out.create_tuple_iterator(num_epochs=1, output_numpy=True)))] == [4, 2]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_map_rows_match_get_col_names_for_any_columns(data):
    names = ["a", "b", "c", "d"]
    inputs = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True), label="inputs")
    n_out = data.draw(st.integers(1, 3), label="outputs")
    outputs = [f"o{k}" for k in range(n_out)]
    ds = md.NumpySlicesDataset({name: [10 * i] for i, name in enumerate(names)}, shuffle=False)
    out = ds.map(lambda *xs: tuple(sum(xs) + k for k in range(n_out)) if n_out > 1 else sum(xs),
                 input_columns=inputs, output_columns=outputs)
    expected = {name: 10 * i for i, name in enumerate(names) if name not in inputs}
    expected.update({o: sum(10 * names.index(c) for c in inputs) + k for k, o in enumerate(outputs)})
    row = next(iter(out.create_tuple_iterator(num_epochs=1, output_numpy=True)))
    assert len(row) == len(out.get_col_names())
    assert dict(zip(out.get_col_names(), (int(v) for v in row))) == expected


@pytest.mark.parametrize("build", [
    lambda ds: ds.map(lambda z: z, input_columns=["nope"]),
    lambda ds: ds.project(["nope"]),
    lambda ds: ds.rename(["nope"], ["z"]),
    lambda ds: ds.padded_batch(2, pad_info={"nope": ([3], 0)}),
])
def test_missing_column_is_also_a_runtime_error_as_in_mindspore(build):
    with pytest.raises(RuntimeError, match=r"\['nope'\] that the input does not have") as caught:
        build(five())
    assert isinstance(caught.value, md.errors.ColumnNotFoundError)
    assert isinstance(caught.value, GraphError)


def test_concat_of_different_column_types_raises_as_in_mindspore():
    ints = md.NumpySlicesDataset({"x": np.array([1, 2], np.int32)}, shuffle=False)
    longs = md.NumpySlicesDataset({"x": np.array([3, 4], np.int64)}, shuffle=False)
    with pytest.raises(RuntimeError, match=r"column 'x' is int32 in dataset 0 of the concat but int64 in dataset 1"):
        list(ints.concat(longs))
    strings = md.NumpySlicesDataset({"x": np.array(["a", "bcd"])}, shuffle=False)
    assert len(list(strings.concat(strings.take(1)))) == 3  # strings of any length are one type


def test_one_hot_smoothing_returns_float64_as_in_mindspore():
    from minddata import transforms

    ds = md.NumpySlicesDataset({"y": np.array([0, 2], np.int32)}, shuffle=False).map(transforms.OneHot(3, 0.1), "y")
    assert column(ds)[0] == pytest.approx([0.9 + 0.1 / 3, 0.1 / 3, 0.1 / 3], abs=1e-15)
    assert next(iter(ds))[0].dtype == np.float64


def test_type_cast_from_strings_is_refused_clearly_as_in_mindspore():
    from minddata import transforms

    ds = md.NumpySlicesDataset({"s": np.array(["1", "2.5"])}, shuffle=False).map(transforms.TypeCast(np.float32), "s")
    with pytest.raises(RuntimeError, match=r"strings are not parsed as numbers.*np.float32\(s\)"):
        list(ds)


def test_map_chain_of_callables():
    ds = five().map([lambda x: x + 1, lambda x: x * 10], input_columns="x")
    assert column(ds) == [10, 20, 30, 40, 50]


def test_map_output_count_mismatch_is_explained():
    ds = five().map(lambda x: (x, x), input_columns="x")
    with pytest.raises(md.errors.PipelineError, match="returned 2 value"):
        column(ds)


def test_map_unknown_input_column_fails_when_built():
    with pytest.raises(GraphError, match=r"\['nope'\].*Input columns: \['x'\]"):
        five().map(lambda x: x, input_columns="nope")


def test_map_output_name_clash():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2]}, shuffle=False)
    with pytest.raises(GraphError, match="clash"):
        ds.map(lambda a: a, input_columns="a", output_columns="b")


def test_per_batch_map_and_batch_info():
    def double(xs, info):
        return ([x * 2 + info.get_batch_num() for x in xs],)

    ds = five().batch(2, per_batch_map=double, input_columns=["x"])
    assert column(ds) == [[0, 2], [5, 7], [10]]


def test_per_batch_map_new_columns():
    ds = five().batch(5, per_batch_map=lambda xs, info: (xs, [x * x for x in xs]), input_columns=["x"],
                      output_columns=["x", "sq"])
    assert ds.get_col_names() == ["x", "sq"]
    row = next(iter(ds.create_dict_iterator(num_epochs=1, output_numpy=True)))
    assert row["sq"].tolist() == [0, 1, 4, 9, 16]


def test_callable_batch_size():
    ds = md.NumpySlicesDataset(np.arange(7), column_names=["x"], shuffle=False)
    ds = ds.batch(lambda info: info.get_batch_num() + 1)
    assert [len(b) for b in column(ds)] == [1, 2, 3, 1]


def test_batch_with_workers_matches_inline():
    ds = md.NumpySlicesDataset(np.arange(100).reshape(50, 2), column_names=["x"], shuffle=False)
    assert column(ds.batch(4, num_parallel_workers=3)) == column(ds.batch(4))


def test_batch_of_mismatched_shapes_names_column_and_shapes():
    def gen():
        yield (np.zeros((2, 2)),)
        yield (np.zeros((3, 2)),)

    ds = md.GeneratorDataset(gen, column_names=["img"]).batch(2)
    with pytest.raises(md.errors.PipelineError, match=r"column 'img'.*\(2, 2\), \(3, 2\)"):
        column(ds)


def test_shuffle_is_a_permutation_that_changes_per_epoch():
    md.config.set_seed(7)
    ds = md.NumpySlicesDataset(np.arange(50), column_names=["x"], shuffle=False).shuffle(16)
    epochs = column(ds, epochs=2)
    first, second = epochs[:50], epochs[50:]
    assert sorted(first) == sorted(second) == list(range(50))
    assert first != list(range(50)) and first != second


def test_shuffle_same_seed_same_order():
    def run():
        md.config.set_seed(11)
        return column(md.NumpySlicesDataset(np.arange(40), column_names=["x"], shuffle=False).shuffle(8))

    assert run() == run()


def test_default_source_shuffles_like_mindspore():
    md.config.set_seed(1)
    order = column(md.NumpySlicesDataset(np.arange(30), column_names=["x"]))
    assert sorted(order) == list(range(30)) and order != list(range(30))


def test_get_dataset_size_counts_when_unknown():
    assert five().filter(lambda x: x > 1).get_dataset_size() == 3


def test_output_shapes_and_types():
    ds = md.NumpySlicesDataset({"img": np.zeros((4, 2, 3), np.uint8), "y": [1, 2, 3, 4]}, shuffle=False).batch(2)
    assert ds.output_shapes() == [[2, 2, 3], [2]]
    assert ds.output_types() == [np.dtype(np.uint8), np.dtype(np.int64)]


def test_batch_size_and_repeat_count():
    ds = five().batch(2).repeat(3)
    assert ds.get_batch_size() == 2
    assert ds.get_repeat_count() == 3
    assert five().get_batch_size() == 1 and five().get_repeat_count() == 1


def test_iterating_the_dataset_gives_lists():
    rows = list(five())
    assert isinstance(rows[0], list) and int(rows[0][0]) == 0


def test_tuple_iterator_columns():
    ds = md.NumpySlicesDataset({"a": [1], "b": [2]}, shuffle=False)
    row = next(iter(ds.create_tuple_iterator(columns=["b", "a"], output_numpy=True)))
    assert [int(v) for v in row] == [2, 1]


def test_rows_are_numpy_arrays():
    row = next(iter(five().create_dict_iterator(num_epochs=1)))
    assert isinstance(row["x"], np.ndarray) and row["x"].shape == ()


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda d: d.batch(0), "`batch_size` must be greater than 0. Found: 0"),
        (lambda d: d.repeat(0), "`count` must be -1"),
        (lambda d: d.take(0), "`count` must be -1"),
        (lambda d: d.skip(-1), "`count` must be 0 or greater. Found: -1"),
        (lambda d: d.shuffle(1), "`buffer_size` must be greater than 1"),
        (lambda d: d.map([]), "at least one op"),
        (lambda d: d.map(42), "must be an op"),
        (lambda d: d.rename(["x"], ["a", "b"]), "same length"),
        (lambda d: d.map(lambda x: x, num_parallel_workers=0), "`num_parallel_workers` must be greater than 0"),
    ],
)
def test_bad_arguments_fail_at_construction(build, message):
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(five())


def test_building_the_graph_runs_nothing():
    calls = []

    def gen():
        calls.append(1)
        yield (1,)

    ds = md.GeneratorDataset(gen, column_names=["x"]).map(lambda x: calls.append(2) or x).batch(1)
    ds.get_col_names()
    assert calls == []


def test_more_workers_than_cores_is_allowed(caplog):
    import os

    ds = five().map(lambda x: x, num_parallel_workers=(os.cpu_count() or 1) + 3)
    assert column(ds) == [0, 1, 2, 3, 4]


def test_map_op_input_count_is_checked_when_built():
    from minddata import vision

    ds = md.NumpySlicesDataset({"a": [b"x"], "b": [1]}, shuffle=False)
    with pytest.raises(GraphError, match=r"Decode takes 1 input column\(s\), but input_columns names"):
        ds.map(vision.Decode(), input_columns=["a", "b"])


def test_map_without_input_columns_passes_only_the_first_column():
    ds = md.NumpySlicesDataset({"a": [1, 2], "b": [3, 4]}, shuffle=False)
    mapped = ds.map(lambda a: a * 10)
    assert mapped.get_col_names() == ["a", "b"]
    assert column(mapped, "a") == [10, 20] and column(mapped, "b") == [3, 4]
    two_outputs = ds.map(lambda a: (a, a + 1), output_columns=["p", "q"])
    assert two_outputs.get_col_names() == ["p", "q", "b"]
    assert [list(r) for r in two_outputs.create_tuple_iterator(output_numpy=True)] == [[1, 2, 3], [2, 3, 4]]
