"""Elementwise functions composed from gpukit's kernels: clip with NumPy 2's and the Array API's
optional bounds, square, and the standard's other spellings of existing ops."""

from __future__ import annotations

import math

from . import _args, _dtypes, ufuncs
from .array import GPUArray
from .data_types import finfo
from .manipulation import _write


def clip(x, /, min=None, max=None, out=None, *, a_min=None, a_max=None) -> GPUArray:
    """`x` limited to [min, max]; either bound may be None (that side is open). `a_min` / `a_max`
    are NumPy's keyword names for them (the Array API's `min` / `max` are the positional ones).
    NaN stays NaN."""
    if a_min is not None:
        if min is not None:
            raise TypeError("clip: pass a_min or min, not both")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise TypeError("clip: pass a_max or max, not both")
        max = a_max
    if min is None and max is None:
        x = _args.array(x)
        return x.copy() if out is None else _write(x, out)
    if min is None:
        return ufuncs.minimum(x, max, out=out)
    if max is None:
        return ufuncs.maximum(x, min, out=out)
    return ufuncs.clip(x, min, max, out=out)


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None) -> GPUArray:
    """NaN replaced by `nan`, infinities by `posinf` / `neginf` (by default the dtype's largest
    and smallest finite values); in place when copy=False."""
    x = _args.array(x)
    if not _dtypes.is_floating(x.dtype):
        return x.copy() if copy else x
    info = finfo(x.dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    result = ufuncs.where(ufuncs.not_equal(x, x), nan, x)
    result = ufuncs.where(ufuncs.equal(x, math.inf), high, result)
    result = ufuncs.where(ufuncs.equal(x, -math.inf), low, result).astype(x.dtype, copy=False)
    if copy:
        return result
    x[...] = result
    return x


def square(x, out=None) -> GPUArray:
    """x * x elementwise."""
    return ufuncs.multiply(x, x, out=out)


pow = ufuncs.power
bitwise_invert = ufuncs.invert

__all__ = ["bitwise_invert", "clip", "nan_to_num", "pow", "square"]
