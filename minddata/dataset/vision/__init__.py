"""``mindspore.dataset.vision``: the image ops of :mod:`minddata.vision`, under MindSpore's module path.

``transforms``, ``c_transforms`` and ``py_transforms`` (MindSpore's older split) hold the same ops.

Examples:
    >>> from minddata.dataset import vision
    >>> import minddata.dataset.vision.c_transforms as c_vision
    >>> c_vision.Decode is vision.Decode
    True
"""

from minddata._missing import module_getattr
from minddata.vision import *  # noqa: F403
from minddata.vision import __all__  # noqa: F401

__getattr__ = module_getattr(
    __name__,
    lazy={name: f"{__name__}.{name}" for name in ("transforms", "c_transforms", "py_transforms", "utils")},
)
