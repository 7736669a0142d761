"""``mindspore.dataset.vision.utils``: the enums the image ops take."""

from minddata._missing import module_getattr
from minddata.vision import AutoAugmentPolicy, Border, ConvertMode, ImageBatchFormat, Inter

__all__ = ["AutoAugmentPolicy", "Border", "ConvertMode", "ImageBatchFormat", "Inter"]

__getattr__ = module_getattr(__name__)
