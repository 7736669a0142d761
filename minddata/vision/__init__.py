"""Image ops, named as in ``mindspore.dataset.vision``.

Each op is a spec: construct it with its parameters (checked at once), then use it in
``Dataset.map(operations=[...])`` or call it eagerly on an array. Specs live by subject, one module per
op family (``resize``, ``crop``, ``flip``, ``affine``, ``color``, ``normalize``, ``decode``,
``erase_mix``), beside the family's plan (``minddata.ops.plans.<family>``), CPU kernels
(``minddata.ops.cpu.<family>``) and tests (``tests/ops/test_<family>.py``).

Examples:
    >>> import numpy as np
    >>> from minddata import vision
    >>> img = np.zeros((32, 48, 3), np.uint8)
    >>> vision.HWC2CHW()(vision.Resize((16, 24))(img)).shape
    (3, 16, 24)
"""

from minddata._missing import module_getattr
from minddata.vision._utils import Border, Inter
from minddata.vision.affine import Affine, RandomAffine, RandomRotation, Rotate
from minddata.vision.color import ConvertColor, ConvertMode, GaussianBlur, Grayscale, RandomColorAdjust
from minddata.vision.crop import CenterCrop, Crop, Pad, RandomCrop
from minddata.vision.decode import Decode
from minddata.vision.erase_mix import (
    CutMixBatch,
    CutOut,
    ImageBatchFormat,
    MixUpBatch,
    NormalizePad,
    RandomErasing,
)
from minddata.vision.flip import HorizontalFlip, RandomHorizontalFlip, RandomVerticalFlip, VerticalFlip
from minddata.vision.normalize import HWC2CHW, Normalize, Rescale, ToType
from minddata.vision.resize import RandomCropDecodeResize, RandomResizedCrop, Resize, ResizedCrop

__all__ = [
    "Affine",
    "Border",
    "ConvertColor",
    "ConvertMode",
    "GaussianBlur",
    "Grayscale",
    "Pad",
    "RandomAffine",
    "RandomColorAdjust",
    "RandomCrop",
    "RandomCropDecodeResize",
    "RandomRotation",
    "RandomVerticalFlip",
    "ResizedCrop",
    "Rotate",
    "VerticalFlip",
    "CutMixBatch",
    "CutOut",
    "ImageBatchFormat",
    "MixUpBatch",
    "NormalizePad",
    "RandomErasing",
    "CenterCrop",
    "Crop",
    "Decode",
    "HWC2CHW",
    "HorizontalFlip",
    "Inter",
    "Normalize",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "Rescale",
    "Resize",
    "ToType",
]

__getattr__ = module_getattr(__name__)
