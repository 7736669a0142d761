"""The default iterators' values: NumPy arrays with MindSpore Tensor's essentials (asnumpy, dim...)."""

import pickle

import numpy as np
import pytest

import minddata as md
import minddata.common.dtype as mstype
from minddata.common.tensor import Tensor


def pipeline():
    return md.NumpySlicesDataset({"x": np.arange(12, dtype=np.int32).reshape(3, 2, 2), "s": ["a", "b", "c"]},
                                 shuffle=False)


def first(**kwargs):
    return next(iter(pipeline().create_dict_iterator(num_epochs=1, **kwargs)))


def test_default_dict_iterator_gives_tensors_with_asnumpy():
    x = first()["x"]
    assert type(x) is Tensor
    assert type(x.asnumpy()) is np.ndarray and x.asnumpy().tolist() == [[0, 1], [2, 3]]


def test_default_tuple_iterator_gives_tensors():
    row = next(iter(pipeline().create_tuple_iterator(num_epochs=1)))
    assert type(row[0]) is Tensor


def test_iterating_the_dataset_gives_tensors():
    assert type(next(iter(pipeline()))[0]) is Tensor


def test_output_numpy_gives_plain_arrays():
    row = first(output_numpy=True)
    assert type(row["x"]) is np.ndarray


def test_string_columns_stay_plain_arrays():
    assert type(first()["s"]) is np.ndarray


def test_tensor_shares_memory_with_the_array():
    x = first()["x"]
    assert np.shares_memory(x, x.asnumpy())


def test_tensor_essentials():
    x = first()["x"]
    assert x.shape == (2, 2) and x.dim() == 2 and x.ndimension() == 2
    assert x.numel() == 4 and x.size == 4 and x.nelement() == 4
    assert x.dtype == mstype.int32 and x.itemsize == 4 and x.nbytes == 16
    assert x.expand_dims(0).shape == (1, 2, 2) and x.permute(1, 0).tolist() == [[0, 2], [1, 3]]
    assert x.stride() == (2, 1) and x.is_contiguous() and not x.has_init


def test_tensor_casts_follow_mindspore():
    x = first()["x"]
    assert x.float().dtype == np.float32 and x.long().dtype == np.int64 and x.to(mstype.float16).dtype == np.float16
    assert not x.is_floating_point() and x.float().is_floating_point()


def test_arithmetic_and_slicing_keep_the_tensor_type():
    x = first()["x"]
    assert type(x + 1) is Tensor and type(x[0]) is Tensor and type(x.sum()) is Tensor
    assert int(x.sum()) == 6 and float(x.mean()) == 1.5


def test_numpy_functions_accept_tensors():
    x = first()["x"]
    assert type(np.asarray(x)) is np.ndarray
    assert np.concatenate([x, x]).shape == (4, 2)


def test_tensor_pickles():
    x = first()["x"]
    back = pickle.loads(pickle.dumps(x))
    assert type(back) is Tensor and back.tolist() == x.tolist()


def test_torch_from_numpy_accepts_tensors():
    torch = pytest.importorskip("torch")
    x = first()["x"]
    t = torch.from_numpy(x)
    assert t.dtype == torch.int32 and t.tolist() == [[0, 1], [2, 3]]
