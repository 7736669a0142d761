"""``mindspore.dataset.transforms``: the ops of :mod:`minddata.transforms`, under MindSpore's module path.

``transforms``, ``c_transforms`` and ``py_transforms`` (MindSpore's older split) hold the same ops.

Examples:
    >>> from minddata.dataset import transforms
    >>> import minddata.dataset.transforms.c_transforms as c_transforms
    >>> c_transforms.TypeCast is transforms.TypeCast
    True
"""

from minddata._missing import module_getattr
from minddata.transforms import *  # noqa: F403
from minddata.transforms import __all__  # noqa: F401

__getattr__ = module_getattr(
    __name__, lazy={name: f"{__name__}.{name}" for name in ("transforms", "c_transforms", "py_transforms")}
)
