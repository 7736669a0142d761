"""The values of the default iterators: NumPy arrays with the essentials of MindSpore's ``Tensor``.

MindSpore's ``create_dict_iterator()`` / ``create_tuple_iterator()`` (without ``output_numpy=True``)
give ``mindspore.Tensor`` values, and scripts call ``.asnumpy()`` on them. minddata's default
iterators give :class:`Tensor`, a NumPy ``ndarray`` subclass viewed over the pipeline's array (no
copy), so that code runs unchanged and the value still goes wherever an array does (NumPy functions,
``np.asarray``, ``torch.from_numpy``, pickling). ``output_numpy=True`` gives plain arrays; string
columns are plain arrays either way, as in MindSpore.

``dtype`` is the NumPy dtype, which is what ``minddata.common.dtype`` (``mstype``) names are, so
``t.dtype == mstype.int32`` holds as in MindSpore (only its text differs: ``int32``, not ``Int32``).

Examples:
    >>> import numpy as np
    >>> import minddata.common.dtype as mstype
    >>> from minddata.common.tensor import Tensor
    >>> t = np.arange(6, dtype=np.int32).reshape(2, 3).view(Tensor)
    >>> t.asnumpy()
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)
    >>> t.shape, t.dim(), t.dtype == mstype.int32, t.numel()
    ((2, 3), 2, True, 6)
    >>> type(t + 1).__name__, type(t.asnumpy()).__name__, type(np.asarray(t)).__name__
    ('Tensor', 'ndarray', 'ndarray')
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Tensor", "as_tensor"]


class Tensor(np.ndarray):
    """A NumPy array with MindSpore ``Tensor``'s methods ``asnumpy``, ``dim``, ``numel`` and casts.

    Never constructed directly: an array becomes one with ``array.view(Tensor)`` (no copy), which is
    what the default iterators do. Everything NumPy does works on it; arithmetic and slicing keep the
    type, as MindSpore's Tensor operations return Tensors.
    """

    __slots__ = ()

    # -- MindSpore's conversions -------------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        """The same memory as a plain ``numpy.ndarray`` (no copy)."""
        return self.view(np.ndarray)

    numpy = asnumpy

    def init_data(self, *args: Any, **kwargs: Any) -> Tensor:
        """Data is always initialized here: returns the tensor itself."""
        return self

    @property
    def has_init(self) -> bool:
        return False

    # -- shape and layout --------------------------------------------------------------------------
    def dim(self) -> int:
        """Number of dimensions (``ndim``)."""
        return self.ndim

    ndimension = dim

    def numel(self) -> int:
        """Number of elements (``size``)."""
        return self.size

    nelement = numel

    def expand_dims(self, axis: int) -> Tensor:
        """A view with a new axis of length 1 at ``axis``."""
        return np.expand_dims(self, axis)

    unsqueeze = expand_dims

    def permute(self, *axes: Any) -> Tensor:
        """``transpose`` with the axes given separately or as one tuple."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return self.transpose(axes)

    def stride(self, dim: int | None = None) -> Any:
        """Strides in elements (MindSpore's and PyTorch's unit), all or of dimension ``dim``."""
        strides = tuple(s // self.itemsize for s in self.strides) if self.itemsize else self.strides
        return strides if dim is None else strides[dim]

    def is_contiguous(self) -> bool:
        return bool(self.flags.c_contiguous)

    def contiguous(self) -> Tensor:
        """The tensor itself when C-contiguous, else a contiguous copy."""
        return self if self.flags.c_contiguous else np.ascontiguousarray(self).view(Tensor)

    def clone(self) -> Tensor:
        return self.copy()

    # -- dtype -------------------------------------------------------------------------------------
    def is_floating_point(self) -> bool:
        return self.dtype.kind == "f"

    def is_signed(self) -> bool:
        return self.dtype.kind in "ifc"

    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    def to(self, dtype: Any) -> Tensor:
        """A copy cast to ``dtype`` (an ``mstype`` name or anything NumPy takes as a dtype)."""
        return self.astype(dtype)

    def float(self) -> Tensor:
        return self.astype(np.float32)

    def half(self) -> Tensor:
        return self.astype(np.float16)

    def double(self) -> Tensor:
        return self.astype(np.float64)

    def int(self) -> Tensor:
        return self.astype(np.int32)

    def long(self) -> Tensor:
        return self.astype(np.int64)

    def short(self) -> Tensor:
        return self.astype(np.int16)

    def byte(self) -> Tensor:
        return self.astype(np.uint8)

    def bool(self) -> Tensor:
        return self.astype(np.bool_)


def as_tensor(value: Any) -> Any:
    """``value`` viewed as a :class:`Tensor` when it is a numeric NumPy array, else ``value`` itself
    (strings, bytes and Python objects stay as they are, as in MindSpore)."""
    if type(value) is np.ndarray and value.dtype.kind in "biufc":
        return value.view(Tensor)
    return value
