"""The GPU device's DALI graphs as the CUDA backend builds them, checked without a GPU.

DALI checks each operator's device against its inputs' devices while the graph is defined (a CPU
operator fed GPU data is an error), before anything needs CUDA; so every translation, alone and after
each decoder, is defined here with the CUDA backend's device choices. Also: a pipeline that cannot be
built is the device's failure, not a row's; the CUDA device follows the training framework; every
dtype the GPU can output has a torch dtype. Skipped, with the reason, where NVIDIA DALI is not installed.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from minddata import config, transforms, vision
from minddata.errors import DeviceError
from minddata.ops import KernelContext
from minddata.ops.fused import FusedDecodeRandomResizedCrop, FusedDecodeResize
from minddata.ops.gpu.segment import DaliSegment, cuda_device_id, torch_dtype
from minddata.ops.gpu.translation import TRANSLATIONS, Kind
from minddata.ops.probe import dali_status, visible_gpus

_ok, _why = dali_status()
if not _ok and os.environ.get("MINDDATA_REQUIRE_DALI"):
    raise RuntimeError(f"MINDDATA_REQUIRE_DALI is set but nvidia.dali is not importable: {_why}")
pytestmark = pytest.mark.skipif(not _ok, reason=f"nvidia.dali not importable ({_why})")

MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]

# One op per translation, with parameters that exercise its whole DALI graph.
PIXEL_OPS = {
    "Resize": lambda: vision.Resize((16, 20)),
    "CenterCrop": lambda: vision.CenterCrop(8),
    "Crop": lambda: vision.Crop((1, 2), 4),
    "RandomResizedCrop": lambda: vision.RandomResizedCrop(8),
    "ResizedCrop": lambda: vision.ResizedCrop(0, 0, 4, 4, 8),
    "HorizontalFlip": lambda: vision.HorizontalFlip(),
    "RandomHorizontalFlip": lambda: vision.RandomHorizontalFlip(),
    "VerticalFlip": lambda: vision.VerticalFlip(),
    "RandomVerticalFlip": lambda: vision.RandomVerticalFlip(),
    "Normalize": lambda: vision.Normalize(MEAN, STD),
    "Rescale": lambda: vision.Rescale(1 / 255, 0.0),
    "HWC2CHW": lambda: vision.HWC2CHW(),
    "TypeCast": lambda: transforms.TypeCast(np.float32),
    "ToType": lambda: vision.ToType(np.float32),
    "Pad": lambda: vision.Pad(2),
    "Rotate": lambda: vision.Rotate(30),
    "RandomRotation": lambda: vision.RandomRotation(30, expand=True),
    "RandomColorAdjust": lambda: vision.RandomColorAdjust(0.4, 0.4, 0.4, 0.1),
    "Invert": lambda: vision.Invert(),
    "RandomInvert": lambda: vision.RandomInvert(),
    "Posterize": lambda: vision.Posterize(3),
    "RandomPosterize": lambda: vision.RandomPosterize((1, 4)),
    "Solarize": lambda: vision.Solarize((50, 200)),
    "RandomSolarize": lambda: vision.RandomSolarize(),
    "AdjustBrightness": lambda: vision.AdjustBrightness(1.3),
    "AdjustContrast": lambda: vision.AdjustContrast(1.3),
    "AdjustSaturation": lambda: vision.AdjustSaturation(1.3),
    "AdjustHue": lambda: vision.AdjustHue(0.1),
    "RandomColor": lambda: vision.RandomColor(),
    "PadToSize": lambda: vision.PadToSize(40),
    "Erase": lambda: vision.Erase(1, 2, 3, 4),
    "RandomResize": lambda: vision.RandomResize((16, 20)),
    "Equalize": lambda: vision.Equalize(),
    "RandomEqualize": lambda: vision.RandomEqualize(),
    "Perspective": lambda: vision.Perspective([[0, 0], [9, 0], [9, 9], [0, 9]], [[1, 0], [9, 1], [8, 9], [0, 8]]),
    "RandomPerspective": lambda: vision.RandomPerspective(),
    "RandomLighting": lambda: vision.RandomLighting(),
    "AdjustGamma": lambda: vision.AdjustGamma(0.5),
    "RandomGrayscale": lambda: vision.RandomGrayscale(),
    "ToTensor": lambda: vision.ToTensor(),
    "AdjustSharpness": lambda: vision.AdjustSharpness(2.0),
    "RandomSharpness": lambda: vision.RandomSharpness(),
    "RandomAdjustSharpness": lambda: vision.RandomAdjustSharpness(2.0),
}
# Kinds some translations build differently for (their graphs branch on the input's dtype or channels).
OTHER_KINDS = {
    "float32": Kind("HWC", np.dtype(np.float32), 3),
    "float64": Kind("HWC", np.dtype(np.float64), 3),
    "int16": Kind("HWC", np.dtype(np.int16), 3),
    "gray": Kind("HWC", np.dtype(np.uint8), 1, gray2d=True),
}
DECODERS = {
    "Decode": lambda: vision.Decode(),
    "FusedDecodeResize": lambda: FusedDecodeResize(vision.Decode(), vision.Resize((16, 20))),
    "FusedDecodeRandomResizedCrop": lambda: FusedDecodeRandomResizedCrop(vision.Decode(), vision.RandomResizedCrop(8)),
    "RandomCropDecodeResize": lambda: vision.RandomCropDecodeResize(8),
}
ENCODED = Kind("encoded", np.dtype(np.uint8), None)
IMAGE = Kind("HWC", np.dtype(np.uint8), 3)


def test_every_translation_has_a_case_here():
    assert set(PIXEL_OPS) | set(DECODERS) == set(TRANSLATIONS)


def _define(ops, kind):
    segment = DaliSegment(ops, backend="cuda", device_id=0)
    segment.define(kind)  # raises DALI's device-compatibility error if the graph is wrong


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_each_decoder_alone_defines_on_cuda(name):
    _define([DECODERS[name]()], ENCODED)


@pytest.mark.parametrize("name", sorted(PIXEL_OPS))
def test_each_pixel_op_on_host_images_defines_on_cuda(name):
    _define([PIXEL_OPS[name]()], IMAGE)


BRANCHING = ["Invert", "AdjustBrightness", "Solarize", "RandomLighting", "AdjustGamma", "RandomGrayscale", "ToTensor",
             "AdjustSharpness", "Erase", "Perspective", "RandomResize"]
# RandomLighting and Erase take three channels only: a grey row fails in the plan, before any graph.
BRANCH_CASES = [(name, kind) for name in BRANCHING for kind in sorted(OTHER_KINDS)
                if not (kind == "gray" and name in ("RandomLighting", "Erase"))]


@pytest.mark.parametrize(("name", "kind"), BRANCH_CASES)
def test_dtype_and_channel_branches_define_on_cuda(name, kind):
    _define([PIXEL_OPS[name]()], OTHER_KINDS[kind])


@pytest.mark.parametrize("decoder", sorted(DECODERS))
@pytest.mark.parametrize("name", ["Resize", "RandomResizedCrop", "RandomHorizontalFlip", "RandomColorAdjust",
                                  "Normalize", "Rotate", "Pad"])
def test_each_op_after_each_decoder_defines_on_cuda(decoder, name):
    # After a mixed decoder everything is on the GPU: a CPU operator there is what DALI rejects.
    _define([DECODERS[decoder](), PIXEL_OPS[name]()], ENCODED)


def test_the_standard_pipelines_define_on_cuda():
    train = [FusedDecodeRandomResizedCrop(vision.Decode(), vision.RandomResizedCrop(224)), vision.RandomHorizontalFlip(),
             vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    infer = [FusedDecodeResize(vision.Decode(), vision.Resize(256)), vision.CenterCrop(224), vision.Normalize(MEAN, STD),
             vision.HWC2CHW()]
    yolo = [FusedDecodeResize(vision.Decode(), vision.Resize((416, 416))), vision.Normalize(MEAN, STD),
            vision.HWC2CHW()]
    for ops in (train, infer, yolo):
        _define(ops, ENCODED)


@pytest.mark.skipif(bool(visible_gpus()[0]), reason="a GPU is visible: the CUDA pipeline would build here")
def test_a_pipeline_that_cannot_build_is_a_device_error_not_a_bad_row():
    segment = DaliSegment([vision.HorizontalFlip()], backend="cuda", device_id=0)
    image = np.zeros((4, 4, 3), np.uint8)
    with pytest.raises(DeviceError, match="could not be built.*not a problem with the data"):
        segment.run([image, image, image], [[KernelContext()]] * 3)


def _torch_cuda_state(monkeypatch, initialized: bool, current: int = 0) -> None:
    """What torch reports about CUDA in this process, whatever an earlier test in this worker did."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        if not initialized:
            return
        torch = pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: initialized)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: current)


