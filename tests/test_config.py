"""Global settings: validation, defaults and their effect on pipelines created afterwards."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import minddata as md


def test_seed_round_trip_and_default():
    assert md.config.get_seed() == 5489
    md.config.set_seed(123)
    assert md.config.get_seed() == 123


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "1", True])
def test_bad_seed(bad):
    with pytest.raises(ValueError, match="seed must be an int"):
        md.config.set_seed(bad)


def test_unseeded_pipelines_differ_between_iterators():
    ds = md.NumpySlicesDataset(np.arange(64), column_names=["x"])
    a = [int(r[0]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    b = [int(r[0]) for r in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert sorted(a) == sorted(b) and a != b


def test_workers_setting_is_the_map_default():
    md.config.set_num_parallel_workers(3)
    ds = md.NumpySlicesDataset([1], shuffle=False).map(lambda x: x)
    assert ds._node.num_workers == 3


def test_more_workers_than_cores_warns_once(caplog):
    import minddata.config as cfg

    cfg._warned_workers = False
    with caplog.at_level(logging.WARNING, logger="minddata"):
        md.config.set_num_parallel_workers((os.cpu_count() or 1) + 1)
        md.config.set_num_parallel_workers((os.cpu_count() or 1) + 2)
    assert caplog.text.count("more than this machine") == 1


@pytest.mark.parametrize(
    "setter", ["set_num_parallel_workers", "set_prefetch_size", "set_rows_per_chunk", "set_worker_shm_size"]
)
def test_positive_settings_reject_zero(setter):
    with pytest.raises(ValueError, match="greater than 0. Found: 0"):
        getattr(md.config, setter)(0)


def test_prefetch_size_bounds_the_output_queue():
    md.config.set_prefetch_size(64)
    md.config.set_rows_per_chunk(8)
    from minddata.engine.iterator import PipelineRun

    run = PipelineRun(md.NumpySlicesDataset([1])._node, 1, lambda row: row)
    assert run.max_chunks == 8
    run.close()


def test_error_mode_accepts_mindspore_names():
    md.config.set_error_samples_mode(md.config.ErrorSamplesMode.RETURN)
    assert md.config.get_error_samples_mode() == "raise"


def test_framework_setting():
    with pytest.raises(ValueError, match="numpy"):
        md.config.set_framework("tensorflow")
    md.config.set_framework("numpy")
    row = next(iter(md.NumpySlicesDataset([1], shuffle=False).create_dict_iterator()))
    assert isinstance(row["column_0"], np.ndarray)
