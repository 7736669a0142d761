"""``mindspore.dataset.vision.transforms``: the image ops of :mod:`minddata.vision`, under MindSpore's module path."""

from minddata._missing import module_getattr
from minddata.vision import *  # noqa: F403
from minddata.vision import __all__  # noqa: F401

__getattr__ = module_getattr(__name__)
