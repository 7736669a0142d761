"""``config.set_framework``: iterators hand rows over as the chosen framework's tensors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import minddata as md


def rows():
    ds = md.NumpySlicesDataset({"x": np.arange(6, dtype=np.int32).reshape(3, 2), "s": ["a", "b", "c"]}, shuffle=False)
    return ds.batch(3)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed (pip install jax)")
def test_jax_rows_are_jax_arrays_with_the_same_values():
    import jax

    md.config.set_framework("jax")
    batch = next(iter(rows().create_dict_iterator(num_epochs=1)))
    assert isinstance(batch["x"], jax.Array)
    np.testing.assert_array_equal(np.asarray(batch["x"]), np.arange(6).reshape(3, 2))
    assert isinstance(batch["s"], np.ndarray)  # strings have no JAX dtype: they stay NumPy


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed (pip install torch)")
def test_torch_rows_share_memory_with_the_batch():
    import torch

    md.config.set_framework("torch")
    batch = next(iter(rows().create_dict_iterator(num_epochs=1)))
    assert isinstance(batch["x"], torch.Tensor) and batch["x"].dtype == torch.int32
    assert batch["x"].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert isinstance(batch["s"], np.ndarray)


def test_output_numpy_overrides_the_framework():
    md.config.set_framework("jax")
    batch = next(iter(rows().create_dict_iterator(num_epochs=1, output_numpy=True)))
    assert type(batch["x"]) is np.ndarray


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed here")
def test_a_missing_framework_says_what_to_install():
    md.config.set_framework("cupy")
    with pytest.raises(ImportError, match=r"pip install cupy"):
        rows().create_dict_iterator(num_epochs=1)


@pytest.mark.skipif(
    importlib.util.find_spec("cupy") is None, reason="CuPy is not installed: it needs an NVIDIA GPU and CUDA"
)
def test_cupy_rows_are_on_the_gpu():
    import cupy

    md.config.set_framework("cupy")
    batch = next(iter(rows().create_dict_iterator(num_epochs=1)))
    assert isinstance(batch["x"], cupy.ndarray)
    np.testing.assert_array_equal(batch["x"].get(), np.arange(6).reshape(3, 2))
