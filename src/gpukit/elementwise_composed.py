"""Elementwise functions composed from gpukit's kernels: nan_to_num, square, and the standard's
other spellings of existing ops."""

from __future__ import annotations

import math

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .data_types import finfo
from .elementwise import equal, invert, multiply, not_equal, power, where


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None) -> GPUArray:
    """NaN replaced by `nan`, infinities by `posinf` / `neginf` (by default the dtype's largest
    and smallest finite values); in place when copy=False."""
    x = _args.array(x)
    if not _dtypes.is_floating(x.dtype):
        return x.copy() if copy else x
    info = finfo(x.dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    result = where(not_equal(x, x), nan, x)
    result = where(equal(x, math.inf), high, result)
    result = where(equal(x, -math.inf), low, result).astype(x.dtype, copy=False)
    if copy:
        return result
    x[...] = result
    return x


def square(x, out=None) -> GPUArray:
    """x * x elementwise."""
    return multiply(x, x, out=out)


pow = power
bitwise_invert = invert

__all__ = ["bitwise_invert", "nan_to_num", "pow", "square"]
