"""``mindspore.dataset.vision.utils``: the enums the image ops take."""

from minddata._missing import module_getattr
from minddata.vision import Border, ConvertMode, ImageBatchFormat, Inter

__all__ = ["Border", "ConvertMode", "ImageBatchFormat", "Inter"]

__getattr__ = module_getattr(__name__)
