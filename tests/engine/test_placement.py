"""Per-op devices (DESIGN.md §5): the API, the placement pass's decisions and its errors.

No hardware is needed: what the machine has is monkeypatched into minddata.ops.probe, and Dvpp ops
run on the reference model. Pipelines that actually run GPU ops are in tests/ops/test_gpu_dali.py.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import minddata as md
from minddata import transforms, vision
from minddata.engine.placement import Machine, choose
from minddata.errors import ArgumentError, DeviceError
from minddata.ops import probe
from minddata.ops.devices import Presence


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(probe, "visible_gpus", lambda: ([], "no NVIDIA GPU visible (nvidia-smi -L found none)"))


@pytest.fixture
def images(image_folder):
    return image_folder


def _pipeline(folder, ops, **map_kwargs):
    ds = md.ImageFolderDataset(str(folder), shuffle=False, num_parallel_workers=2)
    return ds.map(ops, input_columns="image", num_parallel_workers=2, **map_kwargs)


def _images(ds):
    return [row["image"] for row in ds.create_dict_iterator(num_epochs=1, output_numpy=True)]


# --- the API --------------------------------------------------------------------------------------


def test_device_names_and_the_ascend_alias():
    assert vision.Decode().device("Ascend").device_target == "Dvpp"
    assert vision.Decode().device("gpu").device_target == "GPU"
    assert vision.Decode().device("auto").device_target == "auto"
    with pytest.raises(ArgumentError, match="Decode.device: device must be one of"):
        vision.Decode().device("TPU")


def test_map_device_places_unplaced_ops_and_leaves_the_users_ops_alone():
    decode, resize, flip = vision.Decode(), vision.Resize(8).device("CPU"), vision.HorizontalFlip()
    ds = md.NumpySlicesDataset({"image": [np.zeros(3, np.uint8)]}).map(
        [decode, resize, flip, np.flip], input_columns="image", device="Ascend"
    )
    placed = ds._node.operations
    assert [getattr(op, "device_target", "callable") for op in placed] == ["Dvpp", "CPU", "Dvpp", "callable"]
    assert decode.device_target == "CPU" and flip.device_target == "CPU"  # copies were placed
    with pytest.raises(ArgumentError, match="map: device must be one of"):
        md.NumpySlicesDataset({"x": [1]}).map([abs], input_columns="x", device="NPU")


# --- absent devices -------------------------------------------------------------------------------


def test_absent_gpu_fails_when_the_iterator_is_created(images, no_gpu):
    ds = _pipeline(images, [vision.Decode(), vision.Resize(8).device("GPU")])
    with pytest.raises(DeviceError) as caught:
        ds.create_dict_iterator(num_epochs=1)  # not deep inside a worker, not at the first next()
    message = str(caught.value)
    for part in ("op Resize", "placed on GPU", "no NVIDIA GPU visible", "pip install 'minddata[gpu]'",
                 ".device('CPU')", "set_device_fallback('cpu')"):
        assert part in message, message


def test_absent_dali_names_the_extra(images, monkeypatch):
    monkeypatch.setattr(probe, "dali_status", lambda: (False, probe.GPU_INSTALL_HINT))
    # Without DALI the placement falls back to the torch driver: a CUDA build of torch would run it.
    monkeypatch.setattr(probe, "torch_status", lambda: (False, False, "PyTorch not installed"))
    ds = _pipeline(images, [vision.Decode().device("GPU")])
    with pytest.raises(DeviceError, match=r"op Decode is placed on GPU.*nvidia-dali-cuda120 not installed"):
        ds.create_dict_iterator(num_epochs=1)


def test_absent_dvpp_fails_naming_the_drivers_it_looked_for(images, no_gpu, monkeypatch):
    monkeypatch.setattr(probe, "ascend_driver", lambda: probe.DriverInfo("ascend", False, "no 'acl' module"))
    ds = _pipeline(images, [vision.Decode().device("Dvpp")])
    with pytest.raises(DeviceError) as caught:
        ds.create_dict_iterator(num_epochs=1)
    message = str(caught.value)
    for part in ("op Decode is placed on Dvpp", "nvjpg", "ascend: no 'acl' module", "set_dvpp_driver('reference')"):
        assert part in message, message


def test_fallback_to_cpu_is_logged_and_gives_the_cpu_output(images, no_gpu, caplog):
    want = _images(_pipeline(images, [vision.Decode(), vision.Resize((8, 10))]))
    md.config.set_device_fallback("cpu")
    with caplog.at_level(logging.WARNING, logger="minddata"):
        got = _images(_pipeline(images, [vision.Decode(), vision.Resize((8, 10)).device("GPU")]))
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    warnings = [r.getMessage() for r in caplog.records if "placed on GPU" in r.getMessage()]
    assert len(warnings) == 1 and "running it on the CPU" in warnings[0]


# --- ops a device can't run -----------------------------------------------------------------------


def test_op_without_a_kernel_on_the_device_lists_the_devices_ops(images):
    md.config.set_dvpp_driver("reference")
    ds = _pipeline(images, [vision.Decode(), vision.HWC2CHW().device("Dvpp")])
    with pytest.raises(DeviceError) as caught:
        ds.create_dict_iterator(num_epochs=1)
    message = str(caught.value)
    assert "op HWC2CHW is placed on Dvpp (driver 'reference')" in message
    assert "Ops with a Dvpp kernel: AdjustBrightness, AdjustContrast," in message and ".device('CPU')" in message
    assert "CenterCrop, Crop, Decode, " in message


def test_parameters_a_device_cant_honour_are_named(images):
    md.config.set_dvpp_driver("reference")
    ds = _pipeline(images, [vision.Decode(), vision.Resize(8, vision.Inter.BICUBIC).device("Dvpp")])
    with pytest.raises(DeviceError, match="BILINEAR or NEAREST interpolation only; this op asks for BICUBIC"):
        ds.create_dict_iterator(num_epochs=1)


def test_gpu_translation_limits_are_checked_before_running(images, monkeypatch):
    monkeypatch.setattr(probe, "gpu_backend", lambda options=None: ("cuda", "NVIDIA H200; DALI 2.4.0"))
    ds = _pipeline(images, [vision.Decode(), vision.Pad(2, padding_mode=vision.Border.EDGE).device("GPU")])
    with pytest.raises(DeviceError, match="padding_mode='edge' has no GPU equivalent"):
        ds.create_dict_iterator(num_epochs=1)


# --- automatic placement --------------------------------------------------------------------------


def _auto(*ops):
    return [op.device("auto") for op in ops]


def _machine(gpu=None, dvpp=None):
    """A machine whose GPU runs on backend ``gpu`` and whose Dvpp on driver ``dvpp`` (None: absent)."""
    return Machine(found={"GPU": Presence("GPU", gpu, "a GPU" if gpu else "no GPU"),
                          "Dvpp": Presence("Dvpp", dvpp, "a media engine" if dvpp else "no media engine")})


def test_auto_keeps_everything_on_the_cpu_without_accelerators():
    ops = choose(_auto(vision.Decode(), vision.Resize(256), vision.Normalize([0], [1])), {"CPU"})
    assert [op.device_target for op in ops] == ["CPU", "CPU", "CPU"]


@pytest.mark.parametrize("backend", ["cuda", "torch-cuda"])
def test_auto_sends_a_pixel_heavy_run_to_the_gpu(backend):
    machine = _machine(gpu=backend)
    ops = _auto(vision.Decode(), vision.RandomResizedCrop(224), vision.RandomHorizontalFlip(),
                vision.Normalize([0, 0, 0], [1, 1, 1]), vision.HWC2CHW())
    assert {op.device_target for op in choose(ops, {"CPU", "GPU"}, machine)} == {"GPU"}


def test_auto_uses_the_media_engine_for_decode_and_keeps_what_it_cant_run_on_the_cpu():
    machine = _machine(dvpp="nvjpg")
    ops = _auto(vision.Decode(), vision.Normalize([0, 0, 0], [1, 1, 1]), transforms.TypeCast("float16"))
    assert [op.device_target for op in choose(ops, {"CPU", "Dvpp"}, machine)] == ["Dvpp", "CPU", "CPU"]


def test_auto_keeps_a_cheap_op_off_the_device_when_the_copy_costs_more():
    machine = _machine(gpu="cuda")
    # A flip on its own: moving the image there and back costs more than flipping it here.
    assert choose(_auto(vision.HorizontalFlip()), {"CPU", "GPU"}, machine)[0].device_target == "CPU"


def test_auto_never_picks_the_reference_model_or_an_emulated_gpu(images, no_gpu):
    md.config.set_dvpp_driver("reference")
    md.config.set_gpu_emulation(True)
    ds = _pipeline(images, [vision.Decode(), vision.Resize((8, 10))], device="auto")
    assert "placed:" not in ds.explain()
    assert len(_images(ds)) == 12


def test_explain_shows_placement_and_fusion_on_the_device(images):
    md.config.set_dvpp_driver("reference")
    ds = _pipeline(images, [vision.Decode(), vision.Resize((8, 10)), vision.HWC2CHW()], device="Dvpp")
    with pytest.raises(DeviceError, match="HWC2CHW"):
        ds.explain()
    ds = _pipeline(images, [vision.Decode().device("Dvpp"), vision.Resize((8, 10)).device("Dvpp"), vision.HWC2CHW()])
    text = ds.explain()
    assert "placed: Decode on Dvpp, Resize on Dvpp" in text
    assert "Decode+Resize on Dvpp: one fused op" in text


def test_nvjpg_takes_a_resize_only_fused_with_its_decode(monkeypatch):
    monkeypatch.setattr(probe, "dvpp_driver", lambda options=None: ("nvjpg", "NVIDIA H200 NVJPG through DALI 2.4.0"))
    monkeypatch.setattr(probe, "gpu_backend", lambda options=None: ("cuda", "NVIDIA H200; DALI 2.4.0"))
    ds = md.NumpySlicesDataset({"image": [b"jpeg bytes"]}).map(
        [vision.Decode().device("Dvpp"), vision.Resize((416, 416)).device("Dvpp"), vision.HWC2CHW()],
        input_columns="image",
    )
    text = ds.explain()
    assert "Decode+Resize on Dvpp: one fused op" in text and "FusedDecodeResize: one DALI pipeline on the GPU" in text
    md.config.set_enable_fusion(False)
    with pytest.raises(DeviceError, match="runs only fused with the Decode before it, and fusion is off"):
        ds.explain()
    md.config.set_enable_fusion(True)
    alone = md.NumpySlicesDataset({"image": [np.zeros((4, 4, 3), np.uint8)]}).map(
        [vision.Resize((416, 416)).device("Dvpp")], input_columns="image"
    )
    with pytest.raises(DeviceError, match=r"no Resize kernel on its 'nvjpg' driver.*Ops with a Dvpp kernel: Decode"):
        alone.explain()


def test_gpu_output_stays_on_the_gpu_only_for_torch_consumers(monkeypatch):
    from minddata.engine.optimizer import lower

    monkeypatch.setattr(probe, "gpu_backend", lambda options=None: ("cuda", "NVIDIA H200; DALI 2.4.0"))
    source = md.NumpySlicesDataset({"image": [np.zeros((4, 4, 3), np.uint8)]})
    gpu_map = source.map([vision.HorizontalFlip().device("GPU")], input_columns="image")

    def kept(ds) -> bool:
        tree = lower(ds._node, True)
        gpu = [n for n in tree.walk() if any(p.kind == "segment" for p in getattr(n, "device_parts", []))]
        return gpu[0].device_output

    assert not kept(gpu_map.batch(2))  # NumPy consumers: host arrays
    md.config.set_framework("torch")
    assert kept(gpu_map.batch(2).repeat(2)) and kept(gpu_map)
    assert not kept(gpu_map.batch(2).map(abs, input_columns="image"))  # a CPU op reads it next
    assert not kept(gpu_map.batch(2).batch(2))


def test_cannot_run_answers_as_the_placement_pass_would(monkeypatch, no_gpu):
    from minddata.engine.placement import cannot_run

    assert "no NVIDIA GPU visible" in cannot_run(vision.Resize(8), "GPU")
    monkeypatch.setattr(probe, "dvpp_driver", lambda options=None: ("nvjpg", "NVIDIA H200 NVJPG through DALI 2.4.0"))
    assert "no Resize kernel on its 'nvjpg' driver" in cannot_run(vision.Resize(8), "Dvpp")
    assert cannot_run(vision.Resize(8), "Dvpp", previous=vision.Decode()) is None  # fused with it
    assert cannot_run(vision.Decode(), "Dvpp") is None


@pytest.mark.parametrize(("backend", "gpus"), [("cuda", 1.0), ("torch-cuda", 1.0), ("dali-cpu", 0.0),
                                               ("torch-cpu", 0.0)])
def test_ray_actors_ask_for_a_gpu_for_a_segment_of_either_driver(monkeypatch, backend, gpus):
    from minddata.engine.optimizer import lower
    from minddata.engine.ray_executor.actors import num_gpus

    monkeypatch.setattr(probe, "gpu_backend", lambda options=None: (backend, f"NVIDIA H200; {backend}"))
    ds = md.NumpySlicesDataset({"image": [np.zeros((4, 4, 3), np.uint8)]}).map(
        [vision.HorizontalFlip().device("GPU"), transforms.TypeCast(np.float32)], input_columns="image")
    (gpu_map,) = [n for n in lower(ds._node, True).walk() if getattr(n, "device_parts", ())]
    assert [p.kind for p in gpu_map.device_parts] == ["segment", "row"]
    assert num_gpus(gpu_map) == gpus  # Ray hides every GPU from an actor that asked for none
