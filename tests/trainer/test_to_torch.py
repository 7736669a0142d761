"""Dataset.__len__ and Dataset.to_torch() for plain PyTorch loops."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: to_torch needs it")

import minddata as md  # noqa: E402
from minddata.errors import ArgumentError  # noqa: E402


def _rows(n=20):
    return md.NumpySlicesDataset({"x": np.arange(n, dtype=np.float32), "y": np.arange(n, dtype=np.int32)},
                                 shuffle=False)


def test_len_is_rows_or_batches_per_epoch():
    assert len(_rows(20)) == 20
    assert len(_rows(20).batch(8)) == 3
    assert len(_rows(20).batch(8, drop_remainder=True)) == 2


def test_an_empty_dataset_is_still_truthy():
    assert bool(_rows(0)) and len(_rows(0)) == 0


def test_dataloader_with_batch_size_none_iterates_the_batches():
    loader = torch.utils.data.DataLoader(_rows(20).batch(8).to_torch(), batch_size=None)
    assert len(loader) == 3
    xs = [x for x, _ in loader]
    assert [tuple(x.shape) for x in xs] == [(8,), (8,), (4,)]
    assert torch.equal(torch.cat(xs), torch.arange(20, dtype=torch.float32))


def test_integer_labels_are_int64_by_default_so_cross_entropy_accepts_them():
    x, y = next(iter(_rows(8).batch(4).to_torch()))
    assert (x.dtype, y.dtype) == (torch.float32, torch.int64)
    torch.nn.functional.cross_entropy(torch.zeros(4, 8), y)  # int32 targets raise "expected ... Long"


def test_unsigned_labels_such_as_mnists_uint32_become_int64():
    ds = md.NumpySlicesDataset({"x": np.zeros((4, 2), np.float32), "label": np.arange(4, dtype=np.uint32)},
                               shuffle=False).batch(4)
    _, y = next(iter(ds.to_torch()))
    assert y.dtype == torch.int64 and y.tolist() == [0, 1, 2, 3]


def test_int64_labels_false_keeps_the_source_dtype():
    _, y = next(iter(_rows(8).batch(4).to_torch(int64_labels=False)))
    assert y.dtype == torch.int32


def test_int64_columns_casts_the_named_integer_columns_too():
    ds = md.NumpySlicesDataset({"ids": np.arange(4, dtype=np.int16), "y": np.arange(4, dtype=np.int32)},
                               shuffle=False).batch(4)
    first = next(iter(ds.to_torch(as_dict=True, int64_columns=["ids"])))
    assert set(first) == {"ids", "y"} and first["ids"].dtype == first["y"].dtype == torch.int64


def test_float_labels_and_a_one_column_dataset_keep_their_dtype():
    targets = md.NumpySlicesDataset({"x": np.zeros(4, np.float32), "t": np.ones(4, np.float32)}, shuffle=False)
    assert next(iter(targets.batch(4).to_torch()))[1].dtype == torch.float32
    images = md.NumpySlicesDataset({"image": np.zeros((4, 2, 2), np.uint8)}, shuffle=False).batch(4)
    (only,) = next(iter(images.to_torch()))
    assert only.dtype == torch.uint8  # a lone column is not a label


def test_host_rows_are_not_copied():
    source = np.arange(12, dtype=np.float32).reshape(3, 4)
    (x,) = next(iter(md.NumpySlicesDataset({"x": source[None]}, shuffle=False).to_torch()))
    assert x.data_ptr() != 0 and x.is_contiguous() and not x.is_pinned()


def test_dataloader_workers_each_read_their_own_shard():
    loader = torch.utils.data.DataLoader(_rows(24).batch(4).to_torch(), batch_size=None, num_workers=2,
                                         multiprocessing_context="spawn", persistent_workers=False)
    seen = sorted(int(v) for x, _ in loader for v in x)
    assert seen == list(range(24))  # disjoint and covering: each row exactly once


def test_shards_split_a_seeded_shuffled_source_disjointly():
    md.config.set_seed(5)
    ds = md.NumpySlicesDataset({"x": np.arange(30)}, shuffle=True)
    parts = [[int(r[0]) for r in ds._shard(3, k, "test").create_tuple_iterator(num_epochs=1, output_numpy=True)]
             for k in range(3)]
    assert sorted(sum(parts, [])) == list(range(30)) and all(len(p) == 10 for p in parts)


def test_shards_of_an_unseeded_shuffled_source_agree_without_a_seed():
    # Each shard runs in its own iterator, whose run seed is drawn from the OS (no set_seed): the
    # shuffle still agrees because a sharded source draws it from the shard seed, as num_shards does.
    ds = md.NumpySlicesDataset({"x": np.arange(30)}, shuffle=True)
    parts = [[int(r[0]) for r in ds._shard(3, k, "test").create_tuple_iterator(num_epochs=1, output_numpy=True)]
             for k in range(3)]
    assert not md.config.seed_is_set()
    assert sorted(sum(parts, [])) == list(range(30)) and all(len(p) == 10 for p in parts)
    assert sum(parts, []) != sorted(sum(parts, []))


def test_sharding_a_streamed_source_says_how_to_shard_it(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("a\nb\nc\n")
    with pytest.raises(ArgumentError, match="Give the source num_shards=2, shard_id=1"):
        md.TextFileDataset(str(path), shuffle=False)._shard(2, 1, "test")


def test_pin_memory_is_ignored_without_cuda():
    x, _ = next(iter(_rows(4).batch(4).to_torch(pin_memory=True)))
    assert x.is_pinned() == torch.cuda.is_available()
