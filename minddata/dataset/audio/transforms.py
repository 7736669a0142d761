"""``mindspore.dataset.audio.transforms``: the audio ops of :mod:`minddata.audio`, under MindSpore's module path."""

from minddata._missing import module_getattr
from minddata.audio import *  # noqa: F403
from minddata.audio import __all__ as _all
from minddata.audio import utils as _utils

__all__ = [name for name in _all if name not in _utils.__all__]

__getattr__ = module_getattr(__name__)
