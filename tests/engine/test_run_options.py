"""The run-options snapshot: settings taken when the iterator is created reach every kernel, in
worker threads and in worker processes alike (``python_multiprocessing=True`` once ignored
``config.set_max_image_pixels``, because spawned workers start from the default config)."""

from __future__ import annotations

import dataclasses
import io
import multiprocessing
import pickle

import numpy as np
import pytest
from PIL import Image

import minddata as md
from minddata import vision
from minddata.config import RunOptions
from minddata.dataset.debug import PrintDataHook
from minddata.errors import RowError
from minddata.ops import registry
from minddata.ops.base import KernelContext, Op
from minddata.ops.registry import register_kernel

KINDS = {"threads": False, "processes": True}


class EchoOptions(Op):
    """Test op: returns the RunOptions its kernel was given, pickled into a uint8 array."""

    def output_spec(self, *inputs):  # pragma: no cover - not used by these pipelines
        raise NotImplementedError


def _echo_options(op: Op, ctx: KernelContext, value: object) -> np.ndarray:
    return np.frombuffer(pickle.dumps(ctx.options), np.uint8)


# The test op's kernel exists only while these tests run (the contract test checks every registered
# CPU kernel), and in the worker processes, which import this module to unpickle EchoOptions.
if multiprocessing.parent_process() is not None:
    register_kernel("EchoOptions", "CPU")(_echo_options)


@pytest.fixture(autouse=True)
def _echo_kernel():
    register_kernel("EchoOptions", "CPU")(_echo_options)
    yield
    registry._KERNELS.pop(("EchoOptions", "CPU"), None)


def _jpeg(width: int = 64, height: int = 48) -> np.ndarray:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 30)).save(buf, "JPEG")
    return np.frombuffer(buf.getvalue(), np.uint8)


def _png() -> np.ndarray:
    buf = io.BytesIO()
    Image.new("RGB", (40, 32), (1, 2, 3)).save(buf, "PNG")
    return np.frombuffer(buf.getvalue(), np.uint8)


