"""Enums shared by the vision ops, named as in ``mindspore.dataset.vision``."""

from __future__ import annotations

import enum

__all__ = ["Border", "Inter"]


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


class Border(str, enum.Enum):
    """How padding ops fill the new border, named and valued as in ``mindspore.dataset.vision.Border``.

    - ``CONSTANT``: the ``fill_value``.
    - ``EDGE``: the last pixel repeated.
    - ``REFLECT``: a mirror image without repeating the edge: ``[1, 2, 3, 4]`` padded by 2 gives
      ``[3, 2, 1, 2, 3, 4, 3, 2]``.
    - ``SYMMETRIC``: a mirror image repeating the edge: ``[2, 1, 1, 2, 3, 4, 4, 3]``.

    Examples:
        >>> from minddata.vision import Border
        >>> Border.REFLECT.value
        'reflect'
        >>> Border("edge") is Border.EDGE
        True
    """

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"

    def __repr__(self) -> str:
        # Plans and op reprs print `Border.EDGE`, which reads back as code.
        return f"Border.{self.name}"
