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
from minddata.transforms import not_random
from minddata.vision._utils import Border, Inter
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
from minddata.vision.affine import Affine, RandomAffine, RandomRotation, Rotate
from minddata.vision.augment_policies import (
    AutoAugment,
    AutoAugmentPolicy,
    RandAugment,
    RandomSelectSubpolicy,
    TrivialAugmentWide,
    UniformAugment,
)
from minddata.vision.bbox import (
    BoundingBoxAugment,
    RandomCropWithBBox,
    RandomHorizontalFlipWithBBox,
    RandomResizedCropWithBBox,
    RandomResizeWithBBox,
    RandomVerticalFlipWithBBox,
    ResizeWithBBox,
)
from minddata.vision.color import ConvertColor, ConvertMode, GaussianBlur, Grayscale, RandomColorAdjust
from minddata.vision.convert import LinearTransformation, ToNumpy, ToPIL, ToTensor
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
from minddata.vision.image_io import (
    ImageReadMode,
    encode_jpeg,
    encode_png,
    get_image_num_channels,
    get_image_size,
    read_file,
    read_image,
    write_file,
    write_jpeg,
    write_png,
)
from minddata.vision.mixup import MixUp
from minddata.vision.multi_crop import FiveCrop, SliceMode, SlicePatches, TenCrop
from minddata.vision.normalize import HWC2CHW, Normalize, Rescale, ToType
from minddata.vision.pad_erase import Erase, PadToSize
from minddata.vision.perspective import Perspective, RandomPerspective
from minddata.vision.resize import (
    RandomCropDecodeResize,
    RandomResize,
    RandomResizedCrop,
    Resize,
    ResizedCrop,
)
from minddata.vision.video import DecodeVideo, VideoDecoder, read_video, read_video_timestamps

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
    "not_random",
    "BoundingBoxAugment",
    "RandomCropWithBBox",
    "RandomHorizontalFlipWithBBox",
    "RandomResizeWithBBox",
    "RandomResizedCropWithBBox",
    "RandomVerticalFlipWithBBox",
    "ResizeWithBBox",
    "LinearTransformation",
    "ToNumpy",
    "ToPIL",
    "ToTensor",
    "MixUp",
    "FiveCrop",
    "SliceMode",
    "SlicePatches",
    "TenCrop",
    "Erase",
    "PadToSize",
    "Perspective",
    "RandomPerspective",
    "RandomResize",
    "ImageReadMode",
    "encode_jpeg",
    "encode_png",
    "get_image_num_channels",
    "get_image_size",
    "read_file",
    "read_image",
    "write_file",
    "write_jpeg",
    "write_png",
    "DecodeVideo",
    "VideoDecoder",
    "read_video",
    "read_video_timestamps",
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
