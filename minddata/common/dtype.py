"""Tensor types named as in ``mindspore.common.dtype`` (``import ... as mstype``).

Each name is a NumPy dtype, so ``mstype.int32`` is accepted wherever a dtype is: ``TypeCast``,
``Schema.add_column``, ``GeneratorDataset(column_types=...)``, and ``np.asarray(x, mstype.float32)``.
``mstype.string`` is NumPy's unicode dtype (sized to the data when cast to).

Examples:
    >>> import numpy as np
    >>> import minddata.common.dtype as mstype
    >>> from minddata import transforms
    >>> transforms.TypeCast(mstype.int32)(np.array([1.7, -2.5]))
    array([ 1, -2], dtype=int32)
    >>> mstype.float32 == np.float32, mstype.dtype_to_nptype(mstype.int64)
    (True, <class 'numpy.int64'>)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minddata._missing import module_getattr

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)
string = np.dtype(np.str_)

# MindSpore's aliases.
half, single, double = float16, float32, float64
byte, ubyte, short, ushort = int8, uint8, int16, uint16
intc, uintc, intp, uintp, long = int32, uint32, int64, uint64, int64
cfloat, cdouble = complex64, complex128

number_type = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
               complex64, complex128)
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
float_type = (float16, float32, float64)
all_types = (bool_, *number_type, string)

_BY_PYTYPE = {bool: bool_, int: int64, float: float64, str: string, complex: complex128}

__all__ = [
    "all_types", "bool_", "byte", "cdouble", "cfloat", "complex128", "complex64", "double", "dtype_to_nptype",
    "dtype_to_pytype", "float16", "float32", "float64", "float_type", "half", "int16", "int32", "int64", "int8",
    "int_type", "intc", "intp", "long", "number_type", "pytype_to_dtype", "short", "single", "string", "ubyte",
    "uint16", "uint32", "uint64", "uint8", "uint_type", "uintc", "uintp", "ushort",
]


def dtype_to_nptype(type_: Any) -> type:
    """The NumPy scalar type of ``type_`` (``mstype.int32`` → ``numpy.int32``)."""
    return np.dtype(type_).type


def dtype_to_pytype(type_: Any) -> type:
    """The Python type of ``type_``'s values: ``bool``, ``int``, ``float``, ``complex`` or ``str``."""
    kind = np.dtype(type_).kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex, "U": str, "S": bytes}[kind]


def pytype_to_dtype(obj: Any) -> np.dtype:
    """The type of a Python type or dtype-like (``int`` → ``mstype.int64``, as MindSpore)."""
    if isinstance(obj, type) and obj in _BY_PYTYPE:
        return _BY_PYTYPE[obj]
    return np.dtype(obj)


# MindSpore's module also has ``bool``, ``int`` and ``float``; as globals they would shadow the builtins.
__getattr__ = module_getattr(__name__, aliases={"bool": bool_, "int": int32, "float": float32})
