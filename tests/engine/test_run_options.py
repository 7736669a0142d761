"""The run-options snapshot: settings taken when the iterator is created reach every kernel, in
worker threads and in worker processes alike (``python_multiprocessing=True`` once ignored
``config.set_max_image_pixels``, because spawned workers start from the default config)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
from testkit import (
    EchoOptions,
    echo_options,
    every_setting_changed,
    jpeg_array,
    options_in,
    png_array,
    random_pixels,
)

import minddata as md
from minddata import vision
from minddata.config import RunOptions
from minddata.errors import RowError
from minddata.ops.base import KernelContext

KINDS = {"threads": False, "processes": True}


@pytest.fixture(autouse=True)
def _echo_kernel():
    with echo_options():
        yield


def _jpeg(width: int = 64, height: int = 48) -> np.ndarray:
    return jpeg_array(random_pixels(height, width, 0))


def _rows(ds: md.Dataset) -> list:
    return [row[0] for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def _mapped(values: list, ops: list, processes: bool) -> md.Dataset:
    ds = md.NumpySlicesDataset({"x": values}, shuffle=False) if not isinstance(values[0], np.ndarray) else (
        md.GeneratorDataset(lambda: ((v,) for v in values), column_names=["x"], shuffle=False)
    )
    return ds.map(ops, input_columns="x", num_parallel_workers=2, python_multiprocessing=processes)


def test_the_snapshot_holds_every_setting(tmp_path) -> None:
    values = every_setting_changed(tmp_path)
    assert {f.name for f in dataclasses.fields(RunOptions)} == set(values)
    assert dataclasses.asdict(md.config.snapshot()) == values


def test_a_run_options_pickles_with_every_setting_changed(tmp_path) -> None:
    options = md.config.snapshot()
    assert pickle.loads(pickle.dumps(options)) == options
    every_setting_changed(tmp_path)
    options = md.config.snapshot()
    assert pickle.loads(pickle.dumps(options)) == options


def test_the_snapshot_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        md.config.snapshot().max_image_pixels = 1  # type: ignore[misc]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_low_pixel_limit_refuses_in_both_worker_kinds(kind: str) -> None:
    md.config.set_max_image_pixels(100)
    ds = _mapped([_jpeg()], [vision.Decode()], KINDS[kind])
    with pytest.raises(RowError, match=r"64x48 = 3072 pixels, over the limit of 100"):
        _rows(ds)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_lifted_pixel_limit_reaches_both_worker_kinds(kind: str) -> None:
    md.config.set_max_image_pixels(100)
    limited = _mapped([_jpeg()], [EchoOptions()], KINDS[kind]).create_tuple_iterator(num_epochs=1, output_numpy=True)
    md.config.set_max_image_pixels(None)
    (row,) = _rows(_mapped([_jpeg()], [EchoOptions()], KINDS[kind]))
    assert options_in(row).max_image_pixels is None
    (row,) = list(limited)  # created under the limit: keeps it
    assert options_in(row[0]).max_image_pixels == 100


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_dvpp_policy_reaches_both_worker_kinds(kind: str) -> None:
    md.config.set_dvpp_driver("reference")
    md.config.set_dvpp_policy("cpu")  # a PNG (Dvpp decodes JPEG only) runs on the CPU kernel instead
    (image,) = _rows(_mapped([png_array(random_pixels(32, 40, 0))], [vision.Decode().device("Dvpp")], KINDS[kind]))
    assert image.shape == (32, 40, 3)
    md.config.set_dvpp_policy("error")
    with pytest.raises(RowError, match="JPEG only"):
        _rows(_mapped([png_array(random_pixels(32, 40, 0))], [vision.Decode().device("Dvpp")], KINDS[kind]))


@pytest.mark.parametrize("kind", list(KINDS))
def test_seeded_random_ops_agree_across_worker_kinds(kind: str) -> None:
    md.config.set_seed(7)
    images = [np.full((8, 8, 3), i, np.uint8) for i in range(4)]
    crops = _rows(_mapped(images, [vision.RandomResizedCrop(4)], KINDS[kind]))
    md.config.set_seed(7)
    reference = _rows(_mapped(images, [vision.RandomResizedCrop(4)], False))
    assert all(np.array_equal(a, b) for a, b in zip(crops, reference, strict=True))


@pytest.mark.parametrize("kind", list(KINDS))
def test_skip_mode_reaches_both_worker_kinds(kind: str) -> None:
    md.config.set_error_samples_mode("skip")
    bad = np.frombuffer(b"not an image", np.uint8)
    rows = _rows(_mapped([_jpeg(), bad, _jpeg(8, 8)], [vision.Decode()], KINDS[kind]))
    assert [r.shape for r in rows] == [(48, 64, 3), (8, 8, 3)]


@pytest.mark.parametrize("kind", list(KINDS))
def test_gpu_emulation_reaches_both_worker_kinds(kind: str) -> None:
    from minddata.ops.probe import dali_status

    ok, why = dali_status()
    if not ok:
        pytest.skip(f"nvidia.dali not importable ({why})")
    md.config.set_gpu_emulation(True)
    (image,) = _rows(_mapped([_jpeg()], [vision.Decode().device("GPU")], KINDS[kind]))
    assert image.shape == (48, 64, 3)


def _gpu_emulation(driver: str) -> None:
    from minddata.ops.probe import dali_status, torch_status

    ok, why = dali_status() if driver == "dali" else torch_status()[::2]
    if not ok:
        pytest.skip(f"the {driver} driver is not importable ({why})")
    md.config.set_gpu_driver(driver)
    md.config.set_gpu_emulation(True)


@pytest.mark.parametrize("driver", ["dali", "torch"])
def test_a_gpu_decode_keeps_the_pixel_limit_of_its_snapshot(driver: str) -> None:
    _gpu_emulation(driver)
    md.config.set_max_image_pixels(None)
    lifted = _mapped([_jpeg()], [vision.Decode().device("GPU")], False).create_tuple_iterator(
        num_epochs=1, output_numpy=True)
    md.config.set_max_image_pixels(100)  # after the iterator was created: not its setting
    assert [row[0].shape for row in lifted] == [(48, 64, 3)]
    limited = _mapped([_jpeg()], [vision.Decode().device("GPU")], False).create_tuple_iterator(
        num_epochs=1, output_numpy=True)
    md.config.set_max_image_pixels(None)
    with pytest.raises(RowError, match=r"64x48 = 3072 pixels, over the limit of 100"):
        list(limited)


def test_the_torch_segments_cpu_decode_takes_the_rows_pixel_limit_not_the_global_one() -> None:
    _gpu_emulation("torch")
    from minddata.ops.gpu.segment import RowFailure
    from minddata.ops.gpu.torch_segment import TorchSegment

    segment = TorchSegment([vision.Decode()], backend="torch-cpu")  # decodes on the CPU, then uploads
    md.config.set_max_image_pixels(100)  # the global setting, which the row's own must override
    free = KernelContext(options=dataclasses.replace(md.config.snapshot(), max_image_pixels=None))
    (image,), _ = segment.run([_jpeg()], [[free]])
    assert not isinstance(image, RowFailure) and tuple(image.shape) == (48, 64, 3)
    md.config.set_max_image_pixels(None)
    limited = KernelContext(options=dataclasses.replace(md.config.snapshot(), max_image_pixels=100))
    (refused,), _ = segment.run([_jpeg()], [[limited]])
    assert isinstance(refused, RowFailure) and "over the limit of 100" in str(refused.error)
