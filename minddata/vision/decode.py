"""The Decode op spec, named as in ``mindspore.dataset.vision`` (2.x).

The spec validates and holds its parameter only; the CPU kernel is ``minddata.ops.cpu.decode``, the
header and pixel-limit plan ``minddata.ops.plans.decode``.
"""

from __future__ import annotations

import numpy as np

from minddata.ops.base import Op, TensorSpec
from minddata.transforms import one_spec, spec_dtype
from minddata.vision._validators import check_bool

__all__ = ["Decode"]


class Decode(Op):
    """Decode an encoded image (JPEG, PNG, BMP, GIF, WebP, TIFF) into an RGB ``uint8`` HWC array.

    Grayscale, palette, RGBA, CMYK and 16-bit images all come out as 3-channel 8-bit RGB (alpha is
    dropped, not composited). GIF and multi-page TIFF give their first frame. EXIF orientation is not
    applied, as in MindSpore.

    Args:
        to_pil: return a ``PIL.Image.Image`` in mode ``"RGB"`` instead of an array.

    Examples:
        >>> import io
        >>> import numpy as np
        >>> from PIL import Image
        >>> from minddata import vision
        >>> buf = io.BytesIO()
        >>> Image.new("L", (5, 4), 200).save(buf, "PNG")
        >>> img = vision.Decode()(np.frombuffer(buf.getvalue(), np.uint8))
        >>> img.shape, img.dtype, int(img[0, 0, 2])
        ((4, 5, 3), dtype('uint8'), 200)
    """

    def __init__(self, to_pil: bool = False) -> None:
        self.to_pil = check_bool(self.name, "to_pil", to_pil)

    def output_spec(self, *inputs: TensorSpec) -> TensorSpec:
        data = one_spec(self.name, inputs)
        dtype = spec_dtype(data)
        # Encoded bytes: a 1-D uint8/int8 array, or a 0-d bytes scalar as a bytes column stores it.
        is_bytes = dtype is None or dtype.kind == "S" or (dtype.kind in "iu" and dtype.itemsize == 1)
        if len(data.shape) > 1 or not is_bytes:
            raise TypeError(
                f"Decode: expected encoded image bytes (a 1-D uint8 array or bytes). "
                f"Found a tensor of shape {tuple(data.shape)}, dtype {dtype}"
            )
        # to_pil gives a PIL image in mode RGB: the same pixels as this array.
        return TensorSpec((None, None, 3), np.dtype(np.uint8))
