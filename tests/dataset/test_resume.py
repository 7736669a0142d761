"""Exact resume: an iterator restarted from ``get_state()`` gives exactly the rest of the stream.

One helper, ``assert_resumes_exactly``, is applied to every source and op (as torchdata's
save/load-state test is): for several resume points, the rows before the point plus the rows of a
new iterator created with the state equal the uninterrupted stream, bit for bit, random
augmentations included, and whatever worker count the resumed run uses. It also checks that the
pipeline rebuilt from its JSON (``md.serialize`` / ``md.deserialize``) gives the same stream, unless
the pipeline holds Python code, which JSON keeps by name only.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit import make_jpeg

import minddata as md
from minddata import transforms, vision
from minddata.dataset.callback import DSCallback
from minddata.errors import EpochsExhaustedError


def _read(it, limit=None):
    rows = []
    while limit is None or len(rows) < limit:
        try:
            row = next(it)
        except StopIteration:
            continue  # the next epoch
        except EpochsExhaustedError:
            break
        rows.append(tuple(np.asarray(col).tobytes() + str(np.asarray(col).dtype).encode() for col in row))
    return rows


def assert_resumes_exactly(build, epochs=2, points=None, resumed_workers=None):
    """``build(workers)`` makes the pipeline. Resumes at each point (a count of rows read)."""
    md.config.set_seed(11)
    full = _read(build(2).create_tuple_iterator(num_epochs=epochs, output_numpy=True))
    assert full, "the pipeline is empty"
    points = points or sorted({0, 1, len(full) // 3, len(full) // 2, len(full) - 1, len(full)})
    for k in points:
        it = build(2).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
        before = _read(it, k)
        state = json.loads(json.dumps(it.get_state()))  # it must survive a trip through JSON
        it.close()
        resumed = build(resumed_workers or 3).create_tuple_iterator(num_epochs=epochs, output_numpy=True, state=state)
        after = _read(resumed)
        resumed.close()
        assert before + after == full, f"resume at row {k} (state {state}) diverged"
    assert_serializes_exactly(build(2), full, epochs)


def _holds_python_code(described):
    """Whether serialize() wrote something by name only (deserialize can't rebuild it)."""
    if isinstance(described, list):
        return any(_holds_python_code(v) for v in described)
    if not isinstance(described, dict):
        return False
    if "__python_object__" in described or "unserializable" in described or described.get("is_python_front_end_op"):
        return True
    if "sampler_name" in described and "sampler_module" not in described:
        return True
    return any(_holds_python_code(v) for v in described.values())


def assert_serializes_exactly(pipeline, full, epochs):
    """The pipeline rebuilt from its JSON gives the stream ``full`` (skipped for Python code)."""
    described = json.loads(json.dumps(md.serialize(pipeline)))
    if _holds_python_code(described):
        return
    md.config.set_seed(11)
    rebuilt = md.deserialize(input_dict=described).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    assert _read(rebuilt) == full, "the pipeline rebuilt from its JSON (md.deserialize) gives other rows"


def images(n=24):
    return np.random.default_rng(0).integers(0, 256, (n, 10, 12, 3), dtype=np.uint8)


def slices(n=24, shuffle=None, workers=1):
    return md.NumpySlicesDataset({"img": images(n), "i": np.arange(n)}, shuffle=shuffle, num_parallel_workers=workers)


class RandomAccess:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return (np.full(3, i, np.int64),)

    def __len__(self):
        return self.n


def gen_rows():
    for i in range(19):
        yield (np.arange(i % 4 + 1),)


@pytest.fixture(scope="module")
def jpeg_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume_images")
    for c in ("a", "b"):
        (root / c).mkdir()
        for i in range(7):
            (root / c / f"{i}.jpg").write_bytes(make_jpeg(40 + i, 30, seed=i))
    return root


@pytest.fixture(scope="module")
def record_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("resume_records") / "data.mindrecord")
    writer = md.record.ArrowRecordWriter(path)
    writer.add_schema({"x": {"type": "int64"}, "v": {"type": "float32", "shape": [2]}})
    writer.write_raw_data([{"x": i, "v": np.array([i, -i], np.float32)} for i in range(23)])
    writer.commit()
    return path


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("resume_text") / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(21)))
    return str(path)


