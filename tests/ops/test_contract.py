"""The op contract (DESIGN.md §3), checked for every op that has a CPU kernel, on every device with a kernel.

``CASES`` maps each op name to a factory building the op with typical arguments, typical inputs, and
how the op meets odd inputs. A kernel registered without an entry fails
``test_every_cpu_op_has_a_contract_entry``: add one when adding an op. For every (op, device):

- the output matches ``output_spec`` (shape, with ``None`` as a wildcard, and dtype), for inputs with
  known sizes and with unknown ones;
- a non-CPU kernel matches the CPU kernel within its tolerance (``op_facts(name).tolerances``, declared
  with the kernel);
- the spec pickles, and the unpickled op gives the same output;
- the same (seed, pass, row, position) gives the same output; random ops vary with the row, other
  ops don't;
- odd inputs (``ODD_KINDS``) either work and match ``output_spec``, or raise a ValueError/TypeError
  whose message names the op. ``Case.rejects`` lists the kinds an op legitimately rejects.

Devices without their hardware: GPU kernels (DALI translations) run on DALI's CPU backend
(``config.set_gpu_emulation``), skipped with the reason when DALI is not installed; on a machine with
an NVIDIA GPU they run on it. Dvpp kernels run on the reference model of DVPP
(``config.set_dvpp_driver("reference")``), with inputs that meet DVPP's size rules (``DEVICE_CASES``)
and the rules' rejections as expected errors.
"""

from __future__ import annotations

import functools
import importlib
import os
import pickle
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import pytest
from contract_audio import audio_cases
from contract_text import text_cases

import minddata as md
import minddata.ops.cpu
from minddata import transforms, vision
from minddata.ops import KernelContext, Op, TensorSpec, available_devices, get_kernel, ops_on
from minddata.ops.fused import (
    FusedDecodeRandomResizedCrop,
    FusedDecodeResize,
    FusedNormalizeHWC2CHW,
    NormalizeInputCheck,
)
from minddata.ops.registry import op_facts
from minddata.vision import Border, ConvertMode, ImageBatchFormat, Inter, SliceMode

# How far a non-CPU kernel may be from the CPU reference, per element on the data's own scale (0-255
# for uint8 images): (largest difference, mean difference), declared with the device's kernel in the op
# facts (the GPU family modules in minddata/ops/gpu/, minddata/ops/dvpp/kernels.py), where the reasons
# are. Measured with DALI 2.4 and the reference Dvpp model.
Tolerance = tuple[float, float]


def device_tolerance(name: str, device: str) -> Tolerance:
    backend = None
    if device == "GPU":
        from minddata.ops.gpu.kernels import row_backend

        backend = row_backend()
    bound = op_facts(name).tolerance(device, backend)
    assert bound is not None, (
        f"{name} has a {device} kernel but declares no tolerance against the CPU kernel: declare it where the "
        f"kernel is registered (register_kernel({name!r}, {device!r}, tolerance=...))"
    )
    return bound


def _dali_missing() -> str | None:
    from minddata.ops.probe import dali_status

    ok, why = dali_status()
    if not ok and os.environ.get("MINDDATA_REQUIRE_DALI"):
        raise RuntimeError(f"MINDDATA_REQUIRE_DALI is set but nvidia.dali is not importable: {why}")
    return None if ok else f"GPU kernels are DALI translations and nvidia.dali is not importable: {why}"


@pytest.fixture(autouse=True)
def _devices_here() -> None:
    """Non-CPU kernels on what this machine has: DALI's CPU backend when there is no GPU, and the
    reference model of DVPP (config is reset around every test by conftest.py)."""
    md.config.set_gpu_emulation(True)
    md.config.set_dvpp_driver("reference")

ODD_KINDS = ("empty", "one_pixel", "large", "gray", "gray_hw1", "rgba")

MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]


