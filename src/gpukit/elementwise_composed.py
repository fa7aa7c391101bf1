"""Elementwise functions composed from gpukit's kernels: nan_to_num."""

from __future__ import annotations

import math

from . import array_args as _args
from .array import GPUArray
from .base import dtypes as _dtypes
from .complex_parts import imag, real
from .data_types import finfo
from .elementwise import equal, isnan, where


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None) -> GPUArray:
    """NaN replaced by `nan`, infinities by `posinf` / `neginf` (by default the dtype's largest
    and smallest finite values); in place when copy=False. Complex arrays part by part."""
    x = _args.array(x)
    if x.dtype.kind == "c":
        result = x.copy() if copy else x
        for part in (real(result), imag(result)):
            nan_to_num(part, False, nan, posinf, neginf)
        return result
    if not _dtypes.is_floating(x.dtype):
        return x.copy() if copy else x
    info = finfo(x.dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    result = where(isnan(x), nan, x)
    result = where(equal(x, math.inf), high, result)
    result = where(equal(x, -math.inf), low, result).astype(x.dtype, copy=False)
    if copy:
        return result
    x[...] = result
    return x


__all__ = ["nan_to_num"]
