"""``mindspore.dataset.text``: the text ops and vocabularies of :mod:`minddata.text`, under MindSpore's
module path (``transforms`` and ``utils`` are its submodules, as in MindSpore).

Examples:
    >>> import minddata.dataset.text as text
    >>> from minddata.dataset.text import transforms
    >>> transforms.Lookup is text.Lookup
    True
"""

from minddata._missing import module_getattr
from minddata.text import *  # noqa: F403
from minddata.text import __all__  # noqa: F401

__getattr__ = module_getattr(__name__, lazy={name: f"{__name__}.{name}" for name in ("transforms", "utils")})
