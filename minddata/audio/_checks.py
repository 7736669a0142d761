"""Parameter checks shared by the audio op specs: each names the op, the argument, the rule and the value."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np

from minddata._checks import show_value
from minddata.errors import ArgumentError
from minddata.ops.base import TensorSpec
from minddata.text._checks import check_bool, check_enum, is_int

__all__ = ["check_bool", "check_enum", "check_float", "check_int", "check_stft_args", "float_dtype", "one_input", "INT32_MAX"]

INT32_MAX = 2**31 - 1
FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_int(op: str, arg: str, value: Any, *, low: int | None = None, high: int = INT32_MAX) -> int:
    if not is_int(value):
        raise TypeError(f"{op}: `{arg}` must be an int. Found: {show_value(value)}")
    if low is not None and value < low:
        rule = "greater than 0" if low == 1 else "non-negative" if low == 0 else f"at least {low}"
        raise ArgumentError(f"{op}: `{arg}` must be {rule}. Found: {value}")
    if value > high:
        raise ArgumentError(f"{op}: `{arg}` must be at most {high}. Found: {value}")
    if value < -INT32_MAX - 1:
        raise ArgumentError(f"{op}: `{arg}` must be at least {-INT32_MAX - 1} (an int32). Found: {value}")
    return int(value)


def check_float(
    op: str, arg: str, value: Any, *, low: float | None = None, high: float | None = None,
    low_open: bool = False, high_open: bool = False, nonzero: bool = False,
) -> float:
    """A real number (an int is accepted) within ``[low, high]`` (``low_open``/``high_open`` exclude the
    ends); without bounds, within float32's range."""
    if not isinstance(value, Real) or isinstance(value, bool):
        raise TypeError(f"{op}: `{arg}` must be a float. Found: {show_value(value)}")
    v = float(value)
    if math.isnan(v) or abs(v) > FLOAT32_MAX:
        raise ArgumentError(f"{op}: `{arg}` must be a finite float32 value. Found: {value}")
    if nonzero and v == 0:
        raise ArgumentError(f"{op}: `{arg}` must not be 0. Found: {value}")
    if low is not None and high is not None and (
        v < low or v > high or (low_open and v == low) or (high_open and v == high)
    ):
        lb, rb = "(" if low_open else "[", ")" if high_open else "]"
        raise ArgumentError(f"{op}: `{arg}` must be in {lb}{low}, {high}{rb}. Found: {value}")
    if low is not None and high is None and (v < low or (low_open and v == low)):
        rule = ("greater than 0" if low_open else "non-negative") if low == 0 else (
            f"greater than {low}" if low_open else f"at least {low}"
        )
        raise ArgumentError(f"{op}: `{arg}` must be {rule}. Found: {value}")
    return v


def check_stft_args(
    op: str, n_fft: Any, win_length: Any, hop_length: Any, *, hop_divisor: int = 2, zero_is_default: bool = False,
) -> tuple[int, int, int]:
    """``(n_fft, win_length, hop_length)`` of a framed op: ``win_length`` at most ``n_fft`` (None: ``n_fft``),
    ``hop_length`` None: ``win_length // hop_divisor``; with ``zero_is_default`` a 0 means None too."""
    n_fft = check_int(op, "n_fft", n_fft, low=1)
    low = 0 if zero_is_default else 1
    if win_length is not None:
        check_int(op, "win_length", win_length, low=low)
        if win_length > n_fft:
            raise ArgumentError(f"{op}: `win_length` must be at most `n_fft` ({n_fft}). Found: {win_length}")
    win = win_length if win_length else n_fft
    if hop_length is not None:
        check_int(op, "hop_length", hop_length, low=low)
    hop = hop_length if hop_length else max(win // hop_divisor, 1)
    return n_fft, win, hop


def float_dtype(dtype: np.dtype | None) -> np.dtype | None:
    """The output dtype of the audio ops: float64 stays float64, every other number type gives float32."""
    if dtype is None:
        return None
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def one_input(op: str, inputs: tuple[TensorSpec, ...], min_rank: int = 1, what: str = "<..., time>") -> TensorSpec:
    if len(inputs) != 1:
        raise ValueError(f"{op}: expected 1 input. Found: {len(inputs)}")
    spec = inputs[0]
    if len(spec.shape) < min_rank:
        raise ValueError(f"{op}: the input must have shape {what}. Found shape {tuple(spec.shape)}")
    return spec
