"""``mindspore.dataset.text.transforms``: the text ops of :mod:`minddata.text`, under MindSpore's module path."""

from minddata._missing import module_getattr
from minddata.text import *  # noqa: F403
from minddata.text import __all__  # noqa: F401

__getattr__ = module_getattr(__name__)