PIPELINES = {
    # sources
    "numpy slices, shuffled": lambda w: slices(),
    "generator, random access, sharded": lambda w: md.GeneratorDataset(
        RandomAccess(31), ["v"], num_parallel_workers=w, num_shards=2, shard_id=1
    ),
    "generator, iterable": lambda w: md.GeneratorDataset(gen_rows, ["v"]),
    "fake images": lambda w: md.FakeImageDataset(num_images=17, image_size=(4, 4, 3), num_parallel_workers=w),
    "random dataset, repeated": lambda w: md.RandomDataset(total_rows=9, num_parallel_workers=w).repeat(2),
    # ops
    "random map ops with workers": lambda w: slices().map(
        [vision.RandomResizedCrop(6), vision.RandomHorizontalFlip(), vision.RandomColorAdjust(brightness=(0.5, 1.5))],
        input_columns="img", num_parallel_workers=w,
    ),
    "normalize into the batch by the map's workers": lambda w: slices().map(
        [vision.RandomResizedCrop(6), vision.Normalize([10.0, 20.0, 30.0], [2.0, 3.0, 4.0]), vision.HWC2CHW()],
        input_columns="img", num_parallel_workers=w,
    ).batch(5),
    "map + batch + repeat": lambda w: slices().map(lambda i: i * 3, input_columns="i", num_parallel_workers=w).batch(5).repeat(2),
    "batch drop remainder, workers": lambda w: slices().batch(5, drop_remainder=True, num_parallel_workers=w),
    "shuffle buffer": lambda w: slices().shuffle(6).map(vision.RandomVerticalFlip(), input_columns="img", num_parallel_workers=w),
    "take / skip": lambda w: slices().skip(3).take(15).map(lambda i: i + 1, input_columns="i", num_parallel_workers=w),
    "zip + project + rename": lambda w: slices().zip(slices(shuffle=False).rename(["img", "i"], ["img2", "j"])).project(["j", "i"]),
    "concat": lambda w: slices(10) + slices(7, shuffle=False) + slices(5),
    "filter": lambda w: slices().filter(lambda i: i % 3 != 1, input_columns="i", num_parallel_workers=w),
    "padded batch": lambda w: md.GeneratorDataset(gen_rows, ["v"]).padded_batch(4, pad_info={"v": ([None], -1)}),
    "per batch map": lambda w: slices().batch(4, per_batch_map=lambda i, info: ([x + info.get_batch_num() for x in i],), input_columns=["i"]),
    "one hot + type cast": lambda w: slices().map([transforms.OneHot(30), transforms.TypeCast(np.float16)], input_columns="i"),
    # MindSpore's flow operations
    "concat sharded by use_sampler": lambda w: _sharded_concat(w),
    "flat map": lambda w: slices(9).flat_map(lambda img, i: md.NumpySlicesDataset({"j": [i, i * 2]}, shuffle=False)),
    "map with dataset callbacks": lambda w: slices().map(lambda i: i + 1, input_columns="i", num_parallel_workers=w,
                                                         callbacks=[DSCallback()]),
    "concatenate several columns": lambda w: slices().map(
        lambda i: (np.atleast_1d(i), np.atleast_1d(i * 2)), input_columns="i", output_columns=["i", "i2"]
    ).map(transforms.Concatenate(), input_columns=["i", "i2"], output_columns="ii", num_parallel_workers=w),
    "generator with schema": lambda w: md.GeneratorDataset(RandomAccess(13), schema={"v": {"type": "float32"}},
                                                           num_parallel_workers=w),
}


def _sharded_concat(workers):
    data = slices(10, workers=workers) + slices(7, shuffle=False) + md.PaddedDataset(
        [{"img": np.zeros((10, 12, 3), np.uint8), "i": np.array(-1)}])
    data.use_sampler(md.DistributedSampler(num_shards=3, shard_id=1, shuffle=False))
    return data


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_resumes_exactly(name):
    assert_resumes_exactly(PIPELINES[name])


def test_image_folder_with_decode_and_fusion(jpeg_folder):
    def build(w):
        ds = md.ImageFolderDataset(jpeg_folder, num_parallel_workers=w)
        ops = [vision.Decode(), vision.RandomResizedCrop(16), vision.Normalize([1.0] * 3, [2.0] * 3), vision.HWC2CHW()]
        return ds.map(ops, input_columns="image", num_parallel_workers=w).batch(3)

    assert_resumes_exactly(build, epochs=3)


