"""Sources: NumpySlicesDataset, GeneratorDataset, ImageFolderDataset."""

from __future__ import annotations

import numpy as np
import pytest
from testkit import column

import minddata as md
from minddata.errors import ArgumentError, GraphError, RowError

# NumpySlicesDataset ---------------------------------------------------------------------------

def test_numpy_slices_dict_columns_are_keys():
    ds = md.NumpySlicesDataset({"a": [1, 2], "b": [[1, 2], [3, 4]]}, shuffle=False)
    assert ds.get_col_names() == ["a", "b"]
    assert column(ds, "b") == [[1, 2], [3, 4]]


def test_numpy_slices_list_is_one_column_with_default_name():
    ds = md.NumpySlicesDataset([5, 6, 7], shuffle=False)
    assert ds.get_col_names() == ["column_0"]
    assert column(ds) == [5, 6, 7]


def test_numpy_slices_tuple_is_one_column_per_element():
    ds = md.NumpySlicesDataset(([1, 2], [3, 4]), column_names=["p", "q"], shuffle=False)
    assert [(int(r["p"]), int(r["q"])) for r in ds.create_dict_iterator(num_epochs=1, output_numpy=True)] == [(1, 3), (2, 4)]


def test_numpy_slices_array_slices_first_axis():
    ds = md.NumpySlicesDataset(np.arange(12).reshape(3, 4), column_names=["v"], shuffle=False)
    assert ds.output_shapes() == [[4]]
    assert ds.get_dataset_size() == 3


def test_numpy_slices_unequal_columns():
    with pytest.raises(ArgumentError, match="same number of rows"):
        md.NumpySlicesDataset({"a": [1, 2], "b": [1]})


def test_numpy_slices_ragged_column_gives_one_row_per_array():
    ds = md.NumpySlicesDataset([np.array([1, 2, 3]), np.array([4, 5])], column_names=["x"], shuffle=False)
    assert [r[0].tolist() for r in ds.create_tuple_iterator(output_numpy=True)] == [[1, 2, 3], [4, 5]]


def test_numpy_slices_ragged_rows_keep_their_dtype_through_shuffle_and_padded_batch():
    md.config.set_seed(0)
    ds = md.NumpySlicesDataset({"a": [[1, 2], [3]]}).padded_batch(2, pad_info={"a": ([2], 0)})
    (batch,) = list(ds.create_tuple_iterator(output_numpy=True))
    assert batch[0].dtype == np.int64 and sorted(batch[0].tolist()) == [[1, 2], [3, 0]]


def test_numpy_slices_ragged_inside_a_row_is_refused():
    with pytest.raises(ArgumentError, match="row 1 of column 'a' is ragged inside"):
        md.NumpySlicesDataset({"a": [[1], [[1, 2], [3]]]})


def test_numpy_slices_num_samples_and_sampler():
    ds = md.NumpySlicesDataset(np.arange(10), shuffle=False, num_samples=4)
    assert column(ds) == [0, 1, 2, 3]
    ds = md.NumpySlicesDataset(np.arange(10), sampler=[9, 3, 5])
    assert column(ds) == [9, 3, 5]


def test_numpy_slices_sampler_and_shuffle_conflict():
    with pytest.raises(ArgumentError, match="shuffle"):
        md.NumpySlicesDataset(np.arange(10), sampler=md.SequentialSampler(), shuffle=True)


# GeneratorDataset ------------------------------------------------------------------------------

def test_generator_function_is_called_each_epoch():
    def gen():
        for i in range(3):
            yield (np.array(i), np.array([i, i]))

    ds = md.GeneratorDataset(gen, column_names=["a", "b"])
    assert column(ds, "a", epochs=2) == [0, 1, 2, 0, 1, 2]


class Squares:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return (np.int64(i * i),)

    def __len__(self):
        return self.n


def test_random_access_source_reads_in_sampler_order():
    ds = md.GeneratorDataset(Squares(6), column_names=["sq"], shuffle=False, num_parallel_workers=3)
    assert column(ds) == [0, 1, 4, 9, 16, 25]


def test_random_access_source_shards():
    shards = [
        column(md.GeneratorDataset(Squares(7), column_names=["sq"], num_shards=3, shard_id=k, shuffle=False))
        for k in range(3)
    ]
    assert [len(s) for s in shards] == [3, 3, 3]
    assert set(sum(shards, [])) == {i * i for i in range(7)}


