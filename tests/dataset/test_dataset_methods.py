"""MindSpore's Dataset methods answered from the source after operations (get_class_indexing...)."""

import numpy as np
import pytest

import minddata as md
from minddata.vision import Decode


def five(**kwargs):
    return md.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False, **kwargs)


def test_class_indexing_survives_map_and_batch(image_folder):
    data = md.ImageFolderDataset(str(image_folder), shuffle=False)
    after = data.map(Decode(), input_columns="image").batch(2)
    assert after.get_class_indexing() == {"cat": 0, "dog": 1, "emu": 2}


def test_num_classes_survives_map_and_batch(image_folder):
    data = md.ImageFolderDataset(str(image_folder), shuffle=False)
    assert data.map(Decode(), input_columns="image").shuffle(4).batch(2).repeat(2).num_classes() == 3


def test_zip_and_concat_answer_from_their_first_input(image_folder):
    images = md.ImageFolderDataset(str(image_folder), shuffle=False)
    assert md.zip((images, five())).get_class_indexing() == {"cat": 0, "dog": 1, "emu": 2}
    assert md.zip((images, five())).num_classes() is None  # as MindSpore: a count needs one input


def test_sources_without_classes_give_empty_indexing_and_no_count():
    assert five().map(abs, input_columns="x").get_class_indexing() == {}
    assert five().batch(2).num_classes() is None


def test_is_shuffled_sees_a_shuffle_op_or_a_shuffling_source():
    assert not five().map(abs, input_columns="x").is_shuffled()
    assert five().shuffle(3).batch(2).is_shuffled()
    assert md.NumpySlicesDataset({"x": np.arange(5)}).take(3).is_shuffled()


def test_is_sharded_sees_a_sharded_source():
    assert five(num_shards=2, shard_id=1).map(abs, input_columns="x").is_sharded()
    assert not five().batch(2).is_sharded()


def test_streamed_source_reports_shuffle_and_shards(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("a\nb\n")
    assert md.TextFileDataset(str(path)).is_shuffled()  # MindSpore's default: Shuffle.GLOBAL
    assert not md.TextFileDataset(str(path), shuffle=False).batch(1).is_shuffled()
    assert md.TextFileDataset(str(path), num_shards=2, shard_id=0).is_sharded()


def test_get_init_step_follows_set_init_step():
    md.config.set_seed(3)
    data = five()
    data.set_init_step(2)
    assert data.batch(1).get_init_step() == 2 and five().get_init_step() == 0


def test_sync_methods():
    seen = []
    data = five().sync_wait("c", callback=seen.append).batch(1)
    assert data.is_sync() and not five().is_sync()
    data.get_sync_notifiers()["c"](data="hello")
    assert seen == ["hello"]
    it = data.create_tuple_iterator(num_epochs=1, output_numpy=True)
    next(it)
    data.disable_sync()  # the rest passes without sync_update
    assert len(list(it)) == 4


def test_input_indexs_is_set_and_inherited():
    data = five()
    data.input_indexs = (0,)
    assert data.batch(2).input_indexs == (0,) and five().input_indexs == ()


def test_copy_batch_size_sets_get_batch_size():
    data = five().batch(2)
    data.copy_batch_size(4)
    assert data.get_batch_size() == 4


def test_reset_is_accepted():
    data = five()
    data.reset()
    assert len(list(data)) == 5


@pytest.mark.parametrize("name", ["get_class_indexing", "num_classes", "is_shuffled", "get_init_step", "reset"])
def test_every_operation_result_has_the_method(name):
    from minddata.bench.coverage import transformed_datasets

    assert all(hasattr(d, name) for d in transformed_datasets().values())
