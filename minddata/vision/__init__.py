"""Image ops, named as in ``mindspore.dataset.vision``.

Each op is a spec: construct it with its parameters (checked at once), then use it in
``Dataset.map(operations=[...])`` or call it eagerly on an array.

Examples:
    >>> import numpy as np
    >>> from minddata import vision
    >>> img = np.zeros((32, 48, 3), np.uint8)
    >>> vision.HWC2CHW()(vision.Resize((16, 24))(img)).shape
    (3, 16, 24)
"""

from minddata._missing import module_getattr
from minddata.vision._color import ConvertColor, ConvertMode, GaussianBlur, Grayscale, RandomColorAdjust
from minddata.vision._erase_mix import (
    CutMixBatch,
    CutOut,
    ImageBatchFormat,
    MixUpBatch,
    NormalizePad,
    RandomErasing,
)
from minddata.vision._geometry import (
    Affine,
    Border,
    Pad,
    RandomAffine,
    RandomCrop,
    RandomCropDecodeResize,
    RandomRotation,
    RandomVerticalFlip,
    ResizedCrop,
    Rotate,
    VerticalFlip,
)
from minddata.vision._ops import (
    HWC2CHW,
    CenterCrop,
    Crop,
    Decode,
    HorizontalFlip,
    Normalize,
    RandomHorizontalFlip,
    RandomResizedCrop,
    Rescale,
    Resize,
    ToType,
)
from minddata.vision._utils import Inter
from minddata.vision.adjust import (
    AdjustBrightness,
    AdjustContrast,
    AdjustGamma,
    AdjustHue,
    AdjustSaturation,
    AdjustSharpness,
    AutoContrast,
    Equalize,
    HsvToRgb,
    Invert,
    Posterize,
    RandomAdjustSharpness,
    RandomAutoContrast,
    RandomColor,
    RandomEqualize,
    RandomGrayscale,
    RandomInvert,
    RandomLighting,
    RandomPosterize,
    RandomSharpness,
    RandomSolarize,
    RgbToHsv,
    Solarize,
)
from minddata.vision.augment_policies import (
    AutoAugment,
    AutoAugmentPolicy,
    RandAugment,
    RandomSelectSubpolicy,
    TrivialAugmentWide,
    UniformAugment,
)

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
    "AdjustBrightness",
    "AdjustContrast",
    "AdjustGamma",
    "AdjustHue",
    "AdjustSaturation",
    "AdjustSharpness",
    "AutoContrast",
    "Equalize",
    "HsvToRgb",
    "Invert",
    "Posterize",
    "RandomAdjustSharpness",
    "RandomAutoContrast",
    "RandomColor",
    "RandomEqualize",
    "RandomGrayscale",
    "RandomInvert",
    "RandomLighting",
    "RandomPosterize",
    "RandomSharpness",
    "RandomSolarize",
    "RgbToHsv",
    "Solarize",
    "AutoAugment",
    "AutoAugmentPolicy",
    "RandAugment",
    "RandomSelectSubpolicy",
    "TrivialAugmentWide",
    "UniformAugment",
]

__getattr__ = module_getattr(__name__)
