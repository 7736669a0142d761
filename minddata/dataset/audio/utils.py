"""``mindspore.dataset.audio.utils``: the audio enums and filter-bank functions, under MindSpore's module path."""

from minddata._missing import module_getattr
from minddata.audio.utils import *  # noqa: F403
from minddata.audio.utils import __all__  # noqa: F401

__getattr__ = module_getattr(__name__)
