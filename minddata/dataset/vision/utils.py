"""``mindspore.dataset.vision.utils``: the enums the image ops take and the image file functions."""

from minddata._missing import module_getattr
from minddata.vision import (
    AutoAugmentPolicy,
    Border,
    ConvertMode,
    ImageBatchFormat,
    ImageReadMode,
    Inter,
    SliceMode,
    encode_jpeg,
    encode_png,
    get_image_num_channels,
    get_image_size,
    read_file,
    read_image,
    read_video,
    read_video_timestamps,
    write_file,
    write_jpeg,
    write_png,
)

__all__ = [
    "AutoAugmentPolicy",
    "Border",
    "ConvertMode",
    "ImageBatchFormat",
    "ImageReadMode",
    "Inter",
    "SliceMode",
    "encode_jpeg",
    "encode_png",
    "get_image_num_channels",
    "get_image_size",
    "read_file",
    "read_image",
    "read_video",
    "read_video_timestamps",
    "write_file",
    "write_jpeg",
    "write_png",
]

__getattr__ = module_getattr(__name__)
