"""MATLAB v5 files (SVHN's digits, Caltech 101's contours, Flowers 102's labels), read with scipy,
which is optional: ``pip install 'minddata[datasets]'``."""

from __future__ import annotations

import os
from typing import Any

from minddata.dataset._loaders import missing
from minddata.errors import DataFormatError

__all__ = ["load_mat"]


def load_mat(where: str, path: str, fix: str, needs: tuple[str, ...] = ()) -> dict[str, Any]:
    """The variables of a MATLAB v5 file; errors name the file (missing, damaged, or lacking one of
    ``needs``) and say how to get scipy when it is absent."""
    if not os.path.isfile(path):
        raise missing(where, path, fix)
    try:
        import scipy.io
    except ImportError:
        raise ImportError(
            f"{where} reads MATLAB files ({os.path.basename(path)}) with scipy, which is not installed: "
            "pip install 'minddata[datasets]' (or pip install scipy)."
        ) from None
    try:
        content = scipy.io.loadmat(path)
    except Exception as error:  # scipy's parser raises anything from IndexError to ValueError on damaged bytes
        raise DataFormatError(f"{where}: {path} is not a readable MATLAB v5 file: {error!r}", path=path) from None
    absent = [n for n in needs if n not in content]
    if absent:
        found = sorted(k for k in content if not k.startswith("__"))
        raise DataFormatError(f"{where}: {path} has no {absent} variable(s) (found {found}).", path=path)
    return content
