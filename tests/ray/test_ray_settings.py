"""Every setting changed in the driver reaches the Ray workers: the run's RunOptions travel with the
plan, and kernels (through their KernelContext) and Python functions (through minddata.config) in a
Ray task see exactly the driver's values, none reverted to a worker's defaults."""

from __future__ import annotations

import numpy as np
import pytest
from ray_cluster import ray_cluster  # noqa: F401 - the session's cluster
from testkit import (
    EchoOptions,
    assert_sees_settings,
    echo_config,
    echo_options,
    every_setting_changed,
    options_in,
)

import minddata as md

# Ray Data copies its context, touching its own deprecated fields: not this project's warnings.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")


def _echoes() -> md.Dataset:
    """Rows of two columns: the settings an op's kernel saw, and those a map's Python function saw."""
    ds = md.NumpySlicesDataset({"kernel": np.arange(4), "function": np.arange(4)}, shuffle=False)
    ds = ds.map([EchoOptions()], input_columns="kernel")
    return ds.map([echo_config], input_columns="function")


def test_ray_workers_see_every_setting_of_the_iterator(tmp_path):
    # Debug mode would run the pipeline deterministically in one thread, changing some settings for the
    # run: it is checked with to_ray below.
    expected = every_setting_changed(tmp_path, debug_mode=False)
    with echo_options():
        it = _echoes().create_tuple_iterator(num_epochs=1, output_numpy=True, executor="ray")
        md.config.load_defaults()  # changes after the iterator was created do not reach it
        rows = list(it)
    assert len(rows) == 4
    assert_sees_settings([options_in(row[0]) for row in rows], expected, "a Ray worker's kernel")
    assert_sees_settings([options_in(row[1]) for row in rows], expected, "a Ray worker's map function")


def test_a_ray_dataset_carries_every_setting_to_its_workers(tmp_path):
    expected = every_setting_changed(tmp_path)
    with echo_options():
        ds = _echoes().to_ray()
        md.config.load_defaults()
        rows = ds.take_all()
    assert len(rows) == 4
    assert_sees_settings([options_in(row["kernel"]) for row in rows], expected, "a Ray worker's kernel")
    assert_sees_settings([options_in(row["function"]) for row in rows], expected, "a Ray worker's map function")
