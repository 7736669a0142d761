"""``mindspore.dataset.audio``: the audio ops, enums and functions of :mod:`minddata.audio`, under
MindSpore's module path (``transforms`` and ``utils`` are its submodules, as in MindSpore).

Examples:
    >>> import minddata.dataset.audio as audio
    >>> from minddata.dataset.audio import transforms, utils
    >>> transforms.Spectrogram is audio.Spectrogram and utils.WindowType is audio.WindowType
    True
"""

from minddata._missing import module_getattr
from minddata.audio import *  # noqa: F403
from minddata.audio import __all__  # noqa: F401

__getattr__ = module_getattr(__name__, lazy={name: f"{__name__}.{name}" for name in ("transforms", "utils")})