def _rows(ds: md.Dataset) -> list:
    return [row[0] for row in ds.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def _mapped(values: list, ops: list, processes: bool) -> md.Dataset:
    ds = md.NumpySlicesDataset({"x": values}, shuffle=False) if not isinstance(values[0], np.ndarray) else (
        md.GeneratorDataset(lambda: ((v,) for v in values), column_names=["x"], shuffle=False)
    )
    return ds.map(ops, input_columns="x", num_parallel_workers=2, python_multiprocessing=processes)


# Every setting, at a value other than its default.
NON_DEFAULT = {
    "seed": 1234,
    "num_parallel_workers": 3,
    "prefetch_size": 7,
    "error_samples_mode": md.config.ErrorSamplesMode.SKIP,
    "enable_fusion": False,
    "rows_per_chunk": 5,
    "worker_shm_size": 8 << 20,
    "framework": "torch",
    "max_image_pixels": 4321,
    "device_fallback": "cpu",
    "dvpp_driver": "reference",
    "dvpp_policy": "cpu",
    "gpu_emulation": True,
    "gpu_device_id": 1,
    "gpu_driver": "torch",
    "fast_decode_resize": True,
    "multiprocessing_start_method": "spawn",
    "profiling": True,
    "autotune": True,
    "autotune_cpu_budget": 1.5,
    "autotune_memory_budget": 1 << 30,
    "autotune_interval": 12,
    "autotune_save_prefix": None,  # set only with autotune on; checked in tests/profiler/test_autotune.py
    "auto_num_workers": True,
    "monitor_sampling_interval": 33,
    "callback_timeout": 9,
    "iterator_copy": True,
    "iterator_parallel_convert": False,
    "fast_recovery": False,
    "numa_enable": True,
    "video_backend": "Ascend",
    "enable_shared_mem": False,
    "multiprocessing_timeout_interval": 17,
    "enable_watchdog": False,
    "auto_offload": True,
    "sending_batches": 5,
    "dynamic_shape": True,
    "debug_mode": True,
    "debug_hooks": (PrintDataHook(),),
}


def _configure(values: dict) -> None:
    c = md.config
    c.set_seed(values["seed"])
    c.set_num_parallel_workers(values["num_parallel_workers"])
    c.set_prefetch_size(values["prefetch_size"])
    c.set_error_samples_mode(values["error_samples_mode"])
    c.set_enable_fusion(values["enable_fusion"])
    c.set_rows_per_chunk(values["rows_per_chunk"])
    c.set_worker_shm_size(values["worker_shm_size"])
    c.set_framework(values["framework"])
    c.set_max_image_pixels(values["max_image_pixels"])
    c.set_device_fallback(values["device_fallback"])
    c.set_dvpp_driver(values["dvpp_driver"])
    c.set_dvpp_policy(values["dvpp_policy"])
    c.set_gpu_emulation(values["gpu_emulation"])
    c.set_gpu_device_id(values["gpu_device_id"])
    c.set_gpu_driver(values["gpu_driver"])
    c.set_fast_decode_resize(values["fast_decode_resize"])
    c.set_multiprocessing_start_method(values["multiprocessing_start_method"])
    c.set_profiling(values["profiling"])
    c.set_autotune(values["autotune"], values["autotune_cpu_budget"], values["autotune_memory_budget"])
    c.set_autotune_interval(values["autotune_interval"])
    c.set_auto_num_workers(values["auto_num_workers"])
    c.set_monitor_sampling_interval(values["monitor_sampling_interval"])
    c.set_callback_timeout(values["callback_timeout"])
    c.set_iterator_mode(values["iterator_copy"], values["iterator_parallel_convert"])
    c.set_fast_recovery(values["fast_recovery"])
    c.set_numa_enable(values["numa_enable"])
    c.set_video_backend(values["video_backend"])
    c.set_enable_shared_mem(values["enable_shared_mem"])
    c.set_multiprocessing_timeout_interval(values["multiprocessing_timeout_interval"])
    c.set_enable_watchdog(values["enable_watchdog"])
    c.set_auto_offload(values["auto_offload"])
    c.set_sending_batches(values["sending_batches"])
    c.set_dynamic_shape(values["dynamic_shape"])
    c.set_debug_mode(values["debug_mode"], list(values["debug_hooks"]))


def test_the_snapshot_holds_every_setting() -> None:
    assert {f.name for f in dataclasses.fields(RunOptions)} == set(NON_DEFAULT)
    _configure(NON_DEFAULT)
    assert dataclasses.asdict(md.config.snapshot()) == NON_DEFAULT


def test_the_snapshot_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        md.config.snapshot().max_image_pixels = 1  # type: ignore[misc]


@pytest.mark.parametrize("kind", list(KINDS))
def test_kernels_see_every_setting_in_both_worker_kinds(kind: str) -> None:
    # Debug mode would run every map in one thread of this process: not both worker kinds.
    _configure({**NON_DEFAULT, "profiling": False, "autotune": False, "auto_num_workers": False, "framework": "numpy",
                "debug_mode": False})
    expected = md.config.snapshot()
    ds = _mapped([0, 1, 2], [EchoOptions()], KINDS[kind])
    it = ds.create_tuple_iterator(num_epochs=1, output_numpy=True)
    md.config.load_defaults()  # changes after the iterator was created do not reach it
    seen = {pickle.loads(row[0].tobytes()) for row in it}
    assert seen == {expected}


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
    assert pickle.loads(row.tobytes()).max_image_pixels is None
    (row,) = list(limited)  # created under the limit: keeps it
    assert pickle.loads(row[0].tobytes()).max_image_pixels == 100


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_dvpp_policy_reaches_both_worker_kinds(kind: str) -> None:
    md.config.set_dvpp_driver("reference")
    md.config.set_dvpp_policy("cpu")  # a PNG (Dvpp decodes JPEG only) runs on the CPU kernel instead
    (image,) = _rows(_mapped([_png()], [vision.Decode().device("Dvpp")], KINDS[kind]))
    assert image.shape == (32, 40, 3)
    md.config.set_dvpp_policy("error")
    with pytest.raises(RowError, match="JPEG only"):
        _rows(_mapped([_png()], [vision.Decode().device("Dvpp")], KINDS[kind]))


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