def photo(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    """Gradients plus noise: no symmetry, so flips, crops and orders of ops all show."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * (k + 2) + y * (c - k) * 3) % 256 for k in range(c)], axis=-1)
    return np.clip(base + rng.integers(0, 30, (h, w, c)), 0, 255).astype(np.uint8)


IMAGE = photo(24, 33)


@functools.cache
def odd_image(kind: str) -> np.ndarray:
    if kind == "empty":
        return np.zeros((0, 0, 3), np.uint8)
    if kind == "one_pixel":
        return np.array([[[200, 100, 50]]], np.uint8)
    if kind == "large":
        # Built by broadcasting: a noise image this size would cost more than the tests using it.
        y = np.arange(2000, dtype=np.uint16)[:, None, None]
        x = np.arange(3000, dtype=np.uint16)[None, :, None]
        return ((y + 2 * x + np.arange(3, dtype=np.uint16) * 80) % 256).astype(np.uint8)
    if kind == "gray":
        return photo(20, 30, 1)[..., 0]
    if kind == "gray_hw1":
        return photo(20, 30, 1)
    if kind == "rgba":
        return photo(20, 30, 4)
    raise KeyError(kind)


@functools.cache
def encode_png(kind: str) -> np.ndarray:
    img = odd_image(kind)
    if img.size == 0:
        return np.zeros(0, np.uint8)  # nothing can encode a 0x0 image: the empty input is 0 bytes
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.reshape(-1)


def _as_image(img: np.ndarray) -> tuple[Any, ...]:
    return (img,)


def _as_png(img: np.ndarray) -> tuple[Any, ...]:
    kind = next(k for k in ODD_KINDS if odd_image(k) is img)
    return (encode_png(kind),)


def _as_batch(img: np.ndarray) -> tuple[Any, ...]:
    """A batch of 2 such images with one-hot labels."""
    return np.stack([img, img[::-1]]), np.eye(2, dtype=np.int64)


def _as_labels(img: np.ndarray) -> tuple[Any, ...]:
    """Class labels, one per image row: an empty image gives an empty label vector, a large one 2000."""
    return (np.arange(img.shape[0], dtype=np.int64) % 10,)


def _as_vector(img: np.ndarray) -> tuple[Any, ...]:
    return (img.reshape(-1),)


def _with_boxes(img: np.ndarray) -> tuple[Any, ...]:
    """The image and two boxes inside it ([x, y, w, h, class]): the whole image and its top-left quarter."""
    h, w = img.shape[:2]
    return img, np.array([[0, 0, w, h, 1], [0, 0, w / 2, h / 2, 2]], np.float32)


def _as_batch_of_4(img: np.ndarray) -> tuple[Any, ...]:
    """A batch of 4 such images (the large one cut down) with one-hot labels, for MixUp(batch_size=4)."""
    img = img[:64, :64] if img is odd_image("large") else img
    return np.stack([img, img[::-1], img, img[::-1]]), np.eye(4, dtype=np.int64)


BATCH = np.stack([photo(12, 16, seed=s) for s in range(4)])
ONE_HOT = np.eye(5, dtype=np.int64)[[0, 1, 2, 3]]


@dataclass(frozen=True)
class Case:
    """How to build an op, what to feed it, and how it meets the odd inputs."""

    make: Callable[[], Op]
    inputs: Callable[[], tuple[Any, ...]] = lambda: (IMAGE,)
    adapt: Callable[[np.ndarray], tuple[Any, ...]] = _as_image  # odd image -> this op's inputs
    rejects: Mapping[str, type[Exception]] = field(default_factory=dict)  # odd kind -> the error it raises
    # Names an error may give instead of the op's own: fused ops report the user ops they replace.
    reported_as: tuple[str, ...] = ()
    # odd kind -> a known bug, tested as a strict xfail: fixing the bug makes the test fail until the
    # entry is removed here.
    known_bugs: Mapping[str, str] = field(default_factory=dict)


EMPTY = {"empty": ValueError}
NOT_3_CHANNELS = {"empty": ValueError, "gray": ValueError, "gray_hw1": ValueError, "rgba": ValueError}

CASES: dict[str, Case] = {
    "Decode": Case(vision.Decode, lambda: (cv2.imencode(".jpg", IMAGE)[1].reshape(-1),), _as_png, EMPTY),
    "Resize": Case(lambda: vision.Resize(10), rejects=EMPTY),
    "CenterCrop": Case(lambda: vision.CenterCrop((8, 40)), rejects=EMPTY),
    # A 1x1 image can't hold a 4x5 box at (1, 2).
    "Crop": Case(lambda: vision.Crop((1, 2), (4, 5)), rejects={"empty": ValueError, "one_pixel": ValueError}),
    "HorizontalFlip": Case(vision.HorizontalFlip, rejects=EMPTY),
    "RandomHorizontalFlip": Case(lambda: vision.RandomHorizontalFlip(0.5), rejects=EMPTY),
    "RandomResizedCrop": Case(
        lambda: vision.RandomResizedCrop((9, 7), scale=(0.3, 1.0), interpolation=Inter.AREA), rejects=EMPTY
    ),
    "Normalize": Case(lambda: vision.Normalize(MEAN, STD), rejects=NOT_3_CHANNELS),
    "HWC2CHW": Case(vision.HWC2CHW, rejects=EMPTY),
    "Rescale": Case(lambda: vision.Rescale(1 / 255, -0.5)),
    "ToType": Case(lambda: vision.ToType("float32")),
    "TypeCast": Case(lambda: transforms.TypeCast("int16")),
    "Compose": Case(
        lambda: transforms.Compose(
            [vision.Resize((6, 8)), vision.RandomHorizontalFlip(), transforms.TypeCast("float32")]
        ),
        rejects=EMPTY,
    ),
    "NormalizePad": Case(lambda: vision.NormalizePad(MEAN, STD, dtype="float16"), rejects=NOT_3_CHANNELS),
    "RandomErasing": Case(
        lambda: vision.RandomErasing(prob=1.0, scale=(0.05, 0.3), value="random", is_hwc=True), rejects=EMPTY
    ),
    "CutOut": Case(lambda: vision.CutOut(6, num_patches=2), rejects=EMPTY),
    # Batches of 2-D images are 3-D: not a batch of images in either layout.
    "MixUpBatch": Case(
        lambda: vision.MixUpBatch(0.4), lambda: (BATCH, ONE_HOT), _as_batch, {"gray": ValueError}
    ),
    "CutMixBatch": Case(
        lambda: vision.CutMixBatch(ImageBatchFormat.NHWC, alpha=1.0, prob=1.0),
        lambda: (BATCH, ONE_HOT),
        _as_batch,
        {"empty": ValueError, "gray": ValueError},
    ),
    "OneHot": Case(
        lambda: transforms.OneHot(10, smoothing_rate=0.1), lambda: (np.array([0, 3, 9]),), _as_labels
    ),
    "Fill": Case(lambda: transforms.Fill(7)),
    "Duplicate": Case(transforms.Duplicate),
    "Concatenate": Case(
        lambda: transforms.Concatenate(
            0, prepend=np.array([1, 2], np.uint8), append=np.array([255], np.uint8)
        ),
        # Two input columns, joined in order (MindSpore); the odd inputs go in as one column.
        lambda: (np.arange(5, dtype=np.uint8), np.array([7, 8], np.uint8)),
        _as_vector,
    ),
    # Tensor ops (minddata/transforms.py, ops/cpu/tensor_ops.py): any shape for Mask; the others take
    # the odd images flattened, which PadEnd pads or cuts to 40 and Unique and Slice take as they come.
    "Mask": Case(lambda: transforms.Mask(transforms.Relational.GE, 100, "int32")),
    "PadEnd": Case(lambda: transforms.PadEnd([40], pad_value=3), lambda: (np.arange(30, dtype=np.uint8),), _as_vector),
    "Slice": Case(
        lambda: transforms.Slice(slice(1, None, 3)), lambda: (np.arange(30, dtype=np.uint8),), _as_vector
    ),
    "Unique": Case(transforms.Unique, lambda: (np.array([5, 1, 5, 2, 1], np.uint8),), _as_vector),
    # Darkens half the images: works on any input, so the odd ones pass whichever way the draw goes.
    "RandomApply": Case(
        lambda: transforms.RandomApply([vision.Rescale(0.5, 0.0), transforms.TypeCast("uint8")], prob=0.5)
    ),
    "RandomChoice": Case(
        lambda: transforms.RandomChoice(
            [vision.HorizontalFlip(), vision.Resize((6, 8)), vision.CenterCrop(5)]
        ),
        rejects=EMPTY,
    ),
    "RandomOrder": Case(
        lambda: transforms.RandomOrder(
            [vision.HorizontalFlip(), vision.CenterCrop((4, 6)), vision.Rescale(2.0, 1.0)]
        ),
        rejects=EMPTY,
    ),
    # Crops, flips, warps and colour (minddata/vision/crop.py, flip.py, affine.py, color.py).
    "Pad": Case(
        lambda: vision.Pad((1, 2, 3, 4), fill_value=(9, 8, 7), padding_mode=Border.CONSTANT), rejects=EMPTY
    ),
    "RandomCrop": Case(lambda: vision.RandomCrop((10, 12), padding=2, pad_if_needed=True), rejects=EMPTY),
    "ResizedCrop": Case(lambda: vision.ResizedCrop(0, 0, 1, 1, (5, 7)), rejects=EMPTY),
    "RandomCropDecodeResize": Case(
        lambda: vision.RandomCropDecodeResize((9, 7), scale=(0.3, 1.0)),
        lambda: (encode_png("rgba"),),
        _as_png,
        EMPTY,
    ),
    "VerticalFlip": Case(vision.VerticalFlip, rejects=EMPTY),
    "RandomVerticalFlip": Case(lambda: vision.RandomVerticalFlip(0.5), rejects=EMPTY),
    "Rotate": Case(lambda: vision.Rotate(30, Inter.BILINEAR, expand=True), rejects=EMPTY),
    "RandomRotation": Case(lambda: vision.RandomRotation((-30, 30), expand=True), rejects=EMPTY),
    "Affine": Case(lambda: vision.Affine(10, (0.1, -0.1), 1.2, (5, 3), Inter.BILINEAR), rejects=EMPTY),
    "RandomAffine": Case(
        lambda: vision.RandomAffine(15, translate=(-0.1, 0.1), scale=(0.9, 1.1), shear=5), rejects=EMPTY
    ),
    # RGB -> grayscale and colour jitter need exactly 3 channels.
    "ConvertColor": Case(lambda: vision.ConvertColor(ConvertMode.COLOR_RGB2GRAY), rejects=NOT_3_CHANNELS),
    "Grayscale": Case(lambda: vision.Grayscale(3), rejects=EMPTY),
    "RandomColorAdjust": Case(
        lambda: vision.RandomColorAdjust(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1),
        rejects=NOT_3_CHANNELS,
    ),
    "GaussianBlur": Case(lambda: vision.GaussianBlur(5, sigma=1.5), rejects=EMPTY),
    # Box-aware detection ops (minddata/vision/bbox.py): (image, boxes) in and out.
    "ResizeWithBBox": Case(lambda: vision.ResizeWithBBox((10, 14)), lambda: _with_boxes(IMAGE), _with_boxes, EMPTY),
    "RandomResizeWithBBox": Case(
        lambda: vision.RandomResizeWithBBox(10), lambda: _with_boxes(IMAGE), _with_boxes, EMPTY
    ),
    "RandomCropWithBBox": Case(
        lambda: vision.RandomCropWithBBox((10, 12), padding=2, pad_if_needed=True),
        lambda: _with_boxes(IMAGE),
        _with_boxes,
        EMPTY,
    ),
    "RandomHorizontalFlipWithBBox": Case(
        lambda: vision.RandomHorizontalFlipWithBBox(0.5), lambda: _with_boxes(IMAGE), _with_boxes, EMPTY
    ),
    "RandomVerticalFlipWithBBox": Case(
        lambda: vision.RandomVerticalFlipWithBBox(0.5), lambda: _with_boxes(IMAGE), _with_boxes, EMPTY
    ),
    "RandomResizedCropWithBBox": Case(
        lambda: vision.RandomResizedCropWithBBox((9, 7), scale=(0.3, 1.0)),
        lambda: _with_boxes(IMAGE),
        _with_boxes,
        EMPTY,
    ),
    "BoundingBoxAugment": Case(
        lambda: vision.BoundingBoxAugment(vision.RandomRotation(90), ratio=0.5),
        lambda: _with_boxes(IMAGE),
        _with_boxes,
        EMPTY,
    ),
    # Warps, fixed regions, multi-crops, conversions (minddata/vision/perspective.py, pad_erase.py,
    # multi_crop.py, convert.py, resize.py, mixup.py).
    "Perspective": Case(
        lambda: vision.Perspective(
            [[0, 0], [32, 0], [32, 23], [0, 23]], [[2, 1], [30, 0], [32, 20], [1, 23]], Inter.BILINEAR
        ),
        rejects=EMPTY,
    ),
    "RandomPerspective": Case(lambda: vision.RandomPerspective(0.5, prob=0.8), rejects=EMPTY),
    "Erase": Case(lambda: vision.Erase(2, 3, 5, 6, value=(10, 20, 30)), rejects=NOT_3_CHANNELS),
    # The large image does not fit in 30x40.
    "PadToSize": Case(
        lambda: vision.PadToSize((30, 40), fill_value=(9, 8, 7)), rejects={"empty": ValueError, "large": ValueError}
    ),
    "FiveCrop": Case(lambda: vision.FiveCrop((8, 10)), rejects={"empty": ValueError, "one_pixel": ValueError}),
    "TenCrop": Case(
        lambda: vision.TenCrop(6, use_vertical_flip=True), rejects={"empty": ValueError, "one_pixel": ValueError}
    ),
    "SlicePatches": Case(lambda: vision.SlicePatches(2, 3, SliceMode.PAD, 255), rejects=EMPTY),
    "ToTensor": Case(vision.ToTensor),
    "ToPIL": Case(vision.ToPIL, rejects={"empty": TypeError}),
    "ToNumpy": Case(vision.ToNumpy),
    # Built for 4x5x3 inputs: every odd image has another size.
    "LinearTransformation": Case(
        lambda: vision.LinearTransformation(
            np.eye(60, dtype=np.float32)[::-1].copy(), np.arange(60, dtype=np.float32)
        ),
        lambda: (IMAGE[:4, :5],),
        rejects={kind: ValueError for kind in ODD_KINDS},
    ),
    "RandomResize": Case(lambda: vision.RandomResize((10, 14)), rejects=EMPTY),
    "MixUp": Case(lambda: vision.MixUp(batch_size=4, alpha=0.4), lambda: (BATCH, ONE_HOT), _as_batch_of_4),
    # FFmpeg reads a PNG as a one-frame video: the odd images go in as PNG bytes.
    "DecodeVideo": Case(vision.DecodeVideo, lambda: (encode_png("rgba"),), _as_png, EMPTY),
    # Pixel adjustments (minddata/vision/adjust.py): RGB-only ops reject other channel counts.
    "AdjustBrightness": Case(lambda: vision.AdjustBrightness(1.3), rejects=EMPTY),
    "AdjustContrast": Case(lambda: vision.AdjustContrast(1.7), rejects=NOT_3_CHANNELS),
    "AdjustGamma": Case(lambda: vision.AdjustGamma(0.5, gain=1.2), rejects=EMPTY),
    "AdjustHue": Case(lambda: vision.AdjustHue(-0.2), rejects=NOT_3_CHANNELS),
    "AdjustSaturation": Case(lambda: vision.AdjustSaturation(1.6), rejects=NOT_3_CHANNELS),
    "AdjustSharpness": Case(lambda: vision.AdjustSharpness(2.0), rejects=EMPTY),
    "AutoContrast": Case(lambda: vision.AutoContrast(cutoff=5.0, ignore=[0]), rejects=EMPTY),
    "Equalize": Case(vision.Equalize, rejects=EMPTY),
    "Invert": Case(vision.Invert, rejects=EMPTY),
    "Posterize": Case(lambda: vision.Posterize(3), rejects=EMPTY),
    "Solarize": Case(lambda: vision.Solarize((50, 200)), rejects=EMPTY),
    "RandomAdjustSharpness": Case(lambda: vision.RandomAdjustSharpness(2.0, prob=0.5), rejects=EMPTY),
    "RandomAutoContrast": Case(lambda: vision.RandomAutoContrast(cutoff=2.0, prob=0.5), rejects=EMPTY),
    "RandomEqualize": Case(lambda: vision.RandomEqualize(0.5), rejects=EMPTY),
    "RandomInvert": Case(lambda: vision.RandomInvert(0.5), rejects=EMPTY),
    "RandomPosterize": Case(lambda: vision.RandomPosterize((1, 4)), rejects=EMPTY),
    "RandomSolarize": Case(lambda: vision.RandomSolarize((0, 255)), rejects=EMPTY),
    "RandomSharpness": Case(lambda: vision.RandomSharpness((0.1, 1.9)), rejects=EMPTY),
    "RandomColor": Case(lambda: vision.RandomColor((0.1, 1.9)), rejects=NOT_3_CHANNELS),
    "RandomLighting": Case(lambda: vision.RandomLighting(0.1), rejects=NOT_3_CHANNELS),
    "RandomGrayscale": Case(
        lambda: vision.RandomGrayscale(0.5), rejects={"empty": ValueError, "rgba": ValueError}
    ),
    # The HSV conversions take 3-channel images (or batches) in the stated layout, any numeric dtype.
    "RgbToHsv": Case(
        lambda: vision.RgbToHsv(is_hwc=True),
        rejects={"gray": ValueError, "gray_hw1": ValueError, "rgba": ValueError},
    ),
    "HsvToRgb": Case(
        lambda: vision.HsvToRgb(is_hwc=True),
        lambda: (vision.RgbToHsv(is_hwc=True)(IMAGE),),
        rejects={"gray": ValueError, "gray_hw1": ValueError, "rgba": ValueError},
    ),
    # Augmentation policies (minddata/vision/augment_policies.py): RGB uint8 only.
    "AutoAugment": Case(lambda: vision.AutoAugment(fill_value=(1, 2, 3)), rejects=NOT_3_CHANNELS),
    "RandAugment": Case(lambda: vision.RandAugment(interpolation=Inter.BILINEAR), rejects=NOT_3_CHANNELS),
    "TrivialAugmentWide": Case(lambda: vision.TrivialAugmentWide(), rejects=NOT_3_CHANNELS),
    "UniformAugment": Case(
        lambda: vision.UniformAugment([vision.Invert(), vision.Equalize(), vision.Posterize(2)], num_ops=2),
        rejects=EMPTY,
    ),
    "RandomSelectSubpolicy": Case(
        lambda: vision.RandomSelectSubpolicy(
            [[(vision.Invert(), 0.5), (vision.Equalize(), 1.0)], [(vision.Posterize(3), 0.8)]]
        ),
        rejects=EMPTY,
    ),
    # The graph optimizer's fused ops (minddata/ops/fused.py): they report errors as the ops they replace.
    "FusedDecodeResize": Case(
        lambda: FusedDecodeResize(vision.Decode(), vision.Resize(10)),
        lambda: (encode_png("rgba"),),
        _as_png,
        EMPTY,
        reported_as=("Decode", "Resize"),
    ),
    "FusedDecodeRandomResizedCrop": Case(
        lambda: FusedDecodeRandomResizedCrop(vision.Decode(), vision.RandomResizedCrop(8, scale=(0.3, 1.0))),
        lambda: (encode_png("rgba"),),
        _as_png,
        EMPTY,
        reported_as=("Decode", "RandomResizedCrop"),
    ),
    "NormalizeInputCheck": Case(
        lambda: NormalizeInputCheck(vision.Normalize(MEAN, STD)),
        rejects=NOT_3_CHANNELS,
        reported_as=("Normalize",),
    ),
    "FusedNormalizeHWC2CHW": Case(
        lambda: FusedNormalizeHWC2CHW(vision.Normalize(MEAN, STD), vision.HWC2CHW()),
        rejects=NOT_3_CHANNELS,
        reported_as=("Normalize", "HWC2CHW"),
    ),
}
# The text ops (minddata/text): string inputs, and odd texts standing for the odd images.
CASES.update(text_cases(Case))
# The audio ops (minddata/audio): waveforms and spectrograms, and odd audio standing for the odd images.
CASES.update(audio_cases(Case))



@functools.cache
def photo_jpeg() -> np.ndarray:
    """A photograph-like JPEG of about 256x192 (the benchmark image generator's), as DVPP would be fed."""
    from minddata.bench.images import ImageSetInfo, _draw_image

    _, data = _draw_image(0, ImageSetInfo(num_images=1, num_classes=1, seed=9, size=(256, 192)))
    return np.frombuffer(data, np.uint8)


@functools.cache
def photo_image() -> np.ndarray:
    return cv2.cvtColor(cv2.imdecode(photo_jpeg(), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


# DVPP refuses what its rules refuse: images under 32 pixels wide, not 3-channel uint8, not JPEG.
DVPP_SMALL = {"empty": ValueError, "one_pixel": ValueError, "gray": ValueError, "gray_hw1": ValueError,
              "rgba": ValueError}
DVPP_PNG = {kind: ValueError for kind in ODD_KINDS}
_dvpp_jpeg = lambda: (photo_jpeg(),)  # noqa: E731
_dvpp_image = lambda: (photo_image(),)  # noqa: E731

# Cases for devices whose rules the CPU cases break (DVPP: output 32-4096 wide, 6-4096 high; JPEG only;
# BILINEAR/NEAREST only). Ops without an entry use their CPU case.
DEVICE_CASES: dict[str, dict[str, Case]] = {
    "Dvpp": {
        "Decode": Case(vision.Decode, _dvpp_jpeg, _as_png, DVPP_PNG),
        "Resize": Case(lambda: vision.Resize((96, 128)), _dvpp_image, rejects=DVPP_SMALL),
        "CenterCrop": Case(lambda: vision.CenterCrop((96, 128)), _dvpp_image, rejects=DVPP_SMALL),
        "Crop": Case(lambda: vision.Crop((4, 6), (96, 128)), _dvpp_image, rejects=DVPP_SMALL),
        "ResizedCrop": Case(lambda: vision.ResizedCrop(2, 4, 120, 150, (96, 128)), _dvpp_image, rejects=DVPP_SMALL),
        "RandomResizedCrop": Case(
            lambda: vision.RandomResizedCrop((96, 128), scale=(0.3, 1.0)), _dvpp_image, rejects=DVPP_SMALL
        ),
        "FusedDecodeResize": Case(
            lambda: FusedDecodeResize(vision.Decode(), vision.Resize((96, 128))), _dvpp_jpeg, _as_png, DVPP_PNG,
            reported_as=("Decode", "Resize"),
        ),
        "FusedDecodeRandomResizedCrop": Case(
            lambda: FusedDecodeRandomResizedCrop(vision.Decode(), vision.RandomResizedCrop((96, 128), scale=(0.3, 1.0))),
            _dvpp_jpeg, _as_png, DVPP_PNG, reported_as=("Decode", "RandomResizedCrop"),
        ),
        "RandomCropDecodeResize": Case(
            lambda: vision.RandomCropDecodeResize((96, 128), scale=(0.3, 1.0)), _dvpp_jpeg, _as_png, DVPP_PNG
        ),
    },
}

# DVPP's tensor ops (minddata/ops/dvpp/rules.py TENSOR_OPS) take images at least 4 high and 6 wide (10 wide
# for Perspective) with 1 or 3 channels: the one-pixel and RGBA images break those rules, the rest is
# what the CPU case rejects. Their reference model is the CPU kernel behind the rules.
DVPP_TENSOR_SMALL = {"empty": ValueError, "one_pixel": ValueError, "rgba": ValueError}
DEVICE_CASES["Dvpp"].update(
    {
        name: replace(CASES[name], rejects={**CASES[name].rejects, **DVPP_TENSOR_SMALL})
        for name in (
            "AdjustBrightness", "AdjustContrast", "AdjustHue", "AdjustSaturation", "AdjustSharpness", "AutoContrast",
            "Equalize", "Erase", "Posterize", "Solarize", "Perspective",
        )
    }
)


def _large_cut(img: np.ndarray) -> tuple[Any, ...]:
    """The odd inputs, with the large one cut to 0.4 MP: DALI's CPU backend runs RandomColorAdjust's
    graph of some 200 operators at a fraction of a megapixel per second (a GPU does not care)."""
    return (img[:500, :750] if img is odd_image("large") else img,)


DEVICE_CASES["GPU"] = {
    "RandomColorAdjust": Case(
        lambda: vision.RandomColorAdjust(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.1),
        adapt=_large_cut, rejects=NOT_3_CHANNELS,
    ),
}


def case_for(name: str, device: str) -> Case:
    return DEVICE_CASES.get(device, {}).get(name, CASES[name])


# ---------------------------------------------------------------------------------------------- helpers


def _to_numpy(x: Any) -> np.ndarray:
    """Host copy of a kernel's output, whatever array type its device returns."""
    if hasattr(x, "as_cpu"):  # DALI TensorList
        x = x.as_cpu().as_array()
    elif hasattr(x, "get") and not isinstance(x, (np.ndarray, dict)):  # CuPy
        x = x.get()
    elif hasattr(x, "cpu") and hasattr(x, "numpy"):  # torch
        x = x.cpu().numpy()
    return np.asarray(x)


def run_kernel(
    op: Op,
    *inputs: Any,
    seed: int = 0,
    pass_index: int = 0,
    row: int = 0,
    position: int = 0,
    device: str = "CPU",
) -> tuple[np.ndarray, ...]:
    """Run ``op``'s kernel on ``device`` with an explicit row context, as the engine does; the outputs
    always as a tuple of NumPy arrays."""
    ctx = KernelContext(seed=seed, pass_index=pass_index, row_index=row, op_position=position)
    out = get_kernel(op.name, device)(op, ctx, *inputs)
    if op.num_outputs != 1:
        return tuple(_to_numpy(o) for o in out)
    return (_to_numpy(out),)


def spec_of(x: Any, known_sizes: bool = True) -> TensorSpec:
    arr = np.asarray(x)
    shape = arr.shape if known_sizes else (None,) * arr.ndim
    return TensorSpec(tuple(shape), arr.dtype)


def expected_specs(op: Op, inputs: tuple[Any, ...], known_sizes: bool = True) -> tuple[TensorSpec, ...]:
    out = op.output_spec(*(spec_of(x, known_sizes) for x in inputs))
    return (out,) if isinstance(out, TensorSpec) else tuple(out)


def assert_matches_spec(op: Op, outputs: tuple[np.ndarray, ...], specs: tuple[TensorSpec, ...]) -> None:
    assert len(outputs) == len(specs), f"{op.name}: {len(outputs)} outputs, output_spec states {len(specs)}"
    for k, (arr, spec) in enumerate(zip(outputs, specs, strict=True)):
        shape_ok = arr.ndim == len(spec.shape) and all(
            d is None or d == s for d, s in zip(spec.shape, arr.shape, strict=True)
        )
        assert shape_ok, f"{op.name}: output {k} has shape {arr.shape}; output_spec says {spec.shape}"
        if spec.dtype is not None:
            assert arr.dtype == np.dtype(spec.dtype), (
                f"{op.name}: output {k} is {arr.dtype}; output_spec says {spec.dtype}"
            )


def assert_same(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


def _import_kernel_modules() -> list[str]:
    """Import every module of ``minddata.ops.cpu``, so that the registry holds every CPU kernel the
    package defines, whatever other tests happened to import first."""
    failures = []
    for info in pkgutil.walk_packages(minddata.ops.cpu.__path__, "minddata.ops.cpu."):
        try:
            importlib.import_module(info.name)
        except ImportError as e:  # an optional extension that isn't built is not a missing op
            failures.append(f"{info.name}: {e}")
    return failures


KERNEL_IMPORT_FAILURES = _import_kernel_modules()


def _pairs(devices: Callable[[str], bool]) -> list[Any]:
    missing = _dali_missing()
    return [
        pytest.param(
            name, dev, id=f"{name}-{dev}",
            marks=[pytest.mark.skip(reason=missing)] if dev == "GPU" and missing else [],
        )
        for name in sorted(CASES)
        for dev in available_devices(name)
        if devices(dev)
    ]


ALL = _pairs(lambda dev: True)
NON_CPU = _pairs(lambda dev: dev != "CPU")


# ---------------------------------------------------------------------------------------------- the table


def test_every_cpu_op_has_a_contract_entry() -> None:
    missing = sorted(set(ops_on("CPU")) - set(CASES))
    assert not missing, f"CPU kernels without a contract entry in tests/ops/test_contract.py CASES: {missing}"


def test_every_contract_entry_has_a_cpu_kernel_and_builds_its_op() -> None:
    for name, case in CASES.items():
        op = case.make()
        assert op.name == name, f"CASES[{name!r}] builds a {op.name}"
        assert "CPU" in available_devices(name), f"{name}: no CPU kernel"
    for device, cases in DEVICE_CASES.items():
        for name, case in cases.items():
            assert case.make().name == name and device in available_devices(name), f"DEVICE_CASES[{device!r}][{name!r}]"


# ---------------------------------------------------------------------------------------------- per (op, device)


@pytest.mark.parametrize(("name", "device"), ALL)
def test_output_matches_output_spec(name: str, device: str) -> None:
    case = case_for(name, device)
    op, inputs = case.make(), case.inputs()
    outputs = run_kernel(op, *inputs, device=device)
    assert_matches_spec(op, outputs, expected_specs(op, inputs))
    assert_matches_spec(op, outputs, expected_specs(op, inputs, known_sizes=False))


@pytest.mark.parametrize(
    ("name", "device"),
    NON_CPU
    or [
        pytest.param(
            None, None,
            marks=pytest.mark.skip(reason="no op has a GPU or Dvpp kernel on this machine: nothing to compare"),
        )
    ],
)
def test_matches_the_cpu_kernel(name: str, device: str) -> None:
    case = case_for(name, device)
    op, inputs = case.make(), case.inputs()
    largest, mean = device_tolerance(name, device)
    for row in range(3):
        want = run_kernel(op, *inputs, row=row)
        got = run_kernel(op, *inputs, row=row, device=device)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            assert float(diff.max(initial=0.0)) <= largest, f"{name} on {device}: off by up to {diff.max()}"
            assert float(diff.mean()) <= mean, f"{name} on {device}: off by {diff.mean():.3f} on average"


@pytest.mark.parametrize(("name", "device"), ALL)
def test_spec_pickles_and_the_copy_computes_the_same(name: str, device: str) -> None:
    case = case_for(name, device)
    op, inputs = case.make(), case.inputs()
    back = pickle.loads(pickle.dumps(op))
    assert back == op and type(back) is type(op) and repr(back) == repr(op)
    for row in range(3):
        assert_same(
            run_kernel(back, *inputs, row=row, device=device), run_kernel(op, *inputs, row=row, device=device)
        )


@pytest.mark.parametrize(("name", "device"), ALL)
def test_same_context_same_output(name: str, device: str) -> None:
    case = case_for(name, device)
    op, inputs = case.make(), case.inputs()
    for row in range(4):
        context = {"seed": 3, "pass_index": 1, "row": row, "position": 2, "device": device}
        assert_same(run_kernel(op, *inputs, **context), run_kernel(case.make(), *inputs, **context))


@pytest.mark.parametrize(("name", "device"), ALL)
def test_only_random_ops_depend_on_the_context(name: str, device: str) -> None:
    case = case_for(name, device)
    op, inputs = case.make(), case.inputs()
    outputs = {
        b"".join(a.tobytes() for a in run_kernel(op, *inputs, seed=seed, row=row, device=device))
        for seed in (0, 1)
        for row in range(8)
    }
    if op.random:
        assert len(outputs) > 1, f"{name} is flagged random but gave one output for 16 contexts"
    else:
        assert len(outputs) == 1, f"{name} is not flagged random but its output depends on the context"


@pytest.mark.parametrize("kind", ODD_KINDS)
@pytest.mark.parametrize(("name", "device"), ALL)
def test_odd_input_works_or_is_rejected_naming_the_op(
    name: str, device: str, kind: str, request: pytest.FixtureRequest
) -> None:
    case = case_for(name, device)
    if kind in case.known_bugs:
        request.applymarker(pytest.mark.xfail(strict=True, reason=case.known_bugs[kind]))
    op = case.make()
    inputs = case.adapt(odd_image(kind))
    expected = case.rejects.get(kind)
    if expected is None:
        outputs = run_kernel(op, *inputs, device=device)
        assert_matches_spec(op, outputs, expected_specs(op, inputs))
        return
    with pytest.raises((ValueError, TypeError)) as caught:
        run_kernel(op, *inputs, device=device)
    assert isinstance(caught.value, expected), (
        f"{name} on {kind}: {type(caught.value).__name__}: {caught.value}"
    )
    names = (name, *case.reported_as)
    assert any(n in str(caught.value) for n in names), (
        f"{name} on {kind}: the message names none of {names}: {caught.value}"
    )