def test_cuda_device_follows_the_setting_then_the_launcher(monkeypatch):
    _torch_cuda_state(monkeypatch, initialized=False)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert cuda_device_id() == 1  # torch has not initialized CUDA in this process
    config.set_gpu_device_id(2)
    assert cuda_device_id() == 2
    assert DaliSegment([vision.HorizontalFlip()], backend="cuda").device_id == 2
    monkeypatch.delenv("LOCAL_RANK")
    config.set_gpu_device_id(None)
    assert cuda_device_id() == 0


def test_cuda_device_follows_torchs_current_device_once_cuda_is_initialized(monkeypatch):
    _torch_cuda_state(monkeypatch, initialized=True, current=3)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert cuda_device_id() == 3  # the training script chose it (torch.cuda.set_device)
    config.set_gpu_device_id(2)
    assert cuda_device_id() == 2


def test_gpu_device_id_setting_is_checked():
    with pytest.raises(ValueError, match="`device_id` must be None or an int >= 0. Found: -1"):
        config.set_gpu_device_id(-1)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
                                   "float16", "float32", "float64", "bool"])
def test_every_gpu_output_dtype_has_a_torch_dtype(dtype):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    assert torch_dtype(np.dtype(dtype)) == torch.from_numpy(np.zeros(1, dtype)).dtype