def test_iterable_source_with_len_reports_size():
    ds = md.GeneratorDataset([(1,), (2,), (3,)], column_names=["x"])
    assert ds.get_dataset_size() == 3


def test_iterable_source_num_samples():
    def gen():
        i = 0
        while True:
            yield (i,)
            i += 1

    assert column(md.GeneratorDataset(gen, column_names=["x"], num_samples=4)) == [0, 1, 2, 3]


def test_generator_values_become_arrays():
    ds = md.GeneratorDataset(lambda: iter([(1, 2.5, "s")]), column_names=["i", "f", "s"])
    row = next(iter(ds.create_tuple_iterator(output_numpy=True)))
    assert [r.dtype.kind for r in row] == ["i", "f", "U"]


def test_generator_row_width_mismatch_names_row_and_columns():
    ds = md.GeneratorDataset(lambda: iter([(1, 2), (1, 2, 3)]), column_names=["a", "b"])
    with pytest.raises(RowError, match=r"item 1 has 3 value\(s\) but column_names names 2: \['a', 'b'\]"):
        column(ds)


def test_generator_needs_column_names():
    with pytest.raises(ArgumentError, match="column_names"):
        md.GeneratorDataset(lambda: iter([]))


def test_iterable_source_rejects_sharding():
    with pytest.raises(ArgumentError, match="random-access"):
        md.GeneratorDataset(lambda: iter([(1,)]), column_names=["x"], num_shards=2, shard_id=0)


def test_random_access_error_names_the_index():
    class Broken(Squares):
        def __getitem__(self, i):
            if i == 3:
                raise KeyError("missing")
            return super().__getitem__(i)

    ds = md.GeneratorDataset(Broken(5), column_names=["sq"], shuffle=False)
    with pytest.raises(RowError, match=r"source\[3\] raised KeyError") as info:
        column(ds)
    assert isinstance(info.value.__cause__, KeyError)


# ImageFolderDataset ----------------------------------------------------------------------------

def test_image_folder_classes_are_sorted_folders(image_folder):
    ds = md.ImageFolderDataset(image_folder, shuffle=False)
    assert ds.get_class_indexing() == {"cat": 0, "dog": 1, "emu": 2}
    assert ds.num_classes() == 3
    assert column(ds, "label") == [0] * 4 + [1] * 4 + [2] * 4


def test_image_folder_rows_are_file_bytes(image_folder):
    ds = md.ImageFolderDataset(image_folder, shuffle=False)
    row = next(iter(ds.create_dict_iterator(num_epochs=1, output_numpy=True)))
    assert row["image"].dtype == np.uint8 and row["image"].ndim == 1
    assert row["image"].tobytes() == (image_folder / "cat" / "00.jpg").read_bytes()
    assert row["label"].dtype == np.int32


def test_image_folder_class_indexing(image_folder):
    ds = md.ImageFolderDataset(image_folder, shuffle=False, class_indexing={"emu": 0, "cat": 5})
    assert column(ds, "label") == [5] * 4 + [0] * 4  # folders in name order (cat, emu), as MindSpore


def test_image_folder_extensions_filter(image_folder):
    (image_folder / "cat" / "extra.png").write_bytes(b"png")
    assert md.ImageFolderDataset(image_folder, extensions=[".png"]).get_dataset_size() == 1
    assert md.ImageFolderDataset(image_folder).get_dataset_size() == 13


def test_image_folder_num_samples_and_shards(image_folder):
    assert md.ImageFolderDataset(image_folder, num_samples=5).get_dataset_size() == 5
    sizes = [md.ImageFolderDataset(image_folder, num_shards=5, shard_id=k).get_dataset_size() for k in range(5)]
    assert sizes == [3] * 5


def test_image_folder_missing_dir():
    with pytest.raises(ArgumentError, match="existing folder"):
        md.ImageFolderDataset("/no/such/dir")


def test_image_folder_without_images(tmp_path):
    (tmp_path / "a").mkdir()
    ds = md.ImageFolderDataset(tmp_path)
    with pytest.raises(GraphError, match="no image files"):
        ds.get_dataset_size()


def test_image_folder_unreadable_file_names_it(image_folder):
    ds = md.ImageFolderDataset(image_folder, shuffle=False)
    victim = image_folder / "dog" / "01.jpg"
    it = ds.create_dict_iterator(num_epochs=1, output_numpy=True)
    ds.get_dataset_size()
    victim.unlink()
    with pytest.raises(RowError, match="01.jpg"):
        list(it)
