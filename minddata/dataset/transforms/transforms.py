"""``mindspore.dataset.transforms.transforms``: the ops of :mod:`minddata.transforms`, under MindSpore's module path."""

from minddata._missing import module_getattr
from minddata.transforms import *  # noqa: F403
from minddata.transforms import __all__  # noqa: F401

__getattr__ = module_getattr(__name__)