def test_pk_sampler_over_an_image_folder(jpeg_folder):
    assert_resumes_exactly(
        lambda w: md.ImageFolderDataset(jpeg_folder, sampler=md.PKSampler(3, shuffle=True), num_parallel_workers=w)
    )


def test_record_files(record_file):
    assert_resumes_exactly(lambda w: md.MindDataset(record_file, num_parallel_workers=w).batch(4))


@pytest.fixture(scope="module")
def webdataset_shards(tmp_path_factory):
    import webdataset as wds

    root = tmp_path_factory.mktemp("resume_wds")
    for k, n in enumerate((5, 4)):
        with wds.TarWriter(str(root / f"s-{k}.tar")) as writer:
            for i in range(n):
                writer.write({"__key__": f"k{k}_{i}", "jpg": make_jpeg(14 + i, 10, seed=i), "cls": i})
    return str(root / "s-{0..1}.tar")


def test_webdataset_shards(webdataset_shards):
    def build(w):
        ds = md.WebDataset(webdataset_shards, num_parallel_workers=w, num_shards=2, shard_id=1)
        return ds.map([vision.Decode(), vision.RandomResizedCrop(8)], input_columns="jpg", num_parallel_workers=w)

    assert_resumes_exactly(build, epochs=3)


def test_text_files(text_file):
    assert_resumes_exactly(lambda w: md.TextFileDataset(text_file, shuffle=True))


def test_error_modes_skip_and_replace_resume_exactly():
    def fails(i):
        if int(i) % 5 == 2:
            raise ValueError("bad")
        return i

    for mode in ("skip", "replace"):
        md.config.set_error_samples_mode(mode)
        assert_resumes_exactly(lambda w: slices().map(fails, input_columns="i", num_parallel_workers=w))


@settings(max_examples=12, deadline=None)
@given(point=st.integers(0, 60), workers=st.integers(1, 4), chunk=st.integers(1, 9))
def test_any_point_any_workers_any_chunking(point, workers, chunk):
    md.config.set_rows_per_chunk(chunk)

    def build(w):
        ds = slices(30).map([vision.RandomResizedCrop(5), vision.RandomHorizontalFlip()], input_columns="img",
                            num_parallel_workers=w)
        return ds.batch(4)

    md.config.set_seed(11)
    full = _read(build(2).create_tuple_iterator(num_epochs=2, output_numpy=True))
    point = min(point, len(full))
    assert_resumes_exactly(build, points=[point], resumed_workers=workers)


def test_resume_skips_at_the_source_instead_of_recomputing():
    calls = []

    def counted(i):
        calls.append(int(i))
        return i

    def build():
        return md.NumpySlicesDataset({"i": np.arange(1000)}, shuffle=False).map(counted, input_columns="i").batch(10)

    md.config.set_seed(3)
    it = build().create_tuple_iterator(num_epochs=1)
    for _ in range(50):
        next(it)
    state = it.get_state()
    it.close()
    calls.clear()
    rest = list(build().create_tuple_iterator(num_epochs=1, output_numpy=True, state=state))
    assert len(rest) == 50
    assert min(calls) == 500, "rows before the resume point were recomputed"


def test_state_is_small_and_checked():
    it = slices().create_tuple_iterator(num_epochs=2)
    next(it)
    state = it.get_state()
    # The elastic part (what other world sizes need) is there because slices() can resume elastically.
    assert set(state) == {"version", "seed", "shard_seed", "epoch", "row", "elastic"} and state["row"] == 1
    assert len(json.dumps(state)) < 400
    with pytest.raises(ValueError, match="get_state"):
        slices().create_tuple_iterator(state={"row": 1})
    with pytest.raises(ValueError, match="num_epochs=1"):
        slices().create_tuple_iterator(num_epochs=1, state={**state, "epoch": 1})


def test_set_init_step_starts_later():
    md.config.set_seed(5)
    full = _read(slices().create_tuple_iterator(num_epochs=2, output_numpy=True))
    ds = slices()
    ds.set_init_step(30)
    assert _read(ds.create_tuple_iterator(num_epochs=2, output_numpy=True)) == full[30:]


def test_set_init_step_needs_a_seed():
    with pytest.raises(md.errors.ArgumentError, match="set_seed"):
        slices().set_init_step(3)
