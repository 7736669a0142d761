"""Enums shared by the vision ops, named as in ``mindspore.dataset.vision``."""

from __future__ import annotations

import enum

__all__ = ["Inter"]


class Inter(enum.IntEnum):
    """Interpolation methods for resizing ops.

    Values match MindSpore's where MindSpore has the name. Kernels read the member's ``name``:

    - ``NEAREST``: nearest neighbour (OpenCV ``INTER_NEAREST``).
    - ``BILINEAR`` (alias ``LINEAR``): bilinear (OpenCV ``INTER_LINEAR``).
    - ``BICUBIC`` (alias ``CUBIC``): bicubic (OpenCV ``INTER_CUBIC``).
    - ``AREA``: pixel-area averaging (OpenCV ``INTER_AREA``), the best choice for shrinking.
    - ``PILCUBIC``: Pillow's antialiased bicubic (``Image.BICUBIC``).
    - ``ANTIALIAS``: Pillow's antialiased Lanczos. MindSpore accepts it only for PIL images; here it
      works on arrays as well.
    - ``LANCZOS``: Lanczos over 8x8 neighbourhoods (OpenCV ``INTER_LANCZOS4``).

    Examples:
        >>> from minddata.vision import Inter
        >>> Inter.LINEAR is Inter.BILINEAR
        True
        >>> Inter.CUBIC.name
        'BICUBIC'
    """

    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = 2
    LINEAR = 2
    BICUBIC = 3
    CUBIC = 3
    AREA = 4
    PILCUBIC = 5
    LANCZOS = 6

    def __repr__(self) -> str:
        # Plans and op reprs print `Inter.BILINEAR`, which reads back as code.
        return f"Inter.{self.name}"
