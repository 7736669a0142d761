"""``mindspore.common`` names that data pipelines use: :mod:`minddata.common.dtype` (``mstype``)."""

from minddata._missing import module_getattr
from minddata.common import dtype

__all__ = ["dtype"]

__getattr__ = module_getattr(__name__)
